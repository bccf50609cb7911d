/* The plan, the forward passes, the identity check, the chunked and flash models, the Performer's
 * convergence and the per-operation breakdown, on the CPU reference backend: one case each
 * (LB_TEST_CASE=NAME runs one). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_impl.h"
#include "attn/measure/breakdown.h"
#include "attn/forward.h"
#include "attn/measure/measure.h"
#include "attn/model.h"
#include "attn/ops.h"
#include "attn/plan.h"
#include "attn/rng.h"
#include "attn/train.h"
#include "attn/base/status.h"
#include "tests/lib/cases.h"
#include "tests/lib/check.h"
#include "tests/lib/forward.h"
#include "tests/lib/model.h"
#include "tests/lib/naive.h"

/* The memory plan (a dry run over a counting arena) against reality on the CPU backend: for
 * every variant of every model of the table, its forward pass and (a model with a backward) its
 * training step, and several batches, the planned bytes equal the arena's high-water mark after a
 * real pass; bytes grow with B; a step plans more than a pass; the largest batch fits the budget
 * and one more does not; and a measured cell reports peak == planned at the plan's batch. */
static void check_variant(LbBackend *be, const LbModelConfig *cfg)
{
    char name[64];
    lb_test_variant_name(cfg, name, sizeof name);
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    size_t previous = 0;
    for (int64_t B = 1; B <= 4; B++) {
        LbPlan plan;
        if (!lb_check(lb_plan_compute(cfg, &pp, B, &plan) == LB_OK, "%s B=%lld: plan failed", name, (long long)B))
            return;
        lb_check(plan.total > previous, "%s: bytes grow with B (B=%lld: %zu, before %zu)", name,
                 (long long)B, plan.total, previous);
        lb_check(plan.total == plan.weights + plan.workspace + plan.inputs + plan.gradients + plan.temporaries &&
                     plan.temporaries > 0,
                 "%s B=%lld: the plan's parts add up to its total", name, (long long)B);
        previous = plan.total;

        LbArena a;
        LbModel m;
        LbInputs in;
        LbTrain t;
        const int train = cfg->pass == LB_PASS_TRAIN;
        if (!lb_check(lb_arena_open(&a, be, plan.total) == LB_OK, "%s: arena of %zu bytes", name, plan.total))
            return;
        int rc = lb_model_build(&m, cfg, be, &a, 7);
        lb_check(rc == LB_OK, "%s: build: %s", name, lb_error_message());
        lb_check(a.used == plan.weights + plan.workspace, "%s: weights+workspace %zu planned %zu", name,
                 a.used, plan.weights + plan.workspace);
        if (rc == LB_OK) {
            rc = lb_inputs_alloc(&m, &a, B, &in);
            if (rc == LB_OK)
                rc = lb_inputs_fill(&m, &in, 3);
            const size_t inputs = a.used;
            if (rc == LB_OK && train && (rc = lb_train_alloc(&m, &a, B, &t)) == LB_OK) {
                be->ops->fill_uniform(be, t.dy, B * cfg->n * cfg->d_model, 5, -1.0f, 1.0f);
                lb_check(a.used - inputs == plan.gradients && plan.gradients > plan.weights,
                         "%s B=%lld: gradients %zu planned %zu", name, (long long)B, a.used - inputs, plan.gradients);
                rc = lb_train_step(&m, &a, &in, &t);
                lb_train_release(&t);
            } else if (rc == LB_OK) {
                lb_check(plan.gradients == 0, "%s: a forward pass plans no gradients", name);
                rc = lb_forward(&m, &a, &in);
            }
            lb_check(rc == LB_OK, "%s B=%lld: pass: %s", name, (long long)B, lb_error_message());
            lb_check(a.high_water == plan.total, "%s B=%lld: high-water mark %zu, plan %zu", name,
                     (long long)B, a.high_water, plan.total);
            lb_check(inputs == plan.weights + plan.workspace + plan.inputs &&
                         a.used == inputs + plan.gradients,
                     "%s B=%lld: inputs planned, temporaries released after the pass", name, (long long)B);
            lb_model_release(&m);
        }
        lb_arena_close(&a);
    }
    if (cfg->pass == LB_PASS_TRAIN) {
        LbModelConfig fwd = *cfg;
        fwd.pass = LB_PASS_FORWARD;
        LbPlan pt, pf;
        lb_plan_compute(cfg, &pp, 3, &pt);
        lb_plan_compute(&fwd, &pp, 3, &pf);
        lb_check(pt.total > pf.total, "%s: a step plans more than a pass (%zu, %zu)", name, pt.total, pf.total);
    }

    /* The largest batch: it fits, one more does not. */
    LbPlan p3, p1;
    lb_plan_compute(cfg, &pp, 3, &p3);
    size_t budget = p3.total + 1;
    int64_t B = lb_plan_largest_batch(cfg, &pp, budget, 0);
    LbPlan at, next;
    lb_plan_compute(cfg, &pp, B, &at);
    lb_plan_compute(cfg, &pp, B + 1, &next);
    lb_check(B >= 3 && at.total <= budget && next.total > budget, "%s: largest batch %lld for budget %zu",
             name, (long long)B, budget);
    lb_plan_compute(cfg, &pp, 1, &p1);
    lb_check(lb_plan_largest_batch(cfg, &pp, p1.total - 1, 0) == 0, "%s: batch 1 does not fit one byte less", name);
    lb_check(lb_plan_largest_batch(cfg, &pp, (size_t)1 << 40, 5) == 5, "%s: --max-batch caps the search", name);
    /* No budget at all: the search stops where sizes would approach 64 bits, at a batch whose
     * plan still computes. */
    int64_t huge = lb_plan_largest_batch(cfg, &pp, SIZE_MAX, 0);
    LbPlan ph;
    lb_check(huge > ((int64_t)1 << 30) && lb_plan_compute(cfg, &pp, huge, &ph) == LB_OK && ph.total < ((size_t)1 << 61),
             "%s: an unbounded budget gives a finite batch (%lld)", name, (long long)huge);

    /* A measured cell: the batch is the plan's, the peak is the plan. */
    LbTimingOptions t = lb_timing_defaults();
    LbCellResult r;
    int rc = lb_measure_cell(be, cfg, budget, &t, 11, NULL, &r);
    lb_check(rc == LB_OK && r.status == LB_CELL_OK, "%s: measure: %s", name, r.error);
    lb_check(r.batch == B, "%s: measured batch %lld, plan %lld", name, (long long)r.batch, (long long)B);
    lb_check(r.peak_bytes == r.planned_bytes && (size_t)r.planned_bytes == at.total,
             "%s: peak %lld planned %lld plan %zu", name, (long long)r.peak_bytes, (long long)r.planned_bytes, at.total);
    lb_check(r.passes >= 5 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms && r.min_ms > 0,
             "%s: timing stats (passes %d, min %g, median %g, max %g)", name, r.passes, r.min_ms, r.median_ms, r.max_ms);
}

static void test_plan(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    int trained = 0;
    for (int i = 0; i < LB_TEST_VARIANTS; i++) {
        LbModelConfig c = lb_test_variant(i, 24, 8);
        check_variant(be, &c);
        if (!lb_model_desc(c.kind)->attention_backward)
            continue;
        c.pass = LB_PASS_TRAIN;
        trained++;
        check_variant(be, &c);
    }
    lb_check(trained >= 3, "standard, chunked and flash train (%d models' variants do)", trained);
    /* A budget below batch 1 gives an OOM cell, not an error. */
    LbModelConfig c = lb_test_variant(0, 24, 8);
    LbTimingOptions t = lb_timing_defaults();
    LbCellResult r;
    lb_check(lb_measure_cell(be, &c, 4096, &t, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OOM && r.batch == 0,
             "a budget below batch 1 is an OOM cell");
    /* The emulated device memory bounds the search: a budget above it steps down by allocation. */
    LbBackend *small = NULL;
    LbPlanParams pp = {4, 256, 0};
    LbPlan p2;
    lb_plan_compute(&c, &pp, 2, &p2);
    if (lb_cpu_backend_open(LB_DTYPE_FP32, p2.total, &small) == LB_OK) {
        lb_check(lb_measure_cell(small, &c, (size_t)1 << 30, &t, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OK && r.batch == 2,
                 "allocation failures bisect the batch down to what the device holds (got %lld)", (long long)r.batch);
        lb_backend_close(small);
    }
    lb_backend_close(be);
}

/* The identity check: a Linformer with k = n and E = F = the identity computes standard attention,
 * so from one seed (the same shared weights) its output is the standard model's to rounding, for
 * every sharing level and order; with its random E it is not, so the check can fail. */
/* Every projection of m set to the identity (n x n). */
static int identity(LbModel *m)
{
    const int64_t n = m->cfg.n;
    float *eye = calloc((size_t)(n * n), sizeof *eye);
    int rc = eye ? 0 : -1;
    for (int64_t i = 0; eye && i < n; i++)
        eye[i * n + i] = 1.0f;
    for (int64_t p = 0; eye && p < m->own_count; p++)
        rc |= m->be->ops->upload(m->be, m->own[p].ptr, eye, n * n) != LB_OK;
    free(eye);
    return rc;
}

static void test_identity(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    const int64_t n = 20, B = 3;
    const uint64_t seed = lb_test_seed;
    LbModelConfig std_cfg = lb_test_model(n, n);
    float *ref = lb_test_forward(be, &std_cfg, B, seed);
    lb_check(ref != NULL, "standard forward ran");
    const int64_t count = B * n * std_cfg.d_model;
    for (int i = 0; ref && i < lb_model_desc(LB_MODEL_LINFORMER)->variants; i++) {
        LbModelConfig c = lb_model_variant(LB_MODEL_LINFORMER, i, lb_test_model(n, n));
        char name[64];
        lb_test_variant_name(&c, name, sizeof name);
        float *out = lb_test_forward_with(be, &c, B, seed, identity);
        if (!lb_check(out != NULL, "%s: forward ran: %s", name, lb_error_message()))
            continue;
        /* fp32 storage, double accumulation: only the order of rounding differs. */
        double err = lb_test_rel_error(out, ref, count);
        lb_check(err <= 1e-5, "%s with E = F = I equals standard attention: relative error %.3g (<= 1e-5)", name, err);
        free(out);
        /* The same model with its random E must differ: the check above can fail. */
        out = lb_test_forward(be, &c, B, seed);
        err = out ? lb_test_rel_error(out, ref, count) : 0;
        lb_check(out && err > 1e-2, "%s with a random E differs from standard attention: relative error %.3g (> 1e-2)", name, err);
        free(out);
    }
    free(ref);
    lb_backend_close(be);
}

/* The forward passes against tests/lib/naive.h's encoder (FAVOR+ from its paper, below): it
 * catches wiring mistakes (a wrong split offset, a stride, the bias of the early order) that every
 * op test would miss. Every variant of every model of the table, with the weights and tokens read
 * back from the CPU backend's model. */
typedef struct Host {
    LbModelConfig c;
    float **t;       /* every weight tensor, in lb_model_tensors order */
    int64_t count;
} Host;

static const float *host_weight(const void *src, int layer, int which)
{
    const Host *h = src;
    return h->t[layer < 0 ? which : LB_NAIVE_EMBEDDINGS + layer * LB_NAIVE_PER_LAYER + which];
}

/* The model's own tensors after the layers': E and F by METHOD.md's sharing levels; none for pooling. */
static const float *host_proj(const void *src, int l, int head, int which)
{
    const Host *h = src;
    int64_t i = 0;
    switch (h->c.sharing) {
    case LB_SHARE_LAYERWISE: i = 0; break;
    case LB_SHARE_KV: i = l; break;
    case LB_SHARE_HEADWISE: i = 2 * l + which; break;
    case LB_SHARE_NONE: i = 2 * ((int64_t)l * h->c.heads + head) + which; break;
    }
    if (h->c.kind == LB_MODEL_LINFORMER_MEAN || h->c.kind == LB_MODEL_LINFORMER_MAX)
        return NULL;
    return h->t[LB_NAIVE_EMBEDDINGS + (int64_t)h->c.layers * LB_NAIVE_PER_LAYER + i];
}

/* FAVOR+ from its paper and METHOD.md, one head, in double: rows (n) of the head's columns of
 * q, k, v (row stride d) into ctx; W (m, hd) the layer's projection. x' = x hd^(-1/4);
 * phi(x') = exp(W x' - |x'|^2 / 2 - s) / sqrt(m), s each query row's max of W x', one max over
 * all keys; ctx = D^-1 Q'(K'^T V), D = diag(Q'(K'^T 1)). */
static void performer_head(const double *q, const double *k, const double *v, int64_t n, int64_t d, int64_t hd,
                           const float *W, int64_t m, double *ctx)
{
    double *qf = malloc(sizeof(double) * n * m), *kf = malloc(sizeof(double) * n * m);
    const double sc = pow((double)hd, -0.25);
    double kmax = -INFINITY;
    for (int which = 0; which < 2; which++) {
        const double *x = which ? k : q;
        double *feat = which ? kf : qf;
        for (int64_t t = 0; t < n; t++) {
            double half = 0, rmax = -INFINITY;
            for (int64_t e = 0; e < hd; e++)
                half += 0.5 * (sc * x[t * d + e]) * (sc * x[t * d + e]);
            for (int64_t j = 0; j < m; j++) {
                double dot = 0;
                for (int64_t e = 0; e < hd; e++)
                    dot += (double)W[j * hd + e] * sc * x[t * d + e];
                feat[t * m + j] = dot;
                rmax = dot > rmax ? dot : rmax;
            }
            if (which) /* keys: W x' - |x'|^2 / 2 now, the exp once the max of all keys is known */
                kmax = rmax > kmax ? rmax : kmax;
            for (int64_t j = 0; j < m; j++)
                feat[t * m + j] = which ? feat[t * m + j] - half : exp(feat[t * m + j] - half - rmax) / sqrt((double)m);
        }
    }
    for (int64_t i = 0; i < n * m; i++)
        kf[i] = exp(kf[i] - kmax) / sqrt((double)m);
    for (int64_t t = 0; t < n; t++) {
        double den = 0;
        for (int64_t s = 0; s < n; s++) {
            double w = 0;
            for (int64_t j = 0; j < m; j++)
                w += qf[t * m + j] * kf[s * m + j];
            den += w;
            for (int64_t e = 0; e < hd; e++)
                ctx[t * d + e] += w * v[s * d + e];
        }
        for (int64_t e = 0; e < hd; e++)
            ctx[t * d + e] /= den;
    }
    free(qf), free(kf);
}

/* The Performer's own tensors: omega0 .. omega{L-1} (m, hd), then ones. */
static void host_performer(const void *src, int l, const double *q, const double *k, const double *v, double *ctx)
{
    const Host *h = src;
    const int64_t d = h->c.d_model, hd = d / h->c.heads;
    const float *W = h->t[LB_NAIVE_EMBEDDINGS + (int64_t)h->c.layers * LB_NAIVE_PER_LAYER + l];
    for (int64_t head = 0; head < h->c.heads; head++)
        performer_head(q + head * hd, k + head * hd, v + head * hd, h->c.n, d, hd, W, h->c.k, ctx + head * hd);
}

/* Every weight tensor of m read back into h; 0 on success. */
static int read_weights(Host *h, const LbModel *m)
{
    h->count = lb_model_tensors(m, NULL, 0);
    LbTensorRef *refs = calloc((size_t)h->count, sizeof *refs);
    h->t = calloc((size_t)h->count, sizeof *h->t);
    int rc = refs && h->t ? 0 : -1;
    lb_model_tensors(m, refs, h->count);
    for (int64_t i = 0; rc == 0 && i < h->count; i++) {
        h->t[i] = lb_test_alloc(refs[i].rows * refs[i].cols);
        rc = m->be->ops->download(m->be, h->t[i], refs[i].ptr, refs[i].rows * refs[i].cols) == LB_OK ? 0 : -1;
    }
    free(refs);
    return rc;
}

static void naive_check(LbBackend *be, const LbModelConfig *cfg, int64_t B)
{
    static const LbNaiveCompress compress[LB_MODEL_COUNT] = {
        [LB_MODEL_LINFORMER] = LB_NAIVE_LINEAR, [LB_MODEL_LINFORMER_MEAN] = LB_NAIVE_MEAN,
        [LB_MODEL_LINFORMER_MAX] = LB_NAIVE_MAX, [LB_MODEL_LINFORMER_CONV] = LB_NAIVE_CONV};
    char name[64];
    lb_test_variant_name(cfg, name, sizeof name);
    const int64_t n = cfg->n, d = cfg->d_model, count = B * n * d;
    Host host = {*cfg, NULL, 0};
    float *out = lb_test_alloc(count);
    LbTestPass t;
    const int ran = lb_test_pass_open(&t, be, cfg, B, lb_test_seed, NULL) == LB_OK &&
                    read_weights(&host, &t.p.model) == 0 && be->ops->download(be, out, t.p.in.x, count) == LB_OK;
    lb_test_pass_close(&t);
    LbNaiveEncoder e = {n, d, cfg->heads, cfg->ffn, cfg->layers, {0}, compress[cfg->kind],
                        cfg->order == LB_ORDER_EARLY, cfg->sharing == LB_SHARE_NONE, LB_LAYERNORM_EPS,
                        &host, host_weight, host_proj,
                        cfg->kind == LB_MODEL_PERFORMER ? host_performer : NULL};
    const int fits = lb_check(cfg->layers <= (int)(sizeof e.k / sizeof e.k[0]), "%s: %d layers fit the naive encoder",
                              name, cfg->layers);
    for (int l = 0; fits && l < cfg->layers; l++)
        e.k[l] = lb_config_layer_k(cfg, l);
    if (fits && lb_check(ran, "%s: forward ran: %s", name, lb_error_message())) {
        /* the tokens lb_forward_setup draws (LbOps.fill_tokens) */
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)(B * n));
        double *ref = malloc(sizeof(double) * (size_t)count);
        for (int64_t i = 0; i < B * n; i++)
            ids[i] = lb_rng_token(lb_test_seed ^ LB_INPUT_SEED_MIX, (uint64_t)i, cfg->vocab);
        for (int64_t b = 0; b < B; b++)
            lb_naive_encode(&e, ids + b * n, ref + b * n * d);
        lb_naive_check(name, out, ref, count);
        free(ids), free(ref);
    }
    for (int64_t i = 0; host.t && i < host.count; i++)
        free(host.t[i]);
    free(host.t), free(out);
}

static void test_forward_naive(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    for (int i = 0; i < LB_TEST_VARIANTS; i++) {
        LbModelConfig c = lb_test_variant(i, 12, 5);
        naive_check(be, &c, 2);
    }
    /* A k per layer (--k-schedule) on three layers, every Linformer variant: halve (32, 16, 8) and
     * a list: 1,0.7,0.2 for E (32, 24, 8: 0.7 k rounded up to a multiple of 8), 1,0.25,0.5 for the
     * windows, whose k must divide n (32, 8, 16). */
    for (int i = 0; i < LB_TEST_VARIANTS; i++) {
        LbModelConfig c = lb_test_variant(i, 64, 32);
        if (!lb_test_is_linformer(c.kind))
            continue;
        c.layers = 3;
        char should[160];
        for (int s = 0; s < 2; s++) {
            const int linear = c.kind == LB_MODEL_LINFORMER;
            const char *list = linear ? "1,0.7,0.2" : "1,0.25,0.5";
            lb_check(lb_kschedule_parse(s ? list : "halve", &c, should, sizeof should) == 0, "schedule parses");
            const int64_t want[2][3] = {{32, 16, 8}, {32, linear ? 24 : 8, linear ? 8 : 16}};
            char msg[256];
            lb_check(lb_config_check(&c, msg, sizeof msg) == LB_OK, "schedule %d: %s", s, msg);
            for (int l = 0; l < 3; l++)
                lb_check(lb_config_layer_k(&c, l) == want[s][l], "schedule %d layer %d: k %lld, want %lld", s, l,
                         (long long)lb_config_layer_k(&c, l), (long long)want[s][l]);
            naive_check(be, &c, 2);
        }
    }
    lb_backend_close(be);
}

/* The storages the CPU is asked for (it stores fp32 whatever the dtype). */
static const LbDtype cheap_dtypes[] = {LB_DTYPE_FP32, LB_DTYPE_FP16, LB_DTYPE_BF16};

/* cfg, an exact model cheaper than standard attention, against the standard model of the same
 * configuration from one seed, for every storage the CPU is asked for: equal to `tol` (fp32
 * storage, double accumulation); and from another seed it differs, so the comparison can fail. */
static void equals_standard(LbModelConfig cfg, double tol)
{
    const int64_t B = 3, count = B * cfg.n * cfg.d_model;
    for (size_t t = 0; t < sizeof cheap_dtypes / sizeof cheap_dtypes[0]; t++) {
        cfg.dtype = cheap_dtypes[t];
        LbModelConfig s = cfg;
        s.kind = LB_MODEL_STANDARD;
        char name[64];
        snprintf(name, sizeof name, "%s %s n %lld chunk %lld", lb_model_name(cfg.kind), lb_dtype_name(cfg.dtype),
                 (long long)cfg.n, (long long)cfg.chunk);
        LbBackend *be = lb_test_cpu_backend(cfg.dtype);
        if (!be)
            return;
        float *ref = lb_test_forward(be, &s, B, lb_test_seed), *out = lb_test_forward(be, &cfg, B, lb_test_seed);
        float *other = lb_test_forward(be, &cfg, B, lb_test_seed + 1);
        if (lb_check(ref && out && other, "%s: both models ran: %s", name, lb_error_message())) {
            const double err = lb_test_rel_error(out, ref, count);
            printf("  %s: relative error against standard %.3g\n", name, err);
            lb_check(err <= tol, "%s equals standard: relative error %.3g (<= %g)", name, err, tol);
            lb_check(lb_test_rel_error(other, ref, count) > 1e-2, "%s: another seed differs", name);
        }
        free(ref);
        free(out);
        free(other);
        lb_backend_close(be);
    }
}

/* An exact model's table entry: its name, no k axis, the standard model's FLOPs. */
static void exact_entry(LbModelConfig c, const char *name)
{
    LbModelConfig s = c;
    LbModelKind parsed;
    s.kind = LB_MODEL_STANDARD;
    lb_check(strcmp(lb_model_name(c.kind), name) == 0 && lb_model_parse(name, &parsed) == 0 && parsed == c.kind,
             "%s is named %s", lb_model_name(c.kind), name);
    lb_check(!lb_model_has_k(c.kind) && lb_model_cell_exists(c.kind, 64, 4096) &&
                 strcmp(lb_model_k_meaning(c.kind), "") == 0,
             "%s has no k axis", name);
    lb_check(lb_config_flops_per_seq(&c) == lb_config_flops_per_seq(&s) && lb_config_flops_per_seq(&c) > 0,
             "%s counts the standard model's FLOPs", name);
}

/* The chunked model: the standard model's output to rounding for chunks that divide n, do not,
 * are 1 row, n rows or past n (a skipped or repeated block fails it); its plan's temporaries the
 * standard model's less exactly the score rows it does not hold; its table entry. */
static void test_chunked(void)
{
    static const int64_t chunks[] = {1, 7, 9, 35, 36, 100};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        LbModelConfig c = lb_test_model(36, 8);
        c.kind = LB_MODEL_CHUNKED;
        c.chunk = chunks[i];
        equals_standard(c, 1e-6); /* the same dot products split by rows only */
    }

    /* Memory: the scores are (B, h, min(c, n), n); everything else is the standard model's. */
    const LbPlanParams pp = {4, 256, 0};
    for (int64_t Bm = 1; Bm <= 4; Bm++) {
        LbModelConfig s = lb_test_model(256, 8), c = s;
        c.kind = LB_MODEL_CHUNKED;
        LbPlan ps, pc;
        lb_plan_compute(&s, &pp, Bm, &ps);
        for (int64_t ch = 16; ch <= 512; ch *= 2) {
            c.chunk = ch;
            lb_plan_compute(&c, &pp, Bm, &pc);
            const int64_t rows = ch < 256 ? ch : 256;
            const size_t scores_std = lb_align_up((size_t)(Bm * s.heads * 256 * 256) * 4, 256);
            const size_t scores_chk = lb_align_up((size_t)(Bm * s.heads * rows * 256) * 4, 256);
            lb_check(pc.weights == ps.weights && pc.inputs == ps.inputs, "chunk %lld: weights and inputs are standard's",
                     (long long)ch);
            /* the attention phase is the larger one here (scores of 256 columns vs FFN 24) */
            lb_check(ps.temporaries - pc.temporaries == scores_std - scores_chk,
                     "B %lld chunk %lld: temporaries %zu, standard %zu: differ by the score rows not held",
                     (long long)Bm, (long long)ch, pc.temporaries, ps.temporaries);
        }
    }

    /* The table entry, and the chunk checked. */
    LbModelConfig c = lb_test_model(64, 8);
    c.kind = LB_MODEL_CHUNKED;
    char msg[256];
    lb_check(lb_config_check(&c, msg, sizeof msg) == LB_OK, "chunk 1024 of n 64 is fine");
    c.chunk = 0;
    lb_check(lb_config_check(&c, msg, sizeof msg) == LB_ERR_INVALID && strstr(msg, "--chunk 0") &&
                 strstr(msg, "should be 1 to"),
             "chunk 0 is refused naming --chunk: %s", msg);
    c.chunk = 16;
    exact_entry(c, "chunked");
}

/* The flash model: the standard model's output to rounding at lengths of one row, under and past
 * the GPU kernels' tiles; memory linear in n (no n x n buffer); its table entry, refusing a head
 * width the kernels cannot take, naming the flags. */
/* The tests' small model with heads 16 wide, which flash takes. */
static LbModelConfig flash_model(LbModelKind kind, int64_t n)
{
    LbModelConfig c = lb_test_model(n, 8);
    c.heads = 1;
    c.kind = kind;
    return c;
}

static void test_flash(void)
{
    static const int64_t ns[] = {1, 15, 36, 70};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) /* standard rounds its scores to storage, flash does not */
        equals_standard(flash_model(LB_MODEL_FLASH, ns[i]), 1e-5);

    /* Memory linear in n: temporaries double with n (the standard model's scores quadruple). */
    const LbPlanParams pp = {2, 256, 0};
    for (int64_t n = 256; n <= 2048; n *= 2) {
        LbModelConfig f = flash_model(LB_MODEL_FLASH, n), f2 = flash_model(LB_MODEL_FLASH, 2 * n), s = flash_model(LB_MODEL_STANDARD, n);
        LbPlan pf, pf2, ps;
        lb_plan_compute(&f, &pp, 3, &pf);
        lb_plan_compute(&f2, &pp, 3, &pf2);
        lb_plan_compute(&s, &pp, 3, &ps);
        const size_t scores = (size_t)(3 * s.heads * n * n) * 2;
        lb_check(pf2.temporaries <= 2 * pf.temporaries + 4096 && pf2.temporaries >= 2 * pf.temporaries - 4096,
                 "n %lld -> %lld: flash temporaries %zu -> %zu, linear in n", (long long)n, (long long)(2 * n),
                 pf.temporaries, pf2.temporaries);
        lb_check(ps.temporaries >= pf.temporaries + scores,
                 "n %lld: standard's temporaries %zu hold the %zu bytes of scores flash's %zu do not", (long long)n,
                 ps.temporaries, scores, pf.temporaries);
    }

    /* The table entry, and the head width checked. */
    LbModelConfig f = flash_model(LB_MODEL_FLASH, 64);
    char msg[256];
    exact_entry(f, "flash");
    lb_check(lb_config_check(&f, msg, sizeof msg) == LB_OK, "head width 16 is taken: %s", msg);
    static const int bad[][2] = {{16, 4}, {24, 1}, {144, 1}}; /* widths 4, 24, 144 */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.d_model = bad[i][0];
        f.heads = bad[i][1];
        msg[0] = '\0';
        lb_check(lb_config_check(&f, msg, sizeof msg) == LB_ERR_INVALID && strstr(msg, "--d-model") &&
                     strstr(msg, "--heads") && strstr(msg, "multiple of 16 up to 128"),
                 "d_model %d heads %d refused naming the flags and the widths taken: %s", bad[i][0], bad[i][1], msg);
    }
    /* the variant `linbench check` and the tests run takes 16-wide heads on the small model */
    LbModelConfig v = lb_model_variant(LB_MODEL_FLASH, 0, lb_test_model(64, 8));
    lb_check(lb_config_check(&v, msg, sizeof msg) == LB_OK, "flash's variant of the tests' model is valid: %s", msg);
}

/* The Performer's estimate approaches exact softmax attention as the random features m grow
 * (FAVOR+'s error falls like 1/sqrt(m)): on one hidden state and the standard model's weights (one
 * seed), the attention block at m = 4096 is much closer to the standard model's than at m = 64,
 * which is far from it (an estimator exact at small m fails). Its projections: orthogonal within
 * each block of d_h rows, row norms of Gaussian vectors, one per layer. */
enum { N = 64, D = 64, HEADS = 2, SEED = 11, X_SEED = 99 };
/* x in [-1, 1]: FAVOR+'s variance grows like exp(|q' + k'|^2), and at [-3, 3] even 4096 features
 * were off by 70%. */
#define X_RANGE 1.0f

static LbModelConfig performer_config(LbModelKind kind, int64_t m)
{
    LbModelConfig c = lb_test_shape(2, D, HEADS, 24, 50, N, m);
    c.kind = kind;
    c.dtype = LB_DTYPE_FP32;
    return c;
}

/* The attention block of layer 0 on a fixed x (1, N, D) uniform in [-X_RANGE, X_RANGE]; out
 * (N * D) on the host. *omega, when not NULL, gets the model's own tensors 0 and 1 (the
 * Performer's two layers' projections), (m, hd) each. */
static int attend(LbBackend *be, const LbModelConfig *cfg, float *out, float **omega)
{
    LbTestPass t;
    const LbModel *m = &t.p.model;
    int ok = lb_test_pass_open(&t, be, cfg, 1, SEED, NULL) == LB_OK &&
             be->ops->fill_uniform(be, t.p.in.x, (int64_t)N * D, X_SEED, -X_RANGE, X_RANGE) == LB_OK;
    if (ok) {
        LbPass p = lb_test_attention_pass(m, &t.a, 1);
        ok = lb_model_desc(cfg->kind)->attention(&p, 0, &m->layers[0], t.p.in.x, t.p.in.y) == LB_OK &&
             be->ops->download(be, out, t.p.in.y, (int64_t)N * D) == LB_OK;
    }
    for (int l = 0; ok && omega && l < 2; l++) {
        omega[l] = lb_test_alloc(m->own[l].rows * m->own[l].cols);
        ok = be->ops->download(be, omega[l], m->own[l].ptr, m->own[l].rows * m->own[l].cols) == LB_OK;
    }
    lb_test_pass_close(&t);
    return ok;
}

/* Rows of each block of hd orthonormal up to their lengths; lengths like a Gaussian vector's. */
static void check_projection(const float *w, int64_t m, int64_t hd, const char *what)
{
    double worst_cos = 0, mean_len2 = 0;
    for (int64_t i = 0; i < m; i++) {
        double li = 0;
        for (int64_t e = 0; e < hd; e++)
            li += (double)w[i * hd + e] * w[i * hd + e];
        mean_len2 += li / (double)m;
        for (int64_t j = (i / hd) * hd; j < i; j++) {
            double dot = 0, lj = 0;
            for (int64_t e = 0; e < hd; e++) {
                dot += (double)w[i * hd + e] * w[j * hd + e];
                lj += (double)w[j * hd + e] * w[j * hd + e];
            }
            const double cosine = fabs(dot) / sqrt(li * lj);
            worst_cos = cosine > worst_cos ? cosine : worst_cos;
        }
    }
    /* fp32 storage of orthogonal rows: cosines at rounding level; E|g|^2 = hd */
    lb_check(worst_cos < 1e-5, "%s: rows of a block orthogonal (worst |cos| %.3g)", what, worst_cos);
    lb_check(fabs(mean_len2 / (double)hd - 1.0) < 0.1, "%s: mean squared row norm %.4g, hd %lld", what, mean_len2,
             (long long)hd);
}

static void test_performer(void)
{
    LbBackend *be = lb_test_cpu_backend(LB_DTYPE_FP32);
    if (!be)
        return;
    const int64_t count = (int64_t)N * D, hd = D / HEADS;
    float *exact = lb_test_alloc(count), *small = lb_test_alloc(count), *large = lb_test_alloc(count);
    float *omega[2] = {NULL, NULL};
    LbModelConfig cs = performer_config(LB_MODEL_STANDARD, 64), c64 = performer_config(LB_MODEL_PERFORMER, 64),
                  c4096 = performer_config(LB_MODEL_PERFORMER, 4096);
    if (!lb_check(attend(be, &cs, exact, NULL) && attend(be, &c64, small, NULL) && attend(be, &c4096, large, omega),
                  "attention blocks ran: %s", lb_error_message()))
        return;
    const double e64 = lb_test_rel_error(small, exact, count), e4096 = lb_test_rel_error(large, exact, count);
    printf("  relative error against softmax attention: m = 64: %.4g, m = 4096: %.4g (ratio %.2f)\n", e64, e4096,
           e64 / e4096);
    lb_check(e64 > 0.01, "m = 64 is far from exact (%.3g > 0.01)", e64);
    lb_check(e4096 < e64 / 4, "m = 4096 is much closer than m = 64 (%.3g < %.3g / 4)", e4096, e64);
    check_projection(omega[0], 4096, hd, "omega0");
    check_projection(omega[1], 4096, hd, "omega1");
    lb_check(lb_test_rel_error(omega[0], omega[1], 4096 * hd) > 0.5, "each layer draws its own projection");
    free(exact), free(small), free(large), free(omega[0]), free(omega[1]);
    lb_backend_close(be);
}

/* lb_breakdown_cell on the CPU reference backend, every variant of every model of the table:
 * lb_test_breakdown's checks (roles, labels, overhead, FLOPs), no head permute left in the models
 * that fold them, the calls and shares of each role, and the byte formula on the roles whose
 * bytes are known in closed form. */
static int folded(LbModelKind m)
{
    return m == LB_MODEL_STANDARD || lb_test_is_linformer(m) || m == LB_MODEL_CHUNKED || m == LB_MODEL_FLASH;
}

static void test_breakdown(void)
{
    const int64_t B = 3, n = 24, k = 8;
    for (int v = 0; v < LB_TEST_VARIANTS; v++) {
        LbModelConfig c = lb_test_variant(v, n, k);
        char name[96];
        lb_test_variant_name(&c, name, sizeof name);
        LbBackend *be = NULL;
        if (!lb_check(lb_cpu_backend_open(c.dtype, (size_t)64 << 20, &be) == LB_OK, "open: %s", lb_error_message()))
            break;
        LbBreakdown b;
        if (!lb_test_breakdown(be, &c, B, 11, name, &b)) {
            lb_backend_close(be);
            continue;
        }
        if (folded(c.kind))
            lb_check(!lb_test_role_row(&b, LB_ROLE_PERMUTE), "%s: a head permute is left", name);
        const LbBreakdownRow *ffn_up = lb_test_role_row(&b, LB_ROLE_FFN_UP), *gelu = lb_test_role_row(&b, LB_ROLE_GELU);
        lb_check(ffn_up && gelu && ffn_up->calls == c.layers && gelu->calls == c.layers, "%s: FFN up or GELU calls",
                 name);

        /* Times: each row's, and the shares (the sum against the pass: lb_test_breakdown). */
        double share = 0;
        for (int i = 0; i < b.count; i++) {
            lb_check(b.rows[i].ms >= 0 && b.rows[i].calls > 0, "%s: %s: %g ms, %lld calls", name,
                     lb_op_role_name(b.rows[i].role), b.rows[i].ms, (long long)b.rows[i].calls);
            share += b.rows[i].share;
        }
        lb_check(fabs(share - b.ops_ms / b.pass_ms) <= 1e-9, "%s: shares sum to %g, want %g", name, share,
                 b.ops_ms / b.pass_ms);

        /* Bytes in closed form: softmax reads and writes B h n kv scores per layer; the
         * LayerNorms, 2 (embedding) then 3 (with the residual) B n d per LayerNorm plus gamma and beta. */
        const double e = (double)be->elem_bytes, bnd = (double)B * (double)n * c.d_model;
        const LbBreakdownRow *sm = lb_test_role_row(&b, LB_ROLE_SOFTMAX), *ln = lb_test_role_row(&b, LB_ROLE_LAYERNORM);
        if (sm && folded(c.kind)) {
            const double kv = lb_test_is_linformer(c.kind) ? (double)c.k : (double)n;
            const double want = c.layers * 2.0 * (double)B * c.heads * (double)n * kv * e;
            lb_check(sm->bytes == want, "%s: softmax bytes %.17g, want %.17g", name, sm->bytes, want);
        }
        const LbBreakdownRow *fused = lb_test_role_row(&b, LB_ROLE_ATTENTION);
        if (fused) { /* Q, K, V read once and the output written once, per layer */
            const double want = c.layers * 4.0 * bnd * e;
            lb_check(fused->bytes == want && fused->calls == c.layers, "%s: attention bytes %.17g in %lld calls, want %.17g in %d",
                     name, fused->bytes, (long long)fused->calls, want, c.layers);
        }
        if (ln) {
            const double want = (2 * bnd + 2.0 * c.d_model + c.layers * 2 * (3 * bnd + 2.0 * c.d_model)) * e;
            lb_check(ln->bytes == want && ln->calls == 1 + 2 * c.layers, "%s: LayerNorm bytes %.17g in %lld calls, want %.17g in %d",
                     name, ln->bytes, (long long)ln->calls, want, 1 + 2 * c.layers);
        }
        lb_backend_close(be);
    }

    /* No memory for the arena: NOMEM, as a measured cell's. */
    LbBackend *be = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, 4096, &be) == LB_OK, "open tiny: %s", lb_error_message())) {
        LbModelConfig c = lb_test_variant(0, n, k);
        LbBreakdown b;
        int rc = lb_breakdown_cell(be, &c, B, 1, &b);
        lb_check(rc == LB_ERR_NOMEM, "4 KiB: %s, want NOMEM", lb_status_name(rc));
        lb_backend_close(be);
    }
    for (int r = 0; r < LB_ROLE_COUNT; r++) {
        LbOpRole back;
        lb_check(lb_op_role_parse(lb_op_role_name((LbOpRole)r), &back) == 0 && back == (LbOpRole)r, "role %d name", r);
    }
}

int main(void)
{
    static const LbTestCase cases[] = {{"plan", test_plan}, {"identity", test_identity}, {"forward_naive", test_forward_naive},
                                       {"chunked", test_chunked}, {"flash", test_flash}, {"performer", test_performer},
                                       {"breakdown", test_breakdown}};
    lb_test_init("test_model");
    return LB_TEST_CASES("test_model", cases);
}
