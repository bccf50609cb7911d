/* Chunked attention: exact softmax attention over blocks of c query rows (--chunk), the score
 * buffer B h c n instead of B h n n: memory linear in n, the standard model's output to rounding.
 * The unfused form of FlashAttention's idea, through the ops table's products and softmax. */
#include <stdio.h>

#include "attn/attention_impl.h"
#include "attn/base/status.h"

/* Rows per block: the whole sequence when --chunk is at least n. */
static int64_t block_rows(const LbModelConfig *c) { return c->chunk < c->n ? c->chunk : c->n; }

static int attention(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y)
{
    (void)layer;
    const int64_t d = p->d;
    void *qkv, *o, *s;
    LB_TRY(lb_qkv(p, w, x, &qkv));                                     /* (B, n, 3d) */
    LB_TRY(lb_pass_alloc(p, p->B * p->n * d, "attention output", &o)); /* (B, n, d) */
    const int64_t c = block_rows(&p->m->cfg);
    const size_t mark = lb_arena_mark(p->a);
    LB_TRY(lb_pass_alloc(p, p->B * p->h * c * p->n, "attention scores (one block)", &s)); /* (B, h, c, n) */
    /* Heads read in place from Q/K/V; each block writes its own rows of o. */
    for (int64_t r0 = 0; r0 < p->n; r0 += c)
        LB_TRY(lb_attend_rows(p, qkv, 3 * d, lb_pass_at(p, qkv, d), lb_pass_at(p, qkv, 2 * d), 3 * d, p->n, p->n,
                              r0, r0 + c <= p->n ? c : p->n - r0, s, o));
    lb_arena_reset(p->a, mark); /* a training step keeps qkv and o, not the last block's scores */
    if (p->keep) {
        p->keep[0] = qkv;
        p->keep[1] = o;
    }
    return lb_project(p, w, o, y);
}

/* Each block's P recomputed from the kept Q and K: memory stays linear in n. */
static int attention_backward(LbPass *p, int layer, const LbLayerWeights *w, void *const *keep, const void *x,
                              const void *dy, void *dx, LbLayerWeights *gw)
{
    (void)layer;
    return lb_exact_attention_backward(p, w, x, keep[0], keep[1], NULL, block_rows(&p->m->cfg), dy, dx, gw);
}

static int check(const LbModelConfig *c, char *msg, size_t msg_size)
{
    if (c->chunk < LB_CHUNK_MIN || c->chunk > LB_CHUNK_MAX) {
        snprintf(msg, msg_size, "--chunk %lld is out of range: should be %d to %d", (long long)c->chunk,
                 LB_CHUNK_MIN, LB_CHUNK_MAX);
        return LB_ERR_INVALID;
    }
    return LB_OK;
}

/* A chunk that divides n (n / 4 for the tests' lengths), one that does not (n / 3 + 1: the last
 * block is short), and one past n (one block: the standard model's buffers). */
static void variant(int i, LbModelConfig *c)
{
    const int64_t chunks[] = {c->n / 4, c->n / 3 + 1, 2 * c->n};
    c->chunk = chunks[i] >= 1 ? chunks[i] : 1;
}

static void describe(const LbModelConfig *c, char *buf, size_t size)
{
    snprintf(buf, size, "chunked c %lld", (long long)c->chunk);
}

const LbModelDesc lb_model_chunked = {
    .name = "chunked",
    .own_flags = "chunk",
    .check = check,
    .attention = attention,
    .attention_backward = attention_backward,
    .flops_per_layer = lb_exact_attention_flops,
    .variants = 3,
    .variant = variant,
    .baseline = 2,
    .describe = describe,
};
