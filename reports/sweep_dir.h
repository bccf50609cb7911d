/* A sweep's output directory read back: meta.csv, every row of raw.csv, and the two grids
 * built from the rows (not from the grid files, so a sweep still running or interrupted shows
 * what it has, NA elsewhere). compare and plot start here. */
#ifndef LB_SWEEP_DIR_H
#define LB_SWEEP_DIR_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure.h"
#include "reports/grid.h"
#include "reports/meta.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbSweepDir {
    char *dir;
    LbMeta meta;
    LbCellResult *rows;
    size_t count;
    size_t raw_cut_line; /* raw.csv's last line, cut short (no newline) and left out: a sweep killed
                          * mid-row or a copy cut off, which sweep --resume drops; 0 when none */
    LbGrid grid; /* shaped by meta.csv's n and k lists (reports/settings.h), or by the rows where
                  * those are absent */
} LbSweepDir;

/* Whether dir looks like a sweep's output: a directory holding raw.csv and meta.csv. 0, or -1
 * with the reason in why ("no raw.csv in it", "not a directory", or the system's message). */
int lb_sweep_dir_check(const char *dir, char *why, size_t size);

/* DIR/meta.csv read and checked as every reader of a result needs it
 * (lb_settings_meta_check): LB_ERR_IO when it cannot be read, LB_ERR_FORMAT naming the file
 * and the key when it is not what linbench sweep writes (a meta.csv cut short among them). A
 * bench/peer result's (lb_meta_is_peer) is read but not checked: its keys are the peer's, and
 * the caller says what it is. */
int lb_sweep_meta_read(const char *dir, LbMeta *meta);

/* LB_ERR_IO when raw.csv or meta.csv cannot be read, LB_ERR_FORMAT when either is not what
 * linbench writes (meta.csv as lb_sweep_meta_read checks it). */
int lb_sweep_dir_load(const char *dir, LbSweepDir *s);
void lb_sweep_dir_free(LbSweepDir *s);

/* A meta value, or `fallback` when the key is absent or empty. For the run settings, prefer
 * lb_settings_meta_value (reports/settings.h), which knows what an absent key means. */
const char *lb_sweep_meta(const LbSweepDir *s, const char *key, const char *fallback);

#ifdef __cplusplus
}
#endif

#endif
