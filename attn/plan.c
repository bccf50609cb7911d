/* The memory plan (plan.h): the model built and one pass run over a counting arena with a
 * backend that does no arithmetic but has the real one's element size, alignment and workspace,
 * so every allocation is counted by the code itself and the plan cannot drift from it. */
#include "attn/plan.h"

#include <stdint.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/train.h"
#include "attn/base/status.h"

/* --- the counting backend: every op a pass calls succeeds and touches nothing ------------- */

/* The no-ops ignore their arguments by design; the warning off for them alone. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define NO_OP(name, params) \
    static int no_##name params { return LB_OK; }
LB_PASS_OPS(NO_OP)
#pragma GCC diagnostic pop

/* Nothing allocates, times or describes through this backend. */
#define NO_OP_ENTRY(name, params) .name = no_##name,
static const LbOps counting_ops = {.name = "counting", LB_PASS_OPS(NO_OP_ENTRY)};

void lb_plan_counting_backend(LbDtype dtype, const LbPlanParams *p, LbBackend *be)
{
    memset(be, 0, sizeof *be);
    be->ops = &counting_ops;
    be->dtype = be->storage = dtype;
    be->elem_bytes = p->elem_bytes;
    be->workspace_bytes = p->workspace;
    be->alignment = p->alignment;
}

LbPlanParams lb_plan_params_cuda(LbDtype dtype)
{
    const LbPlanParams p = {dtype == LB_DTYPE_FP32 ? 4 : 2, LB_CUDA_ALIGNMENT, LB_CUDA_WORKSPACE_BYTES};
    return p;
}

/* No tensor of a forward pass holds more than B n (h max(n, k) + 3 d + f) elements, and a
 * training step keeps fewer than 4 of those per layer and for its backward: past 2^60 bytes of
 * that bound the sizes could overflow 64 bits, and no device holds it anyway. */
static int too_large(const LbModelConfig *c, const LbPlanParams *p, int64_t B)
{
    const double n = (double)c->n, k = (double)c->k, widest = (n > k ? n : k) * c->heads;
    const double tensors = c->pass == LB_PASS_TRAIN ? 4.0 * (c->layers + 1) : 1.0;
    const double bytes = tensors * (double)B * n * (widest + 3.0 * c->d_model + c->ffn) * (double)p->elem_bytes;
    return B < 1 || bytes > 0x1p60;
}

int lb_plan_compute(const LbModelConfig *cfg, const LbPlanParams *p, int64_t B, LbPlan *out)
{
    memset(out, 0, sizeof *out);
    if (too_large(cfg, p, B))
        return LB_ERR_INVALID; /* no message: the batch search probes such sizes on purpose */
    LbBackend be;
    lb_plan_counting_backend(cfg->dtype, p, &be);
    LbArena a;
    lb_arena_counting(&a, p->alignment);
    LbModel m;
    LbInputs in;
    LbTrain t = {0};
    const int train = cfg->pass == LB_PASS_TRAIN;
    LB_TRY(lb_model_build(&m, cfg, &be, &a, 0));
    out->workspace = p->workspace ? lb_align_up(p->workspace, p->alignment) : 0;
    out->weights = a.used - out->workspace;
    int rc = lb_inputs_alloc(&m, &a, B, &in);
    out->inputs = a.used - out->weights - out->workspace;
    if (rc == LB_OK && train)
        rc = lb_train_alloc(&m, &a, B, &t);
    out->gradients = a.used - out->inputs - out->weights - out->workspace;
    if (rc == LB_OK)
        rc = train ? lb_train_step(&m, &a, &in, &t) : lb_forward(&m, &a, &in);
    lb_train_release(&t);
    lb_model_release(&m);
    LB_TRY(rc);
    out->total = a.high_water;
    out->temporaries = out->total - a.used;
    return LB_OK;
}

static int fits(const LbModelConfig *c, const LbPlanParams *p, int64_t B, size_t budget)
{
    LbPlan plan;
    return lb_plan_compute(c, p, B, &plan) == LB_OK && plan.total <= budget;
}

int64_t lb_plan_largest_batch(const LbModelConfig *c, const LbPlanParams *p, size_t budget,
                              int64_t max_batch)
{
    if (max_batch <= 0)
        max_batch = INT64_MAX / 4;
    if (!fits(c, p, 1, budget))
        return 0;
    /* Bytes grow with B: double to a failing B, then bisect between the last fit and it. */
    int64_t good = 1, bad = 2;
    while (bad <= max_batch && fits(c, p, bad, budget)) {
        good = bad;
        bad *= 2;
    }
    if (bad > max_batch) {
        if (fits(c, p, max_batch, budget))
            return max_batch;
        bad = max_batch;
    }
    while (bad - good > 1) {
        int64_t mid = good + (bad - good) / 2;
        if (fits(c, p, mid, budget))
            good = mid;
        else
            bad = mid;
    }
    return good;
}
