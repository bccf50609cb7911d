/* The output directory of a sweep: checked before anything runs (bad input exits 2 with nothing
 * written), created only once the device is open, so a failed start leaves no empty folder. */
#ifndef LB_OUTDIR_H
#define LB_OUTDIR_H

#include <stddef.h>

/* A fresh name in the current directory: linbench-YYYYmmdd-HHMMSS (with -2, -3 ... if taken). */
void lb_outdir_default(char *buf, size_t size);

/* Check that `dir` can be created or written, and holds no results unless `force`.
 * Returns 0, or LB_EXIT_USAGE after printing one line naming `flag`. */
int lb_outdir_check(const char *dir, int force, const char *flag);

/* Create `dir` (and missing parents). Returns 0 or LB_EXIT_FAILURE after printing. */
int lb_outdir_create(const char *dir);

/* dir + "/" + name into buf. */
void lb_outdir_path(char *buf, size_t size, const char *dir, const char *name);

#endif
