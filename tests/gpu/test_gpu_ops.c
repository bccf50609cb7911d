/* The check table (attn/check.h) on the CUDA backend: every op at its full shapes (quick ones
 * under LB_TEST_QUICK, the compute-sanitizer runs) in fp32, fp32 with TF32, fp16 and bf16, and at
 * its quick shapes with the grid capped at 3 blocks, so every block walks many rows. Then what the
 * table cannot express: refusals, a workspace freed while set, and linear's algorithm tuning.
 * Arguments: a comma list of ops to run only those (the checks after the table with linear).
 * Exit 77 without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/check.h"
#include "tests/gpu/gpu_check.h"

static const char *only;

static void run_table(LbDtype dtype, int tf32, int quick, const char *ops)
{
    LbBackend *be = lb_gpu_open_or_skip(dtype, tf32);
    printf("%s%s, %s shapes:\n", lb_dtype_name(dtype), tf32 ? " (tf32)" : "", quick ? "quick" : "full");
    LbCheckPlan plan = {quick, lb_gpu_next_seed(), LB_SHARE_HEADWISE, LB_ORDER_LATE, LB_KSCHED_HALVE, ops,
                        LB_PASS_FORWARD};
    LbCheckTable t = {0};
    lb_check(lb_check_backend(be, &plan, &t) == LB_OK, "the checks ran: %s", lb_error_where());
    lb_check_rows(&t, 0);
    lb_check_table_free(&t);
    lb_backend_close(be);
}

/* One linear through the table's check, at a shape of ours. */
static void linear(LbBackend *be, int64_t rows, int64_t in, int64_t out)
{
    const LbCheckPlan plan = {1, lb_gpu_next_seed(), LB_SHARE_HEADWISE, LB_ORDER_LATE, LB_KSCHED_UNIFORM, NULL,
                              LB_PASS_FORWARD};
    const int64_t shape[8] = {rows, in, out, 1, 0};
    LbCheckTable t = {0};
    lb_gpu_ok(lb_check_op(be, &plan, "linear", shape, &t), "lb_check_op");
    lb_check_rows(&t, 0);
    lb_check_table_free(&t);
}

static void check_refusals(void)
{
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    void *d = lb_gpu_alloc(be, 3 * 24 * 4);
    int rc = be->ops->flash_attention(be, d, d, d, 3 * 24, d, 1, 4, 1, 24, 1.0f);
    lb_check(rc == LB_ERR_INVALID, "flash_attention refuses a head width of 24 (LB_ERR_INVALID), got %d", rc);
    rc = be->ops->flash_attention_backward(be, d, d, d, 3 * 24, d, d, d, d, d, d, 1, 4, 1, 24, 1.0f, d);
    lb_check(rc == LB_ERR_INVALID, "flash_attention_backward refuses a head width of 24, got %d", rc);
    rc = be->ops->pool_seq(be, d, 8, d, 8, 1, 64, 24, 8, LB_POOL_MEAN);
    lb_check(rc == LB_ERR_INVALID, "pool_seq with k 24 not dividing n 64 is refused (LB_ERR_INVALID), got %d", rc);
    rc = be->ops->depthwise_conv_seq(be, d, 8, d, d, 8, 1, 64, 24, 8);
    lb_check(rc == LB_ERR_INVALID, "depthwise_conv_seq with k 24 not dividing n 64 is refused, got %d", rc);
    lb_error_clear();
    be->ops->mem_free(be, d);
    /* The workspace freed while still set (an arena closed): the backend must drop it from cuBLAS
     * itself, and products still run. */
    void *ws = NULL;
    lb_gpu_ok(be->ops->mem_alloc(be, be->workspace_bytes, &ws), "workspace");
    lb_gpu_ok(be->ops->set_workspace(be, ws, be->workspace_bytes), "set_workspace");
    linear(be, 64, 64, 64);
    be->ops->mem_free(be, ws);
    linear(be, 64, 64, 64);
    lb_backend_close(be);
}

/* The ms of one linear call with a bias, of a shape already met (its algorithm chosen). */
static double timed_linear(LbBackend *be, int64_t rows, int64_t in, int64_t out)
{
    void *d_x = lb_gpu_alloc(be, rows * in), *d_w = lb_gpu_alloc(be, out * in), *d_y = lb_gpu_alloc(be, rows * out);
    void *d_b = lb_gpu_alloc(be, out);
    lb_gpu_ok(be->ops->fill_uniform(be, d_x, rows * in, 1, -1.0f, 1.0f), "fill x");
    lb_gpu_ok(be->ops->fill_uniform(be, d_w, out * in, 2, -1.0f, 1.0f), "fill w");
    lb_gpu_ok(be->ops->fill_uniform(be, d_b, out, 3, -1.0f, 1.0f), "fill b");
    double ms = 0;
    lb_gpu_ok(be->ops->timer_start(be), "timer_start");
    lb_gpu_ok(be->ops->linear(be, d_x, d_w, d_b, d_y, rows, in, out, 0), "linear");
    lb_gpu_ok(be->ops->timer_stop(be, &ms), "timer_stop");
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_w);
    be->ops->mem_free(be, d_b);
    be->ops->mem_free(be, d_y);
    return ms;
}

/* Tuning on the emulated device: its heuristic offers 3 algorithms, and LB_EMU_LT_SLOW_ALGO makes
 * the listed ones 5 ms slower per call (on the host clock its events read). With the first slow,
 * the tuning must keep another one (a later call of the shape is fast); with the others slow, the
 * first; with autotune off, nothing is timed and the first runs (a later call is slow). On a GPU,
 * or with no cuBLASLt algorithm, the counts only have to be consistent. Every candidate's product
 * is checked (the rows above ran with tuning on). */
static void check_tuning(void)
{
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    printf("tuning:\n");
    lb_check(be->autotune == 1, "the backend opens with autotuning on");
    lb_check(be->ops->matmul_tuning != NULL, "the CUDA backend reports its tuning");
    LbMatmulTuning t;
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    const char *no_algo = getenv("LB_EMU_LT_NO_ALGO");
    const int emulated = t.host_clock && !(no_algo && *no_algo && *no_algo != '0');
    lb_check(t.shapes == 0 && t.kept_first == 0 && t.gain == 1.0, "nothing tuned before the first product");
    setenv("LB_EMU_LT_SLOW_ALGO", "0", 1);
    linear(be, 24, 40, 56);
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    if (emulated) {
        lb_check(t.shapes == 1 && t.kept_first == 0, "the first algorithm slow: one shape timed, another kept (%lld, %lld)",
                 (long long)t.shapes, (long long)t.kept_first);
        const double ms = timed_linear(be, 24, 40, 56);
        lb_check(ms < 5.0, "and the shape's next call runs the kept one (%.3f ms; the slow one sleeps 5)", ms);
    } else {
        lb_check(t.shapes <= 1 && t.kept_first <= t.shapes, "at most the one shape timed (%lld, %lld)",
                 (long long)t.shapes, (long long)t.kept_first);
    }
    setenv("LB_EMU_LT_SLOW_ALGO", "1,2", 1);
    linear(be, 24, 48, 56);
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    if (emulated)
        lb_check(t.shapes == 2 && t.kept_first == 1, "the others slow: the first kept (%lld shapes, %lld kept the first)",
                 (long long)t.shapes, (long long)t.kept_first);
    lb_backend_close(be);

    be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    be->autotune = 0;
    setenv("LB_EMU_LT_SLOW_ALGO", "0", 1);
    linear(be, 24, 40, 56);
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    lb_check(t.shapes == 0, "autotuning off: nothing timed (%lld)", (long long)t.shapes);
    if (emulated) {
        const double ms = timed_linear(be, 24, 40, 56);
        lb_check(ms >= 4.0, "and the heuristic's first runs (%.3f ms: the slow one)", ms);
    }
    unsetenv("LB_EMU_LT_SLOW_ALGO");
    lb_backend_close(be);
}

int main(int argc, char **argv)
{
    lb_test_init("test_gpu_ops");
    only = argc > 1 ? argv[1] : NULL;
    const int quick = lb_gpu_quick();
    run_table(LB_DTYPE_FP32, 0, quick, only);
    run_table(LB_DTYPE_FP32, 1, quick, only ? only : "linear,bmm,forward");
    run_table(LB_DTYPE_FP16, 0, quick, only);
    run_table(LB_DTYPE_BF16, 0, quick, only);
    printf("grid capped at 3 blocks:\n");
    lb_cuda_set_grid_cap(3);
    run_table(LB_DTYPE_FP16, 0, 1, only);
    run_table(LB_DTYPE_FP32, 0, 1, only);
    lb_cuda_set_grid_cap(0);
    /* Both run products: only where linear is asked for, so that a run over other ops (the
     * racecheck pass over flash, which cuBLASLt's Hopper kernels crash) reaches no cuBLAS call. */
    if (!only || strstr(only, "linear")) {
        check_refusals();
        check_tuning();
    }
    return lb_test_finish("test_gpu_ops");
}
