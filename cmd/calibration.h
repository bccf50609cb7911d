/* The calibration a sweep runs before its first cell (docs/METHOD.md, "Calibration"). */
#ifndef LB_CMD_CALIBRATION_H
#define LB_CMD_CALIBRATION_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS) || defined(LB_LAYER_SWEEP)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/measure/calibrate.h"
#include "attn/config.h"
#include "attn/ops.h"

/* Measure be's product rate and copy bandwidth within `budget`, printing "calibration: ..." on
 * stderr unless quiet. A budget too small is not a failure: "calibration skipped: WHY", 0 with
 * *measured 0. `note` is meta.csv's calibration_note ("" when nothing to say). Any other failure
 * is printed and returned as an exit code. */
int lb_sweep_calibrate(LbBackend *be, uint64_t budget, int quiet, LbCalibration *cal, int *measured, char *note,
                       size_t note_size);

/* When `device_name` (as CUDA names it) is in linbench predict's table (cmd/sweep/predict.h): one
 * line on out after `lead`, the limits predict assumes for it (the datasheet's rate for `storage`
 * (tf32: TF32) and bandwidth, times the default efficiencies) and, with cal, what it measured as a
 * share of the datasheet's. Nothing for a device the table does not hold. */
void lb_print_card_limits(FILE *out, const char *lead, const char *device_name, LbDtype storage, int tf32,
                          const LbCalibration *cal);

#endif
