/* The training step (attn/train.c) on the CPU reference backend: every parameter's gradient
 * against central finite differences of the loss sum(dy * output) through the CPU forward pass;
 * each attention backward of the Linformer family and the Performer against those of one layer;
 * the exact models' gradients against the standard model's; a step's count; and the
 * configuration check that refuses to train a model without a backward. One case each
 * (LB_TEST_CASE=NAME runs one). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_impl.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/ops.h"
#include "attn/measure/breakdown.h"
#include "attn/plan.h"
#include "attn/train.h"
#include "attn/base/status.h"
#include "tests/lib/cases.h"
#include "tests/lib/check.h"
#include "tests/lib/forward.h"
#include "tests/lib/model.h"

/* cfg's training step (lb_test_pass_open), whatever pass cfg names; 0 after a failed check, r
 * released. */
static int train_run(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed, const char *name, LbTestPass *r)
{
    LbModelConfig step = *cfg;
    step.pass = LB_PASS_TRAIN;
    const int rc = lb_test_pass_open(r, be, &step, B, seed, NULL);
    if (lb_check(rc == LB_OK, "%s B=%lld: plan, set-up and step: %s", name, (long long)B, lb_error_message()))
        return 1;
    lb_test_pass_close(r);
    return 0;
}

/* sum(dy * output) in double, the output of the CPU forward pass of r's model as it now is. */
static double loss(LbBackend *be, LbTestPass *r, const float *dy, float *out, int64_t count)
{
    if (lb_forward(&r->p.model, &r->a, &r->p.in) != LB_OK || be->ops->download(be, out, r->p.in.x, count) != LB_OK)
        return NAN;
    double sum = 0;
    for (int64_t i = 0; i < count; i++)
        sum += (double)dy[i] * out[i];
    return sum;
}

static float get1(LbBackend *be, const void *base, int64_t i)
{
    float v = NAN;
    be->ops->download(be, &v, (const char *)base + i * (int64_t)be->elem_bytes, 1);
    return v;
}

static void set1(LbBackend *be, void *base, int64_t i, float v)
{
    be->ops->upload(be, (char *)base + i * (int64_t)be->elem_bytes, &v, 1);
}

/* (L(w + h) - L(w - h)) / 2h for element i of the tensor at base, h as stored (w +- step rounded
 * to fp32); the element restored. */
static double central(LbBackend *be, LbTestPass *r, void *base, int64_t i, float step, const float *dy, float *out,
                      int64_t count)
{
    const float w0 = get1(be, base, i), wp = w0 + step, wm = w0 - step;
    set1(be, base, i, wp);
    const double lp = loss(be, r, dy, out, count);
    set1(be, base, i, wm);
    const double lm = loss(be, r, dy, out, count);
    set1(be, base, i, w0);
    return (lp - lm) / ((double)wp - (double)wm);
}

/* The tiny model of the gradient checks at n 8, k 4, training. */
static LbModelConfig tiny(LbModelKind kind)
{
    LbModelConfig c = lb_test_tiny(kind, 8, 4);
    c.chunk = 3; /* chunked: blocks of 3, 3 and 2 rows */
    c.pass = LB_PASS_TRAIN;
    return c;
}

/* Finite differences of L = sum(dy * output) through the CPU forward pass in fp32 storage:
 * Romberg's (64 D(h / 4) - 20 D(h / 2) + D(h)) / 45 of central differences D, h = 1e-2, whose
 * error is O(h^6): the embedding LayerNorm scales a step of the embeddings by about 17, and there
 * Richardson's (4 D(h / 2) - D(h)) / 3, error O(h^4), missed the bound for about one seed in 100.
 * L's fp32 rounding leaves about 3e-4 in the quotient (the worst |gradient - fd| over 600 seeds
 * on the CPU was 0.54 of the bound), while a wrong sign, term or transpose is off by the gradient
 * itself. */
#define FD_STEP 1e-2
#define FD_ATOL 1e-3
#define FD_RTOL 1e-3
#define FD_ENTRIES 3 /* random entries checked per tensor */

static void check_gradients(LbBackend *be, const LbModelConfig cfg)
{
    const int64_t B = 2, count = B * cfg.n * cfg.d_model;
    char name[64];
    lb_model_describe(&cfg, name, sizeof name);
    LbTestPass r;
    if (!train_run(be, &cfg, B, lb_test_u64(), name, &r))
        return;
    float *dy = lb_test_alloc(count), *out = lb_test_alloc(count), *step_out = lb_test_alloc(count);
    int32_t ids[2 * 8];
    be->ops->download(be, dy, r.p.train.dy, count);
    be->ops->download(be, step_out, r.p.in.x, count);
    be->ops->copy_raw_to_host(be, ids, r.p.in.ids, sizeof ids);
    loss(be, &r, dy, out, count);
    const double rel = lb_test_rel_error(step_out, out, count);
    lb_check(rel <= 1e-6, "%s: the step's output is the forward's (relative error %.3g)", name, rel);

    LbTensorRef w[64], g[64];
    const int64_t tensors = lb_model_tensors(&r.p.model, w, 64);
    lb_check(tensors == lb_model_tensors(&r.p.train.grads, g, 64) && tensors <= 64,
             "%s: the gradient model has the model's %lld tensors", name, (long long)tensors);
    for (int64_t t = 0; t < tensors && t < 64; t++) {
        double worst = 0;
        int ok = 1;
        if (w[t].fixed) { /* not trained: the step leaves its gradient 0 */
            const int64_t i = lb_test_randint(0, w[t].rows * w[t].cols - 1);
            lb_check(get1(be, g[t].ptr, i) == 0.0f, "%s: %s is fixed, its gradient 0", name, g[t].name);
            continue;
        }
        for (int e = 0; e < FD_ENTRIES; e++) {
            int64_t i = lb_test_randint(0, w[t].rows * w[t].cols - 1);
            if (t == 0) /* the token embedding: a row some token uses (the others' gradient is 0) */
                i = ids[lb_test_randint(0, B * cfg.n - 1)] * w[t].cols + i % w[t].cols;
            const double fd = (64.0 * central(be, &r, w[t].ptr, i, FD_STEP / 4, dy, out, count) -
                               20.0 * central(be, &r, w[t].ptr, i, FD_STEP / 2, dy, out, count) +
                               central(be, &r, w[t].ptr, i, FD_STEP, dy, out, count)) / 45.0;
            const double got = get1(be, g[t].ptr, i);
            const double err = fabs(got - fd);
            if (!(err <= FD_ATOL + FD_RTOL * fabs(fd))) {
                printf("  %s %s[%lld]: gradient %.6g, finite difference %.6g\n", name, g[t].name, (long long)i, got,
                       fd);
                ok = 0;
            }
            worst = err > worst ? err : worst;
        }
        lb_check(ok, "%s: %s's gradient against finite differences (worst |diff| %.3g)", name, g[t].name, worst);
    }
    free(dy);
    free(out);
    free(step_out);
    lb_test_pass_close(&r);
}

/* Every variant of every model that trains (chunked: blocks of 2, 3 and 16 rows). */
static void test_gradients(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const LbModelDesc *d = lb_model_desc((LbModelKind)m);
        /* Max pooling's gradient jumps where a window's top two values meet, and the embedding
         * LayerNorm magnifies a step of the embeddings past such kinks: the attention case
         * checks its block with a kink allowance, test_gpu_train its whole step. */
        if (m == LB_MODEL_LINFORMER_MAX)
            continue;
        for (int i = 0; d->attention_backward && i < d->variants; i++)
            check_gradients(be, lb_model_variant((LbModelKind)m, i, tiny((LbModelKind)m)));
    }
    lb_backend_close(be);
}

/* Every gradient of cfg's step, all tensors one after another, in a malloc'd array (its length in
 * *count); NULL after a failed check. */
static float *all_gradients(LbBackend *be, const LbModelConfig *cfg, uint64_t seed, int64_t *count)
{
    char name[64];
    lb_model_describe(cfg, name, sizeof name);
    LbTestPass r;
    if (!train_run(be, cfg, 2, seed, name, &r))
        return NULL;
    LbTensorRef g[64];
    const int64_t tensors = lb_model_tensors(&r.p.train.grads, g, 64);
    *count = 0;
    for (int64_t t = 0; t < tensors; t++)
        *count += g[t].rows * g[t].cols;
    float *out = lb_test_alloc(*count), *at = out;
    for (int64_t t = 0; t < tensors; t++, at += g[t - 1].rows * g[t - 1].cols)
        be->ops->download(be, at, g[t].ptr, g[t].rows * g[t].cols);
    lb_test_pass_close(&r);
    return out;
}

/* The exact models compute one function: chunked (blocks of 3, 3 and 2 rows) and flash give the
 * standard model's gradients to rounding, on every element of every tensor. */
static void test_exact(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    const uint64_t seed = lb_test_u64();
    int64_t count = 0, other = 0;
    LbModelConfig s = tiny(LB_MODEL_STANDARD);
    float *std_g = all_gradients(be, &s, seed, &count);
    double *want = (double *)malloc((size_t)(count > 0 ? count : 1) * sizeof *want);
    for (int64_t i = 0; std_g && i < count; i++)
        want[i] = std_g[i];
    const LbModelKind kinds[] = {LB_MODEL_CHUNKED, LB_MODEL_FLASH};
    for (size_t k = 0; std_g && k < sizeof kinds / sizeof kinds[0]; k++) {
        LbModelConfig c = tiny(kinds[k]);
        float *got = all_gradients(be, &c, seed, &other);
        char name[64];
        lb_model_describe(&c, name, sizeof name);
        if (got && lb_check(other == count, "%s: %lld gradients, standard %lld", name, (long long)other,
                            (long long)count))
            lb_check_close(name, got, want, count, 1e-6, 1e-4);
        free(got);
    }
    free(want);
    free(std_g);
    lb_backend_close(be);
}

/* A breakdown counts a training step: every product of the standard model's forward has two in
 * the backward (dx and dw; dQ and dK; dV and dP), so its FLOPs are three times the forward's
 * exactly; its bytes more than the forward's, every role of the forward still there. */
static void test_count(void)
{
    const LbPlanParams pp = lb_plan_params_cuda(LB_DTYPE_FP16);
    LbModelConfig cfg = lb_test_model(64, 8);
    LbBreakdown fwd, step;
    int rc = lb_breakdown_count(&cfg, &pp, 2, NULL, NULL, &fwd);
    cfg.pass = LB_PASS_TRAIN;
    if (!lb_check(rc == LB_OK && lb_breakdown_count(&cfg, &pp, 2, NULL, NULL, &step) == LB_OK, "counted: %s",
                  lb_error_where()))
        return;
    lb_check(fabs(step.flops - 3 * fwd.flops) <= 1e-9 * fwd.flops, "a step's FLOPs %.6g are 3 x the pass's %.6g",
             step.flops, fwd.flops);
    lb_check(step.bytes > 2 * fwd.bytes && step.count >= fwd.count, "a step's bytes %.6g, roles %d; the pass's %.6g, %d",
             step.bytes, step.count, fwd.bytes, fwd.count);
}

/* A model trains when its table entry has a backward; any other is refused with one line. */
static void test_config(void)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        LbModelConfig c = lb_model_variant((LbModelKind)m, 0, lb_test_model(32, 8));
        c.pass = LB_PASS_TRAIN;
        char msg[256] = "";
        const int rc = lb_config_check(&c, msg, sizeof msg);
        const LbModelDesc *d = lb_model_desc((LbModelKind)m);
        if (d->attention_backward)
            lb_check(rc == LB_OK, "%s trains: %s", d->name, msg);
        else
            lb_check(rc == LB_ERR_INVALID && strstr(msg, "--pass train") && strstr(msg, d->name) && !strchr(msg, '\n'),
                     "%s cannot train: refused with one line (\"%s\")", d->name, msg);
    }
    LbModelConfig c = lb_test_model(32, 8);
    c.pass = (LbPassKind)7;
    char msg[256] = "";
    lb_check(lb_config_check(&c, msg, sizeof msg) == LB_ERR_INVALID && strstr(msg, "--pass"), "pass 7 refused: %s",
             msg);
}

/* Central differences on the fp32 forward: a step of 1e-2 leaves about 5e-5 of rounding noise
 * and as much truncation in a quotient; the bound allows twenty times that plus 0.1% relative
 * (on the CPU the worst entry used 3.5% of it, and a bias gradient 1% too large fails). Max
 * pooling's kinks (below) keep 1% relative. A sign, a share written over another or a transposed
 * product is off by the gradient's own size. */
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

/* L = sum(dy * attention(x)) of the current layer, in double; temporaries released. */
static double layer_loss(Case *c)
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
    set1(c->be, t, i, u);
    *hi = layer_loss(c);
    set1(c->be, t, i, dn);
    *lo = layer_loss(c);
    set1(c->be, t, i, v);
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
    const double l0 = layer_loss(c);
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
static void check_attention(LbBackend *be, const LbModelConfig *cfg)
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
        c.p = lb_test_attention_pass(&c.m, &c.a, B);
        c.p.grads = &c.g;
        for (c.layer = 0; c.layer < cfg->layers && c.x && c.y; c.layer++)
            check_layer(&c, name);
        lb_model_release(&c.g);
        lb_model_release(&c.m);
    }
    lb_arena_close(&c.a);
}

/* The attention backward of the Linformer family and the Performer, one layer at a time: every
 * variant of the model table, the k schedule and k = n, on a tiny model, each layer's attention
 * forward keeping its tensors, then its backward from a random dy; dx and every weight gradient
 * against central finite differences of L = sum(dy * attention(x)). The gradient model's own
 * tensors and dx start random, so a gradient written where it must be added fails. */
static void test_attention(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    static const LbModelKind kinds[] = {LB_MODEL_LINFORMER, LB_MODEL_LINFORMER_MEAN, LB_MODEL_LINFORMER_MAX,
                                        LB_MODEL_LINFORMER_CONV, LB_MODEL_PERFORMER};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const LbModelDesc *desc = lb_model_desc(kinds[i]);
        for (int v = 0; v < desc->variants; v++) {
            const int64_t k = kinds[i] == LB_MODEL_PERFORMER ? 6 : 4; /* m 6 random features */
            const LbModelConfig cfg = lb_model_variant(kinds[i], v, lb_test_tiny(kinds[i], 8, k));
            check_attention(be, &cfg);
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
        check_attention(be, &cfg);
        cfg.sharing = LB_SHARE_KV, cfg.order = LB_ORDER_EARLY;
        check_attention(be, &cfg);
    }
    /* k = n: no compression in length, the projections still trained. */
    for (size_t i = 0; i < sizeof scheduled / sizeof scheduled[0]; i++) {
        const LbModelConfig cfg = lb_model_variant(scheduled[i], 1, lb_test_tiny(scheduled[i], 8, 8));
        check_attention(be, &cfg);
    }
    lb_backend_close(be);
}

int main(void)
{
    static const LbTestCase cases[] = {
        {"gradients", test_gradients}, {"attention", test_attention}, {"exact", test_exact}, {"count", test_count},
        {"config", test_config}};
    lb_test_init("test_train");
    return LB_TEST_CASES("test_train", cases);
}
