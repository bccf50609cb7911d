/* This device's own limits, measured in a few seconds before a sweep (METHOD.md, "Calibration"):
 * the rate of one large product through the path the models' big products take (ops->linear,
 * with the workspace), and the copy bandwidth (ops->copy). A breakdown states each operation's
 * achieved rate as a percentage of these. */
#ifndef LB_CALIBRATE_H
#define LB_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "attn/ops.h"

typedef struct LbCalibrateOptions {
    int reps;          /* timed repetitions of each measurement; the median is kept (5) */
    double target_ms;  /* sizes double from the smallest until one repetition takes this long (25) */
    int64_t max_dim;   /* the largest product: (dim, dim) x (dim, dim)^T (8192) */
    size_t max_copy;   /* the largest buffer copied, in bytes (256 MiB) */
    size_t max_bytes;  /* device memory the calibration may take at once (1 GiB) */
} LbCalibrateOptions;

LbCalibrateOptions lb_calibrate_defaults(void);

typedef struct LbCalibration {
    double tflop_per_s;   /* 2 dim^3 FLOPs / the median time of one product, / 1e12 */
    double copy_gb_per_s; /* 2 x copy_bytes (read + written) / the median time of one copy, / 1e9 */
    int64_t dim;          /* the product measured: y (dim, dim) = x (dim, dim) w (dim, dim)^T */
    int64_t copy_bytes;   /* the buffer copied */
    double product_ms, copy_ms; /* the medians */
    int reps;
    int limited_by_memory; /* 1: the memory allowed (or the device's), not the target time or the
                            * caps, chose a size: its rate may be below the device's best */
} LbCalibration;

/* Both, on `be` as it is set (storage type, TF32), with random inputs (a GPU multiplies zeros
 * faster): sizes double until a repetition takes target_ms or meets its cap, then reps are timed
 * after one untimed. LB_ERR_NOMEM (why, in the user's terms) when not even the smallest sizes fit;
 * LB_ERR_INVALID for options out of range. */
int lb_calibrate(LbBackend *be, const LbCalibrateOptions *opt, LbCalibration *out);

#endif
