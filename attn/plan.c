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

/* --- the counting backend: every op succeeds and touches nothing -------------------------- */

/* The no-ops ignore their arguments by design: one line each, the warning off for them alone. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static int no_upload(LbBackend *be, void *dst, const float *src, int64_t count) { return LB_OK; }
static int no_fill(LbBackend *be, void *x, int64_t count, uint64_t seed, float lo, float hi) { return LB_OK; }
static int no_linear(LbBackend *be, const void *x, const void *w, const void *b, void *y, int64_t rows, int64_t in,
                     int64_t out, int gelu) { return LB_OK; }
static int no_bmm(LbBackend *be, const LbBmm *p) { return LB_OK; }
static int no_softmax(LbBackend *be, void *x, int64_t rows, int64_t cols, float scale) { return LB_OK; }
static int no_layernorm(LbBackend *be, void *x, const void *r, const void *g, const void *b, int64_t rows, int64_t d,
                        float eps) { return LB_OK; }
static int no_embed(LbBackend *be, const int32_t *ids, const void *tok, const void *pos, void *x, int64_t batch,
                    int64_t n, int64_t d) { return LB_OK; }
static int no_gelu(LbBackend *be, void *y, int64_t rows, int64_t cols) { return LB_OK; }
static int no_split(LbBackend *be, const void *src, int64_t ld, void *dst, int64_t batch, int64_t n, int64_t heads,
                    int64_t hd) { return LB_OK; }
static int no_merge(LbBackend *be, const void *src, void *dst, int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    return LB_OK;
}
static int no_favor(LbBackend *be, void *f, const void *x, void *stat, int64_t groups, int64_t n, int64_t m,
                    int64_t hd, float scale, int keys) { return LB_OK; }
/* divide_by_last and gelu_backward */
static int no_pair(LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols) { return LB_OK; }
static int no_flash(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o, int64_t batch,
                    int64_t n, int64_t heads, int64_t hd, float scale) { return LB_OK; }
static int no_pool(LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n,
                   int64_t k, int64_t channels, int mode) { return LB_OK; }
static int no_conv(LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y, int64_t batch,
                   int64_t n, int64_t k, int64_t channels) { return LB_OK; }
/* the training step */
static int no_copy(LbBackend *be, void *dst, const void *src, size_t bytes) { return LB_OK; }
static int no_add(LbBackend *be, const void *x, void *y, int64_t count) { return LB_OK; }
static int no_column_sums(LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols, void *scratch)
{
    return LB_OK;
}
static int no_softmax_backward(LbBackend *be, const void *y, void *d, int64_t rows, int64_t cols, float scale)
{
    return LB_OK;
}
static int no_layernorm_backward(LbBackend *be, const void *x, const void *r, const void *g, const void *dy, void *dv,
                                 void *dg, void *db, int64_t rows, int64_t d, float eps, void *scratch) { return LB_OK; }
static int no_embed_backward(LbBackend *be, const int32_t *ids, const void *dx, void *dtok, void *dpos, int64_t batch,
                             int64_t n, int64_t d, int64_t vocab, void *scratch) { return LB_OK; }
static int no_pool_backward(LbBackend *be, const void *x, int64_t ld_x, const void *dy, int64_t ld_y, void *dx,
                            int64_t batch, int64_t n, int64_t k, int64_t channels, int mode) { return LB_OK; }
static int no_conv_backward(LbBackend *be, const void *x, int64_t ld_x, const void *wt, const void *dy, int64_t ld_y,
                            void *dx, void *dwt, int64_t batch, int64_t n, int64_t k, int64_t channels, void *scratch)
{
    return LB_OK;
}
static int no_favor_backward(LbBackend *be, const void *phi, const void *x, void *d, void *dx, int64_t groups,
                             int64_t n, int64_t m, int64_t hd, float scale) { return LB_OK; }
static int no_divide_backward(LbBackend *be, const void *x, const void *dy, void *dx, int64_t rows, int64_t cols)
{
    return LB_OK;
}
static int no_flash_backward(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, const void *o,
                             const float *lse, const void *do_, void *dq, void *dk, void *dv, int64_t batch,
                             int64_t n, int64_t heads, int64_t hd, float scale, void *scratch) { return LB_OK; }
static int no_flash_lse(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o, float *lse,
                        int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale) { return LB_OK; }
#pragma GCC diagnostic pop

/* Every op a model's build, forward pass or training step calls: an op they start to call gets
 * its no-op here too, or the plan crashes. Nothing allocates, times or describes through this backend. */
static const LbOps counting_ops = {
    .name = "counting",
    .upload = no_upload,
    .fill_uniform = no_fill,
    .linear = no_linear,
    .bmm = no_bmm,
    .softmax = no_softmax,
    .layernorm = no_layernorm,
    .embed = no_embed,
    .gelu = no_gelu, /* the breakdown's count runs linear's GELU apart (attn/measure/breakdown.c) */
    .split_heads = no_split,
    .merge_heads = no_merge,
    .favor_features = no_favor,
    .divide_by_last = no_pair,
    .flash_attention = no_flash,
    .pool_seq = no_pool,
    .depthwise_conv_seq = no_conv,
    .copy = no_copy,
    .add = no_add,
    .column_sums = no_column_sums,
    .gelu_backward = no_pair,
    .softmax_backward = no_softmax_backward,
    .layernorm_backward = no_layernorm_backward,
    .embed_backward = no_embed_backward,
    .pool_seq_backward = no_pool_backward,
    .depthwise_conv_seq_backward = no_conv_backward,
    .favor_features_backward = no_favor_backward,
    .divide_by_last_backward = no_divide_backward,
    .flash_attention_backward = no_flash_backward,
    .flash_attention_lse = no_flash_lse,
};

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
