/* The output directory of a sweep or a dump: made and test-written before anything runs (an
 * --out that cannot be written is bad input, exit 2), locked for the whole run by flock(2) on
 * DIR/.linbench.lock (released by the kernel however the process ends, so never stale), and
 * removed again when the run fails before writing a result. */
#ifndef LB_OUTDIR_H
#define LB_OUTDIR_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS) || defined(LB_LAYER_SWEEP)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>

#include "attn/base/paths.h" /* lb_path_join_buf: with dir checked against LB_DIR_MAX it always fits */
#include "reports/settings.h"

/* The longest directory linbench writes into: every file name it appends (the longest is a
 * temporary grid name, memory_speedup.csv.tmp.XXXXXX) must still fit the kernel's PATH_MAX of
 * 4096 bytes and the 4096-byte path buffers below, so a longer one is refused up front. */
#define LB_DIR_MAX 3968

/* 0 when dir is at most LB_DIR_MAX bytes, else LB_EXIT_USAGE after one line naming flag ("--out", "OUT"). */
int lb_outdir_check_length(const char *dir, const char *flag);

/* What a refusal of a directory that holds results offers: the flags the command has. */
#define LB_OUTDIR_OFFER_FORCE 1  /* --force */
#define LB_OUTDIR_OFFER_RESUME 2 /* --resume DIR (sweep) */

/* Create `dir` and its parents, lock it, check a file can be written and, unless `force`, that it
 * holds no results (the refusal offers `offer`'s LB_OUTDIR_OFFER_ flags); remove a killed run's
 * temporaries. 0; LB_EXIT_USAGE after one line naming `flag` (what it created removed); or
 * LB_EXIT_FAILURE when another linbench holds the directory (nothing touched). */
int lb_outdir_prepare(const char *dir, int force, const char *flag, int offer);

/* A new sweep's or prediction's --out (f->out; where not given, a fresh name in the current
 * directory: linbench-YYYYmmdd-HHMMSS, with -2, -3 ... if taken), prepared as above with --force
 * offered, and `offer`'s other flags. */
int lb_outdir_prepare_out(LbCommandFlags *f, int offer);

/* --resume: lock an existing sweep directory (it must hold meta.csv), and remove temporary
 * files a killed run left. 0; LB_EXIT_USAGE when it is not a sweep's directory; LB_EXIT_FAILURE
 * when another linbench holds it. One line printed either way. */
int lb_outdir_lock_existing(const char *dir, const char *flag);

/* Remove the results in the (locked) directory: under --force before the first new row, so a
 * forced sweep that is killed never leaves the previous run's grids beside its own raw.csv; after
 * a failed write, so no file is left cut short. 0, or LB_EXIT_FAILURE after one line. */
int lb_outdir_clear_results(const char *dir);

/* --force: the figures linbench plot drew here (each NAME.gp that begins with LB_PLOT_MARK, with
 * its NAME.plot.csv, .png and .svg; a directory of such a name stays), which beside the new results
 * would show the old ones, then the results (lb_outdir_clear_results). 0, or LB_EXIT_FAILURE after
 * one line. */
int lb_outdir_clear_forced(const char *dir);

/* Create `dir` and missing parents (for outputs that are not sweep results, like plots).
 * Returns 0 or LB_EXIT_FAILURE after printing. */
int lb_outdir_create(const char *dir);

/* Remove the directories the last lb_outdir_prepare created (and the lock file it created), if
 * nothing else is inside. */
void lb_outdir_abandon(void);

#endif
