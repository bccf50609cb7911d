/* Calibration and the per-operation breakdown on the CUDA backend, and the two ops they add: copy
 * (overlap refused) and gelu (linear with GELU equals linear then gelu, bit for bit, which the
 * breakdown relies on when it times the GELU pass apart). Calibration: rates positive, below any
 * GPU's, and on a real GPU above 1 TFLOP/s and 100 GB/s. Breakdown: every variant of every model
 * through tests/lib/forward.h's checks (the roles the model shows on the CPU, their sum, the
 * FLOPs). Exit 77 without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/measure/calibrate.h"
#include "tests/gpu/gpu_check.h"
#include "tests/lib/forward.h"

static void check_ops(LbBackend *be)
{
    const int64_t rows = 37, in = 24, out = 40;
    float *hx = lb_test_alloc(rows * in), *hw = lb_test_alloc(out * in), *hb = lb_test_alloc(out);
    float *y1 = lb_test_alloc(rows * out), *y2 = lb_test_alloc(rows * out);
    void *x = lb_gpu_alloc(be, rows * in), *w = lb_gpu_alloc(be, out * in), *b = lb_gpu_alloc(be, out);
    void *d1 = lb_gpu_alloc(be, rows * out), *d2 = lb_gpu_alloc(be, rows * out);
    lb_gpu_random(be, x, hx, rows * in, -2, 2);
    lb_gpu_random(be, w, hw, out * in, -0.5f, 0.5f);
    lb_gpu_random(be, b, hb, out, -1, 1);
    lb_gpu_ok(be->ops->linear(be, x, w, b, d1, rows, in, out, 1), "linear with GELU");
    lb_gpu_ok(be->ops->linear(be, x, w, b, d2, rows, in, out, 0), "linear");
    lb_gpu_ok(be->ops->gelu(be, d2, rows, out), "gelu");
    lb_gpu_ok(be->ops->download(be, y1, d1, rows * out), "download");
    lb_gpu_ok(be->ops->download(be, y2, d2, rows * out), "download");
    lb_check(memcmp(y1, y2, (size_t)(rows * out) * sizeof *y1) == 0, "%s: linear+gelu op differs from linear(gelu)",
             lb_gpu_dtype(be));
    /* copy's values are the check table's (attn/check.c); overlapping ranges refused */
    lb_check(be->ops->copy(be, lb_gpu_at(be, d1, 1), d1, 8 * be->elem_bytes) == LB_ERR_INVALID,
             "overlapping copy not refused");
    void *ptrs[] = {x, w, b, d1, d2};
    for (int i = 0; i < 5; i++)
        be->ops->mem_free(be, ptrs[i]);
    free(hx), free(hw), free(hb), free(y1), free(y2);
}

int main(void)
{
    lb_test_init("test_gpu_breakdown");
    const int emulated = getenv("LB_TEST_EMULATED") != NULL;
    const LbDtype dtypes[] = {LB_DTYPE_FP16, LB_DTYPE_BF16, LB_DTYPE_FP32};
    for (int di = 0; di < (emulated ? 2 : 3); di++) {
        LbBackend *be = lb_gpu_open_or_skip(dtypes[di], 0);
        check_ops(be);

        LbCalibrateOptions opt = lb_calibrate_defaults();
        if (emulated) {
            opt.target_ms = 5; /* the emulator multiplies on the CPU: stay small */
            opt.max_dim = 512;
            opt.max_copy = (size_t)16 << 20;
        }
        LbCalibration cal;
        int rc = lb_calibrate(be, &opt, &cal);
        if (lb_check(rc == LB_OK, "%s: calibrate: %s", lb_gpu_dtype(be), lb_error_message())) {
            printf("%s: product %lld^3 %.3f ms = %.3f TFLOP/s; copy %lld bytes %.3f ms = %.1f GB/s%s\n",
                   lb_gpu_dtype(be), (long long)cal.dim, cal.product_ms, cal.tflop_per_s, (long long)cal.copy_bytes,
                   cal.copy_ms, cal.copy_gb_per_s, emulated ? " (emulated: not a GPU measurement)" : "");
            lb_check(cal.tflop_per_s > 0 && cal.tflop_per_s < 1e4, "%s: %g TFLOP/s", lb_gpu_dtype(be), cal.tflop_per_s);
            lb_check(cal.copy_gb_per_s > 0 && cal.copy_gb_per_s < 1e5, "%s: %g GB/s", lb_gpu_dtype(be), cal.copy_gb_per_s);
            /* A GPU's rates, not a unit slip; but not under compute-sanitizer (LB_TEST_QUICK), whose
             * instrumented products run far slower. */
            if (!emulated && !lb_gpu_quick())
                lb_check(cal.tflop_per_s > 1 && cal.copy_gb_per_s > 100, "%s: %g TFLOP/s, %g GB/s: no GPU's",
                         lb_gpu_dtype(be), cal.tflop_per_s, cal.copy_gb_per_s);
        }

        const int64_t B = 2, n = emulated ? 32 : 64, k = 8;
        for (int v = 0; v < LB_TEST_VARIANTS; v++) {
            LbModelConfig c = lb_test_variant(v, n, k);
            c.dtype = dtypes[di];
            char model[96], name[128];
            LbBreakdown b;
            snprintf(name, sizeof name, "%s %s", lb_gpu_dtype(be), lb_test_variant_name(&c, model, sizeof model));
            lb_test_breakdown(be, &c, B, 3, name, &b); /* exactly the roles the model shows on the CPU */
        }
        lb_backend_close(be);
    }
    return lb_test_finish("test_gpu_breakdown");
}
