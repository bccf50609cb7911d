/* The training step (attn/train.h) on the CUDA backend against the CPU backend (fp32 storage,
 * double accumulation): every variant of every model that trains, at fp32, fp16 and bf16, on small
 * shapes (2 layers, d 32, 2 heads of 16, ffn 64, vocabulary 100, k 8, n 48: rows that are not a
 * whole number of flash's 64-row tiles). Both backends build the model and draw the tokens and the
 * upstream gradient from one seed; every parameter's gradient is compared, tensor by tensor, by
 * relative error within the whole step's tolerance of the storage type (attn/check.c), and the
 * GPU arena's high-water mark must equal the training plan. Exit 77 without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/plan.h"
#include "attn/train.h"
#include "tests/gpu/gpu_check.h"
#include "tests/lib/model.h"

enum { MAX_TENSORS = 256, B = 2 };

static LbModelConfig small_model(void)
{
    LbModelConfig c = lb_test_model(48, 8);
    c.d_model = 32;
    c.heads = 2;
    c.ffn = 64;
    c.vocab = 100;
    c.chunk = 20;
    c.pass = LB_PASS_TRAIN;
    return c;
}

/* Every gradient of one step of cfg on be, downloaded: grads[i] (malloc'd) of refs[i]'s shape.
 * Returns the count, 0 with the failure printed. */
static int64_t step(LbBackend *be, LbModelConfig cfg, uint64_t seed, LbTensorRef *refs, float **grads)
{
    cfg.dtype = be->dtype;
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    LbTrain t;
    int64_t count = 0;
    int rc = lb_plan_compute(&cfg, &pp, B, &plan);
    if (rc == LB_OK && (rc = lb_arena_open(&a, be, plan.total)) != LB_OK)
        return printf("FAIL: arena on %s: %s\n", be->ops->name, lb_error_where()), 0;
    if (rc == LB_OK && (rc = lb_train_setup(&m, &in, &t, &cfg, be, &a, B, seed)) == LB_OK) {
        if ((rc = lb_train_step(&m, &a, &in, &t)) == LB_OK && (rc = be->ops->sync(be)) == LB_OK) {
            count = lb_model_tensors(&t.grads, refs, MAX_TENSORS);
            for (int64_t i = 0; rc == LB_OK && i < count; i++) {
                grads[i] = lb_test_alloc(refs[i].rows * refs[i].cols);
                rc = be->ops->download(be, grads[i], refs[i].ptr, refs[i].rows * refs[i].cols);
            }
        }
        lb_train_release(&t);
        lb_model_release(&m);
        lb_check(a.high_water == plan.total, "%s: arena high water %zu equals the training plan %zu",
                 be->ops->name, a.high_water, plan.total);
        lb_arena_close(&a);
    }
    if (rc != LB_OK) {
        printf("FAIL: training step on %s: %s\n", be->ops->name, lb_error_where());
        return 0;
    }
    return count;
}

static void free_all(float **grads, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        free(grads[i]);
}

static void against_cpu(LbBackend *cpu, LbBackend *const gpu[3], LbModelConfig cfg)
{
    const uint64_t seed = lb_gpu_next_seed();
    char model[64];
    lb_model_describe(&cfg, model, sizeof model);
    static LbTensorRef refs[MAX_TENSORS], grefs[MAX_TENSORS];
    static float *ref[MAX_TENSORS], *out[MAX_TENSORS];
    const int64_t nref = step(cpu, cfg, seed, refs, ref);
    if (!lb_check(nref > 0, "%s: the CPU's training step ran", model))
        return;
    for (int t = 0; t < 3; t++) {
        const int64_t nout = step(gpu[t], cfg, seed, grefs, out);
        /* Max pooling routes each window's gradient to its maximum, which fp16 and bf16 rounding
         * can move to another position: a different, equally right gradient (relative errors
         * up to 0.1 in six seeds). Its kernels are checked at every dtype in the check table,
         * its whole step here at fp32. */
        const int compared = cfg.kind != LB_MODEL_LINFORMER_MAX || gpu[t]->storage == LB_DTYPE_FP32;
        if (lb_check(nout == nref, "train %s %s: %lld gradients, as the CPU's %lld", lb_dtype_name(gpu[t]->dtype),
                     model, (long long)nout, (long long)nref) && compared)
            for (int64_t i = 0; i < nref; i++) {
                char what[160];
                snprintf(what, sizeof what, "train %s %s: %s", lb_dtype_name(gpu[t]->dtype), model, refs[i].name);
                lb_check_against(gpu[t], "train", what, out[i], ref[i], refs[i].rows * refs[i].cols);
            }
        free_all(out, nout);
    }
    free_all(ref, nref);
}

int main(void)
{
    lb_test_init("test_gpu_train");
    LbBackend *gpu[3];
    static const LbDtype dtypes[] = {LB_DTYPE_FP32, LB_DTYPE_FP16, LB_DTYPE_BF16};
    for (int t = 0; t < 3; t++)
        gpu[t] = lb_gpu_open_or_skip(dtypes[t], 0);
    LbBackend *cpu = NULL;
    lb_gpu_ok(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 32, &cpu), "opening the CPU backend");
    int models = 0;
    for (int kind = 0; kind < LB_MODEL_COUNT; kind++) {
        const LbModelDesc *desc = lb_model_desc((LbModelKind)kind);
        if (!desc->attention_backward)
            continue;
        models++;
        for (int v = 0; v < desc->variants; v++)
            against_cpu(cpu, gpu, lb_model_variant((LbModelKind)kind, v, small_model()));
    }
    lb_check(models >= 3, "%d models train (standard, chunked and flash at least)", models);
    for (int t = 0; t < 3; t++)
        lb_backend_close(gpu[t]);
    lb_backend_close(cpu);
    return lb_test_finish("test_gpu_train");
}
