/* The memory plan: the allocations of attn/model.c and attn/forward.c, counted in the same
 * order and with the same alignment, as closed forms in the batch size B. Any change to either
 * file must be mirrored here; tests/model/test_plan.c holds the two equal. */
#include "attn/plan.h"

#include <stdint.h>

#include "attn/arena.h"
#include "attn/status.h"

static int64_t projection_count(const LbModelConfig *c)
{
    if (c->kind != LB_MODEL_LINFORMER)
        return 0;
    switch (c->sharing) {
    case LB_SHARE_LAYERWISE: return 1;
    case LB_SHARE_KV: return c->layers;
    case LB_SHARE_HEADWISE: return 2 * (int64_t)c->layers;
    case LB_SHARE_NONE: return 2 * (int64_t)c->layers * c->heads;
    }
    return 0;
}

static int separate_kv(const LbModelConfig *c) { return c->sharing == LB_SHARE_HEADWISE || c->sharing == LB_SHARE_NONE; }

typedef struct Sum {
    const LbPlanParams *p;
    size_t total;
    int overflow;
} Sum;

/* Add one allocation of `elems` elements of `size` bytes, aligned like the arena does. */
static void add(Sum *s, int64_t elems, size_t size)
{
    if (elems < 0 || (elems > 0 && (uint64_t)elems > (SIZE_MAX / 2) / size)) {
        s->overflow = 1;
        return;
    }
    size_t bytes = lb_align_up((size_t)elems * size, s->p->alignment);
    if (bytes > SIZE_MAX / 2 - s->total)
        s->overflow = 1;
    else
        s->total += bytes;
}

static void add_e(Sum *s, int64_t elems) { add(s, elems, s->p->elem_bytes); }

static size_t weights_bytes(const LbModelConfig *c, Sum *s)
{
    const int64_t d = c->d_model, f = c->ffn;
    add_e(s, (int64_t)c->vocab * d);
    add_e(s, c->n * d);
    add_e(s, d);
    add_e(s, d);
    for (int l = 0; l < c->layers; l++) {
        int64_t sizes[] = {3 * d * d, 3 * d, d * d, d, d, d, f * d, f, d * f, d, d, d};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            add_e(s, sizes[i]);
    }
    for (int64_t i = 0; i < projection_count(c); i++)
        add_e(s, c->k * c->n);
    return s->total;
}

/* The attention phase's temporaries, in forward.c's order. */
static size_t attention_bytes(const LbModelConfig *c, int64_t B, Sum *s)
{
    const int64_t d = c->d_model, n = c->n, k = c->k, R = B * n, C = B * k;
    if (c->kind == LB_MODEL_STANDARD) {
        int64_t a[] = {3 * R * d, R * d, R * d, R * d, B * c->heads * n * n};
        for (size_t i = 0; i < 5; i++)
            add_e(s, a[i]);
        return s->total;
    }
    const int64_t scores = B * c->heads * n * k;
    if (c->order == LB_ORDER_EARLY && !separate_kv(c)) {
        int64_t a[] = {C * d, R * d, 2 * C * d, R * d, C * d, C * d, scores};
        for (size_t i = 0; i < 7; i++)
            add_e(s, a[i]);
    } else if (c->order == LB_ORDER_EARLY) {
        int64_t a[] = {C * d, C * d, R * d, C * d, C * d, R * d, C * d, C * d, scores};
        for (size_t i = 0; i < 9; i++)
            add_e(s, a[i]);
    } else if (c->sharing == LB_SHARE_LAYERWISE || c->sharing == LB_SHARE_KV) {
        int64_t a[] = {3 * R * d, 2 * C * d, R * d, C * d, C * d, scores};
        for (size_t i = 0; i < 6; i++)
            add_e(s, a[i]);
    } else if (c->sharing == LB_SHARE_HEADWISE) {
        int64_t a[] = {3 * R * d, C * d, C * d, R * d, C * d, C * d, scores};
        for (size_t i = 0; i < 7; i++)
            add_e(s, a[i]);
    } else {
        int64_t a[] = {3 * R * d, R * d, R * d, R * d, C * d, C * d, scores};
        for (size_t i = 0; i < 7; i++)
            add_e(s, a[i]);
    }
    return s->total;
}

int lb_plan_compute(const LbModelConfig *c, const LbPlanParams *p, int64_t B, LbPlan *out)
{
    Sum w = {p, 0, 0}, in = {p, 0, 0}, at = {p, 0, 0}, ff = {p, 0, 0};
    out->weights = weights_bytes(c, &w);
    out->workspace = p->workspace ? lb_align_up(p->workspace, p->alignment) : 0;
    add(&in, B * c->n, sizeof(int32_t));        /* token ids */
    add_e(&in, B * c->n * c->d_model);           /* hidden state x */
    add_e(&in, B * c->n * c->d_model);           /* sub-layer output y */
    out->inputs = in.total;
    out->attention = attention_bytes(c, B, &at);
    add_e(&ff, B * c->n * c->ffn);               /* FFN hidden */
    out->ffn = ff.total;
    if (w.overflow || in.overflow || at.overflow || ff.overflow)
        return LB_ERR_INVALID; /* no message: the batch search probes such sizes on purpose */
    out->total = out->weights + out->workspace + out->inputs +
                 (out->attention > out->ffn ? out->attention : out->ffn);
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
