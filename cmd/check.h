/* The check as cmd/ uses it: `linbench check` (cmd/cmd_check.c) and the quick check that sweep
 * and run do before measuring, whose verdict goes into meta.csv. */
#ifndef LB_CMD_CHECK_H
#define LB_CMD_CHECK_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS) || defined(LB_LAYER_SWEEP)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>
#include <stdint.h>

#include "attn/check.h"
#include "attn/config.h"
#include "attn/ops.h"
#include "cmd/sweep/engine.h" /* LbCheckResult */

/* The quick check (few shapes per op at the backend's dtype, one small forward per model, the
 * Linformer with model's sharing and order). Returns 0 when it passed; otherwise prints one line
 * naming the first failing check and returns LB_EXIT_FAILURE. res is filled either way. */
int lb_quick_check(LbBackend *be, const LbModelConfig *model, LbCheckResult *res);

/* "  what  12.4 (12040)": a CUDA version (1000 x major + 10 x minor; < 0 unknown), `what` padded
 * to width, as check and info list them. */
void lb_print_version(int width, const char *what, int v);

#endif
