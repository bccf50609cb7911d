/* What a training step costs against a forward pass, counted and not run (issue: the training
 * step's FLOPs and bytes per layer against the forward's): for standard, Linformer (layerwise,
 * early, k = 128 and 256) and flash at n = 512 and 4096, RoBERTa-base in fp16 with the CUDA
 * backend's plan parameters, the FLOPs and bytes of one sequence's forward pass and training step
 * (the breakdown's count: products' FLOPs, every operand read once and every result written once),
 * divided by the 12 layers (the embeddings' share included), and the largest batch of each on an
 * 80 GB budget. No GPU needed: `bench_train_work`. */
#include <stdio.h>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/measure/breakdown.h"
#include "attn/plan.h"

int main(void)
{
    const LbPlanParams pp = lb_plan_params_cuda(LB_DTYPE_FP16);
    const size_t budget = (size_t)80 * 1000 * 1000 * 1000;
    static const struct {
        LbModelKind kind;
        int64_t k;
    } models[] = {{LB_MODEL_STANDARD, 0}, {LB_MODEL_LINFORMER, 128}, {LB_MODEL_LINFORMER, 256}, {LB_MODEL_FLASH, 0}};
    printf("%-16s %6s %14s %14s %6s %14s %14s %6s %9s %9s\n", "model", "n", "fwd GFLOP/l", "train GFLOP/l", "x",
           "fwd MB/l", "train MB/l", "x", "fwd B", "train B");
    for (int64_t n = 512; n <= 4096; n *= 8)
        for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
            LbModelConfig cfg = lb_config_default();
            cfg.kind = models[i].kind;
            cfg.n = n;
            cfg.k = models[i].k ? models[i].k : cfg.k;
            LbBreakdown b[2];
            int64_t batch[2];
            for (int pass = 0; pass < 2; pass++) {
                cfg.pass = pass ? LB_PASS_TRAIN : LB_PASS_FORWARD;
                if (lb_breakdown_count(&cfg, &pp, 1, NULL, NULL, &b[pass]) != 0) {
                    fprintf(stderr, "bench_train_work: counting %s n %lld failed\n", lb_model_desc(cfg.kind)->name,
                            (long long)n);
                    return 1;
                }
                batch[pass] = lb_plan_largest_batch(&cfg, &pp, budget, 1 << 20);
            }
            char name[32];
            snprintf(name, sizeof name, "%s%s%lld", lb_model_desc(cfg.kind)->name, models[i].k ? " k " : "",
                     (long long)models[i].k);
            if (!models[i].k)
                snprintf(name, sizeof name, "%s", lb_model_desc(cfg.kind)->name);
            const double l = cfg.layers;
            printf("%-16s %6lld %14.2f %14.2f %6.2f %14.1f %14.1f %6.2f %9lld %9lld\n", name, (long long)n,
                   b[0].flops / l / 1e9, b[1].flops / l / 1e9, b[1].flops / b[0].flops, b[0].bytes / l / 1e6,
                   b[1].bytes / l / 1e6, b[1].bytes / b[0].bytes, (long long)batch[0], (long long)batch[1]);
        }
    return 0;
}
