/* The sweep engine: every cell of a sweep measured in turn into its result directory (METHOD.md,
 * "Files a sweep writes"): meta.csv (running), a raw.csv row per cell as it ends, speedups.csv,
 * the Table 3 grids, meta.csv with the outcome. Resumable; prints nothing, picks no exit code.
 *
 * The cells: lb_sweep_cells (reports/merge.h) of the settings' grid and models. --shard I/N gives
 * each cell, costliest first by the predictor's time on one fixed card, to the least loaded shard:
 * every shard computes the same split alone. */
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

#ifdef __cplusplus
extern "C" {
#endif

/* The model the settings measure at cell c. */
LbModelConfig lb_sweep_cell_config(const LbRunSettings *s, const LbSweepCell *c);

/* The shard (0 .. s->shard_count-1) of every cell, into a malloc'd array. LB_OK or LB_ERR_NOMEM. */
int lb_sweep_shard_assign(const LbRunSettings *s, const LbSweepCell *cells, size_t count, int **shard_of);

/* The rows of raw.csv at raw_path that the settings did not produce (none of their cells, or
 * another shard's): *how_many of them, the first on *line, `why` saying what of it the settings
 * do not hold ("n 1000 is not in meta.csv's n_list (512,1024)"). LB_OK (with *how_many 0 when
 * every row is the settings'), or lb_raw_read's error. */
int lb_sweep_raw_foreign(const LbRunSettings *s, const char *raw_path, size_t *line, size_t *how_many, char *why,
                         size_t size);

/* A sweep's settings, whole, before anything runs. With --resume DIR (`resume`, locked by the
 * caller): meta.csv read, the run measured (not predicted) by this linbench version, its budget
 * into *budget, its settings taken where the user gave none; the grid checked (notes into notes);
 * then every recorded setting the run's and raw.csv only rows of its cells. LB_OK; LB_ERR_FORMAT
 * with the refusal in lb_error_message() (bad input); LB_ERR_IO or LB_ERR_NOMEM. */
int lb_sweep_settings_check(const char *resume, LbRunSettings *s, LbMeta *meta, uint64_t *budget, char *notes,
                            size_t size);

/* The backend's quick check as meta.csv records it (check, check_max_rel_error, check_seed). */
typedef struct LbSweepCheck {
    int ran;    /* 0: skipped (--no-check) */
    int failed;
    double max_rel_error;
    uint64_t seed;
} LbSweepCheck;

typedef enum LbSweepEventKind {
    LB_SWEEP_START,  /* total: the cells this run measures */
    LB_SWEEP_BEGIN,  /* index, cfg, planned_batch: a cell begins */
    LB_SWEEP_END,    /* index, result: a cell ended (its row is written unless status is ERROR and
                      * writing failed); result->status ERROR names the failure in result->error */
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
    const LbMeta *previous;   /* meta.csv of the run being resumed (NULL otherwise): raw.csv's rows,
                               * command line, start time and earlier resumes are kept, and only
                               * the missing cells measured */
    const char *command_line; /* this run's */
    uint64_t budget;          /* bytes */
    LbSweepCheck check;
    LbSweepProgress progress; /* may be NULL */
    void *progress_ctx;
    /* This device's limits, measured by the caller before the first cell (NULL: not measured):
     * meta.csv's calibration_* keys, and the percentages of breakdown.csv (settings->breakdown). */
    const LbCalibration *calibration;
    const char *calibration_note; /* meta.csv's calibration_note: why it was skipped, or what
                                   * limited it; NULL or "" for none */
} LbSweepJob;

typedef enum LbSweepOutcome {
    LB_SWEEP_COMPLETE = 0,    /* every cell measured (ok or OOM) */
    LB_SWEEP_CELL_ERRORS,     /* some cell failed; the others were measured */
    LB_SWEEP_FAILED,          /* a device error ended the sweep part-way */
    LB_SWEEP_INTERRUPTED      /* *stop became non-zero; the finished cells are on disk */
} LbSweepOutcome;

/* Run the job on an open backend. Returns LB_OK with *outcome set (and, when grid is not NULL,
 * the grids built from every row of raw.csv, for the caller to show; free with lb_grid_free), or
 * a negative status when a result file could not be read or written (message set). */
int lb_sweep_engine_run(const LbSweepJob *job, LbBackend *be, const volatile sig_atomic_t *stop,
                        LbSweepOutcome *outcome, LbGrid *grid);

/* The device a sweep runs on, as meta.csv records it. */
typedef struct LbSweepDevice {
    LbDeviceInfo info;
    LbDtype storage;
    int gpu_count; /* GPUs measuring at once (sweep --gpus); 1 otherwise */
    char energy_note[256]; /* why the device has no energy counter; "" when it has one */
    char matmul_tuning[256]; /* meta.csv's matmul_tuning; "" before the cells, or where the
                              * backend has no choice to make (the CPU) */
} LbSweepDevice;

/* be NULL: every field unknown (-1, ""), for a device with no backend. */
void lb_sweep_device_describe(LbBackend *be, LbSweepDevice *dev);

/* meta.csv as lb_sweep_engine_run writes it before its first cell (with `status`, no energy yet),
 * on the device dev describes, `extra`'s keys after source: sweep --gpus's own and its parts'. */
int lb_sweep_write_meta(const LbSweepJob *job, const LbSweepDevice *dev, const char *status, const LbMeta *extra);
/* The local time as meta.csv writes it: 2026-01-31T12:00:00+0100. */
void lb_sweep_now_text(char *buf, size_t size);
/* A run's history into meta: command_line and start_time (the first run's when resuming), end_time
 * (empty while running), status, then each resume's time and command, this one's (at `now`) last. */
int lb_sweep_meta_history(const LbSweepJob *job, const char *now, const char *status, LbMeta *meta);

/* A result directory from rows made without a backend (linbench predict, cmd/sweep/predict.h), written
 * as a sweep writes its own: meta.csv (`extra`'s keys after `tool`, which may replace `source`),
 * raw.csv through the raw writer, speedups.csv, the two grids (kept in *grid when not NULL), and
 * meta.csv again with status complete. job->previous is not read. */
int lb_sweep_write_rows(const LbSweepJob *job, const LbSweepDevice *dev, const LbCellResult *rows, size_t count,
                        const LbMeta *extra, LbGrid *grid);

/* The meta.csv status word of an outcome ("complete", "finished with errors", ...). */
const char *lb_sweep_outcome_name(LbSweepOutcome o);

#ifdef __cplusplus
}
#endif

#endif
