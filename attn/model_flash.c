/* Flash: exact softmax attention fused into one op (LbOps.flash_attention), FlashAttention-2's
 * way (Dao, 2023): the standard model's output (tests/model/test_model.c) with no buffer larger
 * than the encoder's (B, n, d): the exact baseline as people run it today. The kernel is
 * gpu/flash.cu; the CPU reference attn/cpu/cpu_flash.c. */
#include <math.h>
#include <stdio.h>

#include "attn/attention_impl.h"
#include "attn/base/status.h"

/* the standard model's scale, as the float its product's alpha is */
static float scale(const LbPass *p) { return 1.0f / sqrtf((float)p->hd); }

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    (void)layer;
    const int64_t d = p->d;
    void *qkv, *o;
    LB_TRY(lb_qkv(p, w, x, &qkv));                                     /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->n * d, "attention output", &o)); /* (B, n, d) */
    const void *k = lb_pass_at(p, qkv, d), *v = lb_pass_at(p, qkv, 2 * d);
    lb_pass_role(p, LB_ROLE_ATTENTION);
    if (p->keep) { /* the backward recomputes P from Q, K and each row's log-sum-exp */
        float *lse;
        LB_TRY(lb_arena_alloc(p->a, (size_t)(p->B * p->h * p->n) * 4u, "attention log-sum-exp", (void **)&lse));
        LB_TRY(p->ops->flash_attention_lse(p->be, qkv, k, v, 3 * d, o, lse, p->B, p->n, p->h, p->hd, scale(p)));
        p->keep[0] = qkv;
        p->keep[1] = o;
        p->keep[2] = lse;
    } else {
        LB_TRY(p->ops->flash_attention(p->be, qkv, k, v, 3 * d, o, p->B, p->n, p->h, p->hd, scale(p)));
    }
    return lb_project(p, w, o, y);
}

static int attention_backward(LbPass *p, int layer, const LbLayerWeights *w, void *const *keep, const void *x,
                              const void *dy, void *dx, LbLayerWeights *gw)
{
    (void)layer;
    const int64_t d = p->d;
    const void *qkv = keep[0];
    void *d_o, *dqkv, *scratch;
    LB_TRY(lb_pass_alloc(p, p->B * p->n * d, "attention output gradient", &d_o)); /* (B, n, d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->n * 3 * d, "Q/K/V gradient", &dqkv));      /* (B, n, 3d) */
    LB_TRY(lb_arena_alloc(p->a, lb_flash_backward_scratch_bytes(p->B, p->n, p->h, p->hd), "flash backward scratch",
                          &scratch));
    LB_TRY(lb_project_backward(p, w, keep[1], dy, d_o, gw));
    lb_pass_role(p, LB_ROLE_ATTENTION);
    LB_TRY(p->ops->flash_attention_backward(p->be, qkv, lb_pass_at(p, qkv, d), lb_pass_at(p, qkv, 2 * d), 3 * d,
                                            keep[1], keep[2], d_o, dqkv, lb_pass_at(p, dqkv, d),
                                            lb_pass_at(p, dqkv, 2 * d), p->B, p->n, p->h, p->hd, scale(p), scratch));
    return lb_qkv_backward(p, w, x, dqkv, dx, gw);
}

/* The fused kernels tile the head width by the tensor-core product's k (16): refused here, with
 * the flags that set it, rather than by a backend in the middle of a sweep. */
static int check(const LbModelConfig *c, char *msg, size_t msg_size)
{
    const int64_t hd = lb_config_head_dim(c);
    if (hd % LB_FLASH_HD_STEP != 0 || hd > LB_FLASH_HD_MAX) {
        snprintf(msg, msg_size,
                 "--d-model %d / --heads %d gives a head width of %lld, which flash cannot take: should be a "
                 "multiple of %d up to %d",
                 c->d_model, c->heads, (long long)hd, LB_FLASH_HD_STEP, LB_FLASH_HD_MAX);
        return LB_ERR_INVALID;
    }
    return LB_OK;
}

/* One variant: flash has no settings of its own. Where the model's heads are narrower than the
 * kernels take (the tests' small model, 16 wide in 4 heads), it runs with d_model / 16 heads, so
 * `linbench check` and the tests still run it on their model. */
static void variant(int i, LbModelConfig *c)
{
    (void)i;
    const int64_t hd = lb_config_head_dim(c);
    if ((hd % LB_FLASH_HD_STEP != 0 || hd > LB_FLASH_HD_MAX) && c->d_model % LB_FLASH_HD_STEP == 0)
        c->heads = c->d_model / LB_FLASH_HD_STEP;
}

static void describe(const LbModelConfig *c, char *buf, size_t size)
{
    snprintf(buf, size, "flash h %d", c->heads);
}

const LbModelDesc lb_model_flash = {
    .name = "flash",
    .check = check,
    .attention = attention,
    .attention_backward = attention_backward,
    .flops_per_layer = lb_exact_attention_flops,
    .variants = 1,
    .variant = variant,
    .baseline = 3,
    .describe = describe,
};
