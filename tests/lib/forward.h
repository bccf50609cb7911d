/* One forward pass of a model on a backend, its output read back, for the tests that compare two
 * models' outputs (tests/model, tests/gpu): the arena sized by the plan, as a measured cell's. */
#ifndef LB_TESTS_LIB_FORWARD_H
#define LB_TESTS_LIB_FORWARD_H

#include <math.h>
#include <stdlib.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"

/* The CPU reference backend storing `dtype` with 1 GiB, or NULL after a failed check. */
static inline LbBackend *lb_test_cpu_backend(LbDtype dtype)
{
    LbBackend *be = NULL;
    lb_check(lb_cpu_backend_open(dtype, (size_t)1 << 30, &be) == LB_OK, "CPU backend %s: %s", lb_dtype_name(dtype),
             lb_error_message());
    return be;
}

/* Whether the last pass's arena high-water mark was the plan's total. */
static int lb_test_forward_plan_ok;

/* cfg's output (B, n, d) on be from seed, in a malloc'd array; NULL on any failure (the message
 * is lb_error_message's). `prepare`, when not NULL, changes the built model before the pass (0 on
 * success). */
static inline float *lb_test_forward_with(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed,
                                          int (*prepare)(LbModel *m))
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    if (lb_plan_compute(cfg, &pp, B, &plan) != LB_OK || lb_arena_open(&a, be, plan.total) != LB_OK)
        return NULL;
    const int64_t count = B * cfg->n * cfg->d_model;
    float *out = (float *)malloc((size_t)count * sizeof *out);
    int ok = out && lb_forward_setup(&m, &in, cfg, be, &a, B, seed) == LB_OK;
    if (ok) {
        ok = (!prepare || prepare(&m) == 0) && lb_forward(&m, &a, &in) == LB_OK &&
             be->ops->download(be, out, in.x, count) == LB_OK;
        lb_model_release(&m);
    }
    lb_test_forward_plan_ok = a.high_water == plan.total;
    lb_arena_close(&a);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

static inline float *lb_test_forward(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed)
{
    return lb_test_forward_with(be, cfg, B, seed, NULL);
}

/* ||out - ref|| / ||ref|| in double; infinity where out holds a NaN or an infinity. */
static inline double lb_test_rel_error(const float *out, const float *ref, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        if (!isfinite(out[i]))
            return INFINITY;
        const double e = (double)out[i] - (double)ref[i];
        num += e * e;
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / den);
}

#endif
