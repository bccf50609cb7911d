/* Measuring one cell of the sweep (METHOD.md, "Largest batch" and "Time"): the plan's largest
 * batch, bisected down on an allocation failure; then warm-up and timed passes (forward or
 * training step, as cfg->pass says) until the spread settles. The result is one row of raw.csv. */
#ifndef LB_MEASURE_H
#define LB_MEASURE_H

#include <signal.h>
#include <stdint.h>

#include "attn/config.h"
#include "attn/base/status.h"
#include "attn/ops.h"

typedef enum LbCellStatus { LB_CELL_OK = 0, LB_CELL_OOM = 1, LB_CELL_ERROR = 2 } LbCellStatus;

/* One measured cell: exactly what a raw.csv row holds (reports/raw.c writes and reads it). */
typedef struct LbCellResult {
    LbModelKind model;
    int64_t n;
    int64_t k; /* 0 for a model without a k axis (written as an empty field) */
    LbSharing sharing;
    LbOrder order;
    LbDtype dtype;
    int64_t batch;          /* the largest batch that ran; 0 when OOM */
    int64_t planned_bytes;  /* the plan's total for that batch */
    int64_t peak_bytes;     /* the arena's high-water mark measured on that run */
    double median_ms, min_ms, max_ms; /* per pass: a forward or a training step (cfg->pass) */
    double ms_per_seq;      /* median_ms / batch */
    double tokens_per_s;    /* batch * n / median seconds */
    double tflop_per_s;     /* lb_measure_flops_per_seq * batch / median seconds / 1e12 */
    int passes;             /* timed passes */
    int sm_clock_start_mhz, sm_clock_end_mhz; /* -1 where it cannot be read */
    int clock_events_known; /* the reasons below could be read (NVML) */
    uint64_t clock_events;  /* clock-event reasons seen after any timed pass (attn/measure/clock_events.h) */
    int slowdown;           /* one of them was thermal or a hardware slowdown */
    /* Mean power over the timed passes (LbOps.energy_j's joules over host seconds) and one
     * sequence's energy at it, power x median_ms / batch; NaN, with energy_why, where unknown. */
    double power_w, energy_j_per_seq;
    char energy_why[256];
    LbCellStatus status;
    char error[LB_ERROR_MAX]; /* "ok", "OOM", or the error message, whole */
    /* Where it was measured, set by the sweep; "" where unknown (the CPU, older raw.csv files). */
    char device_uuid[48];
    char host[128];
} LbCellResult;

typedef struct LbTimingOptions {
    int min_passes;      /* at least this many timed passes (METHOD.md: 5) */
    int max_passes;      /* at most this many */
    double cap_seconds;  /* stop adding passes past this much timed work, once min_passes ran */
    double settle;       /* stop once (p75 - p25) / median <= settle, once min_passes ran */
    int64_t max_batch;   /* cap on the batch search (0 = none) */
} LbTimingOptions;

LbTimingOptions lb_timing_defaults(void);

/* out as cfg's row before anything is measured: clocks -1 and energy NaN (unknown). */
void lb_cell_result_init(LbCellResult *out, const LbModelConfig *cfg);

/* Measure one model at its largest batch within `budget` bytes. Returns LB_OK with out->status
 * OK or OOM; LB_ERR_INTERRUPTED when *stop became non-zero (the cell is then not valid); another
 * negative status for a failure that should end the sweep (out->status ERROR, message set). */
int lb_measure_cell(LbBackend *be, const LbModelConfig *cfg, size_t budget,
                    const LbTimingOptions *opt, uint64_t seed, const volatile sig_atomic_t *stop,
                    LbCellResult *out);

/* FLOPs of one sequence's pass on be: lb_config_flops_per_seq for a forward; for a training step
 * the breakdown's count of the step (lb_breakdown_count), the same rule over the step's products.
 * NaN where the step cannot be counted. */
double lb_measure_flops_per_seq(const LbBackend *be, const LbModelConfig *cfg);

/* Median, min and max of `count` values (the array is sorted in place). */
void lb_stats_summary(double *values, int count, double *median, double *min, double *max);

#endif
