/* The calibration a sweep runs before its first cell (docs/METHOD.md, "Calibration"). */
#ifndef LB_CMD_CALIBRATION_H
#define LB_CMD_CALIBRATION_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>
#include <stdint.h>

#include "attn/calibrate.h"
#include "attn/ops.h"

/* Measure be's product rate and copy bandwidth within `budget` bytes and print one line on stderr
 * (unless quiet): "calibration: X TFLOP/s (DTYPE product DIM), Y GB/s copy". A budget too small
 * for even the smallest sizes is not the sweep's failure (its cells may still fit, or be OOM as
 * the budget says): the calibration is skipped, "calibration skipped: WHY" printed (unless quiet).
 * Returns 0 with *measured 1 or 0 and `note` (meta.csv's calibration_note: why skipped, or that
 * the budget limited the sizes; "" otherwise), or prints why and returns an exit code for any
 * other failure. */
int lb_sweep_calibrate(LbBackend *be, uint64_t budget, int quiet, LbCalibration *cal, int *measured, char *note,
                       size_t note_size);

#endif
