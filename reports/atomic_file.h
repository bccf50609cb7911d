/* Files that appear whole or not at all: written under a temporary name in the target's own
 * directory, flushed and synced, then renamed over the target (rename is atomic within one
 * file system), so a reader or a crash never sees half a grid or half of meta.csv. */
#ifndef LB_ATOMIC_FILE_H
#define LB_ATOMIC_FILE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdio.h>

#include "attn/base/paths.h" /* lb_path_join, which the writers of files beside each other use */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbAtomicFile {
    FILE *f;
    char *path;     /* the target */
    char *tmp_path; /* path.tmp.XXXXXX */
} LbAtomicFile;

/* Create the temporary file. LB_ERR_IO (message names the target) when it cannot be created. */
int lb_atomic_open(LbAtomicFile *af, const char *path);
/* Flush, fsync, close and rename into place; on any failure the temporary file is removed and
 * LB_ERR_IO returned. Frees af either way. */
int lb_atomic_commit(LbAtomicFile *af);
/* Close and remove the temporary file (after a failed write). NULL-safe, idempotent. */
void lb_atomic_abort(LbAtomicFile *af);

/* DIR/NAME written whole by write(f, ctx), or not at all: LB_OK, LB_ERR_NOMEM, or LB_ERR_IO
 * naming the file (a writer's other failures become that one line). */
typedef int (*LbAtomicWriter)(FILE *f, const void *ctx);
int lb_atomic_write(const char *dir, const char *name, LbAtomicWriter write, const void *ctx);

/* Fault injection, for tests only: make the next atomic write fail at one step, as the system
 * would (mkstemp, fsync or rename returning EIO), once. Write failures need no hook: tests
 * get real ones from RLIMIT_FSIZE. */
typedef enum LbAtomicFault {
    LB_ATOMIC_FAULT_NONE = 0,
    LB_ATOMIC_FAULT_OPEN,
    LB_ATOMIC_FAULT_SYNC,
    LB_ATOMIC_FAULT_RENAME
} LbAtomicFault;
void lb_atomic_inject_fault(LbAtomicFault fault);

#ifdef __cplusplus
}
#endif

#endif
