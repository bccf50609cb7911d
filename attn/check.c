/* The check table (check.h). Inputs are drawn on the backend and read back, so the reference sees
 * the values the op saw after rounding to storage. */
#include "attn/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/cpu/cpu_ref.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/rng.h"
#include "attn/base/status.h"

#define MAX_BUFFERS 16

typedef struct Ctx {
    LbBackend *be;
    const LbCheckPlan *plan;
    LbCheckTable *t;
    double tol;       /* the running op's, for this storage type */
    uint64_t streams; /* random streams drawn so far */
    char op[24], shape[96];
    void *dev[MAX_BUFFERS];
    void *host[MAX_BUFFERS];
    int ndev, nhost;
    int dead; /* a device error: nothing more runs on this backend */
} Ctx;

/* --- rows ----------------------------------------------------------------------------------- */

static LbCheckRow *new_row(Ctx *c)
{
    LbCheckTable *t = c->t;
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        LbCheckRow *r = realloc(t->rows, cap * sizeof *r);
        if (!r)
            return NULL;
        t->rows = r;
        t->cap = cap;
    }
    LbCheckRow *r = &t->rows[t->count++];
    memset(r, 0, sizeof *r);
    snprintf(r->op, sizeof r->op, "%s", c->op);
    snprintf(r->shape, sizeof r->shape, "%s", c->shape);
    r->dtype = c->be->storage;
    return r;
}

/* Spacing of the storage type's numbers around v (its ulp there), subnormals included. */
static double spacing(double v, LbDtype t)
{
    int e = 0;
    const double a = fabs(v);
    if (a == 0.0)
        return t == LB_DTYPE_FP16 ? ldexp(1.0, -24) : 0.0;
    frexp(a, &e);
    switch (t) {
    case LB_DTYPE_FP16: return e - 1 < -14 ? ldexp(1.0, -24) : ldexp(1.0, e - 1 - 10);
    case LB_DTYPE_BF16: return ldexp(1.0, e - 1 - 7);
    default: return ldexp(1.0, e - 1 - 23);
    }
}

/* One row: ||out - ref|| / ||ref|| in double against the op's tolerance, raised to 3 times the
 * error of rounding ref to the storage type alone (an answer in fp16's subnormal range cannot be
 * closer; ||spacing / sqrt 12|| for uniformly spread rounding errors); tolerance 0 asks for bit
 * equality. Where ref is NaN nothing may be written: out must still hold the poison there. */
static int compare(Ctx *c, const float *out, const float *ref, int64_t count)
{
    LbCheckRow *r = new_row(c);
    if (!r)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory recording a check");
    double num = 0.0, den = 0.0, floor2 = 0.0;
    int64_t bad = -1, outside = 0;
    for (int64_t i = 0; i < count; i++) {
        if (isnan(ref[i])) {
            outside += !isnan(out[i]);
            continue;
        }
        if (!isfinite(out[i]) && bad < 0)
            bad = i;
        const double e = (double)out[i] - (double)ref[i], sp = spacing(ref[i], c->be->storage);
        num += e * e;
        den += (double)ref[i] * (double)ref[i];
        floor2 += sp * sp / 12.0;
    }
    double err = den > 0.0 ? sqrt(num / den) : num == 0.0 ? 0.0 : INFINITY;
    if (bad >= 0) {
        err = INFINITY;
        snprintf(r->error, sizeof r->error, "element %lld is %g (unwritten or overflowed)", (long long)bad,
                 (double)out[bad]);
    } else if (outside) {
        err = INFINITY;
        snprintf(r->error, sizeof r->error, "%lld elements written outside the output", (long long)outside);
    }
    const double floor_rel = den > 0.0 ? 3.0 * sqrt(floor2 / den) : 0.0;
    r->rel_error = err;
    r->threshold = c->tol == 0.0 ? 0.0 : c->tol > floor_rel ? c->tol : floor_rel;
    r->ok = err <= r->threshold;
    return LB_OK;
}

/* --- buffers: released after every check ----------------------------------------------------- */

static int dev(Ctx *c, int64_t bytes, void **p)
{
    *p = NULL;
    if (c->ndev == MAX_BUFFERS)
        return LB_FAIL(LB_ERR_INVALID, "check: too many buffers (internal)");
    LB_TRY(c->be->ops->mem_alloc(c->be, (size_t)(bytes > 0 ? bytes : 1), p));
    c->dev[c->ndev++] = *p;
    return LB_OK;
}

/* Exactly count storage elements, so that one touched past the end shows under a sanitizer. */
static int dev_elems(Ctx *c, int64_t count, void **p) { return dev(c, count * (int64_t)c->be->elem_bytes, p); }

/* count floats (or 4-byte token ids) on the host, NaN: a reference's gaps, the poison of an output. */
static int hostf(Ctx *c, int64_t count, float **p)
{
    *p = NULL;
    if (c->nhost == MAX_BUFFERS)
        return LB_FAIL(LB_ERR_INVALID, "check: too many buffers (internal)");
    if (!(*p = malloc((size_t)(count > 0 ? count : 1) * sizeof(float))))
        return LB_FAIL(LB_ERR_NOMEM, "check: out of host memory (%lld floats)", (long long)count);
    c->host[c->nhost++] = *p;
    for (int64_t i = 0; i < count; i++)
        (*p)[i] = NAN;
    return LB_OK;
}

static void release(Ctx *c)
{
    for (int i = 0; i < c->ndev; i++)
        c->be->ops->mem_free(c->be, c->dev[i]);
    for (int i = 0; i < c->nhost; i++)
        free(c->host[i]);
    c->ndev = c->nhost = 0;
}

static void *at(const Ctx *c, void *p, int64_t elems) { return (char *)p + elems * (int64_t)c->be->elem_bytes; }

static uint64_t next_seed(Ctx *c) { return c->plan->seed * 1000003u + 7919u * ++c->streams; }

/* d (count) uniform in [lo, hi], drawn on the backend; the stored values into h. */
static int random_in(Ctx *c, void *d, float *h, int64_t count, float lo, float hi)
{
    LB_TRY(c->be->ops->fill_uniform(c->be, d, count, next_seed(c), lo, hi));
    return c->be->ops->download(c->be, h, d, count);
}

/* h (count), changed on the host, into d and back: the reference sees the values stored. */
static int restore(Ctx *c, void *d, float *h, int64_t count)
{
    LB_TRY(c->be->ops->upload(c->be, d, h, count));
    return c->be->ops->download(c->be, h, d, count);
}

/* NaN in every element of d (count). */
static int poison(Ctx *c, void *d, int64_t count)
{
    float *h;
    LB_TRY(hostf(c, count, &h));
    return c->be->ops->upload(c->be, d, h, count);
}

/* An input of count elements uniform in [lo, hi]: on the backend in *d, as stored in *h. */
static int input(Ctx *c, int64_t count, float lo, float hi, void **d, float **h)
{
    LB_TRY(dev_elems(c, count, d));
    LB_TRY(hostf(c, count, h));
    return random_in(c, *d, *h, count, lo, hi);
}

/* An output of count elements on the backend, poisoned, and room for it (and its reference, when
 * ref is not NULL) on the host. */
static int output(Ctx *c, int64_t count, void **d, float **h, float **ref)
{
    LB_TRY(dev_elems(c, count, d));
    LB_TRY(hostf(c, count, h));
    if (ref)
        LB_TRY(hostf(c, count, ref));
    return poison(c, *d, count);
}

/* The op's output d (count) into out, against ref. */
static int settle(Ctx *c, const void *d, float *out, const float *ref, int64_t count)
{
    LB_TRY(c->be->ops->download(c->be, out, d, count));
    return compare(c, out, ref, count);
}

#define SHAPE(...) snprintf(c->shape, sizeof c->shape, __VA_ARGS__)
#define LL(v) ((long long)(v))

/* --- the ops: each check names its shape fields s[0..]. The reference: a naive loop in double
 *     here where the CPU backend runs something else (blocked, threaded, vectorised, its own exp);
 *     the CPU backend's own textbook loop (attn/cpu/cpu_ref.h) where that is all it runs. ------ */

static double gelu_d(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }

/* linear {rows, in, out, bias, gelu}: y = x w^T + b, summed in double, rounded to float once
 * (as the ops round the product before GELU), then erf GELU. */
static void naive_linear(const float *x, const float *w, const float *b, float *y, int64_t rows, int64_t in,
                         int64_t out, int gelu)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < out; o++) {
            double s = b ? b[o] : 0.0;
            for (int64_t i = 0; i < in; i++)
                s += (double)x[r * in + i] * (double)w[o * in + i];
            y[r * out + o] = (float)(gelu ? gelu_d((double)(float)s) : s);
        }
}

static int check_linear(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t rows = s[0], in = s[1], out = s[2];
    const int bias = (int)s[3], gelu = (int)s[4];
    SHAPE("%lld x %lld -> %lld%s%s%s", LL(rows), LL(in), LL(out), bias ? " +bias" : "", gelu ? " +gelu" : "",
          be->tf32 ? " (tf32)" : "");
    void *d_x, *d_w, *d_b, *d_y;
    float *x, *w, *b, *y, *ref;
    const float a = 1.0f / sqrtf((float)(in > 0 ? in : 1));
    LB_TRY(input(c, rows * in, -1.0f, 1.0f, &d_x, &x));
    LB_TRY(input(c, out * in, -a, a, &d_w, &w));
    LB_TRY(input(c, out, -0.5f, 0.5f, &d_b, &b));
    LB_TRY(output(c, rows * out, &d_y, &y, &ref));
    LB_TRY(be->ops->linear(be, d_x, d_w, bias ? d_b : NULL, d_y, rows, in, out, gelu));
    naive_linear(x, w, bias ? b : NULL, ref, rows, in, out, gelu);
    return settle(c, d_y, y, ref, rows * out);
}

static void naive_bmm(const LbBmm *p)
{
    const float *A = p->a, *B = p->b;
    float *C = p->c;
    for (int64_t i = 0; i < p->batch; i++)
        for (int64_t r = 0; r < p->m; r++)
            for (int64_t j = 0; j < p->n; j++) {
                double sum = 0.0;
                for (int64_t q = 0; q < p->kdim; q++) {
                    const double a = A[i * p->stride_a + (p->trans_a ? q * p->lda + r : r * p->lda + q)];
                    const double b = B[i * p->stride_b + (p->trans_b ? j * p->ldb + q : q * p->ldb + j)];
                    sum += a * b;
                }
                C[i * p->stride_c + r * p->ldc + j] = (float)(p->alpha * sum);
            }
}

static int64_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (batch - 1) * stride + rows * ld;
}

/* bmm {trans_a, trans_b, m, n, kdim, batch, pad, broadcast}: leading dimensions and batch strides
 * `pad` wider than packed (then alpha 0.75), broadcast 1 or 2: stride 0 for A (Linformer's E) or
 * B. Nothing may be written in C's padding. */
static int check_bmm(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    LbBmm q;
    memset(&q, 0, sizeof q);
    q.trans_a = (int)s[0];
    q.trans_b = (int)s[1];
    q.m = s[2];
    q.n = s[3];
    q.kdim = s[4];
    q.batch = s[5];
    const int64_t pad = s[6];
    q.alpha = pad ? 0.75f : 1.0f;
    q.lda = (q.trans_a ? q.m : q.kdim) + pad;
    q.ldb = (q.trans_b ? q.kdim : q.n) + pad;
    q.ldc = q.n + pad;
    q.stride_a = s[7] == 1 ? 0 : (q.trans_a ? q.kdim : q.m) * q.lda + pad;
    q.stride_b = s[7] == 2 ? 0 : (q.trans_b ? q.n : q.kdim) * q.ldb + pad;
    q.stride_c = q.m * q.ldc + pad;
    SHAPE("%s%sm %lld n %lld k %lld batch %lld%s%s", q.trans_a ? "A^T " : "", q.trans_b ? "B^T " : "", LL(q.m),
          LL(q.n), LL(q.kdim), LL(q.batch), pad ? ", padded" : "", s[7] == 1 ? ", A broadcast" : s[7] == 2 ? ", B broadcast" : "");
    const int64_t ea = extent(q.batch, q.stride_a, q.trans_a ? q.kdim : q.m, q.lda);
    const int64_t eb = extent(q.batch, q.stride_b, q.trans_b ? q.n : q.kdim, q.ldb);
    const int64_t ec = extent(q.batch, q.stride_c, q.m, q.ldc);
    void *d_a, *d_b, *d_c;
    float *a, *b, *out, *ref;
    LB_TRY(input(c, ea, -1.0f, 1.0f, &d_a, &a));
    LB_TRY(input(c, eb, -1.0f, 1.0f, &d_b, &b));
    LB_TRY(output(c, ec, &d_c, &out, &ref));
    LbBmm g = q;
    g.a = d_a;
    g.b = d_b;
    g.c = d_c;
    LB_TRY(be->ops->bmm(be, &g));
    g.a = a;
    g.b = b;
    g.c = ref;
    naive_bmm(&g);
    return settle(c, d_c, out, ref, ec);
}

static void naive_softmax(float *x, int64_t rows, int64_t cols, float scale)
{
    for (int64_t r = 0; r < rows; r++) {
        float *v = x + r * cols;
        double mx = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < cols; j++)
            mx = fmax(mx, (double)scale * v[j]);
        for (int64_t j = 0; j < cols; j++)
            sum += exp((double)scale * v[j] - mx);
        for (int64_t j = 0; j < cols; j++)
            v[j] = (float)(exp((double)scale * v[j] - mx) / sum);
    }
}

/* softmax {rows, cols, offset, scale in 1/1024 (0: 0.625)}, at `offset` elements past an aligned
 * buffer (the scalar paths). Scores of the size attention makes, every third row shifted by 100:
 * a kernel that skips the max subtraction overflows fp32's exp, one that takes another row's max
 * underflows. */
static int check_softmax(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t rows = s[0], cols = s[1], offset = s[2], count = rows * cols;
    const float scale = s[3] ? (float)s[3] / 1024.0f : 0.625f;
    SHAPE("%lld x %lld%s%s", LL(rows), LL(cols), offset ? " (unaligned)" : "", s[3] ? " scale" : "");
    if (s[3])
        snprintf(c->shape + strlen(c->shape), sizeof c->shape - strlen(c->shape), " %g", (double)scale);
    void *buf;
    float *ref, *out;
    LB_TRY(dev_elems(c, count + offset, &buf));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(hostf(c, count, &out));
    void *d_x = at(c, buf, offset);
    LB_TRY(random_in(c, d_x, ref, count, -8.0f, 8.0f));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++)
            ref[r * cols + j] += 100.0f * (float)(r % 3);
    LB_TRY(restore(c, d_x, ref, count));
    LB_TRY(be->ops->softmax(be, d_x, rows, cols, scale));
    naive_softmax(ref, rows, cols, scale);
    return settle(c, d_x, out, ref, count);
}

static void naive_layernorm(float *x, const float *res, const float *g, const float *b, int64_t rows, int64_t d,
                            float eps)
{
    for (int64_t r = 0; r < rows; r++) {
        float *v = x + r * d;
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < d; j++)
            mean += (double)v[j] + (res ? (double)res[r * d + j] : 0.0);
        mean /= (double)d;
        for (int64_t j = 0; j < d; j++) {
            const double e = (double)v[j] + (res ? (double)res[r * d + j] : 0.0) - mean;
            var += e * e;
        }
        const double inv = 1.0 / sqrt(var / (double)d + (double)eps);
        for (int64_t j = 0; j < d; j++)
            v[j] = (float)(((double)v[j] + (res ? (double)res[r * d + j] : 0.0) - mean) * inv * g[j] + b[j]);
    }
}

/* layernorm {rows, d, residual, offset}: an offset mean, so a kernel that forgets to subtract it
 * shows. */
static int check_layernorm(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t rows = s[0], d = s[1], off = s[3], count = rows * d;
    const int with_r = (int)s[2];
    SHAPE("%lld x %lld%s%s", LL(rows), LL(d), with_r ? " +residual" : "", off ? " (unaligned)" : "");
    void *bx, *br, *d_g, *d_b;
    float *x, *r, *g, *b, *out;
    LB_TRY(dev_elems(c, count + off, &bx));
    LB_TRY(dev_elems(c, count + off, &br));
    LB_TRY(hostf(c, count, &x));
    LB_TRY(hostf(c, count, &r));
    LB_TRY(hostf(c, count, &out));
    void *d_x = at(c, bx, off), *d_r = at(c, br, off);
    LB_TRY(random_in(c, d_x, x, count, -1.0f, 3.0f));
    LB_TRY(random_in(c, d_r, r, count, -1.0f, 1.0f));
    LB_TRY(input(c, d, 0.5f, 1.5f, &d_g, &g));
    LB_TRY(input(c, d, -0.5f, 0.5f, &d_b, &b));
    LB_TRY(be->ops->layernorm(be, d_x, with_r ? d_r : NULL, d_g, d_b, rows, d, LB_LAYERNORM_EPS));
    naive_layernorm(x, with_r ? r : NULL, g, b, rows, d, LB_LAYERNORM_EPS);
    return settle(c, d_x, out, x, count);
}

/* embed {batch, n, d, vocab}: x = tok[id] + pos, one float addition. */
static int check_embed(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t batch = s[0], n = s[1], d = s[2], rows = batch * n, count = rows * d;
    const int32_t vocab = (int32_t)s[3];
    SHAPE("B %lld n %lld d %lld vocab %d", LL(batch), LL(n), LL(d), (int)vocab);
    void *d_tok, *d_pos, *d_x, *d_ids;
    float *tok, *pos, *ref, *out, *ids;
    LB_TRY(input(c, (int64_t)vocab * d, -1.0f, 1.0f, &d_tok, &tok));
    LB_TRY(input(c, n * d, -1.0f, 1.0f, &d_pos, &pos));
    LB_TRY(output(c, count, &d_x, &out, &ref));
    LB_TRY(dev(c, rows * (int64_t)sizeof(int32_t), &d_ids));
    LB_TRY(hostf(c, rows, &ids));
    LB_TRY(be->ops->fill_tokens(be, d_ids, rows, next_seed(c), vocab));
    LB_TRY(be->ops->copy_raw_to_host(be, ids, d_ids, (size_t)rows * sizeof(int32_t)));
    LB_TRY(be->ops->embed(be, d_ids, d_tok, d_pos, d_x, batch, n, d));
    lb_embed_cpu((const int32_t *)(void *)ids, tok, pos, ref, batch, n, d);
    return settle(c, d_x, out, ref, count);
}

/* split_heads {batch, n, heads, hd, which}: Q, K or V (column block `which`) of a fused (B n,
 * 3 h hd) buffer into (B, h, n, hd); merge_heads {batch, n, heads, hd}: back to (B, n, h hd).
 * Pure copies: bit for bit. */
static int check_heads(Ctx *c, const int64_t *s, int merge)
{
    LbBackend *be = c->be;
    const int64_t batch = s[0], n = s[1], heads = s[2], hd = s[3], which = s[4];
    SHAPE("B %lld n %lld heads %lld hd %lld", LL(batch), LL(n), LL(heads), LL(hd));
    const int64_t d = heads * hd, ld = merge ? d : 3 * d, rows = batch * n, sc = rows * ld;
    void *d_src, *d_dst;
    float *src, *out, *ref;
    LB_TRY(input(c, sc, -1.0f, 1.0f, &d_src, &src));
    LB_TRY(output(c, rows * d, &d_dst, &out, &ref));
    if (merge) {
        LB_TRY(be->ops->merge_heads(be, d_src, d_dst, batch, n, heads, hd));
        lb_merge_heads_cpu(src, ref, batch, n, heads, hd);
    } else {
        LB_TRY(be->ops->split_heads(be, at(c, d_src, which * d), ld, d_dst, batch, n, heads, hd));
        lb_split_heads_cpu(src + which * d, ld, ref, batch, n, heads, hd);
    }
    return settle(c, d_dst, out, ref, rows * d);
}

static int check_split(Ctx *c, const int64_t *s) { return check_heads(c, s, 0); }
static int check_merge(Ctx *c, const int64_t *s) { return check_heads(c, s, 1); }

/* fill_uniform {count}: lb_rng_range rounded to storage, bit for bit (the host rounding of upload
 * is the kernel's). */
static int check_fill_uniform(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t count = s[0];
    const uint64_t seed = next_seed(c);
    SHAPE("%lld", LL(count));
    void *d_x, *d_ref;
    float *out, *ref;
    LB_TRY(dev_elems(c, count, &d_x));
    LB_TRY(dev_elems(c, count, &d_ref));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(be->ops->fill_uniform(be, d_x, count, seed, -0.3f, 0.7f));
    for (int64_t i = 0; i < count; i++)
        ref[i] = lb_rng_range(seed, (uint64_t)i, -0.3f, 0.7f);
    LB_TRY(restore(c, d_ref, ref, count));
    return settle(c, d_x, out, ref, count);
}

/* fill_tokens {count}: lb_rng_token exactly (compared as floats: every id below 2^24 is exact). */
static int check_fill_tokens(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t count = s[0];
    const int32_t vocab = 50265;
    const uint64_t seed = next_seed(c);
    SHAPE("%lld", LL(count));
    void *d_ids;
    float *h_ids, *out, *ref;
    LB_TRY(dev(c, count * (int64_t)sizeof(int32_t), &d_ids));
    LB_TRY(hostf(c, count, &h_ids));
    const int32_t *ids = (const int32_t *)(void *)h_ids;
    LB_TRY(hostf(c, count, &out));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(be->ops->fill_tokens(be, d_ids, count, seed, vocab));
    LB_TRY(be->ops->copy_raw_to_host(be, h_ids, d_ids, (size_t)count * sizeof(int32_t)));
    for (int64_t i = 0; i < count; i++) {
        out[i] = (float)ids[i];
        ref[i] = (float)lb_rng_token(seed, (uint64_t)i, vocab);
    }
    return compare(c, out, ref, count);
}

/* copy {count} (calibration's bandwidth op): device to device, bit for bit. */
static int check_copy(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t count = s[0];
    SHAPE("%lld bytes", LL(count) * (long long)be->elem_bytes);
    void *d_src, *d_dst;
    float *src, *out;
    LB_TRY(input(c, count, -1.0f, 1.0f, &d_src, &src));
    LB_TRY(output(c, count, &d_dst, &out, NULL));
    LB_TRY(be->ops->copy(be, d_dst, d_src, (size_t)count * be->elem_bytes));
    return settle(c, d_dst, out, src, count);
}

/* gelu {rows, cols} (the pass a breakdown times apart from linear's product), in place. */
static int check_gelu(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t rows = s[0], cols = s[1], count = rows * cols;
    SHAPE("%lld x %lld", LL(rows), LL(cols));
    void *d_y;
    float *ref, *out;
    LB_TRY(input(c, count, -4.0f, 4.0f, &d_y, &ref));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(be->ops->gelu(be, d_y, rows, cols));
    for (int64_t i = 0; i < count; i++)
        ref[i] = (float)gelu_d(ref[i]);
    return settle(c, d_y, out, ref, count);
}

/* favor_features {groups, n, m, hd, keys, offset}: FAVOR+'s features in place, for queries (a max
 * per row) or keys (one per group, through the op's scratch). Queries every third row shifted by
 * +6, keys every group by -3 g and one row of each by +4: a kernel that takes another row's or
 * group's max is far off. */
static int check_favor(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t groups = s[0], n = s[1], m = s[2], hd = s[3], off = s[5], fc = groups * n * m, xc = groups * n * hd;
    const int keys = (int)s[4];
    SHAPE("%lld groups x %lld x %lld, hd %lld, %s%s", LL(groups), LL(n), LL(m), LL(hd), keys ? "keys" : "queries",
          off ? " (unaligned)" : "");
    const float scale = (float)pow((double)hd, -0.25);
    void *bf, *d_x, *d_stat = NULL;
    float *f, *x, *out;
    LB_TRY(dev_elems(c, fc + off, &bf));
    if (keys)
        LB_TRY(dev(c, (int64_t)lb_favor_stat_bytes(groups, n), &d_stat));
    LB_TRY(hostf(c, fc, &f));
    LB_TRY(hostf(c, fc, &out));
    void *d_f = at(c, bf, off);
    LB_TRY(random_in(c, d_f, f, fc, -3.0f, 3.0f));
    LB_TRY(input(c, xc, -1.5f, 1.5f, &d_x, &x));
    for (int64_t g = 0; g < groups; g++)
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < m; j++)
                f[(g * n + r) * m + j] += keys ? -3.0f * (float)g + (r == (g * 7) % n ? 4.0f : 0.0f) : 6.0f * (float)(r % 3);
    LB_TRY(restore(c, d_f, f, fc));
    LB_TRY(be->ops->favor_features(be, d_f, d_x, d_stat, groups, n, m, hd, scale, keys));
    lb_favor_features_cpu(f, x, groups, n, m, hd, scale, keys);
    return settle(c, d_f, out, f, fc);
}

/* divide_by_last {rows, cols}: x (rows, cols + 1) over its last column, a positive normaliser of
 * a different size per row (a kernel that divides by another row's shows). */
static int check_divide(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t rows = s[0], cols = s[1], xc = rows * (cols + 1), yc = rows * cols;
    SHAPE("%lld x %lld + 1", LL(rows), LL(cols));
    void *d_x, *d_y;
    float *x, *out, *ref;
    LB_TRY(input(c, xc, -1.0f, 1.0f, &d_x, &x));
    LB_TRY(output(c, yc, &d_y, &out, &ref));
    for (int64_t r = 0; r < rows; r++)
        x[r * (cols + 1) + cols] = 0.25f + 4.0f * fabsf(x[r * (cols + 1) + cols]);
    LB_TRY(restore(c, d_x, x, xc));
    LB_TRY(be->ops->divide_by_last(be, d_x, d_y, rows, cols));
    lb_divide_by_last_cpu(x, ref, rows, cols);
    return settle(c, d_y, out, ref, yc);
}

/* flash_attention {batch, n, heads, hd}: Q, K, V read in place from one fused buffer as the flash
 * model lays it out, keys growing with their position so a row's maximum score rises tile by tile
 * (a kernel that does not rescale its running output is far off). */
static int check_flash(Ctx *c, const int64_t *s)
{
    LbBackend *be = c->be;
    const int64_t batch = s[0], n = s[1], heads = s[2], hd = s[3];
    SHAPE("B %lld n %lld h %lld hd %lld", LL(batch), LL(n), LL(heads), LL(hd));
    const int64_t width = heads * hd, ld = 3 * width, xc = batch * n * ld, oc = batch * n * width;
    const float scale = 1.0f / sqrtf((float)hd);
    void *d_x, *d_o;
    float *x, *out, *ref;
    LB_TRY(input(c, xc, -2.0f, 2.0f, &d_x, &x));
    LB_TRY(output(c, oc, &d_o, &out, &ref));
    for (int64_t r = 0; r < batch * n; r++)
        for (int64_t e = 0; e < width; e++)
            x[r * ld + width + e] *= 0.5f + 2.0f * (float)(r % n) / (float)n;
    LB_TRY(restore(c, d_x, x, xc));
    LB_TRY(be->ops->flash_attention(be, d_x, at(c, d_x, width), at(c, d_x, 2 * width), ld, d_o, batch, n, heads, hd,
                                    scale));
    LB_TRY(lb_flash_attention_cpu(x, x + width, x + 2 * width, ld, ref, batch, n, heads, hd, scale));
    return settle(c, d_o, out, ref, oc);
}

/* {batch, n, k, channels, ld_x, ld_y, mode or extra taps}: keys read in place with a row stride
 * wider than the channels (the fused Q/K/V output), written with one (K' and V' side by side);
 * pool_seq's mode (LbPoolMode), or the convolution's taps past the window (the k schedule's
 * smaller k reads the first ones). */
static int check_seq(Ctx *c, const int64_t *s, int conv)
{
    LbBackend *be = c->be;
    const int64_t batch = s[0], n = s[1], k = s[2], ch = s[3], ld_x = s[4], ld_y = s[5];
    const int mode = conv ? 2 : (int)s[6];
    const int64_t taps = n / k + (conv ? s[6] : 0), xc = batch * n * ld_x, yc = batch * k * ld_y, wc = taps * ch;
    SHAPE("%sB %lld n %lld k %lld C %lld ld %lld/%lld", conv ? "" : mode == LB_POOL_MAX ? "max " : "mean ", LL(batch),
          LL(n), LL(k), LL(ch), LL(ld_x), LL(ld_y));
    void *d_x, *d_y, *d_w;
    float *x, *wt, *out, *ref;
    LB_TRY(input(c, xc, -2.0f, 2.0f, &d_x, &x));
    LB_TRY(input(c, wc, -0.5f, 0.5f, &d_w, &wt));
    LB_TRY(output(c, yc, &d_y, &out, &ref));
    if (conv)
        LB_TRY(be->ops->depthwise_conv_seq(be, d_x, ld_x, d_w, d_y, ld_y, batch, n, k, ch));
    else
        LB_TRY(be->ops->pool_seq(be, d_x, ld_x, d_y, ld_y, batch, n, k, ch, mode));
    if (conv)
        lb_depthwise_conv_seq_cpu(x, ld_x, wt, ref, ld_y, batch, n, k, ch);
    else
        lb_pool_seq_cpu(x, ld_x, ref, ld_y, batch, n, k, ch, mode);
    return settle(c, d_y, out, ref, yc);
}

static int check_pool(Ctx *c, const int64_t *s) { return check_seq(c, s, 0); }
static int check_conv(Ctx *c, const int64_t *s) { return check_seq(c, s, 1); }

/* --- the table ------------------------------------------------------------------------------ */

typedef int64_t Shape[8];

typedef struct Op {
    const char *name;
    int (*run)(Ctx *c, const int64_t *s);
    /* relative tolerance by storage type, LbDtype's order (fp16, bf16, fp32), then fp32 with TF32
     * products; 0 asks for bit equality. Ops rounded once to storage from fp32 arithmetic on inputs
     * in storage: the unit roundoff 2^-11 (fp16), 2^-8 (bf16), 2^-24 (fp32) with a margin of 3 to
     * 4, fp32 allowing for exp2f/erff/rsqrtf (2 ulp). Products round once more with GELU; TF32
     * rounds their inputs to 10 mantissa bits (METHOD.md: near 3e-4). */
    double tol[4];
    const Shape *quick, *full;
    size_t nquick, nfull;
} Op;

#define SHAPES(q, f) q, f, sizeof q / sizeof q[0], sizeof f / sizeof f[0]
#define KERNEL_TOL {1e-3, 8e-3, 1e-5, 1e-5}
#define EXACT {0, 0, 0, 0}

/* RoBERTa-like (QKV, FFN up and down), small and odd shapes */
static const Shape linear_q[] = {{37, 50, 70, 1, 1}, {16, 32, 48, 0, 0}};
static const Shape linear_f[] = {{37, 50, 70, 1, 1}, {37, 50, 70, 1, 0}, {16, 32, 48, 0, 0}, {256, 64, 192, 1, 1},
                                 {200, 768, 3072, 1, 1}, {130, 3072, 768, 1, 0}, {1, 64, 5, 1, 0}, {64, 1, 5, 0, 1}};
/* attention's products: scores Q K^T, P V; E broadcast; a batch past one call's 65535 */
static const Shape bmm_q[] = {{0, 1, 37, 45, 29, 3, 3, 0}, {0, 0, 16, 24, 40, 3, 0, 1}};
static const Shape bmm_f[] = {{0, 1, 37, 45, 29, 3, 3, 0},   {0, 0, 37, 45, 29, 3, 3, 0},  {1, 0, 37, 45, 29, 3, 3, 0},
                              {1, 1, 37, 45, 29, 3, 3, 0},   {0, 1, 128, 64, 64, 24, 0, 0}, {1, 0, 128, 64, 64, 24, 0, 0},
                              {0, 1, 200, 200, 16, 8, 0, 0}, {0, 0, 200, 16, 200, 8, 0, 0}, {0, 0, 32, 64, 200, 5, 0, 1},
                              {0, 1, 40, 24, 48, 5, 2, 2},   {0, 1, 2, 3, 4, 70001, 0, 0}};
/* each length a kernel path (group kernel to 128 packs, block kernel to 8 packs per thread x 1024
 * threads, online past that), aligned and not; a larger scale and a tiny one (nearly uniform). A
 * fp32 kernel's exponent argument, scale x rounded to fp32, holds 1e-5 up to a scale near 2. */
static const Shape softmax_q[] = {{4, 200}, {3, 1024}};
static const Shape softmax_f[] = {
    {64, 1},   {64, 3},    {64, 8},    {33, 8, 1},  {64, 17},    {64, 64},    {33, 64, 1}, {64, 200},    {64, 256},
    {64, 1000}, {64, 1024}, {33, 1024, 1}, {64, 1031}, {32, 2048}, {16, 4096}, {9, 4096, 1}, {9, 8192}, {9, 9000},
    {5, 16384}, {4, 16384, 1}, {3, 32768}, {3, 65536}, {3, 100000}, {5, 1000, 0, 1536}, {5, 1000, 0, 1}};
/* RoBERTa's 768, odd widths (the scalar path), widths past the register kernel */
static const Shape layernorm_q[] = {{5, 100, 1}};
static const Shape layernorm_f[] = {{33, 16, 1}, {33, 16, 0}, {33, 64, 1},   {33, 100, 1},  {33, 100, 0},  {33, 768, 1},
                                    {33, 768, 0}, {33, 1024, 1}, {9, 3000, 1}, {9, 3000, 0}, {7, 20000, 1}, {7, 40000, 0},
                                    {33, 768, 1, 1}};
static const Shape embed_q[] = {{2, 16, 32, 100}};
static const Shape embed_f[] = {{2, 16, 32, 100}, {3, 50, 64, 1000}, {2, 37, 100, 1000}, {2, 16, 64, 50265}};
static const Shape split_q[] = {{2, 16, 2, 16, 1}};
static const Shape split_f[] = {{2, 16, 2, 16, 1}, {2, 37, 4, 16, 1}, {3, 20, 12, 64, 2}, {2, 9, 3, 5, 0}};
static const Shape merge_q[] = {{2, 16, 2, 16}};
static const Shape merge_f[] = {{2, 16, 2, 16}, {3, 20, 12, 64}, {2, 9, 3, 5}};
static const Shape count_q[] = {{1001}};
static const Shape count_f[] = {{100003}};
static const Shape gelu_q[] = {{7, 70}};
static const Shape gelu_f[] = {{7, 3000}, {33, 3072}, {17, 77}};
/* m: one feature, under a pack, a pack per lane and more, not a multiple of a warp's packs; head
 * widths below, at and above a warp; one key (its own row is the group); a group longer than the
 * reduction block */
static const Shape favor_q[] = {{3, 17, 24, 16, 0}, {3, 17, 24, 16, 1}};
static const Shape favor_f[] = {{3, 37, 1, 4, 0},    {3, 37, 1, 4, 1},     {3, 37, 5, 32, 0},   {3, 37, 5, 32, 1},
                                {3, 37, 8, 64, 0},   {3, 37, 8, 64, 1},    {2, 9, 8, 64, 1, 1}, {3, 37, 64, 100, 0},
                                {3, 37, 64, 100, 1}, {2, 9, 64, 100, 0, 1}, {3, 37, 100, 4, 0}, {3, 37, 100, 4, 1},
                                {3, 37, 256, 32, 0}, {3, 37, 256, 32, 1},  {3, 37, 300, 64, 0}, {3, 37, 300, 64, 1},
                                {1, 1, 64, 64, 1},   {5, 300, 16, 16, 1},  {4, 130, 64, 64, 1}};
static const Shape divide_q[] = {{37, 16}};
static const Shape divide_f[] = {{131, 1}, {131, 16}, {131, 64}, {131, 65}, {131, 129}};
/* lengths of one row, under one tile, one tile, several with a short last one; every head width */
static const Shape flash_q[] = {{2, 70, 2, 64}};
static const Shape flash_f[] = {{2, 1, 3, 64},  {2, 15, 3, 32}, {2, 15, 3, 128}, {2, 64, 3, 64},  {2, 200, 3, 32},
                                {2, 200, 3, 64}, {2, 200, 3, 128}, {2, 1000, 3, 64}, {1, 65, 2, 16}, {1, 65, 2, 48},
                                {1, 65, 2, 80},  {1, 65, 2, 112}};
/* windows of 1, 4, 7 and 64 positions and all 64 in one */
static const Shape pool_q[] = {{2, 64, 16, 48, 144, 48, 0}, {2, 64, 16, 48, 144, 48, 1}};
static const Shape pool_f[] = {{2, 64, 16, 24, 72, 48, 0}, {2, 64, 64, 40, 40, 40, 0}, {3, 64, 1, 16, 48, 16, 0},
                               {1, 70, 10, 33, 33, 33, 0}, {2, 256, 32, 64, 192, 128, 0}, {2, 64, 16, 24, 72, 48, 1},
                               {2, 64, 64, 40, 40, 40, 1}, {3, 64, 1, 16, 48, 16, 1}, {1, 70, 10, 33, 33, 33, 1},
                               {2, 256, 32, 64, 192, 128, 1}};
static const Shape conv_q[] = {{2, 64, 16, 48, 144, 48, 0}};
static const Shape conv_f[] = {{2, 64, 16, 24, 72, 48, 3}, {2, 64, 64, 40, 40, 40, 0}, {3, 64, 1, 16, 48, 16, 0},
                               {1, 70, 10, 33, 33, 33, 0}, {2, 256, 32, 64, 192, 128, 0}};

static const Op ops_table[] = {
    {"linear", check_linear, {2e-3, 1.5e-2, 1e-5, 2e-3}, SHAPES(linear_q, linear_f)},
    {"bmm", check_bmm, {1e-3, 8e-3, 1e-5, 2e-3}, SHAPES(bmm_q, bmm_f)},
    {"softmax", check_softmax, KERNEL_TOL, SHAPES(softmax_q, softmax_f)},
    {"layernorm", check_layernorm, KERNEL_TOL, SHAPES(layernorm_q, layernorm_f)},
    {"embed", check_embed, KERNEL_TOL, SHAPES(embed_q, embed_f)},
    {"split_heads", check_split, EXACT, SHAPES(split_q, split_f)},
    {"merge_heads", check_merge, EXACT, SHAPES(merge_q, merge_f)},
    {"fill_uniform", check_fill_uniform, EXACT, SHAPES(count_q, count_f)},
    {"fill_tokens", check_fill_tokens, EXACT, SHAPES(count_q, count_f)},
    {"copy", check_copy, EXACT, SHAPES(count_q, count_f)},
    {"gelu", check_gelu, KERNEL_TOL, SHAPES(gelu_q, gelu_f)},
    {"favor_features", check_favor, KERNEL_TOL, SHAPES(favor_q, favor_f)},
    {"divide_by_last", check_divide, KERNEL_TOL, SHAPES(divide_q, divide_f)},
    /* two roundings to storage (P before P V, then the output) and the softmax's sums */
    {"flash_attention", check_flash, {2e-3, 1.6e-2, 2e-5, 2e-5}, SHAPES(flash_q, flash_f)},
    {"pool_seq", check_pool, KERNEL_TOL, SHAPES(pool_q, pool_f)},
    /* a sum of up to 64 products in fp32: a few ulp more than one rounding */
    {"depthwise_conv_seq", check_conv, {1e-3, 8e-3, 2e-5, 2e-5}, SHAPES(conv_q, conv_f)},
};
#define NOPS (sizeof ops_table / sizeof ops_table[0])

/* Whole forward passes (METHOD.md): fp32 against double accumulation over a dozen dependent ops;
 * fp16; bf16, whose unit roundoff is 8 times fp16's; TF32 as fp16 (10 mantissa bits). */
static const double forward_tol[4] = {1e-2, 3e-2, 1e-5, 1e-2};

static double tol_for(const double tol[4], const LbBackend *be)
{
    return be->storage == LB_DTYPE_FP32 && be->tf32 ? tol[3] : tol[be->storage];
}

/* --- forward passes ------------------------------------------------------------------------- */

/* One forward pass of cfg at batch B on be, its output (B, n, d) into out. */
static int forward_once(LbBackend *be, LbModelConfig cfg, int64_t B, uint64_t seed, float *out)
{
    cfg.dtype = be->dtype;
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    LB_TRY(lb_plan_compute(&cfg, &pp, B, &plan));
    LB_TRY(lb_arena_open(&a, be, plan.total));
    int rc = lb_forward_setup(&m, &in, &cfg, be, &a, B, seed);
    if (rc == LB_OK) {
        if ((rc = lb_forward(&m, &a, &in)) == LB_OK && (rc = be->ops->sync(be)) == LB_OK)
            rc = be->ops->download(be, out, in.x, B * cfg.n * cfg.d_model);
        lb_model_release(&m);
    }
    lb_arena_close(&a);
    return rc;
}

/* At batch 2; quick, with the Linformer variant the sweep will run. */
static int check_forward(Ctx *c, LbBackend *cpu, LbModelConfig cfg)
{
    const int64_t B = 2;
    if (c->plan->quick) {
        cfg.sharing = c->plan->sharing;
        cfg.order = c->plan->order;
    }
    snprintf(c->op, sizeof c->op, "forward");
    char model[64];
    lb_model_describe(&cfg, model, sizeof model);
    SHAPE("%s L %d d %d h %d n %lld B %lld", model, cfg.layers, cfg.d_model, cfg.heads, LL(cfg.n), LL(B));
    const int64_t count = B * cfg.n * cfg.d_model;
    float *out, *ref;
    LB_TRY(hostf(c, count, &out));
    LB_TRY(hostf(c, count, &ref));
    const uint64_t seed = next_seed(c);
    LB_TRY(forward_once(c->be, cfg, B, seed, out));
    LB_TRY(forward_once(cpu, cfg, B, seed, ref));
    c->tol = tol_for(forward_tol, c->be);
    return compare(c, out, ref, count);
}

/* --- running it ------------------------------------------------------------------------------- */

/* The check in c->op / c->shape ended with rc: a failed row unless it recorded its own. */
static int finish(Ctx *c, int rc)
{
    release(c);
    if (rc == LB_OK)
        return LB_OK;
    LbCheckRow *r = new_row(c);
    if (!r)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory recording a check");
    r->rel_error = NAN;
    r->threshold = NAN;
    r->ok = 0;
    snprintf(r->error, sizeof r->error, "%s", lb_error_message());
    c->dead = rc == LB_ERR_DEVICE;
    return LB_OK;
}

#define RUN(call)                                          \
    do {                                                   \
        if (!c.dead && (rc = finish(&c, (call))) != LB_OK) \
            goto out;                                      \
    } while (0)

static int wanted(const char *only, const char *name)
{
    const size_t len = strlen(name);
    for (const char *p = only; p && (p = strstr(p, name)) != NULL; p += len)
        if ((p == only || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return only == NULL;
}

/* Products run with the workspace a forward pass hands them; *ws NULL where none. */
static int open_workspace(Ctx *c, void **ws)
{
    LbBackend *be = c->be;
    *ws = NULL;
    snprintf(c->op, sizeof c->op, "workspace");
    SHAPE("%zu bytes", be->workspace_bytes);
    if (!be->ops->set_workspace || be->workspace_bytes == 0)
        return LB_OK;
    LB_TRY(be->ops->mem_alloc(be, be->workspace_bytes, ws));
    const int rc = be->ops->set_workspace(be, *ws, be->workspace_bytes);
    if (rc != LB_OK) {
        be->ops->mem_free(be, *ws);
        *ws = NULL;
    }
    return rc;
}

static void ctx_init(Ctx *c, LbBackend *be, const LbCheckPlan *plan, LbCheckTable *t)
{
    memset(c, 0, sizeof *c);
    c->be = be;
    c->plan = plan;
    c->t = t;
}

double lb_check_tolerance(const char *op, const LbBackend *be)
{
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(ops_table[i].name, op) == 0)
            return tol_for(ops_table[i].tol, be);
    return strcmp(op, "forward") == 0 ? tol_for(forward_tol, be) : NAN;
}

int lb_check_compare(LbBackend *be, const char *op, const char *shape, const float *out, const float *ref,
                     int64_t count, LbCheckTable *t)
{
    Ctx c;
    ctx_init(&c, be, NULL, t);
    snprintf(c.op, sizeof c.op, "%s", op);
    snprintf(c.shape, sizeof c.shape, "%s", shape);
    c.tol = lb_check_tolerance(op, be);
    return compare(&c, out, ref, count);
}

int lb_check_op(LbBackend *be, const LbCheckPlan *plan, const char *op, const int64_t shape[8], LbCheckTable *t)
{
    for (size_t i = 0; i < NOPS; i++) {
        if (strcmp(ops_table[i].name, op) != 0)
            continue;
        Ctx c;
        ctx_init(&c, be, plan, t);
        snprintf(c.op, sizeof c.op, "%s", op);
        c.tol = tol_for(ops_table[i].tol, be);
        return finish(&c, ops_table[i].run(&c, shape));
    }
    return LB_FAIL(LB_ERR_INVALID, "check: no op \"%s\" in the table", op);
}

int lb_check_backend(LbBackend *be, const LbCheckPlan *plan, LbCheckTable *t)
{
    Ctx c;
    ctx_init(&c, be, plan, t);
    const int quick = plan->quick;
    int rc = LB_OK;
    LbBackend *cpu = NULL;
    void *ws = NULL;
    RUN(open_workspace(&c, &ws));
    for (size_t i = 0; i < NOPS; i++) {
        const Op *op = &ops_table[i];
        if (!wanted(plan->only, op->name))
            continue;
        const Shape *shapes = quick ? op->quick : op->full;
        for (size_t j = 0; j < (quick ? op->nquick : op->nfull); j++) {
            snprintf(c.op, sizeof c.op, "%s", op->name);
            c.tol = tol_for(op->tol, be);
            RUN(op->run(&c, shapes[j]));
        }
    }
    /* The forward passes carve their own workspace from their arena: give this one back first,
     * so a device with little memory (a small --mem-limit's worth) still fits them. */
    if (ws) {
        be->ops->mem_free(be, ws);
        ws = NULL;
    }
    /* The CPU backend's forward pass is the reference, so it checks none of its own. */
    if (strcmp(be->ops->name, "cpu") != 0 && !c.dead && wanted(plan->only, "forward")) {
        snprintf(c.op, sizeof c.op, "forward");
        snprintf(c.shape, sizeof c.shape, "CPU reference");
        RUN(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &cpu));
    }
    if (cpu) {
        LbModelConfig m = lb_config_default();
        m.layers = quick ? 1 : 2;
        m.d_model = quick ? 32 : 64;
        m.heads = quick ? 2 : 4;
        m.ffn = quick ? 64 : 128;
        m.vocab = quick ? 100 : 1000;
        m.n = quick ? 32 : 64;
        m.k = quick ? 8 : 16;
        /* Every model of the table: quick, its first variant; otherwise every variant. */
        for (int kind = 0; kind < LB_MODEL_COUNT; kind++) {
            const LbModelDesc *desc = lb_model_desc((LbModelKind)kind);
            for (int v = 0; desc && v < (quick ? 1 : desc->variants); v++) {
                RUN(check_forward(&c, cpu, lb_model_variant((LbModelKind)kind, v, m)));
            }
        }
        /* --k-schedule: three layers of k, k/2 and k/4 (halve), each projecting to its own length
         * through its own E, F and workspace; every model that reads it. */
        for (int kind = 0; (!quick || plan->k_schedule != LB_KSCHED_UNIFORM) && kind < LB_MODEL_COUNT; kind++) {
            if (lb_model_reads_flag((LbModelKind)kind, "k-schedule") != 1)
                continue;
            LbModelConfig cfg = lb_model_variant((LbModelKind)kind, 0, m);
            cfg.layers = 3;
            cfg.k = 2 * m.k;
            cfg.k_schedule = LB_KSCHED_HALVE;
            RUN(check_forward(&c, cpu, cfg));
        }
    }
out:
    release(&c);
    if (ws)
        be->ops->mem_free(be, ws);
    lb_backend_close(cpu);
    return rc;
}

size_t lb_check_summary(const LbCheckTable *t, double *max_rel_error, const LbCheckRow **first_failure)
{
    size_t failures = 0;
    *max_rel_error = 0.0;
    *first_failure = NULL;
    for (size_t i = 0; i < t->count; i++) {
        const LbCheckRow *r = &t->rows[i];
        if (r->rel_error > *max_rel_error) /* false for NaN */
            *max_rel_error = r->rel_error;
        if (!r->ok && failures++ == 0)
            *first_failure = r;
    }
    return failures;
}

void lb_check_table_free(LbCheckTable *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}
