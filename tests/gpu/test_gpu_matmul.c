/* The CUDA backend's matrix products against the CPU reference: linear (no bias, bias, bias +
 * erf GELU; aligned and odd shapes; TF32 on and off for fp32) against lb_linear_cpu, and bmm
 * (every trans combination, padded leading dimensions and strides, stride 0 broadcast of either
 * operand, alpha != 1, a batch past 65535 that the backend splits) against lb_bmm_cpu; in all
 * three storage types. Inputs are random values drawn on the device and read back; outputs are
 * poisoned with NaN first, and padding between rows of C must stay NaN (nothing written outside
 * the product). linear's algorithm tuning: each candidate computes the product (every check runs
 * with it on), and on the emulated device, where LB_EMU_LT_SLOW_ALGO slows chosen candidates,
 * the tuning keeps a fast one and --no-autotune (LbBackend.autotune 0) the heuristic's first.
 * Exit 77 without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/cpu/cpu_ref.h"
#include "tests/gpu/gpu_check.h"

/* Products: inputs exact in the storage type, fp32 accumulation, one rounding of the output
 * (two with GELU: after the bias epilogue and after GELU), against double accumulation. fp32 with
 * TF32 off is fp32 arithmetic (~1e-7); TF32 rounds the inputs to 10 mantissa bits (METHOD.md:
 * near 3e-4). */
static double matmul_tol(const LbBackend *be, int gelu)
{
    switch (be->storage) {
    case LB_DTYPE_FP16: return gelu ? 2e-3 : 1e-3;
    case LB_DTYPE_BF16: return gelu ? 1.5e-2 : 8e-3;
    default: return be->tf32 ? 2e-3 : 1e-5;
    }
}

static void check_linear(LbBackend *be, int64_t rows, int64_t in, int64_t out, int bias, int gelu)
{
    void *d_x = lb_gpu_alloc(be, rows * in), *d_w = lb_gpu_alloc(be, out * in);
    void *d_b = lb_gpu_alloc(be, out), *d_y = lb_gpu_alloc(be, rows * out);
    float *x = lb_test_alloc(rows * in), *w = lb_test_alloc(out * in), *b = lb_test_alloc(out);
    float *ref = lb_test_alloc(rows * out), *y = lb_test_alloc(rows * out);
    const float a = 1.0f / sqrtf((float)in);
    lb_gpu_random(be, d_x, x, rows * in, -1.0f, 1.0f);
    lb_gpu_random(be, d_w, w, out * in, -a, a);
    lb_gpu_random(be, d_b, b, out, -0.5f, 0.5f);
    lb_gpu_poison(be, d_y, rows * out);
    lb_gpu_ok(be->ops->linear(be, d_x, d_w, bias ? d_b : NULL, d_y, rows, in, out, gelu), "linear");
    lb_gpu_ok(be->ops->download(be, y, d_y, rows * out), "download");
    lb_linear_cpu(x, w, bias ? b : NULL, ref, rows, in, out, gelu);
    char what[128];
    snprintf(what, sizeof what, "linear %s%s %lld x %lld -> %lld%s%s", lb_gpu_dtype(be),
             be->tf32 ? "+tf32" : "", (long long)rows, (long long)in, (long long)out,
             bias ? " bias" : "", gelu ? " gelu" : "");
    lb_gpu_check_rel(what, y, ref, rows * out, be->storage, matmul_tol(be, gelu));
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_w);
    be->ops->mem_free(be, d_b);
    be->ops->mem_free(be, d_y);
    free(x);
    free(w);
    free(b);
    free(ref);
    free(y);
}

/* Elements a batched operand spans: (batch - 1) * stride + rows * ld (at least one matrix). */
static int64_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (batch - 1) * stride + rows * ld;
}

/* One bmm as described by q (pointers ignored): random A and B, poisoned C, compare the m x n
 * blocks with lb_bmm_cpu and check the padding of C was left alone. */
static void check_bmm(LbBackend *be, LbBmm q, const char *label)
{
    const int64_t rows_a = q.trans_a ? q.kdim : q.m, rows_b = q.trans_b ? q.n : q.kdim;
    const int64_t ea = extent(q.batch, q.stride_a, rows_a, q.lda);
    const int64_t eb = extent(q.batch, q.stride_b, rows_b, q.ldb);
    const int64_t ec = extent(q.batch, q.stride_c, q.m, q.ldc);
    void *d_a = lb_gpu_alloc(be, ea), *d_b = lb_gpu_alloc(be, eb), *d_c = lb_gpu_alloc(be, ec);
    float *a = lb_test_alloc(ea), *b = lb_test_alloc(eb), *c = lb_test_alloc(ec), *ref = lb_test_alloc(ec);
    lb_gpu_random(be, d_a, a, ea, -1.0f, 1.0f);
    lb_gpu_random(be, d_b, b, eb, -1.0f, 1.0f);
    lb_gpu_poison(be, d_c, ec);
    LbBmm g = q;
    g.a = d_a;
    g.b = d_b;
    g.c = d_c;
    lb_gpu_ok(be->ops->bmm(be, &g), "bmm");
    lb_gpu_ok(be->ops->download(be, c, d_c, ec), "download");
    lb_test_poison(ref, ec);
    LbBmm h = q;
    h.a = a;
    h.b = b;
    h.c = ref;
    lb_bmm_cpu(&h);
    /* Gather the products; everything else of C must still be NaN. */
    const int64_t count = q.batch * q.m * q.n;
    float *out = lb_test_alloc(count), *want = lb_test_alloc(count);
    int64_t k = 0, written_padding = 0;
    char *is_product = calloc((size_t)ec, 1);
    for (int64_t i = 0; i < q.batch; i++)
        for (int64_t r = 0; r < q.m; r++)
            for (int64_t j = 0; j < q.n; j++) {
                const int64_t at = i * q.stride_c + r * q.ldc + j;
                out[k] = c[at];
                want[k] = ref[at];
                is_product[at] = 1;
                k++;
            }
    for (int64_t i = 0; i < ec; i++)
        if (!is_product[i] && !isnan(c[i]))
            written_padding++;
    char what[160];
    snprintf(what, sizeof what, "bmm %s %s ta %d tb %d m %lld n %lld k %lld batch %lld", lb_gpu_dtype(be),
             label, q.trans_a, q.trans_b, (long long)q.m, (long long)q.n, (long long)q.kdim,
             (long long)q.batch);
    lb_gpu_check_rel(what, out, want, count, be->storage, matmul_tol(be, 0));
    lb_check(written_padding == 0, "%s: %lld elements written outside the products", what,
             (long long)written_padding);
    be->ops->mem_free(be, d_a);
    be->ops->mem_free(be, d_b);
    be->ops->mem_free(be, d_c);
    free(a);
    free(b);
    free(c);
    free(ref);
    free(out);
    free(want);
    free(is_product);
}

static LbBmm bmm_shape(int ta, int tb, int64_t m, int64_t n, int64_t kdim, int64_t batch, int64_t pad)
{
    LbBmm q;
    memset(&q, 0, sizeof q);
    q.trans_a = ta;
    q.trans_b = tb;
    q.m = m;
    q.n = n;
    q.kdim = kdim;
    q.alpha = 1.0f;
    q.batch = batch;
    q.lda = (ta ? m : kdim) + pad;
    q.ldb = (tb ? kdim : n) + pad;
    q.ldc = n + pad;
    q.stride_a = (ta ? kdim : m) * q.lda + pad;
    q.stride_b = (tb ? n : kdim) * q.ldb + pad;
    q.stride_c = m * q.ldc + pad;
    return q;
}

static void run_dtype(LbDtype dtype, int tf32)
{
    LbBackend *be = lb_gpu_open_or_skip(dtype, tf32);
    printf("%s%s:\n", lb_dtype_name(dtype), tf32 ? " (tf32)" : "");
    /* The workspace the arena would hand over, so the products run as in a forward pass. */
    void *ws = NULL;
    lb_gpu_ok(be->ops->mem_alloc(be, be->workspace_bytes, &ws), "workspace");
    lb_gpu_ok(be->ops->set_workspace(be, ws, be->workspace_bytes), "set_workspace");

    /* RoBERTa-like shapes (QKV, FFN up and down), small and odd ones. */
    static const int64_t shapes[][3] = {{256, 64, 192}, {200, 768, 3072}, {130, 3072, 768},
                                        {37, 50, 70},   {1, 64, 64},      {64, 1, 5}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int mode = 0; mode < 3; mode++)
            check_linear(be, shapes[s][0], shapes[s][1], shapes[s][2], mode >= 1, mode == 2);

    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            LbBmm q = bmm_shape(ta, tb, 37, 45, 29, 3, 3);
            q.alpha = 0.75f;
            check_bmm(be, q, "padded");
            check_bmm(be, bmm_shape(ta, tb, 128, 64, 64, 24, 0), "tight");
        }
    /* Attention's products: scores Q K^T over (B h), then P V. */
    check_bmm(be, bmm_shape(0, 1, 200, 200, 16, 8, 0), "scores");
    check_bmm(be, bmm_shape(0, 0, 200, 16, 200, 8, 0), "P V");
    /* Linformer's compression: one E (k, n) broadcast over the batch (stride 0), and the same
     * with B broadcast. */
    LbBmm e = bmm_shape(0, 0, 32, 64, 200, 5, 0);
    e.stride_a = 0;
    check_bmm(be, e, "stride_a 0");
    LbBmm f = bmm_shape(0, 1, 40, 24, 48, 5, 2);
    f.stride_b = 0;
    check_bmm(be, f, "stride_b 0");
    /* More batches than one call takes (65535): the backend splits. */
    check_bmm(be, bmm_shape(0, 1, 2, 3, 4, 70001, 0), "split batch");
    /* The workspace freed while still set (an arena closed): the backend must drop it from
     * cuBLAS itself, and products still run. */
    be->ops->mem_free(be, ws);
    check_linear(be, 64, 64, 64, 1, 1);
    lb_gpu_ok(be->ops->sync(be), "sync");
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
 * or with no cuBLASLt algorithm, the counts only have to be consistent. */
static void check_tuning(void)
{
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    printf("tuning:\n");
    lb_check(be->autotune == 1, "the backend opens with autotuning on");
    lb_check(be->ops->matmul_tuning != NULL, "the CUDA backend reports its tuning");
    LbMatmulTuning t;
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    /* LB_EMU_LT_NO_ALGO (test_gpu_matmul_emu_no_lt_algo): no algorithm, nothing to choose */
    const char *no_algo = getenv("LB_EMU_LT_NO_ALGO");
    const int emulated = t.host_clock && !(no_algo && *no_algo && *no_algo != '0');
    lb_check(t.shapes == 0 && t.kept_first == 0 && t.gain == 1.0, "nothing tuned before the first product");
    setenv("LB_EMU_LT_SLOW_ALGO", "0", 1);
    check_linear(be, 24, 40, 56, 1, 0);
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    if (emulated) {
        lb_check(t.shapes == 1 && t.kept_first == 0, "the first algorithm slow: one shape timed, another kept (%lld, %lld)",
                 (long long)t.shapes, (long long)t.kept_first);
        const double ms = timed_linear(be, 24, 40, 56);
        lb_check(ms < 4.0, "and the shape's next call runs the kept one (%.3f ms, the first takes 5 more)", ms);
    } else {
        lb_check(t.shapes <= 1 && t.kept_first <= t.shapes, "at most the one shape timed (%lld, %lld)",
                 (long long)t.shapes, (long long)t.kept_first);
    }
    setenv("LB_EMU_LT_SLOW_ALGO", "1,2", 1);
    check_linear(be, 24, 48, 56, 1, 0);
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    if (emulated)
        lb_check(t.shapes == 2 && t.kept_first == 1, "the others slow: the first kept (%lld shapes, %lld kept the first)",
                 (long long)t.shapes, (long long)t.kept_first);
    lb_backend_close(be);

    be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    be->autotune = 0;
    setenv("LB_EMU_LT_SLOW_ALGO", "0", 1);
    check_linear(be, 24, 40, 56, 1, 0);
    lb_gpu_ok(be->ops->matmul_tuning(be, &t), "matmul_tuning");
    lb_check(t.shapes == 0, "autotuning off: nothing timed (%lld)", (long long)t.shapes);
    if (emulated) {
        const double ms = timed_linear(be, 24, 40, 56);
        lb_check(ms >= 4.0, "and the heuristic's first runs (%.3f ms: the slow one)", ms);
    }
    unsetenv("LB_EMU_LT_SLOW_ALGO");
    lb_backend_close(be);
}

int main(void)
{
    lb_test_init("test_gpu_matmul");
    run_dtype(LB_DTYPE_FP32, 0);
    run_dtype(LB_DTYPE_FP32, 1);
    run_dtype(LB_DTYPE_FP16, 0);
    run_dtype(LB_DTYPE_BF16, 0);
    check_tuning();
    return lb_test_finish("test_gpu_matmul");
}
