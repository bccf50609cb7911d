/* The attention backward of the Linformer family and the Performer on the CPU reference backend,
 * every variant of the model table, the k schedule and k = n, on a tiny model: each layer's
 * attention forward keeping its tensors, then its backward from a random dy; dx and every weight
 * gradient against central finite differences of L = sum(dy * attention(x)). The gradient model's
 * own tensors and dx start random, so a gradient written where it must be added fails. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_impl.h"
#include "attn/model.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/forward.h"
#include "tests/lib/model.h"

/* Central differences on the fp32 forward: a step of 1e-2 leaves about 5e-5 of rounding noise
 * and as much truncation in a quotient; the bound allows twenty times that plus 0.1% relative
 * (on the CPU the worst entry used 3.5% of it, and a bias gradient 1% too large fails). Max
 * pooling's kinks (below) keep 1% relative. A sign, a share written over another or a transposed
 * product is off by the gradient's own size. */
#define FD_STEP 1e-2
#define FD_ATOL 1e-3
#define FD_RTOL 1e-3
#define FD_RTOL_KINKS 1e-2

typedef struct Case {
    LbModelConfig cfg;
    LbBackend *be;
    LbArena a;
    LbModel m, g; /* the model and its gradient model */
    LbPass p;
    int layer;
    void *x, *dy, *dx, *y; /* (B, n, d) */
    float *dy_host;
    int64_t count; /* B n d */
} Case;

/* A (count) floats on the backend, uniform in [-1, 1], their host copy in host when not NULL. */
static void *random_tensor(Case *c, int64_t count, float *host)
{
    void *t = NULL;
    float *v = host ? host : lb_test_alloc(count);
    lb_test_random(v, count, -1.0f, 1.0f);
    if (lb_arena_alloc(&c->a, (size_t)count * c->be->elem_bytes, "test tensor", &t) != LB_OK ||
        c->be->ops->upload(c->be, t, v, count) != LB_OK)
        t = NULL;
    if (!host)
        free(v);
    return t;
}

static float *download(Case *c, const void *t, int64_t count)
{
    float *h = lb_test_alloc(count);
    c->be->ops->download(c->be, h, t, count);
    return h;
}

static void set_value(Case *c, void *t, int64_t i, float v)
{
    c->be->ops->upload(c->be, (char *)t + i * (int64_t)c->be->elem_bytes, &v, 1);
}

/* L = sum(dy * attention(x)) of the current layer, in double; temporaries released. */
static double loss(Case *c)
{
    const size_t mark = lb_arena_mark(&c->a);
    const LbModelDesc *desc = lb_model_desc(c->cfg.kind);
    c->p.keep = NULL;
    int rc = desc->attention(&c->p, c->layer, &c->m.layers[c->layer], c->x, c->y);
    lb_arena_reset(&c->a, mark);
    if (rc != LB_OK)
        return NAN;
    float *y = download(c, c->y, c->count);
    double s = 0.0;
    for (int64_t i = 0; i < c->count; i++)
        s += (double)c->dy_host[i] * y[i];
    free(y);
    return s;
}

/* L at entry i (value v) of tensor t moved by +h and -h (as fp32 rounds them): the steps taken. */
static void step(Case *c, void *t, int64_t i, float v, double h, double *hi, double *lo, double *up, double *down)
{
    const float u = (float)(v + h), dn = (float)(v - h);
    set_value(c, t, i, u);
    *hi = loss(c);
    set_value(c, t, i, dn);
    *lo = loss(c);
    set_value(c, t, i, v);
    *up = (double)u - v, *down = (double)v - dn;
}

/* The gradient `grad` (count) of tensor t against central differences, entry by entry; base is
 * subtracted from grad first (what the backward added to). Max pooling's loss has kinks where a
 * window's top two values meet, and with a few windows per column a step of 1e-2 often crosses
 * one: there an entry is measured again at a step an eighth as long, centrally and on each side
 * (l0: L unmoved), a kink on one side leaving the other side's quotient smooth. Returns the worst
 * |diff| / bound. */
static double check_tensor(Case *c, const char *name, const char *what, void *t, int64_t count, const float *grad,
                           const float *base, double l0)
{
    float *v = download(c, t, count);
    const double rtol = c->cfg.kind == LB_MODEL_LINFORMER_MAX ? FD_RTOL_KINKS : FD_RTOL;
    int64_t bad = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < count; i++) {
        const double g = (double)grad[i] - (base ? (double)base[i] : 0.0);
        double hi, lo, up, down;
        step(c, t, i, v[i], FD_STEP, &hi, &lo, &up, &down);
        double fd = (hi - lo) / (up + down), err = fabs(g - fd), bound = FD_ATOL + rtol * fabs(fd);
        if (!(err <= bound) && c->cfg.kind == LB_MODEL_LINFORMER_MAX) {
            step(c, t, i, v[i], FD_STEP / 8, &hi, &lo, &up, &down);
            const double quotients[] = {(hi - lo) / (up + down), (hi - l0) / up, (l0 - lo) / down};
            for (int q = 0; q < 3 && !(err <= bound); q++)
                fd = quotients[q], err = fabs(g - fd), bound = FD_ATOL + rtol * fabs(fd);
        }
        if (!(err <= bound) && bad++ < 5)
            printf("  %s layer %d %s[%lld]: backward %.6g, central difference %.6g\n", name, c->layer, what,
                   (long long)i, g, fd);
        worst = fmax(worst, isnan(err) ? INFINITY : err / bound);
    }
    free(v);
    /* Max pooling: a tensor that moves every window (w_qkv) can sit within the short step of a kink
     * on both sides (1 seed in 12 at 2 of 192 entries); a wrong gradient is off nearly everywhere. */
    const int64_t allowed = c->cfg.kind == LB_MODEL_LINFORMER_MAX ? count / 32 : 0;
    lb_check(bad <= allowed, "%s layer %d: %s: %lld of %lld entries off their central differences (%lld allowed)", name,
             c->layer, what, (long long)bad, (long long)count, (long long)allowed);
    return worst;
}

/* The case's layer: forward without and with keep (the same output, bit for bit), the backward,
 * then every gradient against central differences. */
static void check_layer(Case *c, const char *name)
{
    const LbModelDesc *desc = lb_model_desc(c->cfg.kind);
    const LbOps *ops = c->be->ops;
    const int64_t d = c->cfg.d_model, own = c->g.own_count;
    LbLayerWeights *w = &c->m.layers[c->layer], *gw = &c->g.layers[c->layer];
    c->dy_host = lb_test_alloc(c->count);
    float *dx0 = lb_test_alloc(c->count), **own0 = calloc((size_t)own + 1, sizeof *own0);
    const size_t mark = lb_arena_mark(&c->a);
    c->dy = random_tensor(c, c->count, c->dy_host);
    c->dx = random_tensor(c, c->count, dx0);
    for (int64_t i = 0; i < own; i++) { /* the gradient model's own tensors start random */
        const int64_t n = c->g.own[i].rows * c->g.own[i].cols;
        own0[i] = lb_test_alloc(n);
        lb_test_random(own0[i], n, -1.0f, 1.0f);
        ops->upload(c->be, c->g.own[i].ptr, own0[i], n);
    }
    void *const written[] = {gw->w_qkv, gw->b_qkv, gw->w_o, gw->b_o};
    const int64_t sizes[] = {3 * d * d, 3 * d, d * d, d};
    for (int i = 0; i < 4; i++) { /* and what the backward writes, NaN */
        float *nan = lb_test_alloc(sizes[i]);
        lb_test_poison(nan, sizes[i]);
        ops->upload(c->be, written[i], nan, sizes[i]);
        free(nan);
    }
    float *y0 = NULL, *y1 = NULL;
    const size_t before = lb_arena_mark(&c->a);
    int rc = c->dy && c->dx ? desc->attention(&c->p, c->layer, w, c->x, c->y) : LB_FAIL(LB_ERR_NOMEM, "test tensors");
    lb_arena_reset(&c->a, before);
    if (rc == LB_OK) {
        y0 = download(c, c->y, c->count);
        void *keep[LB_KEEP_MAX] = {0};
        c->p.keep = keep;
        rc = desc->attention(&c->p, c->layer, w, c->x, c->y);
        c->p.keep = NULL;
        if (rc == LB_OK) {
            y1 = download(c, c->y, c->count);
            rc = desc->attention_backward(&c->p, c->layer, w, keep, c->x, c->dy, c->dx, gw);
        }
        lb_arena_reset(&c->a, before);
    }
    if (!lb_check(rc == LB_OK, "%s layer %d: forward and backward: %s", name, c->layer, lb_error_message()))
        goto done;
    lb_check(memcmp(y0, y1, (size_t)c->count * sizeof *y0) == 0,
             "%s layer %d: the forward keeping its tensors gives the forward's output bit for bit", name, c->layer);
    const double l0 = loss(c);
    double worst = 0.0;
    float *g = download(c, c->dx, c->count);
    worst = fmax(worst, check_tensor(c, name, "dx", c->x, c->count, g, dx0, l0));
    free(g);
    static const char *const names[] = {"w_qkv", "b_qkv", "w_o", "b_o"};
    void *const weights[] = {w->w_qkv, w->b_qkv, w->w_o, w->b_o};
    for (int i = 0; i < 4; i++) {
        g = download(c, written[i], sizes[i]);
        worst = fmax(worst, check_tensor(c, name, names[i], weights[i], sizes[i], g, NULL, l0));
        free(g);
    }
    for (int64_t i = 0; i < own; i++) {
        const LbTensorRef *t = &c->g.own[i];
        const int64_t n = t->rows * t->cols;
        g = download(c, t->ptr, n);
        if (c->cfg.kind == LB_MODEL_PERFORMER) /* fixed features, not trained: left as they were */
            lb_check(memcmp(g, own0[i], (size_t)n * sizeof *g) == 0, "%s layer %d: %s's gradient untouched", name,
                     c->layer, t->name);
        else
            worst = fmax(worst, check_tensor(c, name, t->name, c->m.own[i].ptr, n, g, own0[i], l0));
        free(g);
    }
    printf("%s layer %d: worst |backward - central difference| / bound %.3g\n", name, c->layer, worst);
done:
    lb_arena_reset(&c->a, mark);
    for (int64_t i = 0; i < own; i++)
        free(own0[i]);
    free(own0);
    free(y0), free(y1), free(dx0), free(c->dy_host);
}
/* Every layer of cfg's model at batch 2 (so that sums over the batch show). */
static void check_config(LbBackend *be, const LbModelConfig *cfg)
{
    char name[96], msg[256];
    lb_model_describe(cfg, name, sizeof name);
    if (!lb_check(lb_config_check(cfg, msg, sizeof msg) == LB_OK, "%s: %s", name, msg))
        return;
    Case c = {.cfg = *cfg, .be = be};
    const int64_t B = 2;
    if (!lb_check(lb_arena_open(&c.a, be, (size_t)64 << 20) == LB_OK, "%s: arena", name))
        return;
    if (lb_check(lb_model_build(&c.m, cfg, be, &c.a, lb_test_u64()) == LB_OK &&
                     lb_model_build(&c.g, cfg, be, &c.a, lb_test_u64()) == LB_OK,
                 "%s: build: %s", name, lb_error_message())) {
        c.count = B * cfg->n * cfg->d_model;
        c.x = random_tensor(&c, c.count, NULL);
        lb_check(lb_arena_alloc(&c.a, (size_t)c.count * be->elem_bytes, "y", &c.y) == LB_OK && c.x, "%s: x, y", name);
        c.p = (LbPass){.m = &c.m, .a = &c.a, .be = be, .ops = be->ops, .B = B, .n = cfg->n, .k = cfg->k,
                       .d = cfg->d_model, .h = cfg->heads, .hd = lb_config_head_dim(cfg), .f = cfg->ffn,
                       .grads = &c.g};
        for (c.layer = 0; c.layer < cfg->layers && c.x && c.y; c.layer++)
            check_layer(&c, name);
        lb_model_release(&c.g);
        lb_model_release(&c.m);
    }
    lb_arena_close(&c.a);
}

int main(void)
{
    lb_test_init("test_train_attention");
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return lb_test_finish("test_train_attention");
    static const LbModelKind kinds[] = {LB_MODEL_LINFORMER, LB_MODEL_LINFORMER_MEAN, LB_MODEL_LINFORMER_MAX,
                                        LB_MODEL_LINFORMER_CONV, LB_MODEL_PERFORMER};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const LbModelDesc *desc = lb_model_desc(kinds[i]);
        for (int v = 0; v < desc->variants; v++) {
            const int64_t k = kinds[i] == LB_MODEL_PERFORMER ? 6 : 4; /* m 6 random features */
            const LbModelConfig cfg = lb_model_variant(kinds[i], v, lb_test_tiny(kinds[i], 8, k));
            check_config(be, &cfg);
        }
    }
    /* The k schedule: at n 32, k 16, halve gives layer 1 k 8, E's first 8 rows and a shared kernel's
     * first 4 of its 4 taps (layer 0: 2). Max pooling runs the mean's code but for its mode; at n 32
     * its 64 windows per column put kinks within a step of most weights' differences. */
    static const LbModelKind scheduled[] = {LB_MODEL_LINFORMER, LB_MODEL_LINFORMER_MEAN, LB_MODEL_LINFORMER_CONV,
                                            LB_MODEL_LINFORMER_MAX};
    for (size_t i = 0; i + 1 < sizeof scheduled / sizeof scheduled[0]; i++) {
        LbModelConfig cfg = lb_model_variant(scheduled[i], 1, lb_test_tiny(scheduled[i], 32, 16)); /* layerwise/late */
        cfg.k_schedule = LB_KSCHED_HALVE;
        check_config(be, &cfg);
        cfg.sharing = LB_SHARE_KV, cfg.order = LB_ORDER_EARLY;
        check_config(be, &cfg);
    }
    /* k = n: no compression in length, the projections still trained. */
    for (size_t i = 0; i < sizeof scheduled / sizeof scheduled[0]; i++) {
        const LbModelConfig cfg = lb_model_variant(scheduled[i], 1, lb_test_tiny(scheduled[i], 8, 8));
        check_config(be, &cfg);
    }
    lb_backend_close(be);
    return lb_test_finish("test_train_attention");
}
