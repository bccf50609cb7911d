/* The full forward pass on the CUDA backend against the CPU backend (fp32 storage, double
 * accumulation): every variant of every model at fp32, fp16 and bf16, on small shapes at n = 200
 * (rows that are not a whole number of 16-byte packs; n = 64 is the check table's), from one seed
 * and the same token ids; and the GPU arena's high-water mark equal to the plan for the GPU's
 * element size, alignment and cuBLAS workspace. Exit 77 without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>

#include "attn/attention.h"
#include "tests/gpu/gpu_check.h"
#include "tests/lib/forward.h"
#include "tests/lib/model.h"

/* cfg's forward pass on be in its dtype from seed (tests/lib/forward.h), or NULL, checked: it ran,
 * and the arena's high-water mark is the plan for be's element size, alignment and workspace. */
static float *run(LbBackend *be, LbModelConfig cfg, int64_t B, uint64_t seed, const char *what)
{
    cfg.dtype = be->dtype;
    float *out = lb_test_forward(be, &cfg, B, seed);
    if (lb_check(out != NULL, "%s on %s ran: %s", what, be->ops->name, lb_error_where()))
        lb_check(lb_test_forward_plan_ok, "%s: the %s arena's high water equals the plan", what, be->ops->name);
    return out;
}

/* cfg's pass in each of the three dtypes on gpu[t] against ref_cfg's on ref_be[t] (the CPU's, or
 * standard's on the same GPU), from one seed: within the dtype's forward tolerance. */
static void against(LbBackend *const ref_be[3], LbModelConfig ref_cfg, LbBackend *const gpu[3], LbModelConfig cfg,
                    int64_t B, const char *suffix)
{
    const uint64_t seed = lb_gpu_next_seed();
    char name[96], what[200], ref_what[240];
    lb_test_variant_name(&cfg, name, sizeof name);
    for (int t = 0; t < 3; t++) {
        snprintf(what, sizeof what, "forward %s %s n %lld%s", lb_gpu_dtype(gpu[t]), name, (long long)cfg.n, suffix);
        snprintf(ref_what, sizeof ref_what, "the reference of %s", what);
        float *ref = run(ref_be[t], ref_cfg, B, seed, ref_what), *out = ref ? run(gpu[t], cfg, B, seed, what) : NULL;
        if (out)
            lb_check_against(gpu[t], "forward", what, out, ref, B * cfg.n * cfg.d_model);
        free(ref);
        free(out);
    }
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
    LbBackend *const cpus[3] = {cpu, cpu, cpu};
    const int64_t B = 2;
    /* n = 64 is the check table's (tests/gpu/test_gpu_ops.c), and the quick one under a sanitizer */
    const int64_t n = lb_gpu_quick() ? 64 : 200;
    const LbModelConfig small = lb_test_shape(2, 64, 4, 128, 1000, n, 32);
    for (int kind = 0; kind < LB_MODEL_COUNT; kind++)
        for (int v = 0; v < lb_model_desc((LbModelKind)kind)->variants; v++) {
            const LbModelConfig cfg = lb_model_variant((LbModelKind)kind, v, small);
            against(cpus, cfg, gpu, cfg, B, "");
        }
    /* A k per layer (--k-schedule halve: 32, 16, 8 on three layers) for every model that reads it,
     * its first and last variant: each layer's own k on the GPU as on the CPU. */
    for (int kind = 0; kind < LB_MODEL_COUNT; kind++) {
        if (lb_model_reads_flag((LbModelKind)kind, "k-schedule") != 1)
            continue;
        const int nv = lb_model_desc((LbModelKind)kind)->variants;
        for (int v = 0; v < nv; v += nv > 1 ? nv - 1 : 1) {
            LbModelConfig cfg = lb_model_variant((LbModelKind)kind, v, lb_test_shape(3, 64, 4, 128, 1000, 64, 32));
            cfg.k_schedule = LB_KSCHED_HALVE;
            against(cpus, cfg, gpu, cfg, B, ", k schedule halve");
        }
    }
    /* chunked against standard on the same device and dtype: the same arithmetic in blocks of
     * query rows (a chunk that divides n, one that does not, one past n), so equal to rounding. */
    for (int v = 0; v < lb_model_desc(LB_MODEL_CHUNKED)->variants; v++)
        against(gpu, small, gpu, lb_model_variant(LB_MODEL_CHUNKED, v, small), B, ", equal to standard");
    for (int t = 0; t < 3; t++)
        lb_backend_close(gpu[t]);
    lb_backend_close(cpu);
    return lb_test_finish("test_gpu_forward");
}
