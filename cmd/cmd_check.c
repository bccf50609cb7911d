/* linbench check: the check table (attn/check.h) on this backend in every storage type, one row
 * per check after an environment block; exit 1 naming the first failing check. Also the quick
 * check that sweep and run do before measuring (lb_quick_check). */
#include "cmd/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/calibration.h"
#include "cmd/commands.h"
#include "cmd/options.h"

void lb_print_version(int width, const char *what, int v)
{
    if (v < 0)
        printf("  %-*s unknown\n", width, what);
    else
        printf("  %-*s %d.%d (%d)\n", width, what, v / 1000, (v % 1000) / 10, v);
}

static const char *on_off(int v) { return v < 0 ? "unknown" : v ? "on" : "off"; }

static void print_mhz(const char *what, int now, int max)
{
    char a[16] = "unknown", b[16] = "unknown";
    if (now > 0)
        snprintf(a, sizeof a, "%d MHz", now);
    if (max > 0)
        snprintf(b, sizeof b, "%d MHz", max);
    printf("  %-20s %s now, %s max\n", what, a, b);
}

static void print_environment(LbBackend *be, int cuda, uint64_t seed)
{
    LbDeviceInfo d = {0};
    printf("environment\n");
    if (be->ops->describe(be, &d) != LB_OK) {
        printf("  %-20s unknown (%s)\n", "device", lb_error_message());
        return;
    }
    if (cuda) {
        printf("  %-20s cuda:%d %s (%s)\n", "device", d.device_index, d.name, lb_cuda_backend_kind());
        printf("  %-20s %d.%d\n", "compute capability", d.cc_major, d.cc_minor);
        lb_print_version(20, "driver", d.driver_version);
        lb_print_version(20, "CUDA runtime", d.runtime_version);
        lb_print_version(20, "cuBLAS", d.cublas_version);
        printf("  %-20s %s\n", "code", d.code[0] ? d.code : "unknown");
        lb_print_card_limits(stdout, "  roofline             ", d.name, be->storage, be->tf32, NULL);
    } else {
        printf("  %-20s cpu %s\n", "device", d.name);
    }
    char total[32] = "unknown", free_s[32] = "unknown";
    if (d.total_bytes >= 0)
        lb_format_size((uint64_t)d.total_bytes, total, sizeof total);
    if (d.free_bytes >= 0)
        lb_format_size((uint64_t)d.free_bytes, free_s, sizeof free_s);
    printf("  %-20s %s total, %s free%s\n", "memory", total, free_s, cuda ? "" : " (the CPU reference's budget)");
    if (cuda) {
        print_mhz("SM clock", d.sm_clock_mhz, d.sm_clock_max_mhz);
        print_mhz("memory clock", d.mem_clock_mhz, -1);
        printf("  %-20s %s\n", "ECC", on_off(d.ecc));
        printf("  %-20s %s\n", "MIG", on_off(d.mig));
        printf("  %-20s %s\n", "persistence mode", on_off(d.persistence));
        char others[16] = "unknown";
        if (d.other_processes >= 0)
            snprintf(others, sizeof others, "%d", d.other_processes);
        printf("  %-20s %s\n", "other processes", others);
    }
    /* the counter a sweep's energy columns come from (METHOD.md, "Energy"): named before the sweep */
    double joules;
    if (be->ops->energy_j(be, &joules) == LB_OK) {
        printf("  %-20s %s\n", "energy counter", cuda ? "NVML total energy" : "RAPL package counter");
    } else {
        printf("  %-20s none (%s)\n", "energy counter", lb_error_message());
        lb_error_clear();
    }
    printf("  %-20s %llu (replay with --seed %llu)\n\n", "seed", (unsigned long long)seed, (unsigned long long)seed);
}

static void print_rows(const LbCheckTable *t, size_t from)
{
    for (size_t i = from; i < t->count; i++) {
        const LbCheckRow *r = &t->rows[i];
        char err[32], thr[32]; /* "-" where the op itself failed */
        snprintf(err, sizeof err, isnan(r->rel_error) ? "-" : "%.2e", r->rel_error);
        snprintf(thr, sizeof thr, isnan(r->threshold) ? "-" : "%.1e", r->threshold);
        printf("%-14s %-5s %-48s %10s %9s  %s%s%s\n", r->op, lb_dtype_name(r->dtype), r->shape, err, thr,
               r->ok ? "ok" : "FAIL", r->error[0] ? "  " : "", r->error);
    }
    fflush(stdout);
}

/* "softmax fp16 4 x 200: relative error 3.1e-01 above 1.0e-03" */
static void describe_failure(const LbCheckRow *r, char *buf, size_t size)
{
    if (isnan(r->rel_error) || r->error[0])
        snprintf(buf, size, "%s %s %s: %s", r->op, lb_dtype_name(r->dtype), r->shape, r->error);
    else
        snprintf(buf, size, "%s %s %s: relative error %.2e above %.1e", r->op, lb_dtype_name(r->dtype), r->shape,
                 r->rel_error, r->threshold);
}

/* A new seed each run (time and process id). */
static uint64_t fresh_seed(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20)) & INT64_MAX;
}

int lb_quick_check(LbBackend *be, const LbModelConfig *model, LbCheckResult *res)
{
    memset(res, 0, sizeof *res);
    LbCheckTable t = {0};
    LbCheckPlan plan = {1, fresh_seed(), model->sharing, model->order, model->k_schedule, NULL, model->pass};
    res->seed = plan.seed;
    int rc = lb_check_backend(be, &plan, &t);
    if (rc != LB_OK) {
        lb_check_table_free(&t);
        return lb_runtime_error(rc);
    }
    res->ran = 1;
    res->checks = t.count;
    const LbCheckRow *bad;
    char first[400] = "";
    res->failures = lb_check_summary(&t, &res->max_rel_error, &bad);
    if (bad)
        describe_failure(bad, first, sizeof first);
    lb_check_table_free(&t);
    if (!res->failures)
        return LB_EXIT_OK;
    fprintf(stderr, "linbench: the %s backend failed its check (%zu of %zu checks), so nothing was measured: %s (run linbench check --device %s for every row)\n",
            be->ops->name, res->failures, res->checks, first, be->ops->name);
    return LB_EXIT_FAILURE;
}

int lb_cmd_check(LbRunSettings *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const int cuda = o->device == LB_DEVICE_CUDA, only = (o->given >> LB_OPT_CHECK_DTYPE) & 1;
    if (o->tf32 && only && o->model.dtype != LB_DTYPE_FP32)
        return lb_usage_error("--tf32 applies to fp32 only: should be used without --dtype or with --dtype fp32");

    /* fp32 (and with TF32 products under --tf32), fp16, bf16; the CPU backend stores fp32 whatever
     * the dtype: its first run covers it. */
    static const struct { LbDtype dtype; int tf32; } runs[] = {
        {LB_DTYPE_FP32, 0}, {LB_DTYPE_FP32, 1}, {LB_DTYPE_FP16, 0}, {LB_DTYPE_BF16, 0}};
    const LbModelConfig def = lb_config_default();
    LbCheckPlan plan = {o->cmd.quick, (o->given >> LB_OPT_CHECK_SEED) & 1 ? o->seed : fresh_seed(), def.sharing,
                        def.order, def.k_schedule, NULL, o->model.pass};
    LbCheckTable t = {0};
    int rc = LB_EXIT_OK;
    for (size_t i = 0, ran = 0; i < sizeof runs / sizeof runs[0] && rc == LB_EXIT_OK; i++) {
        if ((only && runs[i].dtype != o->model.dtype) || (runs[i].tf32 && (!o->tf32 || !cuda)) || (!cuda && ran))
            continue;
        LbBackend *be = NULL;
        int orc = cuda ? lb_cuda_backend_open(o->gpu, runs[i].dtype, runs[i].tf32, &be)
                       : lb_cpu_backend_open(runs[i].dtype, (size_t)LB_CPU_DEFAULT_MEM, &be);
        if (orc != LB_OK) {
            rc = lb_open_error(orc);
            break;
        }
        be->autotune = o->autotune;
        if (ran++ == 0) {
            print_environment(be, cuda, plan.seed);
            printf("%-14s %-5s %-48s %10s %9s  %s\n", "operation", "dtype", "shape", "rel error", "threshold", "result");
        }
        const size_t from = t.count;
        orc = lb_check_backend(be, &plan, &t);
        print_rows(&t, from);
        lb_backend_close(be);
        if (orc != LB_OK)
            rc = lb_runtime_error(orc);
    }
    if (rc == LB_EXIT_OK) {
        double most;
        const LbCheckRow *bad;
        const size_t failures = lb_check_summary(&t, &most, &bad);
        printf("\n%zu checks, %zu failed; largest relative error %.2e\n", t.count, failures, most);
        if (failures) {
            char what[400];
            describe_failure(bad, what, sizeof what);
            fprintf(stderr, "linbench: %zu of %zu checks failed on --device %s, first: %s\n", failures, t.count,
                    cuda ? "cuda" : "cpu", what);
            rc = LB_EXIT_FAILURE;
        }
    }
    lb_check_table_free(&t);
    return rc;
}
