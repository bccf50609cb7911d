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
#include "attn/train.h"
#include "attn/base/status.h"

#define MAX_BUFFERS 16
#define MAX_ARGS 8

typedef struct Arg {
    int kind;
    int64_t count; /* elements (bytes for ARG_SCRATCH) */
    float lo, hi;
    int64_t off;
} Arg; /* an operand of a check (IN ... SCRATCH below) */

typedef struct Ctx {
    LbBackend *be;
    const LbCheckPlan *plan;
    LbCheckTable *t;
    double tol;       /* the running op's, for this storage type */
    uint64_t streams; /* random streams drawn so far */
    char op[32], shape[96];
    int variant; /* the running row's (Op.variant) */
    void *dev[MAX_BUFFERS];
    void *host[MAX_BUFFERS];
    int ndev, nhost;
    int dead; /* a device error: nothing more runs on this backend */
    LbBackend *ref; /* the reference (open_reference) */
    const LbOps *cpu_ops; /* its own ops, for the forward passes */
    LbOps ref_ops;
    Arg arg[MAX_ARGS]; /* the running check's operands: on the backend, on the host */
    void *d[MAX_ARGS];
    float *h[MAX_ARGS];
    int nargs;
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

/* ||out - ref|| / ||ref|| in double, and its limit: the op's tolerance c->tol raised to 3 times
 * the error of rounding ref to the storage type alone (an answer in fp16's subnormal range cannot
 * be closer; ||spacing / sqrt 12|| for uniformly spread rounding errors); tolerance 0 asks for bit
 * equality. Where ref is NaN nothing may be written: out must still hold the poison there. Why
 * (size 200) says what made the error infinite, if anything. */
static double rel_error(const Ctx *c, const float *out, const float *ref, int64_t count, double *threshold, char *why)
{
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
        snprintf(why, 200, "element %lld is %g (unwritten or overflowed)", (long long)bad, (double)out[bad]);
    } else if (outside) {
        err = INFINITY;
        snprintf(why, 200, "%lld elements written outside the output", (long long)outside);
    }
    const double floor_rel = den > 0.0 ? 3.0 * sqrt(floor2 / den) : 0.0;
    *threshold = c->tol == 0.0 ? 0.0 : c->tol > floor_rel ? c->tol : floor_rel;
    return err;
}

/* One row: out against ref (count), by rel_error. */
static int compare(Ctx *c, const float *out, const float *ref, int64_t count)
{
    LbCheckRow *r = new_row(c);
    if (!r)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory recording a check");
    r->rel_error = rel_error(c, out, ref, count, &r->threshold, r->error);
    r->ok = r->rel_error <= r->threshold;
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

static void *at(const LbBackend *be, void *p, int64_t elems) { return (char *)p + elems * (int64_t)be->elem_bytes; }

static uint64_t next_seed(Ctx *c) { return c->plan->seed * 1000003u + 7919u * ++c->streams; }

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

/* int32 ids (count) read as floats, in place: every id below 2^24 is exact. */
static void ids_to_floats(float *x, int64_t count)
{
    for (int64_t i = 0; i < count; i++) {
        int32_t id;
        memcpy(&id, &x[i], sizeof id);
        x[i] = (float)id;
    }
}

#define SHAPE(...) snprintf(c->shape, sizeof c->shape, __VA_ARGS__)
#define LL(v) ((long long)(v))

/* --- the references: the CPU backend's ops (attn/cpu/cpu_ref.h) where they are the textbook loop,
 *     and these naive loops in double where it runs something else (blocked, threaded,
 *     vectorised, its own exp), in the ops table's signatures so that one call serves both. -- */

static double gelu_d(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }

/* y = x w^T + b, summed in double, rounded to float once (as the ops round the product before
 * GELU), then erf GELU. */
static int naive_linear(LbBackend *be, const void *xv, const void *wv, const void *bv, void *yv, int64_t rows,
                        int64_t in, int64_t out, int gelu)
{
    const float *x = xv, *w = wv, *b = bv;
    float *y = yv;
    (void)be;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < out; o++) {
            double s = b ? b[o] : 0.0;
            for (int64_t i = 0; i < in; i++)
                s += (double)x[r * in + i] * (double)w[o * in + i];
            y[r * out + o] = (float)(gelu ? gelu_d((double)(float)s) : s);
        }
    return LB_OK;
}

/* C_i = alpha op(A_i) op(B_i) + beta C_i, or with stride_c 0 one C = alpha sum_i ... + beta C;
 * C not read where beta is 0. */
static int naive_bmm(LbBackend *be, const LbBmm *p)
{
    const float *A = p->a, *B = p->b;
    float *C = p->c;
    const int sum_all = p->stride_c == 0 && p->batch > 1;
    (void)be;
    for (int64_t ic = 0; ic < (sum_all ? 1 : p->batch); ic++)
        for (int64_t r = 0; r < p->m; r++)
            for (int64_t j = 0; j < p->n; j++) {
                double sum = 0.0;
                for (int64_t i = sum_all ? 0 : ic; i < (sum_all ? p->batch : ic + 1); i++)
                    for (int64_t q = 0; q < p->kdim; q++) {
                        const double a = A[i * p->stride_a + (p->trans_a ? q * p->lda + r : r * p->lda + q)];
                        const double b = B[i * p->stride_b + (p->trans_b ? j * p->ldb + q : q * p->ldb + j)];
                        sum += a * b;
                    }
                float *out = &C[ic * p->stride_c + r * p->ldc + j];
                *out = (float)(p->alpha * sum + (p->beta != 0.0f ? (double)p->beta * *out : 0.0));
            }
    return LB_OK;
}

static int naive_softmax(LbBackend *be, void *xv, int64_t rows, int64_t cols, float scale)
{
    (void)be;
    for (int64_t r = 0; r < rows; r++) {
        float *v = (float *)xv + r * cols;
        double mx = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < cols; j++)
            mx = fmax(mx, (double)scale * v[j]);
        for (int64_t j = 0; j < cols; j++)
            sum += exp((double)scale * v[j] - mx);
        for (int64_t j = 0; j < cols; j++)
            v[j] = (float)(exp((double)scale * v[j] - mx) / sum);
    }
    return LB_OK;
}

static int naive_layernorm(LbBackend *be, void *xv, const void *rv, const void *gv, const void *bv, int64_t rows,
                           int64_t d, float eps)
{
    const float *res = rv, *g = gv, *b = bv;
    (void)be;
    for (int64_t r = 0; r < rows; r++) {
        float *v = (float *)xv + r * d;
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
    return LB_OK;
}

static int naive_gelu(LbBackend *be, void *y, int64_t rows, int64_t cols)
{
    float *v = y;
    (void)be;
    for (int64_t i = 0; i < rows * cols; i++)
        v[i] = (float)gelu_d(v[i]);
    return LB_OK;
}

/* The ops open_reference gives naive loops. For the others the reference runs the CPU backend's
 * own, so on the CPU backend their rows would compare an op with itself and cannot fail. */
static const char *const naive_ops[] = {"linear", "bmm", "softmax", "layernorm", "gelu"};

static int has_own_reference(const LbBackend *be, const char *op)
{
    for (size_t i = 0; i < sizeof naive_ops / sizeof naive_ops[0]; i++)
        if (strcmp(op, naive_ops[i]) == 0)
            return 1;
    return strcmp(be->ops->name, "cpu") != 0;
}

/* The reference backend: the CPU backend's ops table with the naive loops above put in. */
static int open_reference(Ctx *c)
{
    LB_TRY(lb_cpu_backend_open(LB_DTYPE_FP32, 0, &c->ref));
    c->cpu_ops = c->ref->ops;
    c->ref_ops = *c->ref->ops;
    c->ref_ops.linear = naive_linear;
    c->ref_ops.bmm = naive_bmm;
    c->ref_ops.softmax = naive_softmax;
    c->ref_ops.layernorm = naive_layernorm;
    c->ref_ops.gelu = naive_gelu;
    c->ref->ops = &c->ref_ops;
    return LB_OK;
}

/* --- the ops: each check names its shape fields s[0..] and its operands, then runs the op once
 *     on the backend and once on the reference, and settles every output. ------------------- */

enum { ARG_IN, ARG_INOUT, ARG_OUT, ARG_IDS, ARG_OUT_IDS, ARG_SCRATCH };

/* Operands: count elements uniform in [lo, hi] drawn on the backend (at `off` elements past an
 * aligned buffer: the scalar paths); an input the op overwrites, compared after; an output,
 * poisoned, compared after; int32 token ids below vocab drawn on the backend; int32 ids the op
 * writes, compared as floats; bytes of scratch (on the host for the reference). */
#define IN(count, lo, hi) {ARG_IN, count, lo, hi, 0}
#define IN_AT(count, lo, hi, off) {ARG_IN, count, lo, hi, off}
#define INOUT(count, lo, hi, off) {ARG_INOUT, count, lo, hi, off}
#define OUT(count) {ARG_OUT, count, 0.0f, 0.0f, 0}
#define IDS(count, vocab) {ARG_IDS, count, 0.0f, (float)(vocab), 0}
#define OUT_IDS(count) {ARG_OUT_IDS, count, 0.0f, 0.0f, 0}
#define SCRATCH(bytes) {ARG_SCRATCH, bytes, 0.0f, 0.0f, 0}

/* The operands, in the order their random values are drawn: on the backend in c->d, as stored
 * (NaN for an output) in c->h. */
static int operands(Ctx *c, const Arg *a, int n)
{
    LbBackend *be = c->be;
    if (n > MAX_ARGS)
        return LB_FAIL(LB_ERR_INVALID, "check: too many operands (internal)");
    c->nargs = n;
    for (int i = 0; i < n; i++) {
        const int64_t count = a[i].count;
        c->arg[i] = a[i];
        c->h[i] = NULL;
        if (a[i].kind == ARG_SCRATCH) { /* the reference's too: backends refuse a NULL scratch */
            LB_TRY(dev(c, count, &c->d[i]));
            LB_TRY(hostf(c, (count + 3) / 4, &c->h[i]));
            continue;
        }
        LB_TRY(hostf(c, count, &c->h[i]));
        if (a[i].kind == ARG_IDS || a[i].kind == ARG_OUT_IDS) {
            LB_TRY(dev(c, count * (int64_t)sizeof(int32_t), &c->d[i]));
            if (a[i].kind == ARG_IDS) {
                LB_TRY(be->ops->fill_tokens(be, c->d[i], count, next_seed(c), (int32_t)a[i].hi));
                LB_TRY(be->ops->copy_raw_to_host(be, c->h[i], c->d[i], (size_t)count * sizeof(int32_t)));
            }
            continue;
        }
        /* exactly the elements, so that one touched past the end shows under a sanitizer */
        LB_TRY(dev(c, (a[i].off + count) * (int64_t)be->elem_bytes, &c->d[i]));
        c->d[i] = at(be, c->d[i], a[i].off);
        if (a[i].kind == ARG_OUT) {
            LB_TRY(poison(c, c->d[i], count));
            continue;
        }
        LB_TRY(be->ops->fill_uniform(be, c->d[i], count, next_seed(c), a[i].lo, a[i].hi));
        LB_TRY(be->ops->download(be, c->h[i], c->d[i], count)); /* the values stored */
    }
    return LB_OK;
}

#define OPERANDS(...) operands(c, (const Arg[]){__VA_ARGS__}, (int)(sizeof((const Arg[]){__VA_ARGS__}) / sizeof(Arg)))

/* The inputs, changed on the host, into the backend and back: the reference sees the values stored. */
static int restore_inputs(Ctx *c)
{
    for (int i = 0; i < c->nargs; i++)
        if (c->arg[i].kind == ARG_IN || c->arg[i].kind == ARG_INOUT)
            LB_TRY(restore(c, c->d[i], c->h[i], c->arg[i].count));
    return LB_OK;
}

/* `call`, an op of the table on `be` with operands p[], run on the backend (its buffers) and then
 * on the reference (the host copies). */
#define ON_BOTH(call)                                                           \
    do {                                                                        \
        for (int side_ = 0; side_ < 2; side_++) {                               \
            LbBackend *be = side_ ? c->ref : c->be;                             \
            void *const *p = side_ ? (void *const *)c->h : (void *const *)c->d; \
            LB_TRY(call);                                                       \
        }                                                                       \
    } while (0)

/* Every output of the backend against the reference's. */
static int settle(Ctx *c)
{
    for (int i = 0; i < c->nargs; i++) {
        const Arg *a = &c->arg[i];
        float *out;
        if (a->kind != ARG_INOUT && a->kind != ARG_OUT && a->kind != ARG_OUT_IDS)
            continue;
        LB_TRY(hostf(c, a->count, &out));
        if (a->kind == ARG_OUT_IDS) {
            LB_TRY(c->be->ops->copy_raw_to_host(c->be, out, c->d[i], (size_t)a->count * sizeof(int32_t)));
            ids_to_floats(out, a->count);
            ids_to_floats(c->h[i], a->count);
        } else {
            LB_TRY(c->be->ops->download(c->be, out, c->d[i], a->count));
        }
        LB_TRY(compare(c, out, c->h[i], a->count));
    }
    return LB_OK;
}

/* linear {rows, in, out, bias, gelu} */
static int check_linear(Ctx *c, const int64_t *s)
{
    const int64_t rows = s[0], in = s[1], out = s[2];
    const float w = 1.0f / sqrtf((float)(in > 0 ? in : 1));
    SHAPE("%lld x %lld -> %lld%s%s%s", LL(rows), LL(in), LL(out), s[3] ? " +bias" : "", s[4] ? " +gelu" : "",
          c->be->tf32 ? " (tf32)" : "");
    LB_TRY(OPERANDS(IN(rows * in, -1.0f, 1.0f), IN(out * in, -w, w), IN(out, -0.5f, 0.5f), OUT(rows * out)));
    ON_BOTH(be->ops->linear(be, p[0], p[1], s[3] ? p[2] : NULL, p[3], rows, in, out, (int)s[4]));
    return settle(c);
}

static int64_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (batch - 1) * stride + rows * ld;
}

/* q on be with A, B, C in p. */
static int bmm_on(LbBackend *be, LbBmm q, void *const *p)
{
    q.a = p[0];
    q.b = p[1];
    q.c = p[2];
    return be->ops->bmm(be, &q);
}

/* bmm {trans_a, trans_b, m, n, kdim, batch, pad, flags}: leading dimensions and batch strides
 * `pad` wider than packed (then alpha 0.75); flags & 3, 1 or 2: stride 0 for A (Linformer's E) or
 * B; flags & 4: beta 0.5 over a random C (else C poisoned: beta 0 must not read it); flags & 8:
 * stride_c 0, the batch summed into one C (a shared matrix's gradient), the first of a batch's
 * worth. Nothing may be written in C's padding, nor past the one C. */
static int check_bmm(Ctx *c, const int64_t *s)
{
    const int64_t pad = s[6], bcast = s[7] & 3;
    LbBmm q = {.trans_a = (int)s[0], .trans_b = (int)s[1], .m = s[2], .n = s[3], .kdim = s[4], .batch = s[5],
               .alpha = pad ? 0.75f : 1.0f, .beta = s[7] & 4 ? 0.5f : 0.0f};
    q.lda = (q.trans_a ? q.m : q.kdim) + pad;
    q.ldb = (q.trans_b ? q.kdim : q.n) + pad;
    q.ldc = q.n + pad;
    q.stride_a = bcast == 1 ? 0 : (q.trans_a ? q.kdim : q.m) * q.lda + pad;
    q.stride_b = bcast == 2 ? 0 : (q.trans_b ? q.n : q.kdim) * q.ldb + pad;
    q.stride_c = s[7] & 8 ? 0 : q.m * q.ldc + pad;
    SHAPE("%s%sm %lld n %lld k %lld batch %lld%s%s%s%s", q.trans_a ? "A^T " : "", q.trans_b ? "B^T " : "", LL(q.m),
          LL(q.n), LL(q.kdim), LL(q.batch), pad ? ", padded" : "", bcast == 1 ? ", A broadcast" : bcast == 2 ? ", B broadcast" : "",
          s[7] & 4 ? ", beta 0.5" : "", s[7] & 8 ? ", summed" : "");
    const int64_t c_count = extent(q.batch, q.m * q.ldc + pad, q.m, q.ldc);
    LB_TRY(OPERANDS(IN(extent(q.batch, q.stride_a, q.trans_a ? q.kdim : q.m, q.lda), -1.0f, 1.0f),
                    IN(extent(q.batch, q.stride_b, q.trans_b ? q.n : q.kdim, q.ldb), -1.0f, 1.0f),
                    q.beta != 0.0f ? (Arg)INOUT(c_count, -1.0f, 1.0f, 0) : (Arg)OUT(c_count)));
    ON_BOTH(bmm_on(be, q, p));
    return settle(c);
}

/* softmax {rows, cols, offset, scale in 1/1024 (0: 0.625)}, at `offset` elements past an aligned
 * buffer (the scalar paths). Scores of the size attention makes, every third row shifted by 100:
 * a kernel that skips the max subtraction overflows fp32's exp, one that takes another row's max
 * underflows. The backward (variant 1): y a softmax's output (rows summing to 1), dy leaning
 * positive so that each row's sum of dy y is far from 0 (a kernel that leaves that term out is
 * far off). */
static int check_softmax(Ctx *c, const int64_t *s)
{
    const int64_t rows = s[0], cols = s[1];
    const float scale = s[3] ? (float)s[3] / 1024.0f : 0.625f;
    SHAPE("%lld x %lld%s", LL(rows), LL(cols), s[2] ? " (unaligned)" : "");
    if (s[3] || c->variant)
        snprintf(c->shape + strlen(c->shape), sizeof c->shape - strlen(c->shape), " scale %g", (double)scale);
    if (c->variant)
        LB_TRY(OPERANDS(IN_AT(rows * cols, 0.05f, 1.0f, s[2]), INOUT(rows * cols, -0.5f, 1.5f, s[2])));
    else
        LB_TRY(OPERANDS(INOUT(rows * cols, -8.0f, 8.0f, s[2])));
    for (int64_t r = 0; r < rows; r++) {
        float *x = c->h[0] + r * cols;
        double sum = 0.0;
        for (int64_t j = 0; c->variant && j < cols; j++)
            sum += x[j];
        for (int64_t j = 0; j < cols; j++)
            x[j] = c->variant ? (float)(x[j] / sum) : x[j] + 100.0f * (float)(r % 3);
    }
    LB_TRY(restore_inputs(c));
    if (c->variant)
        ON_BOTH(be->ops->softmax_backward(be, p[0], p[1], rows, cols, scale));
    else
        ON_BOTH(be->ops->softmax(be, p[0], rows, cols, scale));
    return settle(c);
}

/* layernorm {rows, d, residual, offset}: an offset mean, so a kernel that forgets to subtract it
 * shows. The backward (variant 1) {..., in place}: dv apart from dy (then dy compared too: it
 * must stay as it was) or dy itself. */
static int check_layernorm(Ctx *c, const int64_t *s)
{
    const int64_t rows = s[0], d = s[1], off = s[3];
    SHAPE("%lld x %lld%s%s%s", LL(rows), LL(d), s[2] ? " +residual" : "", off ? " (unaligned)" : "",
          s[4] ? " dv = dy" : "");
    if (!c->variant) {
        LB_TRY(OPERANDS(INOUT(rows * d, -1.0f, 3.0f, off), IN_AT(rows * d, -1.0f, 1.0f, off), IN(d, 0.5f, 1.5f),
                        IN(d, -0.5f, 0.5f)));
        ON_BOTH(be->ops->layernorm(be, p[0], s[2] ? p[1] : NULL, p[2], p[3], rows, d, LB_LAYERNORM_EPS));
        return settle(c);
    }
    const Arg a[] = {IN_AT(rows * d, -1.0f, 3.0f, off), IN_AT(rows * d, -1.0f, 1.0f, off), IN(d, 0.5f, 1.5f),
                     INOUT(rows * d, -1.0f, 1.0f, off), OUT(d), OUT(d),
                     SCRATCH((int64_t)lb_layernorm_backward_scratch_bytes(rows, d)), OUT(rows * d)};
    LB_TRY(operands(c, a, s[4] ? 7 : 8));
    ON_BOTH(be->ops->layernorm_backward(be, p[0], s[2] ? p[1] : NULL, p[2], p[3], s[4] ? p[3] : p[7], p[4], p[5],
                                        rows, d, LB_LAYERNORM_EPS, p[6]));
    return settle(c);
}

/* embed {batch, n, d, vocab}: x = tok[id] + pos, one float addition. The backward (variant 1):
 * vocabularies smaller than the positions, so ids repeat and rows of absent ids must still be
 * written; more positions than one chunk of the GPU's sort. */
static int check_embed(Ctx *c, const int64_t *s)
{
    const int64_t batch = s[0], n = s[1], d = s[2], vocab = s[3];
    SHAPE("B %lld n %lld d %lld vocab %d", LL(batch), LL(n), LL(d), (int)vocab);
    if (c->variant) {
        LB_TRY(OPERANDS(IDS(batch * n, vocab), IN(batch * n * d, -1.0f, 1.0f), OUT(vocab * d), OUT(n * d),
                        SCRATCH((int64_t)lb_embed_backward_scratch_bytes(batch, n, vocab))));
        ON_BOTH(be->ops->embed_backward(be, p[0], p[1], p[2], p[3], batch, n, d, vocab, p[4]));
    } else {
        LB_TRY(OPERANDS(IN(vocab * d, -1.0f, 1.0f), IN(n * d, -1.0f, 1.0f), OUT(batch * n * d),
                        IDS(batch * n, vocab)));
        ON_BOTH(be->ops->embed(be, p[3], p[0], p[1], p[2], batch, n, d));
    }
    return settle(c);
}

/* split_heads {batch, n, heads, hd, which}: Q, K or V (column block `which`) of a fused (B n,
 * 3 h hd) buffer into (B, h, n, hd); merge_heads (variant 1) {batch, n, heads, hd}: back to
 * (B, n, h hd). Pure copies: bit for bit. */
static int check_heads(Ctx *c, const int64_t *s)
{
    const int64_t batch = s[0], n = s[1], heads = s[2], hd = s[3], which = s[4], d = heads * hd;
    const int merge = c->variant;
    SHAPE("B %lld n %lld heads %lld hd %lld", LL(batch), LL(n), LL(heads), LL(hd));
    LB_TRY(OPERANDS(IN(batch * n * (merge ? d : 3 * d), -1.0f, 1.0f), OUT(batch * n * d)));
    if (merge)
        ON_BOTH(be->ops->merge_heads(be, p[0], p[1], batch, n, heads, hd));
    else
        ON_BOTH(be->ops->split_heads(be, at(be, p[0], which * d), 3 * d, p[1], batch, n, heads, hd));
    return settle(c);
}

/* fill_uniform {count}: lb_rng_range rounded to storage, bit for bit (the host rounding of upload
 * is the kernel's); fill_tokens (variant 1): lb_rng_token exactly. */
static int check_fill(Ctx *c, const int64_t *s)
{
    const uint64_t seed = next_seed(c);
    SHAPE("%lld", LL(s[0]));
    if (c->variant) {
        LB_TRY(OPERANDS(OUT_IDS(s[0])));
        ON_BOTH(be->ops->fill_tokens(be, p[0], s[0], seed, 50265));
        return settle(c);
    }
    LB_TRY(OPERANDS(OUT(s[0]), SCRATCH(s[0] * (int64_t)c->be->elem_bytes)));
    ON_BOTH(be->ops->fill_uniform(be, p[0], s[0], seed, -0.3f, 0.7f));
    LB_TRY(restore(c, c->d[1], c->h[0], s[0]));
    return settle(c);
}

/* copy {count} (calibration's bandwidth op): device to device, bit for bit. */
static int check_copy(Ctx *c, const int64_t *s)
{
    SHAPE("%lld bytes", LL(s[0]) * (long long)c->be->elem_bytes);
    LB_TRY(OPERANDS(IN(s[0], -1.0f, 1.0f), OUT(s[0])));
    ON_BOTH(be->ops->copy(be, p[1], p[0], (size_t)s[0] * be->elem_bytes));
    return settle(c);
}

/* gelu {rows, cols} (the pass a breakdown times apart from linear's product), in place; its
 * backward (variant 1) {rows, cols, offset}: z over GELU's bend, d = dy in place. */
static int check_gelu(Ctx *c, const int64_t *s)
{
    const int64_t count = s[0] * s[1];
    SHAPE("%lld x %lld%s", LL(s[0]), LL(s[1]), s[2] ? " (unaligned)" : "");
    if (c->variant) {
        LB_TRY(OPERANDS(IN_AT(count, -4.0f, 4.0f, s[2]), INOUT(count, -1.0f, 1.0f, s[2])));
        ON_BOTH(be->ops->gelu_backward(be, p[0], p[1], s[0], s[1]));
    } else {
        LB_TRY(OPERANDS(INOUT(count, -4.0f, 4.0f, 0)));
        ON_BOTH(be->ops->gelu(be, p[0], s[0], s[1]));
    }
    return settle(c);
}

/* favor_features {groups, n, m, hd, keys, offset}: FAVOR+'s features in place, for queries (a max
 * per row) or keys (one per group, through the op's scratch). Queries every third row shifted by
 * +6, keys every group by -3 g and one row of each by +4: a kernel that takes another row's or
 * group's max is far off. */
static int check_favor(Ctx *c, const int64_t *s)
{
    const int64_t groups = s[0], n = s[1], m = s[2], hd = s[3], off = s[5];
    const int keys = (int)s[4];
    SHAPE("%lld groups x %lld x %lld, hd %lld, %s%s", LL(groups), LL(n), LL(m), LL(hd), keys ? "keys" : "queries",
          off ? " (unaligned)" : "");
    const float scale = (float)pow((double)hd, -0.25);
    LB_TRY(OPERANDS(INOUT(groups * n * m, -3.0f, 3.0f, off), IN(groups * n * hd, -1.5f, 1.5f),
                    SCRATCH(keys ? (int64_t)lb_favor_stat_bytes(groups, n) : 0)));
    for (int64_t g = 0; g < groups; g++)
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < m; j++)
                c->h[0][(g * n + r) * m + j] += keys ? -3.0f * (float)g + (r == (g * 7) % n ? 4.0f : 0.0f) : 6.0f * (float)(r % 3);
    LB_TRY(restore_inputs(c));
    ON_BOTH(be->ops->favor_features(be, p[0], p[1], keys ? p[2] : NULL, groups, n, m, hd, scale, keys));
    return settle(c);
}

/* divide_by_last {rows, cols}: x (rows, cols + 1) over its last column, a positive normaliser of
 * a different size per row (a kernel that divides by another row's shows); its backward (variant
 * 1) from a random dy. */
static int check_divide(Ctx *c, const int64_t *s)
{
    const int64_t rows = s[0], cols = s[1];
    SHAPE("%lld x %lld + 1", LL(rows), LL(cols));
    if (c->variant)
        LB_TRY(OPERANDS(IN(rows * (cols + 1), -1.0f, 1.0f), IN(rows * cols, -1.0f, 1.0f), OUT(rows * (cols + 1))));
    else
        LB_TRY(OPERANDS(IN(rows * (cols + 1), -1.0f, 1.0f), OUT(rows * cols)));
    for (int64_t r = 0; r < rows; r++)
        c->h[0][r * (cols + 1) + cols] = 0.25f + 4.0f * fabsf(c->h[0][r * (cols + 1) + cols]);
    LB_TRY(restore_inputs(c));
    if (c->variant)
        ON_BOTH(be->ops->divide_by_last_backward(be, p[0], p[1], p[2], rows, cols));
    else
        ON_BOTH(be->ops->divide_by_last(be, p[0], p[1], rows, cols));
    return settle(c);
}

/* flash_attention {batch, n, heads, hd}: Q, K, V read in place from one fused buffer (operand 0)
 * as the flash model lays it out, keys growing with their position so a row's maximum score rises
 * tile by tile (a kernel that does not rescale its running output is far off), into o (1).
 * FLASH_LSE: o, and each row's log-sum-exp against the CPU's in double; the lse is fp32 whatever
 * the storage, poisoned with the storage's NaN bytes (fp16's read as fp32 are a huge number, which
 * fails as well). FLASH_BACKWARD: each side's forward keeps its own o and lse, then dQ, dK, dV
 * from dO (3) into one fused gradient (2), poisoned, so a tile written to another head leaves NaN
 * where it belonged; against the CPU's FlashAttention-2 backward in double. */
enum { FLASH_LSE = 1, FLASH_BACKWARD = 2 };

static int check_flash(Ctx *c, const int64_t *s)
{
    const int64_t batch = s[0], n = s[1], heads = s[2], hd = s[3], width = heads * hd, ld = 3 * width;
    const int64_t rows = batch * heads * n;
    const float scale = 1.0f / sqrtf((float)hd);
    SHAPE("B %lld n %lld h %lld hd %lld", LL(batch), LL(n), LL(heads), LL(hd));
    const Arg a[] = {IN(batch * n * ld, -2.0f, 2.0f), OUT(batch * n * width), OUT(batch * n * ld),
                     IN(batch * n * width, -1.0f, 1.0f)};
    LB_TRY(operands(c, a, c->variant == FLASH_BACKWARD ? 4 : 2));
    for (int64_t r = 0; r < batch * n; r++)
        for (int64_t e = 0; e < width; e++)
            c->h[0][r * ld + width + e] *= 0.5f + 2.0f * (float)(r % n) / (float)n;
    LB_TRY(restore_inputs(c));
    if (!c->variant) {
        ON_BOTH(be->ops->flash_attention(be, p[0], at(be, p[0], width), at(be, p[0], 2 * width), ld, p[1], batch, n,
                                         heads, hd, scale));
        return settle(c);
    }
    void *lse, *scratch;
    float *lse_ref, *out;
    LB_TRY(dev(c, rows * 4, &lse));
    LB_TRY(poison(c, lse, rows * 4 / (int64_t)c->be->elem_bytes));
    LB_TRY(hostf(c, rows, &lse_ref));
    ON_BOTH(be->ops->flash_attention_lse(be, p[0], at(be, p[0], width), at(be, p[0], 2 * width), ld, p[1],
                                         side_ ? lse_ref : (float *)lse, batch, n, heads, hd, scale));
    if (c->variant == FLASH_LSE) {
        LB_TRY(settle(c));
        snprintf(c->shape + strlen(c->shape), sizeof c->shape - strlen(c->shape), ", lse");
        LB_TRY(hostf(c, rows, &out));
        LB_TRY(c->be->ops->copy_raw_to_host(c->be, out, lse, (size_t)rows * 4u));
        return compare(c, out, lse_ref, rows);
    }
    LB_TRY(dev(c, (int64_t)lb_flash_backward_scratch_bytes(batch, n, heads, hd), &scratch));
    ON_BOTH(be->ops->flash_attention_backward(be, p[0], at(be, p[0], width), at(be, p[0], 2 * width), ld, p[1],
                                              side_ ? lse_ref : lse, p[3], p[2], at(be, p[2], width),
                                              at(be, p[2], 2 * width), batch, n, heads, hd, scale,
                                              side_ ? NULL : scratch));
    c->arg[1].kind = ARG_IN; /* o was checked by flash_attention_lse's rows */
    return settle(c);
}

/* pool_seq and depthwise_conv_seq (variant SEQ_CONV), and their backwards (SEQ_BACKWARD):
 * {batch, n, k, channels, ld_x, ld_y, mode or extra taps}: keys read in place with a row stride
 * wider than the channels (the fused Q/K/V output), written with one (K' and V' side by side);
 * pool_seq's mode (LbPoolMode), or the convolution's taps past the window (the k schedule's
 * smaller k reads the first ones). The backward's dx is laid out as x, its elements between rows
 * left alone (NaN in the reference, so one written there fails the row). */
enum { SEQ_CONV = 1, SEQ_BACKWARD = 2 };

static int check_seq(Ctx *c, const int64_t *s)
{
    const int64_t batch = s[0], n = s[1], k = s[2], ch = s[3], ld_x = s[4], ld_y = s[5], w = n / k;
    const int conv = c->variant & SEQ_CONV, mode = conv ? 2 : (int)s[6];
    SHAPE("%sB %lld n %lld k %lld C %lld ld %lld/%lld", conv ? "" : mode == LB_POOL_MAX ? "max " : "mean ", LL(batch),
          LL(n), LL(k), LL(ch), LL(ld_x), LL(ld_y));
    if (!(c->variant & SEQ_BACKWARD)) {
        LB_TRY(OPERANDS(IN(batch * n * ld_x, -2.0f, 2.0f), IN((w + (conv ? s[6] : 0)) * ch, -0.5f, 0.5f),
                        OUT(batch * k * ld_y)));
        if (conv)
            ON_BOTH(be->ops->depthwise_conv_seq(be, p[0], ld_x, p[1], p[2], ld_y, batch, n, k, ch));
        else
            ON_BOTH(be->ops->pool_seq(be, p[0], ld_x, p[2], ld_y, batch, n, k, ch, mode));
        return settle(c);
    }
    const Arg a[] = {IN(batch * n * ld_x, -2.0f, 2.0f), IN(batch * k * ld_y, -1.0f, 1.0f), OUT(batch * n * ld_x),
                     IN((w + s[6]) * ch, -0.5f, 0.5f), OUT(w * ch),
                     SCRATCH((int64_t)lb_depthwise_conv_seq_backward_scratch_bytes(n, k, ch))};
    LB_TRY(operands(c, a, conv ? 6 : 3)); /* pooling: x, dy, dx */
    if (conv)
        ON_BOTH(be->ops->depthwise_conv_seq_backward(be, p[0], ld_x, p[3], p[1], ld_y, p[2], p[4], batch, n, k, ch,
                                                     p[5]));
    else
        ON_BOTH(be->ops->pool_seq_backward(be, p[0], ld_x, p[1], ld_y, p[2], batch, n, k, ch, mode));
    return settle(c);
}

/* --- the training step's backward: each op's gradients against cpu_backward.h's references (the
 *     CPU backend's entries), from a random upstream gradient. ------------------------------- */

/* favor_features_backward {groups, n, m, hd, offset}: phi positive as the features are, dphi
 * leaning positive so that a row's sum does not cancel to its rounding. */
static int check_favor_backward(Ctx *c, const int64_t *s)
{
    const int64_t groups = s[0], n = s[1], m = s[2], hd = s[3], off = s[4];
    SHAPE("%lld groups x %lld x %lld, hd %lld%s", LL(groups), LL(n), LL(m), LL(hd), off ? " (unaligned)" : "");
    const float scale = (float)pow((double)hd, -0.25);
    LB_TRY(OPERANDS(IN_AT(groups * n * m, 0.01f, 1.0f, off), IN(groups * n * hd, -1.5f, 1.5f),
                    INOUT(groups * n * m, -0.5f, 1.0f, off), OUT(groups * n * hd)));
    ON_BOTH(be->ops->favor_features_backward(be, p[0], p[1], p[2], p[3], groups, n, m, hd, scale));
    return settle(c);
}

/* add {count, offset}: y += x, one rounding. */
static int check_add(Ctx *c, const int64_t *s)
{
    SHAPE("%lld%s", LL(s[0]), s[1] ? " (unaligned)" : "");
    LB_TRY(OPERANDS(IN_AT(s[0], -1.0f, 1.0f, s[1]), INOUT(s[0], -1.0f, 1.0f, s[1])));
    ON_BOTH(be->ops->add(be, p[0], p[1], s[0]));
    return settle(c);
}

/* column_sums {rows, cols}: no rows (the sums are 0, still written), fewer rows than
 * LB_GRAD_PARTS and more, not a multiple of them. */
static int check_column_sums(Ctx *c, const int64_t *s)
{
    const int64_t rows = s[0], cols = s[1];
    SHAPE("%lld x %lld", LL(rows), LL(cols));
    LB_TRY(OPERANDS(IN(rows * cols, -1.0f, 1.0f), OUT(cols), SCRATCH((int64_t)lb_column_sums_scratch_bytes(rows, cols))));
    ON_BOTH(be->ops->column_sums(be, p[0], p[1], rows, cols, p[2]));
    return settle(c);
}


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
    int variant; /* what a run function shared by several ops runs (c->variant) */
} Op;

#define SHAPES_V(q, f, variant) q, f, sizeof q / sizeof q[0], sizeof f / sizeof f[0], variant
#define SHAPES(q, f) SHAPES_V(q, f, 0)
#define KERNEL_TOL {1e-3, 8e-3, 1e-5, 1e-5}
#define EXACT {0, 0, 0, 0}
#define GRAD_TOL {1e-3, 8e-3, 2e-5, 2e-5}

/* RoBERTa-like (QKV, FFN up and down), small and odd shapes */
static const Shape linear_q[] = {{37, 50, 70, 1, 1}, {16, 32, 48, 0, 0}};
static const Shape linear_f[] = {{37, 50, 70, 1, 1}, {37, 50, 70, 1, 0}, {16, 32, 48, 0, 0}, {256, 64, 192, 1, 1},
                                 {200, 768, 3072, 1, 1}, {130, 3072, 768, 1, 0}, {1, 64, 5, 1, 0}, {64, 1, 5, 0, 1}};
/* attention's products: scores Q K^T, P V; E broadcast; a batch past one call's 65535 */
static const Shape bmm_q[] = {{0, 1, 37, 45, 29, 3, 3, 0}, {0, 0, 16, 24, 40, 3, 0, 1}, {1, 0, 64, 48, 37, 5, 0, 8},
                              {0, 1, 37, 45, 29, 3, 3, 12}};
static const Shape bmm_f[] = {{0, 1, 37, 45, 29, 3, 3, 0},   {0, 0, 37, 45, 29, 3, 3, 0},  {1, 0, 37, 45, 29, 3, 3, 0},
                              {1, 1, 37, 45, 29, 3, 3, 0},   {0, 1, 128, 64, 64, 24, 0, 0}, {1, 0, 128, 64, 64, 24, 0, 0},
                              {0, 1, 200, 200, 16, 8, 0, 0}, {0, 0, 200, 16, 200, 8, 0, 0}, {0, 0, 32, 64, 200, 5, 0, 1},
                              {0, 1, 40, 24, 48, 5, 2, 2},   {0, 1, 2, 3, 4, 70001, 0, 0},
                              /* the backward's: beta 1/2 over C, batch sums in one product (A^T B over
                               * stacked rows) and a product per entry (the rest) */
                              {0, 1, 37, 45, 29, 3, 3, 4},   {1, 0, 32, 64, 200, 1, 0, 4}, {1, 0, 64, 48, 37, 5, 0, 8},
                              {1, 0, 64, 48, 37, 5, 0, 12},  {0, 1, 37, 45, 29, 3, 3, 12}, {0, 0, 37, 45, 29, 3, 0, 8},
                              {1, 1, 37, 45, 29, 3, 3, 8},   {0, 0, 16, 24, 40, 3, 0, 9}};
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
/* the backward: lengths of one row, under a tile and past it by a few rows; head widths of each
 * step of the other side's rows (LB_FLASH_BWD_INNER: 64 to d_h 64, 32 to 96, 16 past) */
static const Shape flash_bwd_q[] = {{2, 70, 2, 64}};
static const Shape flash_bwd_f[] = {{1, 1, 2, 16},  {2, 70, 3, 16}, {2, 70, 3, 64},  {1, 130, 3, 64}, {2, 70, 3, 128},
                                    {1, 65, 2, 80}, {1, 65, 2, 112}, {1, 200, 2, 32}};
/* windows of 1, 4, 7 and 64 positions and all 64 in one */
static const Shape pool_q[] = {{2, 64, 16, 48, 144, 48, 0}, {2, 64, 16, 48, 144, 48, 1}};
static const Shape pool_f[] = {{2, 64, 16, 24, 72, 48, 0}, {2, 64, 64, 40, 40, 40, 0}, {3, 64, 1, 16, 48, 16, 0},
                               {1, 70, 10, 33, 33, 33, 0}, {2, 256, 32, 64, 192, 128, 0}, {2, 64, 16, 24, 72, 48, 1},
                               {2, 64, 64, 40, 40, 40, 1}, {3, 64, 1, 16, 48, 16, 1}, {1, 70, 10, 33, 33, 33, 1},
                               {2, 256, 32, 64, 192, 128, 1}};
static const Shape conv_q[] = {{2, 64, 16, 48, 144, 48, 0}};
static const Shape conv_f[] = {{2, 64, 16, 24, 72, 48, 3}, {2, 64, 64, 40, 40, 40, 0}, {3, 64, 1, 16, 48, 16, 0},
                               {1, 70, 10, 33, 33, 33, 0}, {2, 256, 32, 64, 192, 128, 0}};
/* a vocabulary of 7 (every id many times), wide and odd rows, 900 positions (two chunks of the
 * GPU's sort), RoBERTa's vocabulary (most rows empty) */
static const Shape embed_backward_q[] = {{2, 16, 32, 7}};
static const Shape embed_backward_f[] = {{2, 16, 32, 7}, {2, 16, 33, 100}, {3, 300, 16, 50}, {2, 37, 64, 1000},
                                         {2, 16, 64, 50265}};
/* check_seq's shapes; the convolution's also past LB_GRAD_PARTS rows of dy, not a multiple of it */
static const Shape conv_backward_f[] = {{2, 64, 16, 24, 72, 48, 3}, {2, 64, 64, 40, 40, 40, 0}, {3, 64, 1, 16, 48, 16, 0},
                                        {1, 70, 10, 33, 33, 33, 0}, {2, 256, 32, 64, 192, 128, 0},
                                        {5, 128, 64, 24, 24, 24, 1}};
static const Shape favor_backward_q[] = {{3, 17, 24, 16}};
static const Shape favor_backward_f[] = {{3, 37, 1, 4},   {3, 37, 5, 32},  {3, 37, 64, 100, 1}, {3, 37, 256, 64},
                                         {3, 37, 300, 64}, {1, 1, 64, 64}, {4, 130, 64, 64}};

static const Shape add_f[] = {{1}, {1001}, {100003}, {1001, 1}};
static const Shape column_sums_q[] = {{300, 37}};
static const Shape column_sums_f[] = {{0, 8}, {1, 5}, {37, 70}, {300, 37}, {1000, 768}, {5000, 3}, {256, 1}};
static const Shape gelu_backward_f[] = {{7, 3000}, {33, 3072}, {17, 77}, {17, 77, 1}};
/* a row under a warp, past one block's 1024 threads; aligned and not; scales as check_softmax */
static const Shape softmax_backward_q[] = {{4, 200}};
static const Shape softmax_backward_f[] = {{64, 1},   {33, 17, 1}, {64, 64},   {9, 1000},
                                           {3, 4096}, {3, 5000, 1}, {5, 1000, 0, 1536}, {5, 1000, 0, 1}};
/* check_layernorm's widths; more rows than LB_GRAD_PARTS; none (dgamma and dbeta 0) */
static const Shape layernorm_backward_f[] = {{33, 16, 1},      {33, 100, 0}, {33, 768, 1},   {33, 768, 1, 0, 1},
                                             {9, 3000, 1, 1},  {300, 64, 1}, {7, 2000, 0, 0, 1}, {0, 16, 1}};

static const Op ops_table[] = {
    {"linear", check_linear, {2e-3, 1.5e-2, 1e-5, 2e-3}, SHAPES(linear_q, linear_f)},
    {"bmm", check_bmm, {1e-3, 8e-3, 1e-5, 2e-3}, SHAPES(bmm_q, bmm_f)},
    {"softmax", check_softmax, KERNEL_TOL, SHAPES(softmax_q, softmax_f)},
    {"layernorm", check_layernorm, KERNEL_TOL, SHAPES(layernorm_q, layernorm_f)},
    {"embed", check_embed, KERNEL_TOL, SHAPES(embed_q, embed_f)},
    {"split_heads", check_heads, EXACT, SHAPES(split_q, split_f)},
    {"merge_heads", check_heads, EXACT, SHAPES_V(merge_q, merge_f, 1)},
    {"fill_uniform", check_fill, EXACT, SHAPES(count_q, count_f)},
    {"fill_tokens", check_fill, EXACT, SHAPES_V(count_q, count_f, 1)},
    {"copy", check_copy, EXACT, SHAPES(count_q, count_f)},
    {"gelu", check_gelu, KERNEL_TOL, SHAPES(gelu_q, gelu_f)},
    {"favor_features", check_favor, KERNEL_TOL, SHAPES(favor_q, favor_f)},
    {"divide_by_last", check_divide, KERNEL_TOL, SHAPES(divide_q, divide_f)},
    /* two roundings to storage (P before P V, then the output) and the softmax's sums */
    {"flash_attention", check_flash, {2e-3, 1.6e-2, 2e-5, 2e-5}, SHAPES(flash_q, flash_f)},
    {"pool_seq", check_seq, KERNEL_TOL, SHAPES(pool_q, pool_f)},
    /* a sum of up to 64 products in fp32: a few ulp more than one rounding */
    {"depthwise_conv_seq", check_seq, {1e-3, 8e-3, 2e-5, 2e-5}, SHAPES_V(conv_q, conv_f, SEQ_CONV)},
    /* the training step's backward: sums in fp32 of a few to a few thousand terms, rounded once */
    {"add", check_add, KERNEL_TOL, SHAPES(count_q, add_f)},
    {"column_sums", check_column_sums, GRAD_TOL, SHAPES(column_sums_q, column_sums_f)},
    {"gelu_backward", check_gelu, KERNEL_TOL, SHAPES_V(gelu_q, gelu_backward_f, 1)},
    {"softmax_backward", check_softmax, GRAD_TOL, SHAPES_V(softmax_backward_q, softmax_backward_f, 1)},
    {"layernorm_backward", check_layernorm, GRAD_TOL, SHAPES_V(layernorm_q, layernorm_backward_f, 1)},
    {"embed_backward", check_embed, GRAD_TOL, SHAPES_V(embed_backward_q, embed_backward_f, 1)},
    {"pool_seq_backward", check_seq, KERNEL_TOL, SHAPES_V(pool_q, pool_f, SEQ_BACKWARD)},
    {"depthwise_conv_seq_backward", check_seq, GRAD_TOL, SHAPES_V(conv_q, conv_backward_f, SEQ_CONV | SEQ_BACKWARD)},
    {"favor_features_backward", check_favor_backward, GRAD_TOL, SHAPES(favor_backward_q, favor_backward_f)},
    {"divide_by_last_backward", check_divide, GRAD_TOL, SHAPES_V(divide_q, divide_f, 1)},
    /* P and dS rounded to storage for their products, each gradient once more: the emulated
     * device's errors were near 4e-4 (fp16), 3.3e-3 (bf16), 1.6e-6 (fp32, CUDA cores) */
    {"flash_attention_backward", check_flash, {2e-3, 1.6e-2, 1e-5, 1e-5},
     SHAPES_V(flash_bwd_q, flash_bwd_f, FLASH_BACKWARD)},
    {"flash_attention_lse", check_flash, {2e-3, 1.6e-2, 2e-5, 2e-5}, SHAPES_V(flash_bwd_q, flash_bwd_f, FLASH_LSE)},
    /* Whole forward passes (METHOD.md), run by check_pass: fp32 against double accumulation over
     * a dozen dependent ops; fp16; bf16, whose unit roundoff is 8 times fp16's; TF32 as fp16. */
    {.name = "forward", .tol = {1e-2, 3e-2, 1e-5, 1e-2}},
    /* A training step's gradients, tensor by tensor: the forward's ops, then about twice as many
     * dependent ones back, each rounding to storage. The emulated GPU's worst over six seeds of
     * every model but max pooling's (tests/gpu/test_gpu_train.c): 6e-7 fp32, 1.9e-3 fp16, 1.5e-2
     * bf16. */
    {.name = "train", .tol = {1e-2, 6e-2, 1e-5, 1e-2}},
};
#define NOPS (sizeof ops_table / sizeof ops_table[0])

static const Op *find_op(const char *name)
{
    for (size_t i = 0; i < NOPS; i++)
        if (strcmp(ops_table[i].name, name) == 0)
            return &ops_table[i];
    return NULL;
}

/* The checks that follow are o's (NULL: an op of no tolerance). */
static void begin(Ctx *c, const char *name, const Op *o)
{
    const LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "%s", name);
    c->tol = !o ? NAN : be->storage == LB_DTYPE_FP32 && be->tf32 ? o->tol[3] : o->tol[be->storage];
    c->variant = o ? o->variant : 0;
}

/* --- forward passes and training steps ------------------------------------------------------ */

void lb_check_grads_free(LbCheckGrads *g)
{
    for (int64_t i = 0; g->refs && i < g->count; i++)
        free(g->refs[i].ptr);
    free(g->refs);
    free(g->dy);
    memset(g, 0, sizeof *g);
}

/* count elements of be's storage at src as floats in a new *out (NULL if none could be had). */
static int download_new(LbBackend *be, const void *src, int64_t count, float **out)
{
    if (!(*out = malloc((size_t)(count > 0 ? count : 1) * sizeof **out)))
        return LB_FAIL(LB_ERR_NOMEM, "check: out of host memory (%lld floats)", LL(count));
    return be->ops->download(be, *out, src, count);
}

/* t's gradients and dy (count elements) into g, the names and shapes from the gradient model. */
static int download_grads(LbBackend *be, const LbTrain *t, int64_t count, LbCheckGrads *g)
{
    const int64_t tensors = lb_model_tensors(&t->grads, NULL, 0);
    if (!(g->refs = calloc((size_t)(tensors > 0 ? tensors : 1), sizeof *g->refs)))
        return LB_FAIL(LB_ERR_NOMEM, "check: out of host memory for the tensor list");
    const int64_t listed = lb_model_tensors(&t->grads, g->refs, tensors);
    for (int64_t i = 0; i < listed; i++) {
        LbTensorRef *r = &g->refs[i];
        const void *d = r->ptr;
        float *h;
        const int rc = download_new(be, d, r->rows * r->cols, &h);
        r->ptr = h;
        g->count = i + 1; /* the host copies lb_check_grads_free frees */
        LB_TRY(rc);
    }
    return download_new(be, t->dy, count, &g->dy);
}

/* One pass of cfg at batch B on be from seed: with g NULL a forward pass, its output (B, n, d)
 * into out; otherwise a training step, its gradients into g. */
static int pass_once(LbBackend *be, LbModelConfig cfg, int64_t B, uint64_t seed, float *out, LbCheckGrads *g)
{
    cfg.dtype = be->dtype;
    cfg.pass = g ? LB_PASS_TRAIN : LB_PASS_FORWARD;
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbOnePass p = {0};
    LB_TRY(lb_plan_compute(&cfg, &pp, B, &plan));
    LB_TRY(lb_arena_open(&a, be, plan.total));
    int rc = lb_one_pass_setup(&p, &cfg, be, &a, B, seed);
    if (rc == LB_OK)
        rc = g ? download_grads(be, &p.train, B * cfg.n * cfg.d_model, g)
               : be->ops->download(be, out, p.in.x, B * cfg.n * cfg.d_model);
    lb_one_pass_release(&p);
    if (g) {
        g->planned = plan.total;
        g->high_water = a.high_water;
    }
    lb_arena_close(&a);
    return rc;
}

int lb_check_train_step(LbBackend *be, LbModelConfig cfg, int64_t batch, uint64_t seed, LbCheckGrads *g)
{
    memset(g, 0, sizeof *g);
    const int rc = pass_once(be, cfg, batch, seed, NULL, g);
    if (rc != LB_OK)
        lb_check_grads_free(g);
    return rc;
}

/* One row for a step's gradients: the tensor nearest its limit (where the limits agree, the
 * largest relative error), named when it fails. Either arena past the training plan, or short
 * of it, fails the row too: the plan is the step's memory (attn/plan.h). */
static int compare_grads(Ctx *c, const LbCheckGrads *out, const LbCheckGrads *ref)
{
    LbCheckRow *r = new_row(c);
    if (!r)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory recording a check");
    r->rel_error = r->threshold = NAN;
    if (out->count != ref->count) {
        snprintf(r->error, sizeof r->error, "%lld gradient tensors, the CPU's step %lld", LL(out->count),
                 LL(ref->count));
        return LB_OK;
    }
    if (out->high_water != out->planned || ref->high_water != ref->planned) {
        snprintf(r->error, sizeof r->error, "arena high water %zu bytes against the training plan's %zu (CPU: %zu, %zu)",
                 out->high_water, out->planned, ref->high_water, ref->planned);
        return LB_OK;
    }
    double worst = -1.0;
    for (int64_t i = 0; i < ref->count; i++) {
        const LbTensorRef *t = &ref->refs[i];
        char why[200] = "";
        double limit;
        const double e = rel_error(c, out->refs[i].ptr, t->ptr, t->rows * t->cols, &limit, why);
        const double ratio = limit > 0.0 ? e / limit : e > 0.0 ? INFINITY : 0.0;
        if (ratio <= worst)
            continue;
        worst = ratio;
        r->rel_error = e;
        r->threshold = limit;
        r->ok = e <= limit;
        if (!r->ok && why[0])
            snprintf(r->error, sizeof r->error, "gradient of %s: %s", t->name, why);
        else if (!r->ok)
            snprintf(r->error, sizeof r->error, "gradient of %s: relative error %.2e above %.1e", t->name, e, limit);
    }
    return LB_OK;
}

/* A forward pass (train 0) or a training step of cfg at batch 2 against the CPU backend's; quick,
 * with the Linformer variant the sweep will run. */
static int check_pass(Ctx *c, int train, LbModelConfig cfg)
{
    const int64_t B = 2;
    if (c->plan->quick) {
        cfg.sharing = c->plan->sharing;
        cfg.order = c->plan->order;
    }
    begin(c, train ? "train" : "forward", find_op(train ? "train" : "forward"));
    char model[64];
    lb_model_describe(&cfg, model, sizeof model);
    SHAPE("%s L %d d %d h %d n %lld B %lld", model, cfg.layers, cfg.d_model, cfg.heads, LL(cfg.n), LL(B));
    const uint64_t seed = next_seed(c);
    if (!train) {
        const int64_t count = B * cfg.n * cfg.d_model;
        float *out, *ref;
        LB_TRY(hostf(c, count, &out));
        LB_TRY(hostf(c, count, &ref));
        LB_TRY(pass_once(c->be, cfg, B, seed, out, NULL));
        LB_TRY(pass_once(c->ref, cfg, B, seed, ref, NULL));
        return compare(c, out, ref, count);
    }
    LbCheckGrads out, ref;
    LB_TRY(lb_check_train_step(c->be, cfg, B, seed, &out));
    int rc = lb_check_train_step(c->ref, cfg, B, seed, &ref);
    if (rc == LB_OK)
        rc = compare_grads(c, &out, &ref);
    lb_check_grads_free(&out);
    lb_check_grads_free(&ref);
    return rc;
}

/* Whether a pass of kind is checked: every forward; quick, only the exact baseline's and the
 * Linformer's training steps. */
static int train_wanted(const Ctx *c, int train, int kind)
{
    if (train && c->plan->quick && kind != LB_MODEL_STANDARD && kind != LB_MODEL_LINFORMER)
        return 0;
    /* Max pooling routes each window's gradient to its maximum, which fp16 and bf16 rounding can
     * move to another position: a different, equally right gradient (relative errors up to 0.1
     * in six seeds). Its kernels are checked at every dtype in the table, its whole step at fp32. */
    return !train || kind != LB_MODEL_LINFORMER_MAX || c->be->storage == LB_DTYPE_FP32;
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
    r->rel_error = r->threshold = NAN;
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

int lb_check_compare(LbBackend *be, const char *op, const char *shape, const float *out, const float *ref,
                     int64_t count, LbCheckTable *t)
{
    const Op *o = find_op(op);
    Ctx c = {.be = be, .t = t};
    begin(&c, op, o);
    snprintf(c.shape, sizeof c.shape, "%s", shape);
    return compare(&c, out, ref, count);
}

int lb_check_op(LbBackend *be, const LbCheckPlan *plan, const char *op, const int64_t shape[8], LbCheckTable *t)
{
    const Op *o = find_op(op);
    if (!o || !o->run)
        return LB_FAIL(LB_ERR_INVALID, "check: no op \"%s\" in the table", op);
    if (!has_own_reference(be, op))
        return LB_FAIL(LB_ERR_INVALID, "check: %s on the CPU backend has no reference but itself", op);
    Ctx c = {.be = be, .plan = plan, .t = t};
    LB_TRY(open_reference(&c));
    begin(&c, op, o);
    const int rc = finish(&c, o->run(&c, shape));
    lb_backend_close(c.ref);
    return rc;
}

int lb_check_backend(LbBackend *be, const LbCheckPlan *plan, LbCheckTable *t)
{
    Ctx c = {.be = be, .plan = plan, .t = t};
    LB_TRY(open_reference(&c));
    const int quick = plan->quick;
    int rc = LB_OK;
    void *ws = NULL;
    RUN(open_workspace(&c, &ws));
    for (size_t i = 0; i < NOPS; i++) {
        const Op *op = &ops_table[i];
        if (!wanted(plan->only, op->name) || !has_own_reference(be, op->name))
            continue;
        const Shape *shapes = quick ? op->quick : op->full;
        for (size_t j = 0; j < (quick ? op->nquick : op->nfull); j++) {
            begin(&c, op->name, op);
            RUN(op->run(&c, shapes[j]));
        }
    }
    /* The forward passes carve their own workspace from their arena: give this one back first,
     * so a device with little memory (a small --mem-limit's worth) still fits them. */
    if (ws) {
        be->ops->mem_free(be, ws);
        ws = NULL;
    }
    /* The CPU backend's passes, its own ops, are the reference, so it checks none of its own. */
    c.ref->ops = c.cpu_ops;
    for (int train = 0; train < 2 && strcmp(be->ops->name, "cpu") != 0; train++) {
        if (!wanted(plan->only, train ? "train" : "forward") || (train && plan->pass != LB_PASS_TRAIN))
            continue;
        /* quick; full; a training step's (rows that are not a whole number of flash's 64-row
         * tiles; train_tol was measured here) */
        static const int64_t sizes[3][7] = {{1, 32, 2, 64, 100, 32, 8}, {2, 64, 4, 128, 1000, 64, 16},
                                            {2, 32, 2, 64, 100, 48, 8}};
        const int64_t *z = sizes[train ? 2 : quick ? 0 : 1];
        LbModelConfig m = lb_config_default();
        m.layers = (int)z[0];
        m.d_model = (int)z[1];
        m.heads = (int)z[2];
        m.ffn = (int)z[3];
        m.vocab = (int)z[4];
        m.n = z[5];
        m.k = z[6];
        /* Every model of the table (train, quick: the exact baseline and the Linformer): quick,
         * its first variant; otherwise every variant. */
        for (int kind = 0; kind < LB_MODEL_COUNT; kind++) {
            const LbModelDesc *desc = lb_model_desc((LbModelKind)kind);
            for (int v = 0; train_wanted(&c, train, kind) && v < (quick ? 1 : desc->variants); v++) {
                RUN(check_pass(&c, train, lb_model_variant((LbModelKind)kind, v, m)));
            }
        }
        /* --k-schedule: three layers of k, k/2 and k/4 (halve), each projecting to its own length
         * through its own E, F and workspace; every model that reads it. */
        for (int kind = 0; (!quick || plan->k_schedule != LB_KSCHED_UNIFORM) && kind < LB_MODEL_COUNT; kind++) {
            if (lb_model_reads_flag((LbModelKind)kind, "k-schedule") != 1 || !train_wanted(&c, train, kind))
                continue;
            LbModelConfig cfg = lb_model_variant((LbModelKind)kind, 0, m);
            cfg.layers = 3;
            cfg.k = 2 * m.k;
            cfg.k_schedule = LB_KSCHED_HALVE;
            RUN(check_pass(&c, train, cfg));
        }
    }
out:
    release(&c);
    if (ws)
        be->ops->mem_free(be, ws);
    lb_backend_close(c.ref);
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
