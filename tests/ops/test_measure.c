/* What a measurement reads besides the time, one case each (LB_TEST_CASE=NAME runs one): the
 * calibration, the clock-event reasons, the CPU's energy counter; and a cell's statistics from a
 * scripted timer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/measure/calibrate.h"
#include "attn/measure/clock_events.h"
#include "attn/measure/measure.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/cases.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

/* lb_calibrate on the CPU reference: real figures positive and plausible; with a scripted timer,
 * the sizes, medians and rates exactly as the method says; a memory limit stops the doubling, a
 * smaller one starts below 256 and 1 MiB, a device with less memory steps down, only what fits
 * nowhere is NOMEM; bad options refused. */
static const double *script;
static int script_len, script_at;
static const LbOps *real_ops;

static LbOps scripted;

static int scripted_stop(LbBackend *be, double *ms)
{
    double ignored;
    LB_TRY(real_ops->timer_stop(be, &ignored));
    *ms = script[script_at++ % script_len];
    return LB_OK;
}

/* A CPU backend of `bytes` whose timer reads the script; NULL (a failed check) when none opens. */
static LbBackend *open_scripted(LbDtype dtype, size_t bytes)
{
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(dtype, bytes, &be) == LB_OK, "open %zu bytes: %s", bytes, lb_error_message()))
        return NULL;
    real_ops = be->ops;
    scripted = *be->ops;
    scripted.timer_stop = scripted_stop;
    be->ops = &scripted;
    return be;
}

static void test_calibrate(void)
{
    LbBackend *be = open_scripted(LB_DTYPE_FP16, (size_t)512 << 20);
    if (!be)
        return;
    be->ops = real_ops;

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
    lb_backend_close(be);

    /* Every repetition 1 ms: only the caps and memory stop the sizes. */
    static const double fast[] = {1};
    script = fast;
    script_len = 1;
    static const struct {
        const char *what;
        size_t device, budget; /* budget 0: the default 1 GiB */
        int64_t max_dim;       /* 0: the default; max_copy likewise */
        size_t max_copy;
        int reps, rc;
        int64_t dim, copy_lo, copy_hi;
        int limited;
        const char *says; /* where rc is an error: in its message, with the part that failed */
    } cases[] = {
        /* the sizes double to their caps */
        {"caps of 1024 and 8 MiB", 512 << 20, 0, 1024, 8 << 20, 5, LB_OK, 1024, 8 << 20, 8 << 20, 0, NULL},
        /* a product of 512 (3 MiB in fp32) and a copy of 2 MiB (4 MiB) do not fit, so the
         * doubling stops at 256 and 1 MiB */
        {"2.5 MiB device", 5 << 19, 0, 0, 0, 5, LB_OK, 256, 1 << 20, 1 << 20, 1, NULL},
        /* --mem-limit's least on a large device: the product of 256 (768 KiB in fp32) fits and
         * doubles no further; the copy starts at 512 KiB (1 MiB with its destination) instead of
         * 1 MiB, and the result says memory chose the sizes */
        {"1 MiB budget", 64 << 20, 1 << 20, 0, 0, 5, LB_OK, 256, 1 << 19, 1 << 19, 1, NULL},
        /* a product of 64 (48 KiB) fits, no copy of 64 KiB (128 KiB) does: NOMEM, its message
         * naming the budget (the user's term), not the options */
        {"100 KiB budget", 64 << 20, 100 << 10, 0, 0, 5, LB_ERR_NOMEM, 0, 0, 0, 0, "memory budget of 100 KiB"},
        /* the product of 256 does not get its memory, so the sizes step down until one runs (128:
         * 192 KiB) and grow no more; the copy likewise (at most 256 KiB: 512 KiB with its
         * destination) */
        {"512 KiB device", 1 << 19, 0, 0, 0, 1, LB_OK, 128, 64 << 10, 256 << 10, 1, NULL},
        {"reps 0", 1 << 19, 0, 0, 0, 0, LB_ERR_INVALID, 0, 0, 0, 0, "reps"},
        /* the product of 32 (12 KiB) runs, no copy of 64 KiB gets its 128 */
        {"64 KiB device", 64 << 10, 0, 0, 0, 5, LB_ERR_NOMEM, 0, 0, 0, 0, "copy"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!(be = open_scripted(LB_DTYPE_FP32, cases[i].device)))
            continue;
        opt = lb_calibrate_defaults();
        opt.reps = cases[i].reps;
        opt.max_bytes = cases[i].budget ? cases[i].budget : opt.max_bytes;
        opt.max_dim = cases[i].max_dim ? cases[i].max_dim : opt.max_dim;
        opt.max_copy = cases[i].max_copy ? cases[i].max_copy : opt.max_copy;
        rc = lb_calibrate(be, &opt, &cal);
        if (cases[i].rc != LB_OK)
            lb_check(rc == cases[i].rc && strstr(lb_error_message(), cases[i].says) &&
                         (rc != LB_ERR_NOMEM || strstr(lb_error_message(), "copy")),
                     "%s: %s, want %s naming \"%s\" and the copy: %s", cases[i].what, lb_status_name(rc),
                     lb_status_name(cases[i].rc), cases[i].says, lb_error_message());
        else
            lb_check(rc == LB_OK && cal.dim == cases[i].dim && cal.copy_bytes >= cases[i].copy_lo &&
                         cal.copy_bytes <= cases[i].copy_hi && cal.limited_by_memory == cases[i].limited,
                     "%s: rc %s (%s), dim %lld (want %lld), copy %lld (want %lld to %lld), limited %d",
                     cases[i].what, lb_status_name(rc), lb_error_message(), (long long)cal.dim,
                     (long long)cases[i].dim, (long long)cal.copy_bytes, (long long)cases[i].copy_lo,
                     (long long)cases[i].copy_hi, cal.limited_by_memory);
        lb_error_clear();
        lb_backend_close(be);
    }
}

/* Clock-event reasons (attn/measure/clock_events.h): names and back for every bit and unknown ones, the
 * refusal of a buffer too small and of an unknown name, and which reasons flag a slowdown. */
static void test_clock_events(void)
{
    char buf[256];
    uint64_t back = 0;
    for (int bit = 0; bit < 12; bit++) {
        const uint64_t m = 1ull << bit;
        lb_check(lb_clock_events_text(m, buf, sizeof buf) == 0 && lb_clock_events_parse(buf, &back) == 0 && back == m,
                 "bit %d: \"%s\" reads back as 0x%llx", bit, buf, (unsigned long long)back);
    }
    const uint64_t mix = LB_CLOCK_EVENT_SW_POWER_CAP | LB_CLOCK_EVENT_HW_THERMAL | (1ull << 40);
    lb_check(lb_clock_events_text(mix, buf, sizeof buf) == 0 && strcmp(buf, "sw_power_cap+hw_thermal+0x10000000000") == 0,
             "a mix reads \"%s\"", buf);
    lb_check(lb_clock_events_parse(buf, &back) == 0 && back == mix, "the mix reads back as 0x%llx", (unsigned long long)back);
    lb_check(lb_clock_events_text(0, buf, sizeof buf) == 0 && strcmp(buf, "none") == 0, "no reasons read \"%s\"", buf);
    lb_check(lb_clock_events_parse("none", &back) == 0 && back == 0, "none reads back as 0x%llx", (unsigned long long)back);
    lb_check(lb_clock_events_text(mix, buf, 8) == -1, "a buffer too small is refused, not cut");
    lb_check(lb_clock_events_parse("sw_power_cap+melting", &back) == -1, "an unknown name is refused");
    lb_check((LB_CLOCK_EVENT_SW_POWER_CAP & LB_CLOCK_EVENTS_SLOWDOWN) == 0 && (LB_CLOCK_EVENT_GPU_IDLE & LB_CLOCK_EVENTS_SLOWDOWN) == 0,
             "the power cap or idle flag a slowdown");
    lb_check((LB_CLOCK_EVENT_HW_THERMAL & LB_CLOCK_EVENTS_SLOWDOWN) && (LB_CLOCK_EVENT_HW_SLOWDOWN & LB_CLOCK_EVENTS_SLOWDOWN),
             "thermal or hardware slowdown does not flag");
    return;
}

/* The CPU reference's energy counter (attn/cpu/cpu_energy.c) on powercap files of the test's own
 * (LB_POWERCAP_ZONE): joules from the first reading, a wrap of energy_uj past
 * max_energy_range_uj unwrapped, no zone or no number read as unsupported with the file named;
 * and a measured cell on a counter that does not advance, or on none: NaN, and why. (A counter
 * that advances is tests/gpu/test_emu_nvml.c's, through the stand-in NVML.) */
static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        printf("FAIL: cannot write %s\n", path);
        exit(1);
    }
}

static void test_cpu_energy(void)
{
    char *dir = lb_test_tempdir("cpu-energy");
    LbBackend *be = NULL;

    setenv("LB_POWERCAP_ZONE", dir, 1); /* empty: no counter */
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)64 << 20, &be) == LB_OK, "open"))
        return;
    double j = -1;
    lb_check(be->ops->energy_j(be, &j) == LB_ERR_UNSUPPORTED && strstr(lb_error_message(), "energy_uj") &&
                 strstr(lb_error_message(), "no energy counter"),
             "no zone: unsupported, naming the file: %s", lb_error_message());

    write_file(dir, "max_energy_range_uj", "1000000\n"); /* wraps at 1 J */
    write_file(dir, "energy_uj", "900000\n");
    lb_check(be->ops->energy_j(be, &j) == LB_OK && j == 0.0, "first reading: 0 J (got %g)", j);
    write_file(dir, "energy_uj", "950000\n");
    lb_check(be->ops->energy_j(be, &j) == LB_OK && fabs(j - 0.05) < 1e-12, "then 0.05 J (got %.17g)", j);
    write_file(dir, "energy_uj", "49999\n"); /* past the range: 50000 uj to the top, then 49999 + 1 */
    lb_check(be->ops->energy_j(be, &j) == LB_OK && fabs(j - 0.15) < 1e-12, "a wrap unwrapped: 0.15 J (got %.17g)", j);
    write_file(dir, "energy_uj", "not a number\n");
    lb_check(be->ops->energy_j(be, &j) == LB_ERR_UNSUPPORTED && strstr(lb_error_message(), "holds no number"),
             "a file without a number: %s", lb_error_message());

    /* A measured cell on a counter that does not move: no power, and why. */
    write_file(dir, "energy_uj", "123\n");
    LbModelConfig cfg = lb_test_model(16, 8);
    LbTimingOptions opt = lb_timing_defaults();
    opt.max_batch = 2;
    opt.cap_seconds = 0.05;
    LbCellResult r;
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OK,
             "a cell measured: %s", r.error);
    lb_check(isnan(r.power_w) && isnan(r.energy_j_per_seq) && strstr(r.energy_why, "did not advance"),
             "a still counter: power %g, energy %g, why \"%s\"", r.power_w, r.energy_j_per_seq, r.energy_why);
    lb_backend_close(be);

    /* No zone at all: NaN, and the reason is the counter's. */
    setenv("LB_POWERCAP_ZONE", "/nonexistent/powercap-zone", 1);
    lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)64 << 20, &be) == LB_OK, "open");
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && isnan(r.energy_j_per_seq) &&
                 strstr(r.energy_why, "/nonexistent/powercap-zone/energy_uj"),
             "no counter: energy %g, why \"%s\"", r.energy_j_per_seq, r.energy_why);
    lb_backend_close(be);
    lb_test_cleanup(dir);
    return;
}

/* An energy counter that gains 1 J at each reading. */
static double joules_read;

static int scripted_energy(LbBackend *be, double *joules)
{
    (void)be;
    *joules = joules_read;
    joules_read += 1.0;
    return LB_OK;
}

/* lb_measure_cell with a scripted timer: passes until min_passes, then until the timed work
 * reaches cap_seconds (in seconds, the passes in ms) or the interquartile range settles (not the
 * whole range); the median of the passes (of an even count, the mean of the middle two; not the
 * min), and every rate from it and the batch. */
static void test_cell(void)
{
    static const double spread[] = {40, 10, 30, 90, 20, 25}; /* sorted 10 20 25 30 40 90: median 27.5 */
    static const double one_slow[] = {10, 10, 10, 50, 10, 10, 10, 10}; /* IQR 0 from 5 passes on */
    LbBackend *be = open_scripted(LB_DTYPE_FP32, (size_t)64 << 20);
    if (!be)
        return;
    scripted.energy_j = scripted_energy;
    const LbModelConfig cfg = lb_test_model(16, 8);
    LbTimingOptions opt = lb_timing_defaults();
    opt.max_batch = 2;
    opt.min_passes = 3;
    opt.max_passes = 6;
    opt.cap_seconds = 1.0; /* 215 ms of passes stay under it */
    opt.settle = 0.02;
    LbCellResult r;
    script = spread, script_len = 6, script_at = 0;
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OK &&
                 r.batch == 2,
             "a cell measured at batch 2: %s (batch %lld)", r.error, (long long)r.batch);
    const double flops = lb_measure_flops_per_seq(be, &cfg);
    lb_check(r.passes == 6 && r.min_ms == 10 && r.max_ms == 90 && r.median_ms == 27.5,
             "6 passes under the cap: %d, min %g, max %g, median %g (want 6, 10, 90, 27.5)", r.passes, r.min_ms,
             r.max_ms, r.median_ms);
    lb_check(r.ms_per_seq == 27.5 / 2 && fabs(r.tokens_per_s - 2 * 16 / 0.0275) <= 1e-9 * r.tokens_per_s &&
                 fabs(r.tflop_per_s - flops * 2 / 0.0275 / 1e12) <= 1e-9 * r.tflop_per_s,
             "rates from the median and the batch: %g ms per sequence, %g tokens/s, %g TFLOP/s", r.ms_per_seq,
             r.tokens_per_s, r.tflop_per_s);
    lb_check(r.power_w > 0 && fabs(r.energy_j_per_seq - r.power_w * 0.0275 / 2) <= 1e-9 * r.energy_j_per_seq,
             "energy per sequence: power %g W x median / batch = %g J (got %g)", r.power_w, r.power_w * 0.0275 / 2,
             r.energy_j_per_seq);

    opt.cap_seconds = 0.05; /* 40 + 10 ms, then the 30 ms pass passes it */
    script_at = 0;
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && r.passes == 3,
             "the cap in seconds stops at 3 passes (got %d)", r.passes);

    opt.cap_seconds = 1.0;
    opt.min_passes = 5;
    opt.max_passes = 8;
    script = one_slow, script_len = 8, script_at = 0;
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && r.passes == 5 &&
                 r.median_ms == 10,
             "settled by the interquartile range at 5 passes despite one slow one (got %d, median %g)", r.passes,
             r.median_ms);
    lb_backend_close(be);
}

int main(void)
{
    static const LbTestCase cases[] = {{"calibrate", test_calibrate}, {"clock_events", test_clock_events},
                                       {"cpu_energy", test_cpu_energy}, {"cell", test_cell}};
    lb_test_init("test_measure");
    return LB_TEST_CASES("test_measure", cases);
}
