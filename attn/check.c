/* The checks behind `linbench check` and the quick check of sweep and run: see check.h. Each check
 * draws its inputs on the backend (fill_uniform) and reads them back, poisons its output with
 * NaN through upload, runs one op, reads the output back and compares it with the reference on
 * the host. Checked by planting bugs: a corrupted softmax element on the emulated GPU
 * (LB_EMU_CORRUPT, tests/cli/test_cli_check.c), and, once by hand, a naive reference off by one
 * row, an op left unwritten, a threshold of 0. */
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
#include "attn/status.h"

#define MAX_BUFFERS 16

typedef struct Ctx {
    LbBackend *be;
    const LbCheckPlan *plan;
    LbCheckTable *t;
    int naive;        /* the CPU backend: its ops are cpu_ref.h, so compare with naive loops */
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

/* One comparison row: ||out - ref|| / ||ref|| in double against tol, raised to 3 times the error
 * of rounding ref to the storage type alone (an answer in fp16's subnormal range cannot be
 * closer); tol 0 asks for bit equality. */
static int compare(Ctx *c, const float *out, const float *ref, int64_t count, double tol)
{
    LbCheckRow *r = new_row(c);
    if (!r)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory recording a check");
    double num = 0.0, den = 0.0, floor2 = 0.0;
    int64_t bad = -1;
    for (int64_t i = 0; i < count; i++) {
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
    }
    const double floor_rel = den > 0.0 ? 3.0 * sqrt(floor2 / den) : 0.0;
    r->rel_error = err;
    r->threshold = tol == 0.0 ? 0.0 : tol > floor_rel ? tol : floor_rel;
    r->ok = err <= r->threshold;
    return LB_OK;
}

/* --- thresholds (tests/gpu/gpu_check.h, test_gpu_matmul.c, test_gpu_forward.c) -------------- */

static double kernel_tol(LbDtype t)
{
    return t == LB_DTYPE_FP16 ? 1e-3 : t == LB_DTYPE_BF16 ? 8e-3 : 1e-5;
}

static double matmul_tol(const LbBackend *be, int gelu)
{
    switch (be->storage) {
    case LB_DTYPE_FP16: return gelu ? 2e-3 : 1e-3;
    case LB_DTYPE_BF16: return gelu ? 1.5e-2 : 8e-3;
    default: return be->tf32 ? 2e-3 : 1e-5;
    }
}

/* TF32 forward passes have not been measured against the reference; 1e-2 is METHOD.md's fp16
 * figure, which TF32's 10 mantissa bits match. */
static double forward_tol(const LbBackend *be)
{
    switch (be->storage) {
    case LB_DTYPE_FP16: return 1e-2;
    case LB_DTYPE_BF16: return 3e-2;
    default: return be->tf32 ? 1e-2 : 1e-5;
    }
}

/* --- buffers: released after every check ----------------------------------------------------- */

static int dev(Ctx *c, int64_t bytes, void **p)
{
    *p = NULL;
    if (c->ndev == MAX_BUFFERS)
        return LB_FAIL(LB_ERR_INVALID, "check: too many buffers (internal)");
    LB_TRY(c->be->ops->mem_alloc(c->be, (size_t)bytes, p));
    c->dev[c->ndev++] = *p;
    return LB_OK;
}

/* count storage elements plus 16 of slack, so a check can take an op off its 16-byte path */
static int dev_elems(Ctx *c, int64_t count, void **p)
{
    return dev(c, (count + 16) * (int64_t)c->be->elem_bytes, p);
}

static int host(Ctx *c, int64_t bytes, void *p)
{
    void *h = NULL;
    memcpy(p, &h, sizeof h);
    if (c->nhost == MAX_BUFFERS)
        return LB_FAIL(LB_ERR_INVALID, "check: too many buffers (internal)");
    h = malloc((size_t)(bytes > 0 ? bytes : 1));
    if (!h)
        return LB_FAIL(LB_ERR_NOMEM, "check: out of host memory (%lld bytes)", (long long)bytes);
    c->host[c->nhost++] = h;
    memcpy(p, &h, sizeof h);
    return LB_OK;
}

static int hostf(Ctx *c, int64_t count, float **p) { return host(c, count * (int64_t)sizeof(float), p); }

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

/* NaN in every element of d (count): an element the op leaves unwritten stays NaN. */
static int poison(Ctx *c, void *d, int64_t count)
{
    float *h;
    LB_TRY(hostf(c, count, &h));
    for (int64_t i = 0; i < count; i++)
        h[i] = NAN;
    return c->be->ops->upload(c->be, d, h, count);
}

/* --- naive references in double, for the CPU backend (whose ops are cpu_ref.h) -------------- */

static double gelu_d(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }

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

static void naive_bmm(const LbBmm *p)
{
    const float *A = p->a, *B = p->b;
    float *C = p->c;
    for (int64_t i = 0; i < p->batch; i++)
        for (int64_t r = 0; r < p->m; r++)
            for (int64_t j = 0; j < p->n; j++) {
                double s = 0.0;
                for (int64_t q = 0; q < p->kdim; q++) {
                    const double a = A[i * p->stride_a + (p->trans_a ? q * p->lda + r : r * p->lda + q)];
                    const double b = B[i * p->stride_b + (p->trans_b ? j * p->ldb + q : q * p->ldb + j)];
                    s += a * b;
                }
                C[i * p->stride_c + r * p->ldc + j] = (float)(p->alpha * s);
            }
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

static void naive_embed(const int32_t *ids, const float *tok, const float *pos, float *x, int64_t batch,
                        int64_t n, int64_t d)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++)
            for (int64_t j = 0; j < d; j++)
                x[(b * n + t) * d + j] = (float)((double)tok[(int64_t)ids[b * n + t] * d + j] + (double)pos[t * d + j]);
}

static void naive_split(const float *src, int64_t ld, float *dst, int64_t batch, int64_t n, int64_t heads,
                        int64_t hd)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t t = 0; t < n; t++)
                for (int64_t j = 0; j < hd; j++)
                    dst[((b * heads + h) * n + t) * hd + j] = src[(b * n + t) * ld + h * hd + j];
}

static void naive_merge(const float *src, float *dst, int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t t = 0; t < n; t++)
                for (int64_t j = 0; j < hd; j++)
                    dst[(b * n + t) * heads * hd + h * hd + j] = src[((b * heads + h) * n + t) * hd + j];
}

/* --- the op checks ---------------------------------------------------------------------------- */

static int check_linear(Ctx *c, int64_t rows, int64_t in, int64_t out, int bias, int gelu)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "linear");
    snprintf(c->shape, sizeof c->shape, "%lld x %lld -> %lld%s%s%s", (long long)rows, (long long)in,
             (long long)out, bias ? " +bias" : "", gelu ? " +gelu" : "", be->tf32 ? " (tf32)" : "");
    void *d_x, *d_w, *d_b, *d_y;
    float *x, *w, *b, *y, *ref;
    LB_TRY(dev_elems(c, rows * in, &d_x));
    LB_TRY(dev_elems(c, out * in, &d_w));
    LB_TRY(dev_elems(c, out, &d_b));
    LB_TRY(dev_elems(c, rows * out, &d_y));
    LB_TRY(hostf(c, rows * in, &x));
    LB_TRY(hostf(c, out * in, &w));
    LB_TRY(hostf(c, out, &b));
    LB_TRY(hostf(c, rows * out, &y));
    LB_TRY(hostf(c, rows * out, &ref));
    const float a = 1.0f / sqrtf((float)in);
    LB_TRY(random_in(c, d_x, x, rows * in, -1.0f, 1.0f));
    LB_TRY(random_in(c, d_w, w, out * in, -a, a));
    LB_TRY(random_in(c, d_b, b, out, -0.5f, 0.5f));
    LB_TRY(poison(c, d_y, rows * out));
    LB_TRY(be->ops->linear(be, d_x, d_w, bias ? d_b : NULL, d_y, rows, in, out, gelu));
    LB_TRY(be->ops->download(be, y, d_y, rows * out));
    (c->naive ? naive_linear : lb_linear_cpu)(x, w, bias ? b : NULL, ref, rows, in, out, gelu);
    return compare(c, y, ref, rows * out, matmul_tol(be, gelu));
}

static int64_t extent(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (batch - 1) * stride + rows * ld;
}

/* q's shape with its own pointers ignored; only the m x n blocks of C are compared (padding
 * between them may hold anything but is never read as a result). */
static int check_bmm(Ctx *c, LbBmm q, const char *label)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "bmm");
    snprintf(c->shape, sizeof c->shape, "%s%sm %lld n %lld k %lld batch %lld%s", q.trans_a ? "A^T " : "",
             q.trans_b ? "B^T " : "", (long long)q.m, (long long)q.n, (long long)q.kdim, (long long)q.batch, label);
    const int64_t ea = extent(q.batch, q.stride_a, q.trans_a ? q.kdim : q.m, q.lda);
    const int64_t eb = extent(q.batch, q.stride_b, q.trans_b ? q.n : q.kdim, q.ldb);
    const int64_t ec = extent(q.batch, q.stride_c, q.m, q.ldc), count = q.batch * q.m * q.n;
    void *d_a, *d_b, *d_c;
    float *a, *b, *cc, *ref, *out, *want;
    LB_TRY(dev_elems(c, ea, &d_a));
    LB_TRY(dev_elems(c, eb, &d_b));
    LB_TRY(dev_elems(c, ec, &d_c));
    LB_TRY(hostf(c, ea, &a));
    LB_TRY(hostf(c, eb, &b));
    LB_TRY(hostf(c, ec, &cc));
    LB_TRY(hostf(c, ec, &ref));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(hostf(c, count, &want));
    LB_TRY(random_in(c, d_a, a, ea, -1.0f, 1.0f));
    LB_TRY(random_in(c, d_b, b, eb, -1.0f, 1.0f));
    LB_TRY(poison(c, d_c, ec));
    LbBmm g = q;
    g.a = d_a;
    g.b = d_b;
    g.c = d_c;
    LB_TRY(be->ops->bmm(be, &g));
    LB_TRY(be->ops->download(be, cc, d_c, ec));
    LbBmm h = q;
    h.a = a;
    h.b = b;
    h.c = ref;
    (c->naive ? naive_bmm : lb_bmm_cpu)(&h);
    int64_t k = 0;
    for (int64_t i = 0; i < q.batch; i++)
        for (int64_t r = 0; r < q.m; r++)
            for (int64_t j = 0; j < q.n; j++, k++) {
                out[k] = cc[i * q.stride_c + r * q.ldc + j];
                want[k] = ref[i * q.stride_c + r * q.ldc + j];
            }
    return compare(c, out, want, count, matmul_tol(be, 0));
}

static LbBmm bmm_shape(int ta, int tb, int64_t m, int64_t n, int64_t kdim, int64_t batch, int64_t pad)
{
    LbBmm q;
    memset(&q, 0, sizeof q);
    q.trans_a = ta;
    q.trans_b = tb;
    q.m = m;
    q.n = n;
    q.kdim = kdim;
    q.alpha = pad ? 0.75f : 1.0f;
    q.batch = batch;
    q.lda = (ta ? m : kdim) + pad;
    q.ldb = (tb ? kdim : n) + pad;
    q.ldc = n + pad;
    q.stride_a = (ta ? kdim : m) * q.lda + pad;
    q.stride_b = (tb ? n : kdim) * q.ldb + pad;
    q.stride_c = m * q.ldc + pad;
    return q;
}

/* rows x cols at `offset` elements past an aligned buffer. Scores of the size attention makes,
 * every third row shifted by 40: a kernel that takes another row's max underflows and shows. */
static int check_softmax(Ctx *c, int64_t rows, int64_t cols, int64_t offset)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "softmax");
    snprintf(c->shape, sizeof c->shape, "%lld x %lld%s", (long long)rows, (long long)cols, offset ? " (unaligned)" : "");
    const int64_t count = rows * cols;
    void *buf;
    float *ref, *out;
    LB_TRY(dev_elems(c, count, &buf));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(hostf(c, count, &out));
    void *d_x = at(c, buf, offset);
    LB_TRY(random_in(c, d_x, ref, count, -8.0f, 8.0f));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++)
            ref[r * cols + j] += 40.0f * (float)(r % 3);
    LB_TRY(be->ops->upload(be, d_x, ref, count));
    LB_TRY(be->ops->download(be, ref, d_x, count));
    const float scale = 0.625f;
    LB_TRY(be->ops->softmax(be, d_x, rows, cols, scale));
    LB_TRY(be->ops->download(be, out, d_x, count));
    (c->naive ? naive_softmax : lb_softmax_cpu)(ref, rows, cols, scale);
    return compare(c, out, ref, count, kernel_tol(be->storage));
}

static int check_layernorm(Ctx *c, int64_t rows, int64_t d, int with_r)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "layernorm");
    snprintf(c->shape, sizeof c->shape, "%lld x %lld%s", (long long)rows, (long long)d, with_r ? " +residual" : "");
    const int64_t count = rows * d;
    void *d_x, *d_r, *d_g, *d_b;
    float *x, *r, *g, *b, *out;
    LB_TRY(dev_elems(c, count, &d_x));
    LB_TRY(dev_elems(c, count, &d_r));
    LB_TRY(dev_elems(c, d, &d_g));
    LB_TRY(dev_elems(c, d, &d_b));
    LB_TRY(hostf(c, count, &x));
    LB_TRY(hostf(c, count, &r));
    LB_TRY(hostf(c, d, &g));
    LB_TRY(hostf(c, d, &b));
    LB_TRY(hostf(c, count, &out));
    /* an offset mean, so a kernel that forgets to subtract it shows */
    LB_TRY(random_in(c, d_x, x, count, -1.0f, 3.0f));
    LB_TRY(random_in(c, d_r, r, count, -1.0f, 1.0f));
    LB_TRY(random_in(c, d_g, g, d, 0.5f, 1.5f));
    LB_TRY(random_in(c, d_b, b, d, -0.5f, 0.5f));
    LB_TRY(be->ops->layernorm(be, d_x, with_r ? d_r : NULL, d_g, d_b, rows, d, LB_LAYERNORM_EPS));
    LB_TRY(be->ops->download(be, out, d_x, count));
    (c->naive ? naive_layernorm : lb_layernorm_cpu)(x, with_r ? r : NULL, g, b, rows, d, LB_LAYERNORM_EPS);
    return compare(c, out, x, count, kernel_tol(be->storage));
}

static int check_embed(Ctx *c, int64_t batch, int64_t n, int64_t d, int32_t vocab)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "embed");
    snprintf(c->shape, sizeof c->shape, "B %lld n %lld d %lld vocab %d", (long long)batch, (long long)n,
             (long long)d, (int)vocab);
    const int64_t rows = batch * n, count = rows * d;
    void *d_tok, *d_pos, *d_x, *d_ids;
    float *tok, *pos, *ref, *out;
    int32_t *ids;
    LB_TRY(dev_elems(c, (int64_t)vocab * d, &d_tok));
    LB_TRY(dev_elems(c, n * d, &d_pos));
    LB_TRY(dev_elems(c, count, &d_x));
    LB_TRY(dev(c, rows * (int64_t)sizeof(int32_t), &d_ids));
    LB_TRY(hostf(c, (int64_t)vocab * d, &tok));
    LB_TRY(hostf(c, n * d, &pos));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(host(c, rows * (int64_t)sizeof(int32_t), &ids));
    LB_TRY(random_in(c, d_tok, tok, (int64_t)vocab * d, -1.0f, 1.0f));
    LB_TRY(random_in(c, d_pos, pos, n * d, -1.0f, 1.0f));
    LB_TRY(be->ops->fill_tokens(be, d_ids, rows, next_seed(c), vocab));
    LB_TRY(be->ops->copy_raw_to_host(be, ids, d_ids, (size_t)rows * sizeof(int32_t)));
    LB_TRY(poison(c, d_x, count));
    LB_TRY(be->ops->embed(be, d_ids, d_tok, d_pos, d_x, batch, n, d));
    LB_TRY(be->ops->download(be, out, d_x, count));
    (c->naive ? naive_embed : lb_embed_cpu)(ids, tok, pos, ref, batch, n, d);
    return compare(c, out, ref, count, kernel_tol(be->storage));
}

/* One of Q, K, V (column block `which`) out of a fused (B n, 3 h hd) buffer: a pure copy, so
 * bit-exact; then merged back, bit-exact too. */
static int check_heads(Ctx *c, int merge, int64_t batch, int64_t n, int64_t heads, int64_t hd, int which)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, merge ? "merge_heads" : "split_heads");
    snprintf(c->shape, sizeof c->shape, "B %lld n %lld heads %lld hd %lld", (long long)batch, (long long)n,
             (long long)heads, (long long)hd);
    const int64_t d = heads * hd, ld = 3 * d, rows = batch * n;
    void *d_src, *d_dst;
    float *src, *out, *ref;
    const int64_t src_count = merge ? rows * d : rows * ld;
    LB_TRY(dev_elems(c, src_count, &d_src));
    LB_TRY(dev_elems(c, rows * d, &d_dst));
    LB_TRY(hostf(c, src_count, &src));
    LB_TRY(hostf(c, rows * d, &out));
    LB_TRY(hostf(c, rows * d, &ref));
    LB_TRY(random_in(c, d_src, src, src_count, -1.0f, 1.0f));
    LB_TRY(poison(c, d_dst, rows * d));
    if (merge) {
        LB_TRY(be->ops->merge_heads(be, d_src, d_dst, batch, n, heads, hd));
        (c->naive ? naive_merge : lb_merge_heads_cpu)(src, ref, batch, n, heads, hd);
    } else {
        LB_TRY(be->ops->split_heads(be, at(c, d_src, which * d), ld, d_dst, batch, n, heads, hd));
        (c->naive ? naive_split : lb_split_heads_cpu)(src + which * d, ld, ref, batch, n, heads, hd);
    }
    LB_TRY(be->ops->download(be, out, d_dst, rows * d));
    return compare(c, out, ref, rows * d, 0.0);
}

/* fill_uniform gives lb_rng_range rounded to storage, bit for bit (the host rounding of upload is
 * the kernel's); fill_tokens gives lb_rng_token exactly (the error is the share of ids that
 * differ). */
static int check_fills(Ctx *c, int tokens, int64_t count)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, tokens ? "fill_tokens" : "fill_uniform");
    snprintf(c->shape, sizeof c->shape, "%lld", (long long)count);
    const uint64_t seed = next_seed(c);
    if (tokens) {
        const int32_t vocab = 50265;
        void *d_ids;
        int32_t *ids;
        float *out, *ref;
        LB_TRY(dev(c, count * (int64_t)sizeof(int32_t), &d_ids));
        LB_TRY(host(c, count * (int64_t)sizeof(int32_t), &ids));
        LB_TRY(hostf(c, count, &out));
        LB_TRY(hostf(c, count, &ref));
        LB_TRY(be->ops->fill_tokens(be, d_ids, count, seed, vocab));
        LB_TRY(be->ops->copy_raw_to_host(be, ids, d_ids, (size_t)count * sizeof(int32_t)));
        /* as floats: every id below 2^24 is exact */
        for (int64_t i = 0; i < count; i++) {
            out[i] = (float)ids[i];
            ref[i] = (float)lb_rng_token(seed, (uint64_t)i, vocab);
        }
        return compare(c, out, ref, count, 0.0);
    }
    void *d_x, *d_ref;
    float *out, *ref;
    LB_TRY(dev_elems(c, count, &d_x));
    LB_TRY(dev_elems(c, count, &d_ref));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(be->ops->fill_uniform(be, d_x, count, seed, -0.3f, 0.7f));
    LB_TRY(be->ops->download(be, out, d_x, count));
    for (int64_t i = 0; i < count; i++)
        ref[i] = lb_rng_range(seed, (uint64_t)i, -0.3f, 0.7f);
    LB_TRY(be->ops->upload(be, d_ref, ref, count));
    LB_TRY(be->ops->download(be, ref, d_ref, count));
    return compare(c, out, ref, count, 0.0);
}

/* copy (calibration's bandwidth op): a device-to-device copy of `count` elements, bit-exact. */
static int check_copy(Ctx *c, int64_t count)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "copy");
    snprintf(c->shape, sizeof c->shape, "%lld bytes", (long long)count * (long long)be->elem_bytes);
    void *d_src, *d_dst;
    float *src, *out;
    LB_TRY(dev_elems(c, count, &d_src));
    LB_TRY(dev_elems(c, count, &d_dst));
    LB_TRY(hostf(c, count, &src));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(random_in(c, d_src, src, count, -1.0f, 1.0f));
    LB_TRY(poison(c, d_dst, count));
    LB_TRY(be->ops->copy(be, d_dst, d_src, (size_t)count * be->elem_bytes));
    LB_TRY(be->ops->download(be, out, d_dst, count));
    return compare(c, out, src, count, 0.0);
}

/* gelu (the pass a breakdown times apart from linear's product), in place, against erf GELU in
 * double of the stored inputs. */
static int check_gelu(Ctx *c, int64_t rows, int64_t cols)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "gelu");
    snprintf(c->shape, sizeof c->shape, "%lld x %lld", (long long)rows, (long long)cols);
    const int64_t count = rows * cols;
    void *d_y;
    float *ref, *out;
    LB_TRY(dev_elems(c, count, &d_y));
    LB_TRY(hostf(c, count, &ref));
    LB_TRY(hostf(c, count, &out));
    LB_TRY(random_in(c, d_y, ref, count, -4.0f, 4.0f));
    LB_TRY(be->ops->gelu(be, d_y, rows, cols));
    LB_TRY(be->ops->download(be, out, d_y, count));
    for (int64_t i = 0; i < count; i++)
        ref[i] = c->naive ? (float)gelu_d(ref[i]) : lb_gelu_cpu(ref[i]);
    return compare(c, out, ref, count, kernel_tol(be->storage));
}

/* FAVOR+'s features written out in double (the CPU backend's own op is cpu_favor.c). */
static void naive_favor(float *f, const float *x, int64_t groups, int64_t n, int64_t m, int64_t hd, float scale,
                        int keys)
{
    const double inv_sqrt_m = 1.0 / sqrt((double)m);
    for (int64_t g = 0; g < groups; g++) {
        float *fg = f + g * n * m;
        double group_max = -INFINITY;
        for (int64_t i = 0; i < n * m; i++)
            group_max = fg[i] > group_max ? fg[i] : group_max;
        for (int64_t r = 0; r < n; r++) {
            const float *xr = x + (g * n + r) * hd;
            double sq = 0.0, row_max = -INFINITY;
            for (int64_t j = 0; j < hd; j++)
                sq += (double)xr[j] * xr[j];
            for (int64_t j = 0; j < m; j++)
                row_max = fg[r * m + j] > row_max ? fg[r * m + j] : row_max;
            const double stab = keys ? group_max : row_max, half = (double)scale * scale * sq / 2;
            for (int64_t j = 0; j < m; j++)
                fg[r * m + j] = (float)(exp((double)fg[r * m + j] - half - stab) * inv_sqrt_m);
        }
    }
}

/* favor_features (the Performer's feature maps) for queries (a max per row) or keys (one per group,
 * through the op's scratch), against FAVOR+ in double of the stored inputs. */
static int check_favor(Ctx *c, int64_t groups, int64_t n, int64_t m, int64_t hd, int keys)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "favor_features");
    snprintf(c->shape, sizeof c->shape, "%lld groups x %lld x %lld, hd %lld, %s", (long long)groups, (long long)n,
             (long long)m, (long long)hd, keys ? "keys" : "queries");
    const int64_t fc = groups * n * m, xc = groups * n * hd;
    const float scale = (float)pow((double)hd, -0.25);
    void *d_f, *d_x, *d_stat = NULL;
    float *f, *x, *out;
    LB_TRY(dev_elems(c, fc, &d_f));
    LB_TRY(dev_elems(c, xc, &d_x));
    if (keys)
        LB_TRY(dev(c, (int64_t)lb_favor_stat_bytes(groups, n), &d_stat));
    LB_TRY(hostf(c, fc, &f));
    LB_TRY(hostf(c, xc, &x));
    LB_TRY(hostf(c, fc, &out));
    LB_TRY(random_in(c, d_f, f, fc, -3.0f, 2.0f));
    LB_TRY(random_in(c, d_x, x, xc, -1.5f, 1.5f));
    LB_TRY(be->ops->favor_features(be, d_f, d_x, d_stat, groups, n, m, hd, scale, keys));
    LB_TRY(be->ops->download(be, out, d_f, fc));
    (c->naive ? naive_favor : lb_favor_features_cpu)(f, x, groups, n, m, hd, scale, keys);
    return compare(c, out, f, fc, kernel_tol(be->storage));
}

static void naive_divide(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++)
            y[r * cols + j] = (float)((double)x[r * (cols + 1) + j] / x[r * (cols + 1) + cols]);
}

/* divide_by_last (the Performer's D^-1): x (rows, cols + 1) with a positive last column. */
static int check_divide(Ctx *c, int64_t rows, int64_t cols)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "divide_by_last");
    snprintf(c->shape, sizeof c->shape, "%lld x %lld + 1", (long long)rows, (long long)cols);
    const int64_t xc = rows * (cols + 1), yc = rows * cols;
    void *d_x, *d_y;
    float *x, *out, *ref;
    LB_TRY(dev_elems(c, xc, &d_x));
    LB_TRY(dev_elems(c, yc, &d_y));
    LB_TRY(hostf(c, xc, &x));
    LB_TRY(hostf(c, yc, &out));
    LB_TRY(hostf(c, yc, &ref));
    LB_TRY(random_in(c, d_x, x, xc, -1.0f, 1.0f));
    for (int64_t r = 0; r < rows; r++) /* the normaliser: a sum of positive features, away from 0 */
        x[r * (cols + 1) + cols] = 0.25f + fabsf(x[r * (cols + 1) + cols]);
    LB_TRY(be->ops->upload(be, d_x, x, xc));
    LB_TRY(be->ops->download(be, x, d_x, xc));
    LB_TRY(poison(c, d_y, yc));
    LB_TRY(be->ops->divide_by_last(be, d_x, d_y, rows, cols));
    LB_TRY(be->ops->download(be, out, d_y, yc));
    (c->naive ? naive_divide : lb_divide_by_last_cpu)(x, ref, rows, cols);
    return compare(c, out, ref, yc, kernel_tol(be->storage));
}

/* Exact attention of every (sequence, head) by the textbook formula, two passes over the scores. */
static int naive_flash(const float *q, const float *k, const float *v, int64_t ld, float *o, int64_t batch, int64_t n,
                       int64_t heads, int64_t hd, float scale)
{
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory for a row of scores");
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t t = 0; t < n; t++) {
                double top = -INFINITY, sum = 0.0;
                for (int64_t c = 0; c < n; c++) {
                    double dot = 0.0;
                    for (int64_t e = 0; e < hd; e++)
                        dot += (double)q[(b * n + t) * ld + h * hd + e] * k[(b * n + c) * ld + h * hd + e];
                    s[c] = (double)scale * dot;
                    top = s[c] > top ? s[c] : top;
                }
                for (int64_t c = 0; c < n; c++)
                    sum += s[c] = exp(s[c] - top);
                for (int64_t e = 0; e < hd; e++) {
                    double acc = 0.0;
                    for (int64_t c = 0; c < n; c++)
                        acc += s[c] * v[(b * n + c) * ld + h * hd + e];
                    o[(b * n + t) * heads * hd + h * hd + e] = (float)(acc / sum);
                }
            }
    free(s);
    return LB_OK;
}

/* flash_attention (the flash model's fused op): Q, K, V read in place from one fused buffer as the
 * model lays it out, keys growing with their position so the running maximum rises tile by tile. */
static int check_flash(Ctx *c, int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "flash_attention");
    snprintf(c->shape, sizeof c->shape, "B %lld n %lld h %lld hd %lld", (long long)batch, (long long)n,
             (long long)heads, (long long)hd);
    const int64_t width = heads * hd, ld = 3 * width, xc = batch * n * ld, oc = batch * n * width;
    const float scale = 1.0f / sqrtf((float)hd);
    void *d_x, *d_o;
    float *x, *out, *ref;
    LB_TRY(dev_elems(c, xc, &d_x));
    LB_TRY(dev_elems(c, oc, &d_o));
    LB_TRY(hostf(c, xc, &x));
    LB_TRY(hostf(c, oc, &out));
    LB_TRY(hostf(c, oc, &ref));
    LB_TRY(random_in(c, d_x, x, xc, -2.0f, 2.0f));
    for (int64_t r = 0; r < batch * n; r++)
        for (int64_t e = 0; e < width; e++)
            x[r * ld + width + e] *= 0.5f + 2.0f * (float)(r % n) / (float)n;
    LB_TRY(be->ops->upload(be, d_x, x, xc));
    LB_TRY(be->ops->download(be, x, d_x, xc));
    LB_TRY(poison(c, d_o, oc));
    const size_t e = be->elem_bytes;
    LB_TRY(be->ops->flash_attention(be, d_x, (char *)d_x + width * e, (char *)d_x + 2 * width * e, ld, d_o, batch, n,
                                    heads, hd, scale));
    LB_TRY(be->ops->download(be, out, d_o, oc));
    LB_TRY((c->naive ? naive_flash : lb_flash_attention_cpu)(x, x + width, x + 2 * width, ld, ref, batch, n, heads, hd,
                                                             scale));
    return compare(c, out, ref, oc, 2 * kernel_tol(be->storage));
}

/* The general projections' windows by their definition, in double (METHOD.md, "General
 * projections"): op LB_POOL_MEAN, LB_POOL_MAX, or 2 for the depthwise convolution. */
static void naive_seq(const float *x, int64_t ld_x, const float *wt, float *y, int64_t ld_y, int64_t batch,
                      int64_t n, int64_t k, int64_t channels, int op)
{
    const int64_t w = n / k;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < k; t++)
            for (int64_t ch = 0; ch < channels; ch++) {
                double acc = op == LB_POOL_MAX ? -INFINITY : 0.0;
                for (int64_t j = 0; j < w; j++) {
                    const double v = x[(b * n + t * w + j) * ld_x + ch];
                    if (op == LB_POOL_MAX)
                        acc = v > acc ? v : acc;
                    else if (op == LB_POOL_MEAN)
                        acc += v / (double)w;
                    else
                        acc += (double)wt[j * channels + ch] * v;
                }
                y[(b * k + t) * ld_y + ch] = (float)acc;
            }
}

/* pool_seq (mean, max) and depthwise_conv_seq (op 2): keys read in place from a fused Q/K/V-like
 * buffer (row stride 3 C), the output packed (row stride C). */
static int check_seq(Ctx *c, int op, int64_t batch, int64_t n, int64_t k, int64_t channels)
{
    LbBackend *be = c->be;
    snprintf(c->op, sizeof c->op, "%s", op == 2 ? "depthwise_conv_seq" : "pool_seq");
    snprintf(c->shape, sizeof c->shape, "%sB %lld n %lld k %lld C %lld", op == 2 ? "" : op == LB_POOL_MAX ? "max " : "mean ",
             (long long)batch, (long long)n, (long long)k, (long long)channels);
    const int64_t ld_x = 3 * channels, xc = batch * n * ld_x, yc = batch * k * channels, wc = n / k * channels;
    void *d_x, *d_y, *d_w;
    float *x, *wt, *out, *ref;
    LB_TRY(dev_elems(c, xc, &d_x));
    LB_TRY(dev_elems(c, yc, &d_y));
    LB_TRY(dev_elems(c, wc, &d_w));
    LB_TRY(hostf(c, xc, &x));
    LB_TRY(hostf(c, wc, &wt));
    LB_TRY(hostf(c, yc, &out));
    LB_TRY(hostf(c, yc, &ref));
    LB_TRY(random_in(c, d_x, x, xc, -2.0f, 2.0f));
    LB_TRY(random_in(c, d_w, wt, wc, -0.5f, 0.5f));
    LB_TRY(poison(c, d_y, yc));
    if (op == 2)
        LB_TRY(be->ops->depthwise_conv_seq(be, d_x, ld_x, d_w, d_y, channels, batch, n, k, channels));
    else
        LB_TRY(be->ops->pool_seq(be, d_x, ld_x, d_y, channels, batch, n, k, channels, op));
    LB_TRY(be->ops->download(be, out, d_y, yc));
    if (c->naive)
        naive_seq(x, ld_x, wt, ref, channels, batch, n, k, channels, op);
    else if (op == 2)
        lb_depthwise_conv_seq_cpu(x, ld_x, wt, ref, channels, batch, n, k, channels);
    else
        lb_pool_seq_cpu(x, ld_x, ref, channels, batch, n, k, channels, op);
    return compare(c, out, ref, yc, kernel_tol(be->storage));
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

static int check_forward(Ctx *c, LbBackend *cpu, LbModelConfig cfg, int64_t B)
{
    snprintf(c->op, sizeof c->op, "forward");
    char model[64];
    lb_model_describe(&cfg, model, sizeof model);
    snprintf(c->shape, sizeof c->shape, "%s L %d d %d h %d n %lld B %lld", model, cfg.layers, cfg.d_model,
             cfg.heads, (long long)cfg.n, (long long)B);
    const int64_t count = B * cfg.n * cfg.d_model;
    float *out, *ref;
    LB_TRY(hostf(c, count, &out));
    LB_TRY(hostf(c, count, &ref));
    const uint64_t seed = next_seed(c);
    LB_TRY(forward_once(c->be, cfg, B, seed, out));
    LB_TRY(forward_once(cpu, cfg, B, seed, ref));
    return compare(c, out, ref, count, forward_tol(c->be));
}

/* --- the plan ----------------------------------------------------------------------------------- */

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

#define RUN(call)                                  \
    do {                                           \
        if (!c.dead && (rc = finish(&c, (call))) != LB_OK) \
            goto out;                              \
    } while (0)

int lb_check_backend(LbBackend *be, const LbCheckPlan *plan, LbCheckTable *t)
{
    Ctx c;
    memset(&c, 0, sizeof c);
    c.be = be;
    c.plan = plan;
    c.t = t;
    c.naive = strcmp(be->ops->name, "cpu") == 0;
    const int quick = plan->quick;
    int rc = LB_OK;
    LbBackend *cpu = NULL;
    void *ws = NULL;
    /* Products run with the workspace a forward pass hands them. */
    if (be->ops->set_workspace && be->workspace_bytes > 0) {
        snprintf(c.op, sizeof c.op, "workspace");
        snprintf(c.shape, sizeof c.shape, "%zu bytes", be->workspace_bytes);
        int wrc = be->ops->mem_alloc(be, be->workspace_bytes, &ws);
        if (wrc == LB_OK && (wrc = be->ops->set_workspace(be, ws, be->workspace_bytes)) != LB_OK) {
            be->ops->mem_free(be, ws);
            ws = NULL;
        }
        RUN(wrc);
    }

    RUN(check_linear(&c, 37, 50, 70, 1, 1));
    RUN(check_linear(&c, 16, 32, 48, 0, 0));
    if (!quick) {
        RUN(check_linear(&c, 37, 50, 70, 1, 0));
        RUN(check_linear(&c, 130, 256, 192, 1, 1));
        RUN(check_linear(&c, 1, 64, 5, 1, 0));
    }
    RUN(check_bmm(&c, bmm_shape(0, 1, 37, 45, 29, 3, 3), ", padded"));
    LbBmm e = bmm_shape(0, 0, 16, 24, 40, 3, 0);
    e.stride_a = 0; /* Linformer's E broadcast over the batch */
    RUN(check_bmm(&c, e, ", A broadcast"));
    if (!quick) {
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                if (ta || !tb)
                    RUN(check_bmm(&c, bmm_shape(ta, tb, 37, 45, 29, 3, 3), ", padded"));
        RUN(check_bmm(&c, bmm_shape(0, 1, 64, 64, 16, 8, 0), ""));
        LbBmm f = bmm_shape(0, 1, 40, 24, 48, 5, 2);
        f.stride_b = 0;
        RUN(check_bmm(&c, f, ", B broadcast"));
    }
    RUN(check_softmax(&c, 4, 200, 0));
    RUN(check_softmax(&c, 3, 1024, 0));
    if (!quick) {
        /* each length a kernel path: group, block, online; scalar when unaligned */
        static const int64_t cols[] = {1, 17, 64, 1000, 4100, 9000};
        for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
            RUN(check_softmax(&c, 6, cols[i], 0));
        RUN(check_softmax(&c, 5, 1024, 1));
    }
    RUN(check_layernorm(&c, 5, 100, 1));
    if (!quick) {
        static const int64_t dims[] = {16, 768, 3000};
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
            RUN(check_layernorm(&c, 9, dims[i], 1));
            RUN(check_layernorm(&c, 9, dims[i], 0));
        }
    }
    RUN(check_embed(&c, 2, 16, 32, 100));
    RUN(check_heads(&c, 0, 2, 16, 2, 16, 1));
    RUN(check_heads(&c, 1, 2, 16, 2, 16, 0));
    if (!quick) {
        RUN(check_embed(&c, 2, 37, 100, 1000));
        RUN(check_heads(&c, 0, 2, 9, 3, 5, 2));
        RUN(check_heads(&c, 1, 2, 9, 3, 5, 0));
    }
    RUN(check_fills(&c, 0, quick ? 1001 : 10007));
    RUN(check_fills(&c, 1, quick ? 1001 : 10007));
    /* the ops calibration and a breakdown use, and the Performer's */
    RUN(check_copy(&c, quick ? 1001 : 100003));
    RUN(check_gelu(&c, 7, quick ? 70 : 3000));
    RUN(check_favor(&c, 3, 17, 24, 16, 0));
    RUN(check_favor(&c, 3, 17, 24, 16, 1));
    RUN(check_divide(&c, 37, 16));
    RUN(check_flash(&c, 2, 70, 2, 64));
    /* the Linformer's general projections */
    for (int op = LB_POOL_MEAN; op <= 2; op++)
        RUN(check_seq(&c, op, 2, 64, 16, 48));
    if (!quick)
        for (int op = LB_POOL_MEAN; op <= 2; op++)
            RUN(check_seq(&c, op, 3, 70, 10, 33));
    if (!quick) {
        RUN(check_flash(&c, 1, 200, 3, 32));
        RUN(check_flash(&c, 2, 15, 1, 128));
        RUN(check_favor(&c, 4, 130, 64, 64, 1));
        RUN(check_divide(&c, 130, 64));
    }

    /* The forward passes carve their own workspace from their arena: give this one back first,
     * so a device with little memory (a small --mem-limit's worth) still fits them. */
    if (ws) {
        be->ops->mem_free(be, ws);
        ws = NULL;
    }
    /* The forward passes: the CPU backend's is the reference, so it checks none of its own. */
    if (!c.naive && !c.dead) {
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
        /* Every model of the table: quick, its first variant (Linformer: the sharing and order
         * the sweep will run); otherwise every variant. */
        for (int kind = 0; kind < LB_MODEL_COUNT; kind++) {
            const LbModelDesc *desc = lb_model_desc((LbModelKind)kind);
            for (int v = 0; desc && v < (quick ? 1 : desc->variants); v++) {
                LbModelConfig cfg = lb_model_variant((LbModelKind)kind, v, m);
                if (quick) {
                    cfg.sharing = plan->sharing;
                    cfg.order = plan->order;
                }
                RUN(check_forward(&c, cpu, cfg, 2));
            }
        }
        /* --k-schedule: three layers of k, k/2 and k/4 (halve), so each layer projects to its own
         * length through its own E and F and workspace; every model that reads it. */
        for (int kind = 0; (!quick || plan->k_schedule != LB_KSCHED_UNIFORM) && kind < LB_MODEL_COUNT; kind++) {
            if (lb_model_reads_flag((LbModelKind)kind, "k-schedule") != 1)
                continue;
            LbModelConfig cfg = lb_model_variant((LbModelKind)kind, 0, m);
            cfg.layers = 3;
            cfg.k = 2 * m.k; /* 16, 8, 8 quick; 32, 16, 8 */
            cfg.k_schedule = LB_KSCHED_HALVE;
            if (quick) {
                cfg.sharing = plan->sharing;
                cfg.order = plan->order;
            }
            RUN(check_forward(&c, cpu, cfg, 2));
        }
    }
out:
    release(&c);
    if (ws)
        be->ops->mem_free(be, ws);
    lb_backend_close(cpu);
    return rc;
}

size_t lb_check_failures(const LbCheckTable *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += !t->rows[i].ok;
    return n;
}

double lb_check_max_rel_error(const LbCheckTable *t)
{
    double m = 0.0;
    for (size_t i = 0; i < t->count; i++)
        if (t->rows[i].rel_error > m) /* false for NaN */
            m = t->rows[i].rel_error;
    return m;
}

const LbCheckRow *lb_check_first_failure(const LbCheckTable *t)
{
    for (size_t i = 0; i < t->count; i++)
        if (!t->rows[i].ok)
            return &t->rows[i];
    return NULL;
}

void lb_check_table_free(LbCheckTable *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}
