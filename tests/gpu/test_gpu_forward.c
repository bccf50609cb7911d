/* The full forward pass on the CUDA backend against the CPU backend (fp32 storage, double
 * accumulation): every variant of every model at fp32, fp16 and bf16, on small shapes at n = 200
 * (rows that are not a whole number of 16-byte packs; n = 64 is the check table's), from one seed
 * and the same token ids; and the GPU arena's high-water mark equal to the plan for the GPU's
 * element size, alignment and cuBLAS workspace. Exit 77 without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/check.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "tests/gpu/gpu_check.h"

static LbModelConfig small_model(int64_t n)
{
    LbModelConfig c = lb_config_default();
    c.layers = 2;
    c.d_model = 64;
    c.heads = 4;
    c.ffn = 128;
    c.vocab = 1000;
    c.n = n;
    c.k = 32;
    return c;
}

static int64_t count_of(const LbModelConfig *c, int64_t B) { return B * c->n * c->d_model; }

static const char *variant_name(const LbModelConfig *c, char *buf, size_t size)
{
    char model[64];
    lb_model_describe(c, model, sizeof model);
    snprintf(buf, size, "%s n %lld", model, (long long)c->n);
    return buf;
}

/* One forward pass of cfg at batch B on be; the output (B, n, d) in a malloc'd array, or NULL
 * with the failure printed. *plan_ok: the arena's high-water mark equals the plan. */
static float *run(LbBackend *be, LbModelConfig cfg, int64_t B, uint64_t seed, int *plan_ok)
{
    cfg.dtype = be->dtype;
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    float *out = NULL;
    int rc = lb_plan_compute(&cfg, &pp, B, &plan);
    if (rc == LB_OK)
        rc = lb_arena_open(&a, be, plan.total);
    if (rc != LB_OK) {
        printf("FAIL: plan or arena on %s: %s\n", be->ops->name, lb_error_where());
        return NULL;
    }
    rc = lb_model_build(&m, &cfg, be, &a, seed);
    const int64_t count = B * cfg.n * cfg.d_model;
    if (rc == LB_OK) {
        out = lb_test_alloc(count);
        if ((rc = lb_inputs_alloc(&m, &a, B, &in)) == LB_OK && (rc = lb_inputs_fill(&m, &in, seed + 1)) == LB_OK &&
            (rc = lb_forward(&m, &a, &in)) == LB_OK && (rc = be->ops->sync(be)) == LB_OK)
            rc = be->ops->download(be, out, in.x, count);
        lb_model_release(&m);
    }
    *plan_ok = a.high_water == plan.total;
    if (!*plan_ok)
        printf("  %s arena high water %zu != plan %zu\n", be->ops->name, a.high_water, plan.total);
    lb_arena_close(&a);
    if (rc != LB_OK) {
        printf("FAIL: forward on %s: %s\n", be->ops->name, lb_error_where());
        free(out);
        return NULL;
    }
    return out;
}

/* cfg's forward pass on the GPU in each of the three dtypes against the CPU reference's, one seed:
 * within the dtype's forward tolerance, the arena's high water the plan's. */
static void against_cpu(LbBackend *cpu, LbBackend *const gpu[3], const LbDtype dtypes[3], LbModelConfig cfg,
                        int64_t B, const char *suffix)
{
    const uint64_t seed = lb_gpu_next_seed();
    char name[96];
    variant_name(&cfg, name, sizeof name);
    int plan_ok = 0;
    float *ref = run(cpu, cfg, B, seed, &plan_ok);
    if (!lb_check(ref != NULL, "%s%s: CPU forward ran", name, suffix))
        return;
    for (int t = 0; t < 3; t++) {
        char what[200];
        snprintf(what, sizeof what, "forward %s %s%s", lb_dtype_name(dtypes[t]), name, suffix);
        float *out = run(gpu[t], cfg, B, seed, &plan_ok);
        if (!lb_check(out != NULL, "%s ran", what))
            continue;
        lb_check_against(gpu[t], "forward", what, out, ref, count_of(&cfg, B));
        lb_check(plan_ok, "%s: GPU arena high water equals the plan", what);
        free(out);
    }
    free(ref);
}

int main(void)
{
    lb_test_init("test_gpu_forward");
    /* Skip before any CPU work when there is no device. */
    LbBackend *gpu[3];
    static const LbDtype dtypes[] = {LB_DTYPE_FP32, LB_DTYPE_FP16, LB_DTYPE_BF16};
    for (int t = 0; t < 3; t++)
        gpu[t] = lb_gpu_open_or_skip(dtypes[t], 0);
    LbBackend *cpu = NULL;
    lb_gpu_ok(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 32, &cpu), "opening the CPU backend");
    const int64_t B = 2;
    /* n = 64 is the check table's (tests/gpu/test_gpu_ops.c), and the quick one under a sanitizer */
    const int64_t n = lb_gpu_quick() ? 64 : 200;
    for (int kind = 0; kind < LB_MODEL_COUNT; kind++)
        for (int v = 0; v < lb_model_desc((LbModelKind)kind)->variants; v++)
            against_cpu(cpu, gpu, dtypes, lb_model_variant((LbModelKind)kind, v, small_model(n)), B, "");
    /* A k per layer (--k-schedule halve: 32, 16, 8 on three layers) for every model that reads it,
     * its first and last variant: each layer's own k on the GPU as on the CPU. */
    for (int kind = 0; kind < LB_MODEL_COUNT; kind++) {
        if (lb_model_reads_flag((LbModelKind)kind, "k-schedule") != 1)
            continue;
        const int nv = lb_model_desc((LbModelKind)kind)->variants;
        for (int v = 0; v < nv; v += nv > 1 ? nv - 1 : 1) {
            LbModelConfig cfg = lb_model_variant((LbModelKind)kind, v, small_model(64));
            cfg.layers = 3;
            cfg.k_schedule = LB_KSCHED_HALVE;
            against_cpu(cpu, gpu, dtypes, cfg, B, ", k schedule halve");
        }
    }
    /* chunked against standard on the same device and dtype, one seed: the same arithmetic in
     * blocks of query rows (a chunk that divides n, one that does not, one past n), so equal to
     * rounding: within the forward tolerance of the storage type. */
    for (int t = 0; t < 3; t++) {
        const uint64_t seed = lb_gpu_next_seed();
        const LbModelConfig std_cfg = small_model(n);
        const int64_t count = B * std_cfg.n * std_cfg.d_model;
        int plan_ok = 0;
        float *ref = run(gpu[t], std_cfg, B, seed, &plan_ok);
        if (!lb_check(ref != NULL, "forward %s standard n %lld ran", lb_dtype_name(dtypes[t]), (long long)std_cfg.n))
            continue;
        for (int v = 0; v < lb_model_desc(LB_MODEL_CHUNKED)->variants; v++) {
            const LbModelConfig cfg = lb_model_variant(LB_MODEL_CHUNKED, v, std_cfg);
            char name[96], what[160];
            variant_name(&cfg, name, sizeof name);
            snprintf(what, sizeof what, "%s %s equals standard", lb_dtype_name(dtypes[t]), name);
            float *out = run(gpu[t], cfg, B, seed, &plan_ok);
            if (!lb_check(out != NULL, "%s ran", what))
                continue;
            lb_check_against(gpu[t], "forward", what, out, ref, count);
            free(out);
        }
        free(ref);
    }
    for (int t = 0; t < 3; t++)
        lb_backend_close(gpu[t]);
    lb_backend_close(cpu);
    return lb_test_finish("test_gpu_forward");
}
