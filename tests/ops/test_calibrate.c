/* lb_calibrate on the CPU reference: real figures positive and plausible; with a scripted timer,
 * the sizes, medians and rates exactly as the method says; a memory limit stops the doubling, a
 * smaller one starts below 256 and 1 MiB, a device with less memory steps down, only what fits
 * nowhere is NOMEM; bad options refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attn/measure/calibrate.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"

static const double *script;
static int script_len, script_at;
static const LbOps *real_ops;

static int scripted_stop(LbBackend *be, double *ms)
{
    double ignored;
    LB_TRY(real_ops->timer_stop(be, &ignored));
    *ms = script[script_at++ % script_len];
    return LB_OK;
}

int main(void)
{
    lb_test_init("test_calibrate");
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP16, (size_t)512 << 20, &be) == LB_OK, "open: %s",
                  lb_error_message()))
        return lb_test_finish("test_calibrate");

    /* A real run, kept short: a CPU reference product runs at well under 1 TFLOP/s and over
     * 1 MFLOP/s; memcpy between 0.1 and 1000 GB/s (read + written). */
    LbCalibrateOptions opt = lb_calibrate_defaults();
    opt.target_ms = 10.0;
    opt.reps = 3;
    LbCalibration cal;
    int rc = lb_calibrate(be, &opt, &cal);
    if (lb_check(rc == LB_OK, "calibrate: %s", lb_error_message())) {
        printf("cpu: product %lld^3 %.3f ms = %.4f TFLOP/s, copy %lld bytes %.3f ms = %.2f GB/s\n",
               (long long)cal.dim, cal.product_ms, cal.tflop_per_s, (long long)cal.copy_bytes, cal.copy_ms,
               cal.copy_gb_per_s);
        lb_check(cal.tflop_per_s > 1e-6 && cal.tflop_per_s < 1.0, "product rate %g TFLOP/s is no CPU's",
                 cal.tflop_per_s);
        lb_check(cal.copy_gb_per_s > 0.1 && cal.copy_gb_per_s < 1000.0, "copy %g GB/s is no CPU's",
                 cal.copy_gb_per_s);
        lb_check(cal.dim >= 256 && cal.dim <= opt.max_dim && (cal.dim & (cal.dim - 1)) == 0,
                 "product size %lld", (long long)cal.dim);
        lb_check(cal.copy_bytes >= (1 << 20) && (size_t)cal.copy_bytes <= opt.max_copy, "copy size %lld",
                 (long long)cal.copy_bytes);
        const double d = (double)cal.dim;
        lb_check(fabs(cal.tflop_per_s - 2 * d * d * d / (cal.product_ms * 1e-3) / 1e12) <= 1e-12 * cal.tflop_per_s,
                 "rate %g is not 2 dim^3 / median", cal.tflop_per_s);
        lb_check(cal.reps == 3, "reps %d", cal.reps);
    }

    /* Scripted timer: product probe at 256 takes 40 ms >= 25 (stop), its 5 repetitions 10 30 20 90
     * 40 (median 30; mean 38, midrange 50); copy probes 10 (< 25: double), 30 (stop at 2 MiB),
     * repetitions 20 90 40 10 30 (median 30). */
    static const double times[] = {40, 10, 30, 20, 90};
    LbOps scripted = *be->ops;
    scripted.timer_stop = scripted_stop;
    const LbOps *real = be->ops;
    real_ops = real;
    be->ops = &scripted;
    script = times;
    script_len = 5;
    script_at = 0;
    opt = lb_calibrate_defaults();
    rc = lb_calibrate(be, &opt, &cal);
    if (lb_check(rc == LB_OK, "scripted calibrate: %s", lb_error_message())) {
        lb_check(cal.dim == 256 && cal.product_ms == 30.0, "product: dim %lld median %g, want 256 and 30",
                 (long long)cal.dim, cal.product_ms);
        lb_check(cal.copy_bytes == (2 << 20) && cal.copy_ms == 30.0, "copy: %lld bytes median %g, want 2 MiB and 30",
                 (long long)cal.copy_bytes, cal.copy_ms);
        const double want_tf = 2.0 * 256 * 256 * 256 / 0.030 / 1e12, want_gb = 2.0 * (2 << 20) / 0.030 / 1e9;
        lb_check(fabs(cal.tflop_per_s - want_tf) <= 1e-12 * want_tf, "TFLOP/s %.17g, want %.17g", cal.tflop_per_s,
                 want_tf);
        lb_check(fabs(cal.copy_gb_per_s - want_gb) <= 1e-12 * want_gb, "GB/s %.17g, want %.17g", cal.copy_gb_per_s,
                 want_gb);
    }

    /* Every repetition 1 ms: the sizes double to their caps. */
    static const double fast[] = {1};
    script = fast;
    script_len = 1;
    opt.max_dim = 1024;
    opt.max_copy = (size_t)8 << 20;
    rc = lb_calibrate(be, &opt, &cal);
    lb_check(rc == LB_OK && cal.dim == 1024 && cal.copy_bytes == (8 << 20),
             "caps: rc %s, dim %lld (want 1024), copy %lld (want 8 MiB)", lb_status_name(rc), (long long)cal.dim,
             (long long)cal.copy_bytes);
    be->ops = real;
    lb_backend_close(be);

    /* 2.5 MiB of memory: a product of 512 (3 MiB in fp32) and a copy of 2 MiB (4 MiB) do not fit,
     * so the doubling stops at 256 and 1 MiB. */
    be = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)5 << 19, &be) == LB_OK, "open small: %s",
                 lb_error_message())) {
        scripted = *be->ops;
        scripted.timer_stop = scripted_stop;
        be->ops = &scripted;
        opt = lb_calibrate_defaults();
        rc = lb_calibrate(be, &opt, &cal);
        lb_check(rc == LB_OK && cal.dim == 256 && cal.copy_bytes == (1 << 20),
                 "2.5 MiB: rc %s, dim %lld (want 256), copy %lld (want 1 MiB)", lb_status_name(rc),
                 (long long)cal.dim, (long long)cal.copy_bytes);
        be->ops = real;
        lb_backend_close(be);
    }
    /* A budget of 1 MiB (--mem-limit's least) on a large device: the product of 256 (768 KiB in
     * fp32) fits and doubles no further; the copy starts at 512 KiB (1 MiB with its destination)
     * instead of 1 MiB, and the result says memory chose the sizes. */
    be = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)64 << 20, &be) == LB_OK, "open: %s", lb_error_message())) {
        scripted = *be->ops;
        scripted.timer_stop = scripted_stop;
        be->ops = &scripted;
        script = fast;
        script_len = 1;
        opt = lb_calibrate_defaults();
        opt.max_bytes = (size_t)1 << 20;
        rc = lb_calibrate(be, &opt, &cal);
        lb_check(rc == LB_OK && cal.dim == 256 && cal.copy_bytes == (1 << 19) && cal.limited_by_memory,
                 "1 MiB budget: rc %s (%s), dim %lld (want 256), copy %lld (want 512 KiB), limited %d", lb_status_name(rc),
                 lb_error_message(), (long long)cal.dim, (long long)cal.copy_bytes, cal.limited_by_memory);
        /* 100 KiB: a product of 64 (48 KiB) fits, no copy of 64 KiB (128 KiB) does: NOMEM, its
         * message naming the budget (the user's term), not the options. */
        opt.max_bytes = (size_t)100 << 10;
        rc = lb_calibrate(be, &opt, &cal);
        lb_check(rc == LB_ERR_NOMEM && strstr(lb_error_message(), "memory budget of 100 KiB") &&
                     strstr(lb_error_message(), "copy"),
                 "100 KiB budget: %s, want NOMEM naming the budget and the copy: %s", lb_status_name(rc),
                 lb_error_message());
        be->ops = real;
        lb_backend_close(be);
    }
    /* A device of 512 KiB, the budget the default 1 GiB: the product of 256 does not get its
     * memory, so the sizes step down until one runs (128: 192 KiB) and grow no more; the copy
     * likewise (at most 256 KiB: 512 KiB with its destination). */
    be = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 19, &be) == LB_OK, "open tiny: %s",
                 lb_error_message())) {
        opt = lb_calibrate_defaults();
        opt.target_ms = 1e9; /* never reached: only memory stops the sizes */
        opt.reps = 1;
        rc = lb_calibrate(be, &opt, &cal);
        lb_check(rc == LB_OK && cal.dim == 128 && cal.copy_bytes >= (64 << 10) && cal.copy_bytes <= (256 << 10) &&
                     cal.limited_by_memory,
                 "512 KiB device: rc %s (%s), dim %lld (want 128), copy %lld (want 64 to 256 KiB), limited %d",
                 lb_status_name(rc), lb_error_message(), (long long)cal.dim, (long long)cal.copy_bytes,
                 cal.limited_by_memory);
        opt.reps = 0;
        rc = lb_calibrate(be, &opt, &cal);
        lb_check(rc == LB_ERR_INVALID, "reps 0: %s, want INVALID", lb_status_name(rc));
        lb_backend_close(be);
    }
    /* A device of 64 KiB: the product of 32 (12 KiB) runs, no copy of 64 KiB gets its 128: NOMEM. */
    be = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)64 << 10, &be) == LB_OK, "open 64 KiB: %s",
                 lb_error_message())) {
        opt = lb_calibrate_defaults();
        rc = lb_calibrate(be, &opt, &cal);
        lb_check(rc == LB_ERR_NOMEM, "64 KiB device: %s, want NOMEM", lb_status_name(rc));
        lb_backend_close(be);
    }
    return lb_test_finish("test_calibrate");
}
