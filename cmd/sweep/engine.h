/* The sweep engine: each cell of a sweep measured into its result directory (METHOD.md, "Files a
 * sweep writes"), resumably. Prints nothing, picks no exit code. */
#ifndef LB_SWEEP_ENGINE_H
#define LB_SWEEP_ENGINE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "attn/measure/calibrate.h"
#include "attn/config.h"
#include "attn/measure/measure.h"
#include "attn/ops.h"
#include "reports/grid.h"
#include "reports/merge.h"
#include "reports/meta.h"
#include "reports/settings.h"

/* The model the settings measure at cell c. */
LbModelConfig lb_sweep_cell_config(const LbRunSettings *s, const LbSweepCell *c);

/* The shard (0 .. s->shard_count-1) of every cell, into a malloc'd array: costliest first by the
 * predictor's time on one fixed card, each to the least loaded shard, so every shard computes the
 * same split alone. LB_OK or LB_ERR_NOMEM. */
int lb_sweep_shard_assign(const LbRunSettings *s, const LbSweepCell *cells, size_t count, int **shard_of);

/* The rows of raw.csv that the settings did not produce (none of their cells, or another shard's):
 * *how_many, the first on *line, `why` naming what of it the settings do not hold. LB_OK, or
 * lb_raw_read's error. */
int lb_sweep_raw_foreign(const LbRunSettings *s, const char *raw_path, size_t *line, size_t *how_many, char *why,
                         size_t size);

/* A sweep's settings checked whole before anything runs (notes into notes). With --resume DIR
 * (locked by the caller): meta.csv's settings taken where the user gave none and compared, its
 * budget into *budget, raw.csv holding only the run's cells. LB_OK; LB_ERR_FORMAT with the refusal
 * in lb_error_message(); LB_ERR_IO or LB_ERR_NOMEM. */
int lb_sweep_settings_check(const char *resume, LbRunSettings *s, LbMeta *meta, uint64_t *budget, char *notes,
                            size_t size);

/* The backend's quick check (cmd/check.h), as meta.csv records it (check, check_max_rel_error,
 * check_seed). */
typedef struct LbCheckResult {
    int ran;              /* 0: skipped (--no-check) */
    uint64_t seed;
    size_t checks, failures;
    double max_rel_error; /* largest relative error of all checks */
} LbCheckResult;

typedef enum LbSweepEventKind {
    LB_SWEEP_START,  /* total: the cells this run measures */
    LB_SWEEP_BEGIN,  /* index, cfg, planned_batch: a cell begins */
    LB_SWEEP_END,    /* index, result: a cell ended; an ERROR status names the failure in result->error */
    LB_SWEEP_FINISH  /* the last cell ended (or the sweep stopped); the grids come next */
} LbSweepEventKind;

typedef struct LbSweepEvent {
    LbSweepEventKind kind;
    int index, total;           /* 1-based index among this run's cells; their count */
    const LbModelConfig *cfg;   /* BEGIN */
    int64_t planned_batch;      /* BEGIN: the plan's largest batch (0: not even 1 fits) */
    const LbCellResult *result; /* END */
} LbSweepEvent;

typedef void (*LbSweepProgress)(void *ctx, const LbSweepEvent *e);

typedef struct LbSweepJob {
    const LbRunSettings *settings;
    const char *dir;          /* exists, locked by the caller */
    const LbMeta *previous;   /* meta.csv of the run being resumed, or NULL: only missing cells run */
    const char *command_line; /* this run's */
    uint64_t budget;          /* bytes */
    LbCheckResult check;
    LbSweepProgress progress; /* may be NULL */
    void *progress_ctx;
    const LbCalibration *calibration; /* this device's limits (NULL: not measured) */
    const char *calibration_note;     /* why it was skipped, or what limited it; NULL or "" */
} LbSweepJob;

typedef enum LbSweepOutcome { /* worst last: sweep --gpus reports the worst of its parts' */
    LB_SWEEP_COMPLETE = 0,    /* every cell measured (ok or OOM) */
    LB_SWEEP_CELL_ERRORS,     /* some cell failed; the others were measured */
    LB_SWEEP_FAILED,          /* a device error ended the sweep part-way */
    LB_SWEEP_INTERRUPTED      /* *stop became non-zero; the finished cells are on disk */
} LbSweepOutcome;

/* Run the job on an open backend: LB_OK with *outcome set (and the grids of every row of raw.csv
 * in *grid when not NULL; lb_grid_free), or the error of a result file that failed. */
int lb_sweep_engine_run(const LbSweepJob *job, LbBackend *be, const volatile sig_atomic_t *stop,
                        LbSweepOutcome *outcome, LbGrid *grid);

/* The device a sweep runs on, as meta.csv records it. */
typedef struct LbSweepDevice {
    LbDeviceInfo info;
    LbDtype storage;
    int gpu_count; /* GPUs measuring at once (sweep --gpus); 1 otherwise */
    char energy_note[256];   /* why the device has no energy counter; "" when it has one */
    char matmul_tuning[256]; /* meta.csv's matmul_tuning; "" before the cells, or on the CPU */
} LbSweepDevice;

/* be NULL: every field unknown (-1, ""), for a device with no backend. */
void lb_sweep_device_describe(LbBackend *be, LbSweepDevice *dev);

/* meta.csv as the engine writes it before its first cell, with `status` and `extra`'s keys. */
int lb_sweep_write_meta(const LbSweepJob *job, const LbSweepDevice *dev, const char *status, const LbMeta *extra);
/* The local time as meta.csv writes it: 2026-01-31T12:00:00+0100. */
void lb_sweep_now_text(char *buf, size_t size);
/* A run's history into meta: the first run's command_line and start_time, end_time, status, then
 * each resume's time and command, this one's (at `now`) last. */
int lb_sweep_meta_history(const LbSweepJob *job, const char *now, const char *status, LbMeta *meta);

/* A result directory written as a sweep writes its own, from rows made without a backend (linbench
 * predict), one per cell of the grid in lb_sweep_cells' order; `extra` may replace meta.csv's
 * source. The grids kept in *grid when not NULL. */
int lb_sweep_write_rows(const LbSweepJob *job, const LbSweepDevice *dev, const LbCellResult *rows, const LbMeta *extra,
                        LbGrid *grid);

/* The meta.csv status word of an outcome ("complete", "finished with errors", ...). */
const char *lb_sweep_outcome_name(LbSweepOutcome o);

#endif
