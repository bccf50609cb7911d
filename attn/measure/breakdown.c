/* The per-operation breakdown (breakdown.h). The pass runs through lb_forward_observed on a
 * wrapper of the real backend whose ops count each call's FLOPs and bytes (METHOD.md,
 * "Breakdown") under the current role, then call the real op. A timer event is recorded only
 * where the role changes (no synchronisation inside the pass); each interval's time is a
 * difference of elapsed times from the first event, so the rows sum exactly to the span. */
#include "attn/measure/breakdown.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/train.h"
#include "attn/base/status.h"

#define ROLE_NAMES(suffix)                                                                                     \
    "embed" suffix, "layernorm" suffix, "qkv" suffix, "compress" suffix, "feature_map" suffix, "permute" suffix,   \
        "scores" suffix, "softmax" suffix, "kv_state" suffix, "pv" suffix, "normalise" suffix, "attention" suffix, \
        "out_proj" suffix, "ffn_up" suffix, "gelu" suffix, "ffn_down" suffix
static const char *const role_names[LB_ROLE_COUNT] = {"unlabelled", ROLE_NAMES(""), ROLE_NAMES("_backward")};

const char *lb_op_role_name(LbOpRole r) { return (unsigned)r < LB_ROLE_COUNT ? role_names[r] : NULL; }

int lb_op_role_parse(const char *s, LbOpRole *out)
{
    for (int i = 0; i < LB_ROLE_COUNT; i++)
        if (strcmp(s, role_names[i]) == 0) {
            *out = (LbOpRole)i;
            return 0;
        }
    return -1;
}

/* A breakdown's recorder: the wrapped backend the pass runs on, and the events and counts. */
typedef struct LbTrace LbTrace;
struct LbTrace {
    LbBackend wrap; /* first, so a wrapped op can find its trace from the backend it is given */
    LbOps ops;
    LbBackend *real;
    LbOpRole role;     /* the current role; LB_ROLE_COUNT before the first */
    int64_t events;    /* recorded so far */
    LbOpRole *interval; /* role of the interval that starts at event i */
    int64_t cap;
    struct {
        int64_t calls;
        double flops, bytes, ms; /* ms: counted (lb_breakdown_count), or from the events */
    } per[LB_ROLE_COUNT];
    int rc; /* the first failure to record an event: lb_pass_role has no status to return */
    /* lb_breakdown_count: no events; each call's ms from its FLOPs and bytes */
    int counting;
    LbCallCost cost;
    void *cost_ctx;
    LbPassObserver obs; /* what the pass sees of it: the wrapper, and the role changes */
};

static void mark(LbTrace *t)
{
    if (t->rc != LB_OK || t->counting)
        return;
    if (t->events == t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 256;
        LbOpRole *r = realloc(t->interval, (size_t)cap * sizeof *r);
        if (!r) {
            t->rc = LB_FAIL(LB_ERR_NOMEM, "out of host memory for %lld breakdown events", (long long)cap);
            return;
        }
        t->interval = r;
        t->cap = cap;
    }
    int rc = t->real->ops->event_record(t->real, t->events);
    if (rc != LB_OK) {
        t->rc = rc;
        return;
    }
    t->interval[t->events++] = t->role;
}

static void trace_role(LbTrace *t, LbOpRole role)
{
    if (role == t->role)
        return;
    t->role = role;
    mark(t);
}

/* Counts one call of the wrapped backend `be` under the current role; returns its trace. */
static LbTrace *count(LbBackend *be, double flops, double elems, double extra_bytes)
{
    LbTrace *t = (LbTrace *)be;
    const LbOpRole r = (unsigned)t->role < LB_ROLE_COUNT ? t->role : LB_ROLE_UNLABELLED;
    const double bytes = elems * (double)t->real->elem_bytes + extra_bytes;
    t->per[r].calls++;
    t->per[r].flops += flops;
    t->per[r].bytes += bytes;
    if (t->cost)
        t->per[r].ms += t->cost(t->cost_ctx, flops, bytes);
    return t;
}

/* --- the wrapped ops ------------------------------------------------------------------------ */

/* With gelu, the backend's two passes (linear, then gelu under LB_ROLE_GELU), timed apart. */
static int w_linear(LbBackend *be, const void *x, const void *w, const void *b, void *y, int64_t rows, int64_t in,
                    int64_t out, int gelu)
{
    const double r = (double)rows, i = (double)in, o = (double)out;
    LbTrace *t = count(be, 2 * r * i * o, r * i + o * i + (b ? o : 0) + r * o, 0);
    LB_TRY(t->real->ops->linear(t->real, x, w, b, y, rows, in, out, 0));
    if (!gelu)
        return LB_OK;
    const LbOpRole was = t->role;
    trace_role(t, was >= LB_ROLE_BACKWARD_FIRST ? lb_role_backward(LB_ROLE_GELU) : LB_ROLE_GELU);
    count(be, 0, 2 * r * o, 0);
    LB_TRY(t->real->ops->gelu(t->real, y, rows, out));
    trace_role(t, was);
    return LB_OK;
}

/* C written once per matrix of C (one for a batch sum, stride_c 0) and read too where beta is not 0. */
static int w_bmm(LbBackend *be, const LbBmm *q)
{
    const double m = (double)q->m, n = (double)q->n, k = (double)q->kdim, batch = (double)q->batch;
    const double a = m * k * (q->stride_a ? batch : 1), b = k * n * (q->stride_b ? batch : 1);
    const double c = m * n * (q->stride_c ? batch : 1) * (q->beta != 0.0f ? 2 : 1);
    LbTrace *t = count(be, 2 * m * n * k * batch, a + b + c, 0);
    return t->real->ops->bmm(t->real, q);
}

/* w_OP for the ops below: one call of OP counted under the current role (FLOPs, elements read and
 * written, other bytes), then the real OP, called with `args`. Bytes: every operand read once and
 * every result written once, scratch not counted; FLOPs only for products and their gradients. */
#define COUNTED(op, params, args, flops, elems, extra_bytes) \
    static int w_##op params                                  \
    {                                                         \
        LbTrace *t = count(be, flops, elems, extra_bytes);    \
        return t->real->ops->op args;                         \
    }

COUNTED(softmax, (LbBackend *be, void *x, int64_t rows, int64_t cols, float scale), (t->real, x, rows, cols, scale),
        0, 2.0 * rows * cols, 0)

COUNTED(layernorm,
        (LbBackend *be, void *x, const void *r, const void *gamma, const void *beta, int64_t rows, int64_t d, float eps),
        (t->real, x, r, gamma, beta, rows, d, eps), 0, (r ? 3 : 2) * (double)rows * d + 2.0 * d, 0)

/* the ids: 4 bytes each */
COUNTED(embed,
        (LbBackend *be, const int32_t *ids, const void *tok, const void *pos, void *x, int64_t batch, int64_t n,
         int64_t d),
        (t->real, ids, tok, pos, x, batch, n, d), 0, (2.0 * batch + 1) * n * d, 4.0 * batch * n)

COUNTED(split_heads,
        (LbBackend *be, const void *src, int64_t ld_src, void *dst, int64_t batch, int64_t n, int64_t heads, int64_t hd),
        (t->real, src, ld_src, dst, batch, n, heads, hd), 0, 2.0 * batch * n * heads * hd, 0)

COUNTED(merge_heads, (LbBackend *be, const void *src, void *dst, int64_t batch, int64_t n, int64_t heads, int64_t hd),
        (t->real, src, dst, batch, n, heads, hd), 0, 2.0 * batch * n * heads * hd, 0)

COUNTED(gelu, (LbBackend *be, void *y, int64_t rows, int64_t cols), (t->real, y, rows, cols), 0, 2.0 * rows * cols, 0)

/* src read, dst written (a training step keeps a tensor an in-place op would overwrite). */
COUNTED(copy, (LbBackend *be, void *dst, const void *src, size_t bytes), (t->real, dst, src, bytes), 0, 0,
        2.0 * bytes)

COUNTED(favor_features,
        (LbBackend *be, void *f, const void *x, void *stat, int64_t groups, int64_t n, int64_t m, int64_t hd,
         float scale, int keys),
        (t->real, f, x, stat, groups, n, m, hd, scale, keys), 0, (double)groups * n * (2.0 * m + hd), 0)

COUNTED(divide_by_last, (LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols), (t->real, x, y, rows, cols),
        0, (double)rows * (2.0 * cols + 1), 0)

COUNTED(flash_attention,
        (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o, int64_t batch, int64_t n,
         int64_t heads, int64_t hd, float scale),
        (t->real, q, k, v, ld, o, batch, n, heads, hd, scale), 4.0 * batch * n * n * heads * hd,
        4.0 * batch * n * heads * hd, 0)

/* FlashAttention-2's backward as its authors count it, 5 products of 2 n^2 d_h per head (S
 * recomputed, dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q): 10 B n^2 heads d_h FLOPs, the
 * algorithm's work, so that a rate compares with theirs; the CUDA kernels compute S and dP a
 * second time for dQ (gpu/flash.cu), 14. Bytes at the least: Q, K, V, O and dO read,
 * dQ, dK and dV written (8 B n heads d_h elements), the fp32 lse read and D = rowsum(dO o)
 * written and read (12 B heads n bytes). */
COUNTED(flash_attention_backward,
        (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, const void *o, const float *lse,
         const void *do_, void *dq, void *dk, void *dv, int64_t batch, int64_t n, int64_t heads, int64_t hd,
         float scale, void *scratch),
        (t->real, q, k, v, ld, o, lse, do_, dq, dk, dv, batch, n, heads, hd, scale, scratch),
        10.0 * batch * n * n * heads * hd, 8.0 * batch * n * heads * hd, 12.0 * batch * n * heads)

/* flash_attention's count, and its fp32 lse written (4 B heads n bytes). */
COUNTED(flash_attention_lse,
        (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o, float *lse, int64_t batch,
         int64_t n, int64_t heads, int64_t hd, float scale),
        (t->real, q, k, v, ld, o, lse, batch, n, heads, hd, scale), 4.0 * batch * n * n * heads * hd,
        4.0 * batch * n * heads * hd, 4.0 * batch * n * heads)

/* Pooling is no product: no FLOPs (METHOD.md, "Bytes moved"), like softmax. */
COUNTED(pool_seq,
        (LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n, int64_t k,
         int64_t channels, int mode),
        (t->real, x, ld_x, y, ld_y, batch, n, k, channels, mode), 0, (double)batch * ((double)n + k) * channels, 0)

/* One multiply-add per input element (each is read by exactly one tap): 2 B n c FLOPs; the taps
 * (n / k of them) read too. */
COUNTED(depthwise_conv_seq,
        (LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y, int64_t batch, int64_t n,
         int64_t k, int64_t channels),
        (t->real, x, ld_x, wt, y, ld_y, batch, n, k, channels), 2.0 * batch * n * channels,
        ((double)batch * ((double)n + k) + (k > 0 ? (double)(n / k) : 0)) * channels, 0)

/* dx read, dtok and dpos written, the ids read. A scatter-add: no FLOPs, as the forward's addition. */
COUNTED(embed_backward,
        (LbBackend *be, const int32_t *ids, const void *dx, void *dtok, void *dpos, int64_t batch, int64_t n,
         int64_t d, int64_t vocab, void *scratch),
        (t->real, ids, dx, dtok, dpos, batch, n, d, vocab, scratch), 0, ((double)batch * n + vocab + n) * d,
        4.0 * batch * n)

/* dy read and dx written; max reads x as well. */
COUNTED(pool_seq_backward,
        (LbBackend *be, const void *x, int64_t ld_x, const void *dy, int64_t ld_y, void *dx, int64_t batch, int64_t n,
         int64_t k, int64_t channels, int mode),
        (t->real, x, ld_x, dy, ld_y, dx, batch, n, k, channels, mode), 0,
        (double)batch * channels * ((double)k + (mode == LB_POOL_MAX ? 2 : 1) * (double)n), 0)

/* FLOPs 3 B n c: dwt a multiply-add per input element (2), dx = dy wt one multiply per element
 * (each is in one window). */
COUNTED(depthwise_conv_seq_backward,
        (LbBackend *be, const void *x, int64_t ld_x, const void *wt, const void *dy, int64_t ld_y, void *dx, void *dwt,
         int64_t batch, int64_t n, int64_t k, int64_t channels, void *scratch),
        (t->real, x, ld_x, wt, dy, ld_y, dx, dwt, batch, n, k, channels, scratch), 3.0 * batch * n * channels,
        (2.0 * batch * n + (double)batch * k + 2 * (k > 0 ? (double)(n / k) : 0)) * channels, 0)

/* d read and written in place. */
COUNTED(favor_features_backward,
        (LbBackend *be, const void *phi, const void *x, void *d, void *dx, int64_t groups, int64_t n, int64_t m,
         int64_t hd, float scale),
        (t->real, phi, x, d, dx, groups, n, m, hd, scale), 0, (double)groups * n * (3.0 * m + 2.0 * hd), 0)

COUNTED(divide_by_last_backward, (LbBackend *be, const void *x, const void *dy, void *dx, int64_t rows, int64_t cols),
        (t->real, x, dy, dx, rows, cols), 0, (double)rows * (3.0 * cols + 2), 0)

COUNTED(add, (LbBackend *be, const void *x, void *y, int64_t elems), (t->real, x, y, elems), 0, 3.0 * elems, 0)

COUNTED(column_sums, (LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols, void *scratch),
        (t->real, x, y, rows, cols, scratch), 0, ((double)rows + 1) * cols, 0)

COUNTED(gelu_backward, (LbBackend *be, const void *z, void *d, int64_t rows, int64_t cols), (t->real, z, d, rows, cols),
        0, 3.0 * rows * cols, 0)

COUNTED(softmax_backward, (LbBackend *be, const void *y, void *d, int64_t rows, int64_t cols, float scale),
        (t->real, y, d, rows, cols, scale), 0, 3.0 * rows * cols, 0)

COUNTED(layernorm_backward,
        (LbBackend *be, const void *x, const void *r, const void *gamma, const void *dy, void *dv, void *dgamma,
         void *dbeta, int64_t rows, int64_t d, float eps, void *scratch),
        (t->real, x, r, gamma, dy, dv, dgamma, dbeta, rows, d, eps, scratch), 0,
        (r ? 4 : 3) * (double)rows * d + 3.0 * d, 0)

/* Every op a trace wraps with its w_OP; the others run as they are, timed but counting nothing. */
#define WRAPPED(X)                                                                                              \
    X(linear) X(bmm) X(softmax) X(layernorm) X(embed) X(split_heads) X(merge_heads) X(gelu) X(copy)             \
    X(favor_features) X(divide_by_last) X(flash_attention) X(flash_attention_lse) X(pool_seq)                   \
    X(depthwise_conv_seq) X(add) X(column_sums) X(gelu_backward) X(softmax_backward) X(layernorm_backward)      \
    X(embed_backward) X(pool_seq_backward) X(depthwise_conv_seq_backward) X(favor_features_backward)           \
    X(divide_by_last_backward) X(flash_attention_backward)

/* The pass's side of trace_role: its observer is a member of the trace. */
static void observe_role(LbPassObserver *obs, LbOpRole role)
{
    trace_role((LbTrace *)((char *)obs - offsetof(LbTrace, obs)), role);
}

static void trace_init(LbTrace *t, LbBackend *real)
{
    memset(t, 0, sizeof *t);
    t->real = real;
    t->ops = *real->ops;
#define WRAP(op) t->ops.op = w_##op;
    WRAPPED(WRAP)
#undef WRAP
    t->wrap = *real;
    t->wrap.ops = &t->ops;
    t->role = LB_ROLE_COUNT;
    t->obs.be = &t->wrap;
    t->obs.role = observe_role;
}

/* Forget the last pass's events and counts, keeping the buffers. */
static void trace_restart(LbTrace *t)
{
    t->role = LB_ROLE_COUNT;
    t->events = 0;
    memset(t->per, 0, sizeof t->per);
    t->rc = LB_OK;
}

/* One training step observed: its gradients and upstream gradient above the inputs, where the
 * plan puts them (lb_train_setup's order), released afterwards. */
static int traced_step(LbTrace *t, const LbModel *m, LbArena *a, LbInputs *in)
{
    const size_t mark = lb_arena_mark(a);
    LbTrain train;
    int rc = lb_train_alloc(m, a, in->batch, &train);
    if (rc != LB_OK)
        return rc;
    rc = t->real->ops->fill_uniform(t->real, train.dy, in->batch * m->cfg.n * m->cfg.d_model, LB_GRAD_SEED_MIX,
                                    -1.0f, 1.0f);
    if (rc == LB_OK)
        rc = lb_train_step_observed(m, a, in, &train, &t->obs);
    lb_train_release(&train);
    lb_arena_reset(a, mark);
    return rc;
}

/* One traced pass (a training step when the model's configuration asks for one), closed by a
 * last event. */
static int traced_pass(LbTrace *t, const LbModel *m, LbArena *a, LbInputs *in)
{
    trace_restart(t);
    int rc = m->cfg.pass == LB_PASS_TRAIN ? traced_step(t, m, a, in) : lb_forward_observed(m, a, in, &t->obs);
    if (rc != LB_OK)
        return rc;
    t->role = LB_ROLE_COUNT;
    mark(t); /* the end of the last interval */
    return t->rc;
}

/* The rows from each role's time and the counts. */
static void fill_rows(const LbTrace *t, LbBreakdown *out)
{
    out->events = t->events;
    out->count = 0;
    out->ops_ms = out->flops = out->bytes = 0;
    for (int r = 0; r < LB_ROLE_COUNT; r++) {
        if (t->per[r].calls == 0)
            continue; /* a role set but left without a call: its instant goes to the overhead */
        LbBreakdownRow *row = &out->rows[out->count++];
        row->role = (LbOpRole)r;
        row->calls = t->per[r].calls;
        row->ms = t->per[r].ms;
        row->share = out->pass_ms > 0 ? row->ms / out->pass_ms : 0;
        row->flops = t->per[r].flops;
        row->bytes = t->per[r].bytes;
        out->ops_ms += row->ms;
        out->flops += row->flops;
        out->bytes += row->bytes;
    }
}

/* The rows from the recorded events and counts. */
static int collect(LbTrace *t, LbBreakdown *out)
{
    double prev = 0;
    for (int64_t i = 1; i < t->events; i++) {
        double at = 0;
        LB_TRY(t->real->ops->event_elapsed(t->real, 0, i, &at));
        const LbOpRole r = t->interval[i - 1];
        if ((unsigned)r < LB_ROLE_COUNT)
            t->per[r].ms += at - prev;
        prev = at;
    }
    fill_rows(t, out);
    return LB_OK;
}

int lb_breakdown_cell(LbBackend *be, const LbModelConfig *cfg, int64_t batch, uint64_t seed, LbBreakdown *out)
{
    memset(out, 0, sizeof *out);
    out->batch = batch;
    const LbOps *o = be->ops;
    if (!o->event_record || !o->event_elapsed || !o->gelu)
        return LB_FAIL(LB_ERR_UNSUPPORTED, "breakdown: the %s backend has no timer events", o->name);
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LB_TRY(lb_plan_compute(cfg, &pp, batch, &plan));
    LbArena arena;
    LB_TRY(lb_arena_open(&arena, be, plan.total));
    LbModel model;
    LbInputs in;
    LbTrace trace, *t = &trace;
    trace_init(t, be);
    int rc = lb_forward_setup(&model, &in, cfg, be, &arena, batch, seed);
    const int built = rc == LB_OK;
    /* The first pass creates the events and fills the libraries' caches; the second is timed.
     * One sequence suffices: it makes the same calls in the same order, and the cell's measured
     * passes have just run the batch's own shapes. */
    if (rc == LB_OK) {
        LbInputs one = in;
        one.batch = 1;
        rc = traced_pass(t, &model, &arena, &one);
    }
    if (rc == LB_OK)
        rc = o->sync(be);
    if (rc == LB_OK)
        rc = o->timer_start(be);
    if (rc == LB_OK)
        rc = traced_pass(t, &model, &arena, &in);
    if (rc == LB_OK)
        rc = o->timer_stop(be, &out->pass_ms);
    if (rc == LB_OK)
        rc = collect(t, out);
    if (built)
        lb_model_release(&model);
    lb_arena_close(&arena);
    free(t->interval);
    return rc;
}

/* Where lb_breakdown_count's arena pretends to start: any non-NULL address, aligned. */
#define LB_COUNT_BASE ((uintptr_t)1 << 20)

int lb_breakdown_count(const LbModelConfig *cfg, const LbPlanParams *p, int64_t batch, LbCallCost cost, void *ctx,
                       LbBreakdown *out)
{
    memset(out, 0, sizeof *out);
    out->batch = batch;
    LbBackend be;
    lb_plan_counting_backend(cfg->dtype, p, &be);
    LbArena arena;
    lb_arena_counting(&arena, p->alignment);
    /* Addresses that are not NULL (never dereferenced: the counting ops touch nothing), so an
     * optional operand the pass gives (a bias, LayerNorm's residual) is counted as in a real pass,
     * where the counting arena's NULLs would count it absent. */
    arena.base = (char *)LB_COUNT_BASE;
    LbModel model;
    LbInputs in;
    LB_TRY(lb_model_build(&model, cfg, &be, &arena, 0));
    LbTrace trace, *t = &trace;
    trace_init(t, &be);
    t->counting = 1;
    t->cost = cost;
    t->cost_ctx = ctx;
    int rc = lb_inputs_alloc(&model, &arena, batch, &in);
    if (rc == LB_OK)
        rc = traced_pass(t, &model, &arena, &in);
    if (rc == LB_OK) {
        /* the pass is its calls one after another: its time is the rows' sum */
        for (int r = 0; r < LB_ROLE_COUNT; r++)
            out->pass_ms += t->per[r].calls ? t->per[r].ms : 0;
        fill_rows(t, out);
    }
    lb_model_release(&model);
    free(t->interval);
    return rc;
}

int lb_breakdown_within_overhead(const LbBreakdown *b)
{
    const double gap = b->pass_ms - b->ops_ms;
    return gap >= -LB_BREAKDOWN_SLACK_MS && gap <= LB_BREAKDOWN_OVERHEAD * b->pass_ms + LB_BREAKDOWN_SLACK_MS;
}
