/* The output directory of a sweep: made and test-written before anything runs, so an --out that
 * cannot be created or written is bad input (exit 2); and removed again when the run fails
 * before writing a result (no GPU, say), so a failed start leaves no empty folder behind. */
#ifndef LB_OUTDIR_H
#define LB_OUTDIR_H

#include <stddef.h>

/* A fresh name in the current directory: linbench-YYYYmmdd-HHMMSS (with -2, -3 ... if taken). */
void lb_outdir_default(char *buf, size_t size);

/* Create `dir` and its missing parents, check that a file can be written in it, and that it holds
 * no results unless `force`. Returns 0, or LB_EXIT_USAGE after printing one line naming `flag`
 * (and removing what it created). */
int lb_outdir_prepare(const char *dir, int force, const char *flag);

/* Create `dir` and missing parents (for outputs that are not sweep results, like plots).
 * Returns 0 or LB_EXIT_FAILURE after printing. */
int lb_outdir_create(const char *dir);

/* Remove the directories the last lb_outdir_prepare created, if they are still empty. */
void lb_outdir_abandon(void);

/* dir + "/" + name into buf. */
void lb_outdir_path(char *buf, size_t size, const char *dir, const char *name);

#endif
