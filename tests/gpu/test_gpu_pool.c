/* The Linformer's general projections (gpu/pool.cu) against their CPU references lb_pool_seq_cpu
 * and lb_depthwise_conv_seq_cpu (attn/cpu/cpu_ref.h, double), in all three storage types: mean
 * and max pooling and the depthwise convolution, windows of 1, 4 and 64 positions and one of 7
 * (k = n / 7), channels that are and are not a multiple of a warp, read in place with a row stride
 * wider than the channels (keys in the fused Q/K/V output) and written with one (K' and V' side by
 * side), a kernel with more taps than the window (the k schedule reads the first ones), and again
 * with the grid capped so each block walks several rows. Inputs are fresh random values drawn on
 * the device and read back; the output is poisoned with NaN first, so an element left unwritten
 * shows. A k that does not divide n is refused. Exit 77 without a CUDA device (never on the
 * emulator). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn/cpu/cpu_ref.h"
#include "tests/gpu/gpu_check.h"

enum { MEAN = LB_POOL_MEAN, MAX = LB_POOL_MAX, CONV = 2 };

/* The convolution's sum of up to 64 products in fp32 against double: a few ulp more than one
 * rounding. */
static double pool_tol(LbDtype t, int op) { return t == LB_DTYPE_FP32 && op == CONV ? 2e-5 : lb_gpu_kernel_tol(t); }

static void check_one(LbBackend *be, int op, int64_t batch, int64_t n, int64_t k, int64_t channels, int64_t ld_x,
                      int64_t ld_y, int64_t extra_taps)
{
    const int64_t w = n / k, taps = w + extra_taps, xc = batch * n * ld_x, yc = batch * k * ld_y, wc = taps * channels;
    void *d_x = lb_gpu_alloc(be, xc), *d_y = lb_gpu_alloc(be, yc), *d_w = lb_gpu_alloc(be, wc);
    float *x = lb_test_alloc(xc), *wt = lb_test_alloc(wc), *out = lb_test_alloc(yc), *ref = lb_test_alloc(yc);
    lb_gpu_random(be, d_x, x, xc, -2.0f, 2.0f);
    lb_gpu_random(be, d_w, wt, wc, -0.5f, 0.5f);
    lb_gpu_poison(be, d_y, yc);
    for (int64_t i = 0; i < yc; i++)
        ref[i] = NAN; /* the gaps between rows stay poisoned on both sides */
    int rc;
    if (op == CONV)
        rc = be->ops->depthwise_conv_seq(be, d_x, ld_x, d_w, d_y, ld_y, batch, n, k, channels);
    else
        rc = be->ops->pool_seq(be, d_x, ld_x, d_y, ld_y, batch, n, k, channels, op);
    lb_gpu_ok(rc, op == CONV ? "depthwise_conv_seq" : "pool_seq");
    lb_gpu_ok(be->ops->download(be, out, d_y, yc), "download");
    if (op == CONV)
        lb_depthwise_conv_seq_cpu(x, ld_x, wt, ref, ld_y, batch, n, k, channels);
    else
        lb_pool_seq_cpu(x, ld_x, ref, ld_y, batch, n, k, channels, op);
    /* compare the written elements only: rows of `channels` out of rows of ld_y */
    const int64_t count = batch * k * channels;
    float *o = lb_test_alloc(count), *r = lb_test_alloc(count);
    int gaps_ok = 1;
    for (int64_t row = 0; row < batch * k; row++)
        for (int64_t c = 0; c < ld_y; c++) {
            if (c < channels) {
                o[row * channels + c] = out[row * ld_y + c];
                r[row * channels + c] = ref[row * ld_y + c];
            } else {
                gaps_ok &= isnan(out[row * ld_y + c]);
            }
        }
    char what[128];
    snprintf(what, sizeof what, "%s %s B %lld n %lld k %lld C %lld ld %lld/%lld",
             op == CONV ? "conv" : op == MAX ? "max" : "mean", lb_gpu_dtype(be), (long long)batch, (long long)n,
             (long long)k, (long long)channels, (long long)ld_x, (long long)ld_y);
    lb_gpu_check_rel(what, o, r, count, be->storage, pool_tol(be->storage, op));
    lb_check(gaps_ok, "%s: nothing written past the channels of a row", what);
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_y);
    be->ops->mem_free(be, d_w);
    free(x), free(wt), free(out), free(ref), free(o), free(r);
}

static void run_dtype(LbDtype dtype, int capped)
{
    LbBackend *be = lb_gpu_open_or_skip(dtype, 0);
    printf("%s%s:\n", lb_dtype_name(dtype), capped ? ", grid capped at 3 blocks" : "");
    for (int op = MEAN; op <= CONV; op++) {
        check_one(be, op, 2, 64, 16, 24, 72, 48, op == CONV ? 3 : 0); /* K and V in place, K' V' side by side */
        if (capped)
            continue;
        check_one(be, op, 2, 64, 64, 40, 40, 40, 0);  /* window 1: a copy */
        check_one(be, op, 3, 64, 1, 16, 48, 16, 0);   /* one window of all 64 */
        check_one(be, op, 1, 70, 10, 33, 33, 33, 0);  /* window 7, channels past a warp */
        check_one(be, op, 2, 256, 32, 64, 192, 128, 0);
    }
    void *d = lb_gpu_alloc(be, 64 * 8);
    int rc = be->ops->pool_seq(be, d, 8, d, 8, 1, 64, 24, 8, LB_POOL_MEAN);
    lb_check(rc == LB_ERR_INVALID, "pool_seq with k 24 not dividing n 64 is refused (LB_ERR_INVALID), got %d", rc);
    rc = be->ops->depthwise_conv_seq(be, d, 8, d, d, 8, 1, 64, 24, 8);
    lb_check(rc == LB_ERR_INVALID, "depthwise_conv_seq with k 24 not dividing n 64 is refused, got %d", rc);
    be->ops->mem_free(be, d);
    lb_gpu_ok(be->ops->sync(be), "sync");
    lb_backend_close(be);
}

int main(void)
{
    lb_test_init("test_gpu_pool");
    run_dtype(LB_DTYPE_FP16, 0);
    run_dtype(LB_DTYPE_BF16, 0);
    run_dtype(LB_DTYPE_FP32, 0);
    lb_cuda_set_grid_cap(3);
    run_dtype(LB_DTYPE_FP16, 1);
    run_dtype(LB_DTYPE_FP32, 1);
    lb_cuda_set_grid_cap(0);
    return lb_test_finish("test_gpu_pool");
}
