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

int lb_atomic_write_path(const char *path, LbAtomicWriter write, const void *ctx)
{
    const size_t len = strlen(path);
    char *tmp = malloc(len + sizeof ".tmp.XXXXXX");
    if (!tmp)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory opening %s", path);
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    const int fd = fault_at(LB_ATOMIC_FAULT_OPEN) ? -1 : mkstemp(tmp);
    FILE *f = NULL;
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) {
        /* mkstemp makes the file 0600; give it the mode a plain fopen would have. */
        mode_t mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask); /* a failure leaves it 0600: still ours, still readable */
        if (!(f = fdopen(fd, "w"))) {
            e = errno;
            close(fd);
            unlink(tmp);
        }
    }
    if (!f) {
        free(tmp);
        return LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    int rc = write(f, ctx);
    const int stream_failed = rc != LB_OK && ferror(f); /* the writer's message names no file */
    if (rc == LB_OK && (fflush(f) != 0 || ferror(f)))
        e = errno ? errno : EIO;
    else if (rc == LB_OK && (fault_at(LB_ATOMIC_FAULT_SYNC) || fsync(fileno(f)) != 0))
        e = errno;
    if (fclose(f) != 0 && rc == LB_OK && !e)
        e = errno;
    if (rc == LB_OK && !e && (fault_at(LB_ATOMIC_FAULT_RENAME) || rename(tmp, path) != 0))
        e = errno;
    if (rc != LB_OK || e)
        unlink(tmp);
    if (stream_failed)
        rc = LB_FAIL(LB_ERR_IO, "cannot write %s", path);
    else if (e)
        rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, strerror(e));
    free(tmp);
    return rc;
}

int lb_atomic_write(const char *dir, const char *name, LbAtomicWriter write, const void *ctx)
{
    char *path = lb_path_join(dir, name);
    if (!path)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory");
    int rc = lb_atomic_write_path(path, write, ctx);
    free(path);
    return rc;
}
