/* The identity check: a Linformer with k = n and E = F = the identity computes exactly standard
 * attention, so with the same weights and tokens its output equals the standard model's to
 * rounding, for every sharing level and both orders. Both models draw their shared weights from
 * one seed (same tensors in the same order); only E and F are overwritten with the identity.
 * A Linformer whose E is left random must NOT match, so the check can fail. */
#include <math.h>
#include <stdlib.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/status.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

/* Run cfg at batch B on the CPU backend; the output (B, n, d) in a malloc'd array. When
 * `identity`, every projection is set to the identity first. */
static float *run(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed, int identity)
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    float *out = NULL;
    if (lb_plan_compute(cfg, &pp, B, &plan) != LB_OK || lb_arena_open(&a, be, plan.total) != LB_OK)
        return NULL;
    if (lb_model_build(&m, cfg, be, &a, seed) == LB_OK) {
        int ok = 1;
        if (identity) {
            float *eye = calloc((size_t)(cfg->n * cfg->n), sizeof *eye);
            for (int64_t i = 0; eye && i < cfg->n; i++)
                eye[i * cfg->n + i] = 1.0f;
            for (int64_t p = 0; eye && p < m.own_count; p++)
                ok &= be->ops->upload(be, m.own[p].ptr, eye, cfg->n * cfg->n) == LB_OK;
            ok &= eye != NULL;
            free(eye);
        }
        const int64_t count = B * cfg->n * cfg->d_model;
        out = malloc((size_t)count * sizeof *out);
        if (!ok || !out || lb_inputs_alloc(&m, &a, B, &in) != LB_OK || lb_inputs_fill(&m, &in, seed + 1) != LB_OK ||
            lb_forward(&m, &a, &in) != LB_OK || be->ops->download(be, out, in.x, count) != LB_OK) {
            free(out);
            out = NULL;
        }
        lb_model_release(&m);
    }
    lb_arena_close(&a);
    return out;
}

static double rel_error(const float *out, const float *ref, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        double e = (double)out[i] - (double)ref[i];
        num += e * e;
        den += (double)ref[i] * ref[i];
        if (isnan(out[i]))
            return INFINITY;
    }
    return sqrt(num / den);
}

int main(void)
{
    lb_test_init("test_identity");
    LbBackend *be = NULL;
    if (lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) != LB_OK)
        return 1;
    const int64_t n = 20, B = 3;
    const uint64_t seed = lb_test_seed;
    LbModelConfig std_cfg = lb_test_model(n, n);
    float *ref = run(be, &std_cfg, B, seed, 0);
    lb_check(ref != NULL, "standard forward ran");
    const int64_t count = B * n * std_cfg.d_model;
    for (int i = 0; ref && i < lb_model_desc(LB_MODEL_LINFORMER)->variants; i++) {
        LbModelConfig c = lb_model_variant(LB_MODEL_LINFORMER, i, lb_test_model(n, n));
        char name[64];
        lb_test_variant_name(&c, name, sizeof name);
        float *out = run(be, &c, B, seed, 1);
        if (!lb_check(out != NULL, "%s: forward ran: %s", name, lb_error_message()))
            continue;
        /* fp32 storage, double accumulation: only the order of rounding differs. */
        double err = rel_error(out, ref, count);
        lb_check(err <= 1e-5, "%s with E = F = I equals standard attention: relative error %.3g (<= 1e-5)", name, err);
        free(out);
        /* The same model with its random E must differ: the check above can fail. */
        out = run(be, &c, B, seed, 0);
        err = out ? rel_error(out, ref, count) : 0;
        lb_check(out && err > 1e-2, "%s with a random E differs from standard attention: relative error %.3g (> 1e-2)", name, err);
        free(out);
    }
    free(ref);
    lb_backend_close(be);
    return lb_test_finish("test_identity");
}
