/* Temporary file + fsync + rename (see atomic_file.h). */
#include "reports/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/base/status.h"

static LbAtomicFault injected;

void lb_atomic_inject_fault(LbAtomicFault fault) { injected = fault; }

/* Whether the injected fault is at `step` (then it is used up). */
static int fault_at(LbAtomicFault step)
{
    if (injected != step)
        return 0;
    injected = LB_ATOMIC_FAULT_NONE;
    errno = EIO;
    return 1;
}

static void atomic_free(LbAtomicFile *af)
{
    free(af->path);
    free(af->tmp_path);
    af->path = af->tmp_path = NULL;
    af->f = NULL;
}

int lb_atomic_open(LbAtomicFile *af, const char *path)
{
    memset(af, 0, sizeof af[0]);
    size_t len = strlen(path);
    af->path = malloc(len + 1);
    af->tmp_path = malloc(len + sizeof ".tmp.XXXXXX");
    if (!af->path || !af->tmp_path) {
        atomic_free(af);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory opening %s", path);
    }
    memcpy(af->path, path, len + 1);
    memcpy(af->tmp_path, path, len);
    memcpy(af->tmp_path + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = fault_at(LB_ATOMIC_FAULT_OPEN) ? -1 : mkstemp(af->tmp_path);
    if (fd < 0) {
        int e = errno;
        atomic_free(af);
        return LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    /* mkstemp makes the file 0600; give it the mode a plain fopen would have. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask); /* a failure leaves it 0600: still ours, still readable */
    af->f = fdopen(fd, "w");
    if (!af->f) {
        int e = errno;
        close(fd);
        unlink(af->tmp_path);
        atomic_free(af);
        return LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return LB_OK;
}

int lb_atomic_commit(LbAtomicFile *af)
{
    int e = 0;
    if (fflush(af->f) != 0 || ferror(af->f))
        e = errno ? errno : EIO;
    else if (fault_at(LB_ATOMIC_FAULT_SYNC) || fsync(fileno(af->f)) != 0)
        e = errno;
    if (fclose(af->f) != 0 && !e)
        e = errno;
    af->f = NULL;
    if (!e && (fault_at(LB_ATOMIC_FAULT_RENAME) || rename(af->tmp_path, af->path) != 0))
        e = errno;
    if (e) {
        unlink(af->tmp_path);
        int rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", af->path, strerror(e));
        atomic_free(af);
        return rc;
    }
    atomic_free(af);
    return LB_OK;
}

void lb_atomic_abort(LbAtomicFile *af)
{
    if (!af)
        return;
    if (af->f)
        fclose(af->f);
    if (af->tmp_path)
        unlink(af->tmp_path);
    atomic_free(af);
}

int lb_atomic_write(const char *dir, const char *name, LbAtomicWriter write, const void *ctx)
{
    char *path = lb_path_join(dir, name);
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    LbAtomicFile af;
    int rc = lb_atomic_open(&af, path);
    if (rc == LB_OK && (rc = write(af.f, ctx)) == LB_OK) {
        rc = lb_atomic_commit(&af);
    } else if (af.f) {
        lb_atomic_abort(&af);
        if (rc != LB_ERR_NOMEM) {
            lb_error_clear();
            rc = LB_FAIL(LB_ERR_IO, "cannot write %s", path);
        }
    }
    free(path);
    return rc;
}
