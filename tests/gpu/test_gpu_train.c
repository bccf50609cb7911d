/* The training step on the CUDA backend against the CPU backend through the check table's train
 * rows (attn/check.c, as `linbench check --pass train` runs them): every variant of every model,
 * and each model that reads --k-schedule once more at k 16, 8, 4, at fp32, fp16 and bf16; a row
 * fails on a gradient past the step's tolerance or an arena's high water not the training plan.
 * Exit 77 without a CUDA device. */
#include <stdio.h>

#include "attn/attention.h"
#include "tests/gpu/gpu_check.h"

int main(void)
{
    lb_test_init("test_gpu_train");
    static const LbDtype dtypes[] = {LB_DTYPE_FP32, LB_DTYPE_FP16, LB_DTYPE_BF16};
    for (int d = 0; d < 3; d++) {
        LbBackend *gpu = lb_gpu_open_or_skip(dtypes[d], 0);
        const LbCheckPlan plan = {0, lb_gpu_next_seed(), LB_SHARE_HEADWISE, LB_ORDER_LATE, LB_KSCHED_UNIFORM, "train",
                                  LB_PASS_TRAIN};
        LbCheckTable t = {0};
        lb_check(lb_check_backend(gpu, &plan, &t) == LB_OK, "the training steps ran: %s", lb_error_where());
        lb_check_rows(&t, 0);
        size_t want = 0;
        for (int kind = 0; kind < LB_MODEL_COUNT; kind++)
            if (kind != LB_MODEL_LINFORMER_MAX || dtypes[d] == LB_DTYPE_FP32)
                want += (size_t)lb_model_desc((LbModelKind)kind)->variants +
                        (lb_model_reads_flag((LbModelKind)kind, "k-schedule") == 1);
        lb_check(t.count == want, "%s: %zu training steps checked, one per variant and per model at --k-schedule halve: %zu",
                 lb_dtype_name(dtypes[d]), t.count, want);
        lb_check_table_free(&t);
        lb_backend_close(gpu);
    }
    return lb_test_finish("test_gpu_train");
}
