/* The training step (attn/train.c) on the CPU reference backend: every parameter's gradient
 * against central finite differences of the loss sum(dy * output) through the CPU forward pass;
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

/* A model's training step set up on an arena the plan sized, as a measured cell's. */
typedef struct TrainRun {
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    LbTrain t;
} TrainRun;

static void train_done(TrainRun *r)
{
    lb_train_release(&r->t);
    lb_model_release(&r->m);
    lb_arena_close(&r->a);
}

/* Plan, set up and one step (test_model's plan case checks the plan's parts); 0 after a failed
 * check (nothing left to release). */
static int train_run(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed, const char *name, TrainRun *r)
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    /* each status before its lb_check: the message is an argument, evaluated in any order */
    int rc = lb_plan_compute(cfg, &pp, B, &r->plan);
    if (rc == LB_OK)
        rc = lb_arena_open(&r->a, be, r->plan.total);
    if (!lb_check(rc == LB_OK, "%s B=%lld: plan and arena: %s", name, (long long)B, lb_error_message()))
        return 0;
    rc = lb_train_setup(&r->m, &r->in, &r->t, cfg, be, &r->a, B, seed);
    if (!lb_check(rc == LB_OK, "%s: set-up: %s", name, lb_error_message())) {
        lb_arena_close(&r->a);
        return 0;
    }
    rc = lb_train_step(&r->m, &r->a, &r->in, &r->t);
    if (!lb_check(rc == LB_OK, "%s B=%lld: step: %s", name, (long long)B, lb_error_message()))
        train_done(r);
    return rc == LB_OK;
}

/* sum(dy * output) in double, the output of the CPU forward pass of r's model as it now is. */
static double loss(LbBackend *be, TrainRun *r, const float *dy, float *out, int64_t count)
{
    if (lb_forward(&r->m, &r->a, &r->in) != LB_OK || be->ops->download(be, out, r->in.x, count) != LB_OK)
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
static double central(LbBackend *be, TrainRun *r, void *base, int64_t i, float step, const float *dy, float *out,
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
 * Richardson's (4 D(h / 2) - D(h)) / 3 of central differences D, h = 1e-2, whose error is
 * O(h^4) (a plain central difference was off 2% on the embeddings, which the embedding LayerNorm
 * scales by about 17). L's fp32 rounding leaves about 1e-4 in the quotient; on the CPU the worst
 * |gradient - fd| was 3.7e-4, while a wrong sign, term or transpose is off by the gradient itself. */
#define FD_STEP 1e-2f
#define FD_ATOL 1e-3
#define FD_RTOL 1e-3
#define FD_ENTRIES 3 /* random entries checked per tensor */

static void check_gradients(LbBackend *be, const LbModelConfig cfg)
{
    const int64_t B = 2, count = B * cfg.n * cfg.d_model;
    char name[64];
    lb_model_describe(&cfg, name, sizeof name);
    TrainRun r;
    if (!train_run(be, &cfg, B, lb_test_u64(), name, &r))
        return;
    float *dy = lb_test_alloc(count), *out = lb_test_alloc(count), *step_out = lb_test_alloc(count);
    int32_t ids[2 * 8];
    be->ops->download(be, dy, r.t.dy, count);
    be->ops->download(be, step_out, r.in.x, count);
    be->ops->copy_raw_to_host(be, ids, r.in.ids, sizeof ids);
    loss(be, &r, dy, out, count);
    const double rel = lb_test_rel_error(step_out, out, count);
    lb_check(rel <= 1e-6, "%s: the step's output is the forward's (relative error %.3g)", name, rel);

    LbTensorRef w[64], g[64];
    const int64_t tensors = lb_model_tensors(&r.m, w, 64);
    lb_check(tensors == lb_model_tensors(&r.t.grads, g, 64) && tensors <= 64,
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
            const double fd = (4.0 * central(be, &r, w[t].ptr, i, FD_STEP / 2, dy, out, count) -
                               central(be, &r, w[t].ptr, i, FD_STEP, dy, out, count)) / 3.0;
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
    train_done(&r);
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
         * LayerNorm magnifies a step of the embeddings past such kinks: test_train_attention
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
    TrainRun r;
    if (!train_run(be, cfg, 2, seed, name, &r))
        return NULL;
    LbTensorRef g[64];
    const int64_t tensors = lb_model_tensors(&r.t.grads, g, 64);
    *count = 0;
    for (int64_t t = 0; t < tensors; t++)
        *count += g[t].rows * g[t].cols;
    float *out = lb_test_alloc(*count), *at = out;
    for (int64_t t = 0; t < tensors; t++, at += g[t - 1].rows * g[t - 1].cols)
        be->ops->download(be, at, g[t].ptr, g[t].rows * g[t].cols);
    train_done(&r);
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

int main(void)
{
    static const LbTestCase cases[] = {
        {"gradients", test_gradients}, {"exact", test_exact}, {"count", test_count},
        {"config", test_config}};
    lb_test_init("test_train");
    return LB_TEST_CASES("test_train", cases);
}
