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

/* PATH written whole by write(f, ctx), or not at all: LB_OK, or the writer's error as it is,
 * except that a write that fails on f itself, or the flush, sync or rename, is LB_ERR_IO naming
 * the file. */
typedef int (*LbAtomicWriter)(FILE *f, const void *ctx);
int lb_atomic_write_path(const char *path, LbAtomicWriter write, const void *ctx);
/* The same into DIR/NAME. */
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

#endif
