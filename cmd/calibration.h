/* The calibration a sweep runs before its first cell (docs/METHOD.md, "Calibration"). */
#ifndef LB_CMD_CALIBRATION_H
#define LB_CMD_CALIBRATION_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stdint.h>

#include "attn/calibrate.h"
#include "attn/ops.h"

/* Measure be's product rate and copy bandwidth within `budget` bytes and print one line on stderr
 * (unless quiet): "calibration: X TFLOP/s (DTYPE product DIM), Y GB/s copy". 0, or prints why
 * and returns an exit code. */
int lb_sweep_calibrate(LbBackend *be, uint64_t budget, int quiet, LbCalibration *cal);

#endif
