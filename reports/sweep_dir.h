/* A result directory read back, whoever wrote it: meta.csv and every row of raw.csv, with the
 * kind taken from meta.csv (a linbench sweep, linbench predict's forecast, or bench/peer's run of
 * the same encoder in PyTorch, whose model column holds the peer's names: reports/peer_dir.h), and
 * Table 3's grids built from the rows (not from the grid files, so a sweep still running shows
 * what it has, NA elsewhere). compare and plot start here. */
#ifndef LB_SWEEP_DIR_H
#define LB_SWEEP_DIR_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure/measure.h"
#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/peer_dir.h"

typedef enum LbResultKind { LB_RESULT_SWEEP, LB_RESULT_PREDICTED, LB_RESULT_PEER } LbResultKind;

typedef struct LbSweepDir {
    char *dir;
    LbMeta meta;
    LbResultKind kind;
    LbCellResult *rows;    /* a peer's: model is its variant's work */
    size_t count;
    size_t raw_cut_line;   /* raw.csv's last line, cut short and left out; 0 when none */
    size_t *variant;       /* a peer's: per row, its index in variants; NULL otherwise */
    LbPeerModel *variants; /* a peer's model names, each once, in order of first appearance */
    size_t nvariants;
    LbGrid grid;           /* Table 3's, shaped by meta.csv's n and k lists (else the rows') */
} LbSweepDir;

/* Whether dir holds a result: a directory with raw.csv and meta.csv. 0, or -1 with the reason in
 * why ("no raw.csv in it", "not a directory", or the system's message). */
int lb_sweep_dir_check(const char *dir, char *why, size_t size);

/* DIR/meta.csv read and, unless a peer's (whose keys are the peer's), checked as every reader of
 * a result needs it (lb_settings_meta_check): LB_ERR_IO or LB_ERR_FORMAT naming file and key. */
int lb_sweep_meta_read(const char *dir, LbMeta *meta);

/* Any kind of result. LB_ERR_IO when a file cannot be read, LB_ERR_FORMAT when one is not what
 * its writer writes (naming the line and column). */
int lb_result_load(const char *dir, LbSweepDir *s);
/* The same, refusing a peer's result (LB_ERR_FORMAT): a linbench sweep or prediction. */
int lb_sweep_dir_load(const char *dir, LbSweepDir *s);
void lb_sweep_dir_free(LbSweepDir *s);

/* A meta value, or `fallback` when the key is absent or empty. For the run settings, prefer
 * lb_settings_meta_value (reports/settings.h), which knows what an absent key means. */
const char *lb_sweep_meta(const LbSweepDir *s, const char *key, const char *fallback);
/* Whether s timed a training step (meta.csv pass train), not the forward pass. */
int lb_sweep_is_train(const LbSweepDir *s);

/* The row of `model` at (n, k) of rows (k ignored for a model without a k axis; of peer variant
 * v only where s is a peer's, else v is ignored); the last such row wins. NULL when none. */
const LbCellResult *lb_result_row(const LbSweepDir *s, size_t v, LbModelKind model, int64_t n, int64_t k);

#endif
