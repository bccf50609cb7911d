/* The backward references (attn/cpu/cpu_backward.h) against central finite differences: for each
 * op, a forward in double on the same inputs, the loss L = sum(g * forward) for a random upstream
 * gradient g, and dL/dx by (L(x + h) - L(x - h)) / 2h for every element of every input, held to
 * the reference's gradient by relative error. Shapes are small and odd, with padded rows, a
 * broadcast operand and repeated token ids, so an index or a missing sum shows. Also the flash
 * forward's log-sum-exp, which nothing but a GPU kernel's check would otherwise read. */
#include <math.h>

#include "attn/base/status.h"
#include "attn/cpu/cpu_backward.h"
#include "attn/cpu/cpu_ref.h"
#include "attn/ops.h"
#include "tests/lib/check.h"

static LbBackend *cpu; /* the CPU backend, whose ops some forwards here are */

/* An input: float values (what the references read), their double copies (what the finite
 * differences move), equal element by element, and the reference's gradient of it, zeroed. */
typedef struct Input {
    float *f, *grad;
    double *d;
    int64_t count;
} Input;

static Input input(int64_t count, float lo, float hi)
{
    Input in = {lb_test_alloc(count), calloc((size_t)count + 1, sizeof(float)),
                malloc((size_t)(count + 1) * sizeof(double)), count};
    lb_test_random(in.f, count, lo, hi);
    for (int64_t i = 0; i < count; i++)
        in.d[i] = in.f[i];
    return in;
}

/* a random upstream gradient g */
static float *upstream(int64_t count)
{
    float *g = lb_test_alloc(count);
    lb_test_random(g, count, -1, 1);
    return g;
}

typedef double (*Loss)(const void *ctx);

/* dL/dx by central differences against the gradient the reference wrote, over all of each of the
 * first `checked` inputs; then every input and g freed. */
static void against_fd(const char *what, Loss loss, const void *ctx, Input *const *in, int checked, int total,
                       float *g, double h)
{
    for (int k = 0; k < checked; k++) {
        const Input x = *in[k];
        double num = 0.0, den = 0.0;
        for (int64_t i = 0; i < x.count; i++) {
            const double keep = x.d[i];
            x.d[i] = keep + h;
            const double up = loss(ctx);
            x.d[i] = keep - h;
            const double down = loss(ctx);
            x.d[i] = keep;
            const double fd = (up - down) / (2.0 * h), e = fd - (double)x.grad[i];
            num += e * e;
            den += fd * fd;
        }
        const double rel = sqrt(num / (den > 0.0 ? den : 1.0));
        lb_check(den > 0.0 && rel <= 1e-6, "%s: input %d's gradient off finite differences by %.3e relative (%lld elements)",
                 what, k, rel, (long long)x.count);
    }
    for (int k = 0; k < total; k++)
        free(in[k]->f), free(in[k]->grad), free(in[k]->d);
    free(g);
}

static double gelu_d(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }

/* --- linear ------------------------------------------------------------------------------------ */
typedef struct Linear {
    Input x, w, b;
    float *g;
    int64_t rows, in, out;
    int bias, gelu;
} Linear;

static double linear_loss(const void *ctx)
{
    const Linear *c = ctx;
    double l = 0.0;
    for (int64_t r = 0; r < c->rows; r++)
        for (int64_t o = 0; o < c->out; o++) {
            double z = c->bias ? c->b.d[o] : 0.0;
            for (int64_t i = 0; i < c->in; i++)
                z += c->x.d[r * c->in + i] * c->w.d[o * c->in + i];
            l += c->g[r * c->out + o] * (c->gelu ? gelu_d(z) : z);
        }
    return l;
}

static void linear(int64_t rows, int64_t in, int64_t out, int bias, int gelu)
{
    Linear c = {input(rows * in, -1, 1), input(out * in, -1, 1), input(out, -1, 1), upstream(rows * out), rows, in, out,
                bias, gelu};
    lb_check(lb_linear_backward_cpu(c.x.f, c.w.f, bias ? c.b.f : NULL, c.g, c.x.grad, c.w.grad, c.b.grad, rows, in, out,
                                    gelu) == LB_OK,
             "linear backward: %s", lb_error_where());
    char what[96];
    snprintf(what, sizeof what, "linear %lldx%lldx%lld bias %d gelu %d", (long long)rows, (long long)in,
             (long long)out, bias, gelu);
    against_fd(what, linear_loss, &c, (Input *const[]){&c.x, &c.w, &c.b}, 2 + bias, 3, c.g, 1e-4);
}

/* --- bmm: every transpose, padded rows, an operand broadcast over the batch -------------------- */
typedef struct Bmm {
    LbBmm p;
    Input a, b;
    float *g;
} Bmm;

static double bmm_loss(const void *ctx)
{
    const Bmm *c = ctx;
    const LbBmm *p = &c->p;
    double l = 0.0;
    for (int64_t i = 0; i < p->batch; i++)
        for (int64_t r = 0; r < p->m; r++)
            for (int64_t j = 0; j < p->n; j++) {
                double s = 0.0;
                for (int64_t q = 0; q < p->kdim; q++)
                    s += c->a.d[i * p->stride_a + (p->trans_a ? q * p->lda + r : r * p->lda + q)] *
                         c->b.d[i * p->stride_b + (p->trans_b ? j * p->ldb + q : q * p->ldb + j)];
                l += c->g[i * p->stride_c + r * p->ldc + j] * p->alpha * s;
            }
    return l;
}

static void bmm(int ta, int tb, int broadcast_a, int broadcast_b)
{
    const int64_t m = 4, n = 5, kdim = 3, batch = 3;
    LbBmm p = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .kdim = kdim, .alpha = 0.75f, .batch = batch};
    p.lda = (ta ? m : kdim) + 1;
    p.ldb = (tb ? kdim : n) + 2;
    p.ldc = n + 1;
    p.stride_a = broadcast_a ? 0 : (ta ? kdim : m) * p.lda;
    p.stride_b = broadcast_b ? 0 : (tb ? n : kdim) * p.ldb;
    p.stride_c = m * p.ldc;
    const int64_t na = (broadcast_a ? 1 : batch) * (ta ? kdim : m) * p.lda;
    const int64_t nb = (broadcast_b ? 1 : batch) * (tb ? n : kdim) * p.ldb;
    Bmm c = {p, input(na, -1, 1), input(nb, -1, 1), upstream(batch * p.stride_c)};
    c.p.a = c.a.f;
    c.p.b = c.b.f;
    lb_bmm_backward_cpu(&c.p, c.g, c.a.grad, c.b.grad);
    char what[96];
    snprintf(what, sizeof what, "bmm trans %d%d broadcast %d%d", ta, tb, broadcast_a, broadcast_b);
    against_fd(what, bmm_loss, &c, (Input *const[]){&c.a, &c.b}, 2, 2, c.g, 1e-4);
}

/* --- softmax ----------------------------------------------------------------------------------- */
typedef struct Softmax {
    Input x;
    float *g;
    int64_t rows, cols;
    float scale;
} Softmax;

static double softmax_loss(const void *ctx)
{
    const Softmax *c = ctx;
    double l = 0.0;
    for (int64_t r = 0; r < c->rows; r++) {
        const double *x = c->x.d + r * c->cols;
        double top = -INFINITY, sum = 0.0, dot = 0.0;
        for (int64_t j = 0; j < c->cols; j++)
            top = fmax(top, c->scale * x[j]);
        for (int64_t j = 0; j < c->cols; j++) {
            const double e = exp(c->scale * x[j] - top);
            sum += e;
            dot += e * c->g[r * c->cols + j];
        }
        l += dot / sum;
    }
    return l;
}

static void softmax(int64_t rows, int64_t cols, float scale)
{
    Softmax c = {input(rows * cols, -3, 3), upstream(rows * cols), rows, cols, scale};
    float *y = lb_test_alloc(rows * cols);
    memcpy(y, c.x.f, (size_t)(rows * cols) * sizeof *y);
    lb_softmax_cpu(y, rows, cols, scale);
    memcpy(c.x.grad, c.g, (size_t)(rows * cols) * sizeof *y);
    lb_softmax_backward_cpu(y, c.x.grad, rows, cols, scale);
    free(y);
    against_fd("softmax", softmax_loss, &c, (Input *const[]){&c.x}, 1, 1, c.g, 1e-4);
}

/* --- LayerNorm with and without the residual ---------------------------------------------------- */
typedef struct Norm {
    Input x, r, gamma, beta;
    float *g;
    int64_t rows, d;
    int residual;
} Norm;

static double norm_loss(const void *ctx)
{
    const Norm *c = ctx;
    double l = 0.0;
    for (int64_t i = 0; i < c->rows; i++) {
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < c->d; j++)
            mean += c->x.d[i * c->d + j] + (c->residual ? c->r.d[i * c->d + j] : 0.0);
        mean /= (double)c->d;
        for (int64_t j = 0; j < c->d; j++) {
            const double e = c->x.d[i * c->d + j] + (c->residual ? c->r.d[i * c->d + j] : 0.0) - mean;
            var += e * e;
        }
        const double inv = 1.0 / sqrt(var / (double)c->d + 1e-5);
        for (int64_t j = 0; j < c->d; j++) {
            const double v = c->x.d[i * c->d + j] + (c->residual ? c->r.d[i * c->d + j] : 0.0);
            l += c->g[i * c->d + j] * ((v - mean) * inv * c->gamma.d[j] + c->beta.d[j]);
        }
    }
    return l;
}

static void layernorm(int64_t rows, int64_t d, int residual)
{
    Norm c = {input(rows * d, -2, 2), input(rows * d, -2, 2), input(d, 0.5f, 1.5f), input(d, -1, 1), upstream(rows * d),
              rows, d, residual};
    lb_check(lb_layernorm_backward_cpu(c.x.f, residual ? c.r.f : NULL, c.gamma.f, c.g, c.x.grad, c.gamma.grad,
                                       c.beta.grad, rows, d, 1e-5f) == LB_OK,
             "layernorm backward: %s", lb_error_where());
    memcpy(c.r.grad, c.x.grad, (size_t)(rows * d) * sizeof *c.r.grad); /* the residual's gradient is x's */
    against_fd(residual ? "layernorm with residual" : "layernorm", norm_loss, &c,
               (Input *const[]){&c.x, &c.gamma, &c.beta, &c.r}, 3 + residual, 4, c.g, 1e-4);
}

/* --- embeddings: repeated ids, ids never drawn ---------------------------------------------------- */
typedef struct Embed {
    Input tok, pos;
    const int32_t *ids;
    float *g;
    int64_t batch, n, d;
} Embed;

static double embed_loss(const void *ctx)
{
    const Embed *c = ctx;
    double l = 0.0;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t t = 0; t < c->n; t++)
            for (int64_t j = 0; j < c->d; j++)
                l += c->g[(b * c->n + t) * c->d + j] * (c->tok.d[c->ids[b * c->n + t] * c->d + j] + c->pos.d[t * c->d + j]);
    return l;
}

static void embed(int64_t batch, int64_t n, int64_t d, int64_t vocab)
{
    int32_t *ids = malloc((size_t)(batch * n) * sizeof *ids);
    for (int64_t i = 0; i < batch * n; i++)
        ids[i] = (int32_t)lb_test_randint(0, vocab - 1);
    Embed c = {input(vocab * d, -1, 1), input(n * d, -1, 1), ids, upstream(batch * n * d), batch, n, d};
    lb_check(lb_embed_backward_cpu(ids, c.g, c.tok.grad, c.pos.grad, batch, n, d, vocab) == LB_OK, "embed backward: %s",
             lb_error_where());
    against_fd("embed (0 tokens, 1 positions)", embed_loss, &c, (Input *const[]){&c.tok, &c.pos}, 2, 2, c.g, 1e-4);
    free(ids);
}

/* --- the Linformer's pooling and depthwise convolution, on padded rows ---------------------------- */
typedef struct Seq {
    Input x, wt;
    float *g;
    int64_t ld_x, ld_y, batch, n, k, channels;
    int op; /* LB_POOL_MEAN, LB_POOL_MAX, or -1: the convolution */
} Seq;

static double seq_loss(const void *ctx)
{
    const Seq *c = ctx;
    const int64_t w = c->n / c->k;
    double l = 0.0;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t t = 0; t < c->k; t++)
            for (int64_t ch = 0; ch < c->channels; ch++) {
                double acc = c->op == LB_POOL_MAX ? -INFINITY : 0.0;
                for (int64_t j = 0; j < w; j++) {
                    const double v = c->x.d[(b * c->n + t * w + j) * c->ld_x + ch];
                    acc = c->op == LB_POOL_MAX ? fmax(acc, v) : acc + (c->op < 0 ? c->wt.d[j * c->channels + ch] * v : v);
                }
                l += c->g[(b * c->k + t) * c->ld_y + ch] * (c->op == LB_POOL_MEAN ? acc / (double)w : acc);
            }
    return l;
}

static void seq(int op)
{
    const int64_t batch = 2, n = 12, k = 3, channels = 3, w = n / k;
    Seq c = {input(batch * n * (channels + 2), -1, 1), input(w * channels, -1, 1), upstream(batch * k * (channels + 1)),
             channels + 2, channels + 1, batch, n, k, channels, op};
    if (op == LB_POOL_MAX) /* each window's values at least 0.09 apart, in random order: no tie within h */
        for (int64_t win = 0; win < batch * k * channels; win++) {
            const int64_t ch = win % channels, row0 = (win / channels) * w;
            for (int64_t j = 0; j < w; j++) {
                const int64_t other = lb_test_randint(0, j), a = (row0 + j) * c.ld_x + ch;
                const int64_t b = (row0 + other) * c.ld_x + ch;
                c.x.f[a] = c.x.f[b]; /* Fisher-Yates: rank j lands at a random place of the first j + 1 */
                c.x.f[b] = (float)(0.1 * (double)j + 0.01 * (double)lb_test_randint(0, 100) / 100.0);
            }
            for (int64_t j = 0; j < w; j++)
                c.x.d[(row0 + j) * c.ld_x + ch] = c.x.f[(row0 + j) * c.ld_x + ch];
        }
    if (op < 0)
        lb_depthwise_conv_seq_backward_cpu(c.x.f, c.ld_x, c.wt.f, c.g, c.ld_y, c.x.grad, c.wt.grad, batch, n, k, channels);
    else
        lb_pool_seq_backward_cpu(c.x.f, c.ld_x, c.g, c.ld_y, c.x.grad, batch, n, k, channels, op);
    const char *what = op < 0 ? "depthwise_conv_seq" : op == LB_POOL_MAX ? "pool_seq max" : "pool_seq mean";
    against_fd(what, seq_loss, &c, (Input *const[]){&c.x, &c.wt}, op < 0 ? 2 : 1, 2, c.g, 1e-5);
}

/* --- flash attention on a fused QKV, several heads -------------------------------------------------- */
typedef struct Flash {
    Input qkv;
    float *g;
    int64_t batch, n, heads, hd;
    double scale;
} Flash;

static double flash_loss(const void *ctx)
{
    const Flash *c = ctx;
    const int64_t hh = c->heads * c->hd, ld = 3 * hh;
    double l = 0.0, s[64];
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t h = 0; h < c->heads; h++)
            for (int64_t t = 0; t < c->n; t++) {
                const double *q = c->qkv.d + (b * c->n + t) * ld + h * c->hd;
                double top = -INFINITY, sum = 0.0;
                for (int64_t u = 0; u < c->n; u++) {
                    const double *k = c->qkv.d + (b * c->n + u) * ld + hh + h * c->hd;
                    s[u] = 0.0;
                    for (int64_t e = 0; e < c->hd; e++)
                        s[u] += q[e] * k[e];
                    s[u] *= c->scale;
                    top = fmax(top, s[u]);
                }
                for (int64_t u = 0; u < c->n; u++)
                    sum += s[u] = exp(s[u] - top);
                for (int64_t u = 0; u < c->n; u++)
                    for (int64_t e = 0; e < c->hd; e++)
                        l += c->g[(b * c->n + t) * hh + h * c->hd + e] * s[u] / sum *
                             c->qkv.d[(b * c->n + u) * ld + 2 * hh + h * c->hd + e];
            }
    return l;
}

static void flash(int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    const int64_t hh = heads * hd, ld = 3 * hh;
    Flash c = {input(batch * n * ld, -1.5f, 1.5f), upstream(batch * n * hh), batch, n, heads, hd, 1.0 / sqrt((double)hd)};
    float *d = c.qkv.grad;
    lb_check(lb_flash_attention_backward_cpu(c.qkv.f, c.qkv.f + hh, c.qkv.f + 2 * hh, ld, c.g, d, d + hh, d + 2 * hh,
                                             batch, n, heads, hd, (float)c.scale) == LB_OK,
             "flash backward: %s", lb_error_where());
    /* The forward's log-sum-exp, which a GPU backward kernel is checked against: in double,
     * log sum_u e^(scale q_t . k_u), to its rounding to float. */
    float *o = lb_test_alloc(batch * n * hh), *lse = lb_test_alloc(batch * heads * n);
    lb_check(cpu->ops->flash_attention_lse(cpu, c.qkv.f, c.qkv.f + hh, c.qkv.f + 2 * hh, ld, o, lse, batch, n, heads,
                                           hd, (float)c.scale) == LB_OK,
             "flash_attention_lse: %s", lb_error_where());
    double worst = 0.0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t t = 0; t < n; t++) {
                double sum = 0.0;
                for (int64_t u = 0; u < n; u++) {
                    double dot = 0.0;
                    for (int64_t e = 0; e < hd; e++)
                        dot += c.qkv.d[(b * n + t) * ld + h * hd + e] * c.qkv.d[(b * n + u) * ld + hh + h * hd + e];
                    sum += exp(c.scale * dot);
                }
                const double want = log(sum), err = fabs(lse[(b * heads + h) * n + t] - want) / fmax(fabs(want), 1.0);
                worst = err > worst || isnan(err) ? err : worst;
            }
    lb_check(worst <= 1e-6, "flash_attention_lse: the log-sum-exp of each query row (worst relative error %.3g)", worst);
    free(o);
    free(lse);
    against_fd("flash_attention (dQ, dK, dV)", flash_loss, &c, (Input *const[]){&c.qkv}, 1, 1, c.g, 1e-4);
}

/* --- FAVOR+'s features (the stabiliser held at its value at x) and the normaliser's division ------- */
typedef struct Favor {
    Input u, x;
    float *g;
    const double *shift; /* per row: the group's or the row's max of u at the unmoved inputs */
    int64_t rows, m, hd;
    double scale;
} Favor;

static double favor_loss(const void *ctx)
{
    const Favor *c = ctx;
    double l = 0.0;
    for (int64_t r = 0; r < c->rows; r++) {
        double norm = 0.0;
        for (int64_t e = 0; e < c->hd; e++)
            norm += c->x.d[r * c->hd + e] * c->x.d[r * c->hd + e];
        for (int64_t j = 0; j < c->m; j++)
            l += c->g[r * c->m + j] *
                 exp(c->u.d[r * c->m + j] - 0.5 * c->scale * c->scale * norm - c->shift[r]) / sqrt((double)c->m);
    }
    return l;
}

static void favor(int64_t groups, int64_t n, int64_t m, int64_t hd, int keys)
{
    const int64_t rows = groups * n;
    double *shift = malloc((size_t)rows * sizeof *shift);
    Favor c = {input(rows * m, -1, 1), input(rows * hd, -1, 1), upstream(rows * m), shift, rows, m, hd, 0.6};
    for (int64_t r = 0; r < rows; r++) {
        const int64_t from = keys ? r / n * n * m : r * m, to = keys ? from + n * m : from + m;
        shift[r] = -INFINITY;
        for (int64_t i = from; i < to; i++)
            shift[r] = fmax(shift[r], c.u.d[i]);
    }
    float *phi = lb_test_alloc(rows * m);
    memcpy(phi, c.u.f, (size_t)(rows * m) * sizeof *phi);
    lb_check(cpu->ops->favor_features(cpu, phi, c.x.f, NULL, groups, n, m, hd, (float)c.scale, keys) == LB_OK,
             "favor_features: %s", lb_error_where());
    memcpy(c.u.grad, c.g, (size_t)(rows * m) * sizeof *phi);
    lb_favor_features_backward_cpu(phi, c.x.f, c.u.grad, c.x.grad, groups, n, m, hd, (float)c.scale);
    const char *what = keys ? "favor_features (keys)" : "favor_features (queries)";
    against_fd(what, favor_loss, &c, (Input *const[]){&c.u, &c.x}, 2, 2, c.g, 1e-4);
    free(shift), free(phi);
}

typedef struct Divide {
    Input x;
    float *g;
    int64_t rows, cols;
} Divide;

static double divide_loss(const void *ctx)
{
    const Divide *c = ctx;
    double l = 0.0;
    for (int64_t r = 0; r < c->rows; r++)
        for (int64_t j = 0; j < c->cols; j++)
            l += c->g[r * c->cols + j] * c->x.d[r * (c->cols + 1) + j] / c->x.d[r * (c->cols + 1) + c->cols];
    return l;
}

static void divide(int64_t rows, int64_t cols)
{
    Divide c = {input(rows * (cols + 1), 0.5f, 2), upstream(rows * cols), rows, cols};
    lb_divide_by_last_backward_cpu(c.x.f, c.g, c.x.grad, rows, cols);
    against_fd("divide_by_last", divide_loss, &c, (Input *const[]){&c.x}, 1, 1, c.g, 1e-4);
}

int main(void)
{
    lb_test_init("test_backward");
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 20, &cpu) == LB_OK, "open: %s", lb_error_where()))
        return lb_test_finish("test_backward");
    for (int bias = 0; bias <= 1; bias++)
        for (int gelu = 0; gelu <= 1; gelu++)
            linear(5, 7, 6, bias, gelu);
    linear(1, 1, 1, 1, 1);
    for (int t = 0; t < 4; t++)
        bmm(t & 1, t >> 1, 0, 0);
    bmm(0, 1, 1, 0); /* the Linformer's shared E times each sequence */
    bmm(1, 0, 0, 1);
    softmax(4, 9, 0.7f);
    softmax(2, 33, 1.0f);
    layernorm(3, 10, 0);
    layernorm(3, 10, 1);
    embed(3, 6, 4, 5);
    seq(LB_POOL_MEAN);
    seq(LB_POOL_MAX);
    seq(-1);
    flash(2, 5, 2, 3);
    flash(1, 7, 3, 4);
    favor(3, 4, 5, 3, 0);
    favor(3, 4, 5, 3, 1);
    divide(6, 4);
    lb_backend_close(cpu);
    return lb_test_finish("test_backward");
}
