/* Building a model: weights from the arena in the fixed order of model.h, each tensor initialised
 * from its own seed derived from the model's; and the builder through which a model file
 * (attn/model_*.c) allocates its own weights. */
#include "attn/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attention_impl.h"
#include "attn/rng.h"
#include "attn/base/status.h"

/* Allocate count elements and fill them uniformly in [lo, hi] (attn/rng.h: hi itself can occur). */
static int builder_uniform(LbBuilder *b, void **out, int64_t count, float lo, float hi, const char *what)
{
    LbBackend *be = b->m->be;
    LB_TRY(lb_arena_alloc(b->a, (size_t)count * be->elem_bytes, what, out));
    uint64_t seed = lb_rng_mix(b->seed, b->tensor++);
    if (*out == NULL) /* counting arena */
        return LB_OK;
    return be->ops->fill_uniform(be, *out, count, seed, lo, hi);
}

/* Append (name, rows, cols) to the model's own tensors; the pointer is set by the caller. */
static int own_entry(LbModel *m, const char *name, int64_t rows, int64_t cols, LbTensorRef **out)
{
    if (m->own_count == m->own_cap) {
        int64_t cap = m->own_cap ? 2 * m->own_cap : 8;
        LbTensorRef *r = realloc(m->own, (size_t)cap * sizeof *r);
        if (!r)
            return LB_FAIL(LB_ERR_NOMEM, "out of host memory for the model's tables");
        m->own = r;
        m->own_cap = cap;
    }
    LbTensorRef *r = &m->own[m->own_count++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->rows = rows;
    r->cols = cols;
    *out = r;
    return LB_OK;
}

int lb_builder_own_uniform(LbBuilder *b, const char *name, int64_t rows, int64_t cols, float lo, float hi)
{
    LbTensorRef *r;
    LB_TRY(own_entry(b->m, name, rows, cols, &r));
    return builder_uniform(b, &r->ptr, rows * cols, lo, hi, name);
}

int lb_builder_own_host(LbBuilder *b, const char *name, int64_t rows, int64_t cols, LbHostDraw draw)
{
    LbBackend *be = b->m->be;
    LbTensorRef *r;
    LB_TRY(own_entry(b->m, name, rows, cols, &r));
    const int64_t count = rows * cols;
    LB_TRY(lb_arena_alloc(b->a, (size_t)count * be->elem_bytes, name, &r->ptr));
    uint64_t seed = lb_rng_mix(b->seed, b->tensor++);
    if (r->ptr == NULL) /* counting arena: nothing drawn */
        return LB_OK;
    float *values = malloc((size_t)(count > 0 ? count : 1) * sizeof *values);
    if (!values)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory drawing %s (%lld values)", name, (long long)count);
    int rc = draw(values, rows, cols, seed);
    if (rc == LB_OK)
        rc = be->ops->upload(be, r->ptr, values, count);
    free(values);
    return rc;
}

/* A linear layer (out, in) and its bias (out): PyTorch's default U(-1/sqrt(in), 1/sqrt(in)). */
static int linear_weights(LbBuilder *b, void **w, void **bias, int64_t out, int64_t in, const char *what)
{
    float a = 1.0f / sqrtf((float)in);
    LB_TRY(builder_uniform(b, w, out * in, -a, a, what));
    return builder_uniform(b, bias, out, -a, a, what);
}

/* LayerNorm gain near 1 and shift near 0, not exactly 1 and 0, so a test sees if they are
 * ignored. */
static int norm_weights(LbBuilder *b, void **g, void **beta, int64_t d, const char *what)
{
    LB_TRY(builder_uniform(b, g, d, 0.8f, 1.2f, what));
    return builder_uniform(b, beta, d, -0.1f, 0.1f, what);
}

/* Every weight in model.h's order, then the workspace. */
static int build(LbModel *m, const LbModelDesc *desc, LbArena *a, uint64_t seed)
{
    const LbModelConfig *cfg = &m->cfg;
    LbBackend *be = m->be;
    const int64_t d = cfg->d_model, f = cfg->ffn, n = cfg->n;
    LbBuilder b = {m, a, seed, 0};
    LB_TRY(builder_uniform(&b, &m->tok_emb, (int64_t)cfg->vocab * d, -0.1f, 0.1f, "token embedding"));
    LB_TRY(builder_uniform(&b, &m->pos_emb, n * d, -0.1f, 0.1f, "position embedding"));
    LB_TRY(norm_weights(&b, &m->emb_ln_g, &m->emb_ln_b, d, "embedding LayerNorm"));
    for (int l = 0; l < cfg->layers; l++) {
        LbLayerWeights *w = &m->layers[l];
        LB_TRY(linear_weights(&b, &w->w_qkv, &w->b_qkv, 3 * d, d, "Q/K/V projection"));
        LB_TRY(linear_weights(&b, &w->w_o, &w->b_o, d, d, "output projection"));
        LB_TRY(norm_weights(&b, &w->ln1_g, &w->ln1_b, d, "attention LayerNorm"));
        LB_TRY(linear_weights(&b, &w->w_ff1, &w->b_ff1, f, d, "FFN up projection"));
        LB_TRY(linear_weights(&b, &w->w_ff2, &w->b_ff2, d, f, "FFN down projection"));
        LB_TRY(norm_weights(&b, &w->ln2_g, &w->ln2_b, d, "FFN LayerNorm"));
    }
    /* After the encoder's, so every model draws the same encoder weights from one seed. */
    if (desc->build)
        LB_TRY(desc->build(&b));
    if (!be->workspace_bytes)
        return LB_OK;
    LB_TRY(lb_arena_alloc(a, be->workspace_bytes, "backend workspace", &m->workspace));
    return m->workspace && be->ops->set_workspace ? be->ops->set_workspace(be, m->workspace, be->workspace_bytes)
                                                  : LB_OK;
}

int lb_model_build(LbModel *m, const LbModelConfig *cfg, LbBackend *be, LbArena *a, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->be = be;
    const LbModelDesc *desc = lb_model_desc(cfg->kind);
    if (!desc)
        return LB_FAIL(LB_ERR_INVALID, "unknown model kind %d", (int)cfg->kind);
    m->layers = calloc((size_t)cfg->layers, sizeof *m->layers);
    if (!m->layers)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory for the model's tables");
    const int rc = build(m, desc, a, seed);
    if (rc != LB_OK)
        lb_model_release(m);
    return rc;
}

void lb_model_release(LbModel *m)
{
    free(m->layers);
    free(m->own);
    m->layers = NULL;
    m->own = NULL;
    m->own_count = m->own_cap = 0;
}

static void ref(LbTensorRef *refs, int64_t max, int64_t *i, const char *name, void *p, int64_t rows,
                int64_t cols)
{
    if (*i < max) {
        snprintf(refs[*i].name, sizeof refs[*i].name, "%s", name);
        refs[*i].ptr = p;
        refs[*i].rows = rows;
        refs[*i].cols = cols;
        refs[*i].fixed = 0;
    }
    (*i)++;
}

int64_t lb_model_tensors(const LbModel *m, LbTensorRef *refs, int64_t max)
{
    const LbModelConfig *c = &m->cfg;
    const int64_t d = c->d_model, f = c->ffn;
    int64_t i = 0;
    char name[48];
    ref(refs, max, &i, "tok_emb", m->tok_emb, c->vocab, d);
    ref(refs, max, &i, "pos_emb", m->pos_emb, c->n, d);
    ref(refs, max, &i, "emb_ln_g", m->emb_ln_g, d, 1);
    ref(refs, max, &i, "emb_ln_b", m->emb_ln_b, d, 1);
    for (int l = 0; l < c->layers; l++) {
        const LbLayerWeights *w = &m->layers[l];
        struct {
            const char *n;
            void *p;
            int64_t r, c;
        } t[] = {{"w_qkv", w->w_qkv, 3 * d, d}, {"b_qkv", w->b_qkv, 3 * d, 1}, {"w_o", w->w_o, d, d},
                 {"b_o", w->b_o, d, 1},         {"ln1_g", w->ln1_g, d, 1},     {"ln1_b", w->ln1_b, d, 1},
                 {"w_ff1", w->w_ff1, f, d},     {"b_ff1", w->b_ff1, f, 1},     {"w_ff2", w->w_ff2, d, f},
                 {"b_ff2", w->b_ff2, d, 1},     {"ln2_g", w->ln2_g, d, 1},     {"ln2_b", w->ln2_b, d, 1}};
        for (size_t j = 0; j < sizeof t / sizeof t[0]; j++) {
            snprintf(name, sizeof name, "layer%d.%s", l, t[j].n);
            ref(refs, max, &i, name, t[j].p, t[j].r, t[j].c);
        }
    }
    for (int64_t p = 0; p < m->own_count; p++, i++)
        if (i < max)
            refs[i] = m->own[p];
    return i;
}
