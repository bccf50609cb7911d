/* The backward references (attn/cpu/cpu_backward.h). One thread, plain loops in double: they are
 * what a backward kernel is checked against, and tests hold them to finite differences. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "attn/cpu/cpu_backward.h"

/* A strided matrix view: element (u, w) of batch entry i at p[i sb + u su + w sw]. */
typedef struct View {
    const float *p;
    int64_t su, sw, sb;
} View;

static double at(View v, int64_t i, int64_t u, int64_t w) { return v.p[i * v.sb + u * v.su + w * v.sw]; }

/* out(i, u, v) = alpha sum_w l(i, u, w) r(i, v, w); with sb_out == 0 the sum also runs over the
 * batch, for an operand broadcast over it. Both gradients of a product are this one contraction. */
static void contract(float *out, int64_t su_out, int64_t sv_out, int64_t sb_out, View l, View r, int64_t nu,
                     int64_t nv, int64_t nw, int64_t batch, float alpha)
{
    const int64_t entries = sb_out == 0 ? 1 : batch;
    for (int64_t e = 0; e < entries; e++)
        for (int64_t u = 0; u < nu; u++)
            for (int64_t v = 0; v < nv; v++) {
                double s = 0.0;
                for (int64_t i = sb_out == 0 ? 0 : e; i < (sb_out == 0 ? batch : e + 1); i++)
                    for (int64_t w = 0; w < nw; w++)
                        s += at(l, i, u, w) * at(r, i, v, w);
                out[e * sb_out + u * su_out + v * sv_out] = (float)((double)alpha * s);
            }
}

void lb_bmm_backward_cpu(const LbBmm *p, const float *dc, float *da, float *db)
{
    /* op(A) (m, kdim) and op(B) (kdim, n) as views indexed (row, column) */
    const int64_t ar = p->trans_a ? 1 : p->lda, aq = p->trans_a ? p->lda : 1;
    const int64_t bq = p->trans_b ? 1 : p->ldb, bj = p->trans_b ? p->ldb : 1;
    const View d = {dc, p->ldc, 1, p->stride_c}, dt = {dc, 1, p->ldc, p->stride_c};
    if (da) /* d op(A)(r, q) = alpha sum_j dC(r, j) op(B)(q, j) */
        contract(da, ar, aq, p->stride_a, d, (View){p->b, bq, bj, p->stride_b}, p->m, p->kdim, p->n, p->batch,
                 p->alpha);
    if (db) /* d op(B)(q, j) = alpha sum_r op(A)(r, q) dC(r, j) */
        contract(db, bq, bj, p->stride_b, (View){p->a, aq, ar, p->stride_a}, dt, p->kdim, p->n, p->m, p->batch,
                 p->alpha);
}

double lb_gelu_grad_cpu(double v)
{
    return 0.5 * (1.0 + erf(v * 0.70710678118654752440)) + v * exp(-0.5 * v * v) * 0.39894228040143267794;
}

int lb_linear_backward_cpu(const float *x, const float *w, const float *b, const float *dy, float *dx, float *dw,
                           float *db, int64_t rows, int64_t in, int64_t out, int gelu)
{
    /* dz: dy times GELU'(z), z recomputed; kept in float like every gradient between ops */
    const float *dz = dy;
    float *own = NULL;
    if (gelu && rows > 0 && out > 0) {
        own = malloc((size_t)(rows * out) * sizeof *own);
        if (!own)
            return LB_FAIL(LB_ERR_NOMEM, "linear backward: out of host memory for %lld x %lld gradients",
                           (long long)rows, (long long)out);
        for (int64_t r = 0; r < rows; r++)
            for (int64_t o = 0; o < out; o++) {
                double z = b ? b[o] : 0.0;
                for (int64_t i = 0; i < in; i++)
                    z += (double)x[r * in + i] * (double)w[o * in + i];
                own[r * out + o] = (float)((double)dy[r * out + o] * lb_gelu_grad_cpu(z));
            }
        dz = own;
    }
    /* the product y = x w^T as a one-entry bmm: dx = dz w, dw = dz^T x */
    const LbBmm p = {.trans_a = 0, .trans_b = 1, .m = rows, .n = out, .kdim = in, .alpha = 1.0f,
                     .a = x, .lda = in, .b = w, .ldb = in, .ldc = out, .batch = 1};
    lb_bmm_backward_cpu(&p, dz, dx, dw);
    if (db)
        lb_column_sums_cpu(dz, db, rows, out);
    free(own);
    return LB_OK;
}

void lb_add_cpu(const float *x, float *y, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        y[i] = (float)((double)y[i] + (double)x[i]);
}

void lb_gelu_backward_cpu(const float *z, float *d, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        d[i] = (float)((double)d[i] * lb_gelu_grad_cpu((double)z[i]));
}

/* Each column's rows summed in order, in double. */
void lb_column_sums_cpu(const float *x, float *y, int64_t rows, int64_t cols)
{
    for (int64_t j = 0; j < cols; j++) {
        double s = 0.0;
        for (int64_t r = 0; r < rows; r++)
            s += x[r * cols + j];
        y[j] = (float)s;
    }
}

void lb_softmax_backward_cpu(const float *y, float *d, int64_t rows, int64_t cols, float scale)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *yr = y + r * cols;
        float *dr = d + r * cols;
        double dot = 0.0;
        for (int64_t j = 0; j < cols; j++)
            dot += (double)dr[j] * (double)yr[j];
        for (int64_t j = 0; j < cols; j++)
            dr[j] = (float)((double)scale * (double)yr[j] * ((double)dr[j] - dot));
    }
}

int lb_layernorm_backward_cpu(const float *x, const float *r, const float *gamma, const float *dy, float *dv,
                              float *dgamma, float *dbeta, int64_t rows, int64_t d, float eps)
{
    double *acc = calloc((size_t)(3 * d + 1), sizeof *acc); /* dgamma, dbeta, the row's xhat */
    if (!acc)
        return LB_FAIL(LB_ERR_NOMEM, "layernorm backward: out of host memory for %lld sums", (long long)(2 * d));
    double *xhat = acc + 2 * d;
    for (int64_t i = 0; i < rows; i++) {
        const float *g = dy + i * d;
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < d; j++)
            mean += xhat[j] = (double)x[i * d + j] + (r ? (double)r[i * d + j] : 0.0);
        mean /= (double)d;
        for (int64_t j = 0; j < d; j++)
            var += (xhat[j] - mean) * (xhat[j] - mean);
        const double inv = 1.0 / sqrt(var / (double)d + (double)eps);
        double mg = 0.0, mgx = 0.0; /* the means of g = dy gamma and of g xhat */
        for (int64_t j = 0; j < d; j++) {
            xhat[j] = (xhat[j] - mean) * inv;
            mg += (double)g[j] * gamma[j];
            mgx += (double)g[j] * gamma[j] * xhat[j];
            acc[j] += (double)g[j] * xhat[j];
            acc[d + j] += g[j];
        }
        mg /= (double)d;
        mgx /= (double)d;
        for (int64_t j = 0; dv && j < d; j++)
            dv[i * d + j] = (float)(inv * ((double)g[j] * gamma[j] - mg - xhat[j] * mgx));
    }
    for (int64_t j = 0; j < d; j++) {
        if (dgamma)
            dgamma[j] = (float)acc[j];
        if (dbeta)
            dbeta[j] = (float)acc[d + j];
    }
    free(acc);
    return LB_OK;
}

int lb_embed_backward_cpu(const int32_t *ids, const float *dx, float *dtok, float *dpos, int64_t batch, int64_t n,
                          int64_t d, int64_t vocab)
{
    for (int64_t t = 0; dpos && t < n; t++)
        for (int64_t j = 0; j < d; j++) {
            double s = 0.0;
            for (int64_t b = 0; b < batch; b++)
                s += dx[(b * n + t) * d + j];
            dpos[t * d + j] = (float)s;
        }
    if (!dtok)
        return LB_OK;
    const int64_t tokens = batch * n;
    int64_t *first = calloc((size_t)vocab + 1, sizeof *first), *order = malloc((size_t)(tokens + 1) * sizeof *order);
    double *row = malloc((size_t)(d + 1) * sizeof *row);
    if (!first || !order || !row) {
        free(first), free(order), free(row);
        return LB_FAIL(LB_ERR_NOMEM, "embed backward: out of host memory for %lld token positions",
                       (long long)tokens);
    }
    /* counting sort of the positions by id, stable: each id's positions stay in (b, t) order */
    for (int64_t p = 0; p < tokens; p++)
        first[ids[p] + 1]++;
    for (int64_t v = 0; v < vocab; v++)
        first[v + 1] += first[v];
    for (int64_t p = 0; p < tokens; p++)
        order[first[ids[p]]++] = p;
    for (int64_t v = vocab; v > 0; v--) /* first[v] had moved on to the start of v + 1 */
        first[v] = first[v - 1];
    first[0] = 0;
    for (int64_t v = 0; v < vocab; v++) {
        memset(row, 0, (size_t)d * sizeof *row);
        for (int64_t q = first[v]; q < first[v + 1]; q++)
            for (int64_t j = 0; j < d; j++)
                row[j] += dx[order[q] * d + j];
        for (int64_t j = 0; j < d; j++)
            dtok[v * d + j] = (float)row[j];
    }
    free(first), free(order), free(row);
    return LB_OK;
}

void lb_pool_seq_backward_cpu(const float *x, int64_t ld_x, const float *dy, int64_t ld_y, float *dx,
                              int64_t batch, int64_t n, int64_t k, int64_t channels, int mode)
{
    const int64_t w = n / k;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < k; t++)
            for (int64_t c = 0; c < channels; c++) {
                const int64_t row0 = b * n + t * w;
                const double g = dy[(b * k + t) * ld_y + c];
                int64_t top = 0;
                for (int64_t j = 1; mode == LB_POOL_MAX && j < w; j++)
                    top = x[(row0 + j) * ld_x + c] > x[(row0 + top) * ld_x + c] ? j : top;
                for (int64_t j = 0; j < w; j++)
                    dx[(row0 + j) * ld_x + c] =
                        (float)(mode == LB_POOL_MAX ? (j == top ? g : 0.0) : g / (double)w);
            }
}

void lb_depthwise_conv_seq_backward_cpu(const float *x, int64_t ld_x, const float *wt, const float *dy, int64_t ld_y,
                                        float *dx, float *dwt, int64_t batch, int64_t n, int64_t k,
                                        int64_t channels)
{
    const int64_t w = n / k;
    for (int64_t j = 0; j < w; j++)
        for (int64_t c = 0; c < channels; c++) {
            double s = 0.0;
            for (int64_t b = 0; b < batch; b++)
                for (int64_t t = 0; t < k; t++) {
                    const double g = dy[(b * k + t) * ld_y + c];
                    const int64_t xi = (b * n + t * w + j) * ld_x + c;
                    s += g * (double)x[xi];
                    if (dx)
                        dx[xi] = (float)(g * (double)wt[j * channels + c]);
                }
            if (dwt)
                dwt[j * channels + c] = (float)s;
        }
}

int lb_flash_attention_backward_cpu(const float *q, const float *k, const float *v, int64_t ld, const float *do_,
                                    float *dq, float *dk, float *dv, int64_t batch, int64_t n, int64_t heads,
                                    int64_t hd, float scale)
{
    /* per (sequence, head): one row's P, its O and dQ, and dK, dV summed over the rows */
    double *p = malloc((size_t)(n + 2 * hd + 2 * n * hd + 1) * sizeof *p);
    if (!p)
        return LB_FAIL(LB_ERR_NOMEM, "flash_attention backward: out of host memory for %lld x %lld gradients",
                       (long long)n, (long long)hd);
    double *o = p + n, *g = o + hd, *gk = g + hd, *gv = gk + n * hd;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++) {
            const int64_t base = b * n * ld + h * hd;
            memset(gk, 0, (size_t)(2 * n * hd) * sizeof *gk);
            for (int64_t t = 0; t < n; t++) {
                const float *qt = q + base + t * ld, *dot = do_ + (b * n + t) * heads * hd + h * hd;
                double top = -INFINITY, sum = 0.0, di = 0.0;
                for (int64_t c = 0; c < n; c++) {
                    double s = 0.0;
                    for (int64_t e = 0; e < hd; e++)
                        s += (double)qt[e] * (double)k[base + c * ld + e];
                    p[c] = (double)scale * s;
                    top = p[c] > top ? p[c] : top;
                }
                for (int64_t c = 0; c < n; c++)
                    sum += p[c] = exp(p[c] - top);
                memset(o, 0, (size_t)hd * sizeof *o);
                for (int64_t c = 0; c < n; c++) {
                    p[c] /= sum;
                    for (int64_t e = 0; e < hd; e++)
                        o[e] += p[c] * (double)v[base + c * ld + e];
                }
                for (int64_t e = 0; e < hd; e++)
                    di += (double)dot[e] * o[e];
                memset(g, 0, (size_t)hd * sizeof *g);
                for (int64_t c = 0; c < n; c++) {
                    double dp = 0.0;
                    for (int64_t e = 0; e < hd; e++) {
                        dp += (double)dot[e] * (double)v[base + c * ld + e];
                        gv[c * hd + e] += p[c] * (double)dot[e];
                    }
                    const double ds = p[c] * (dp - di);
                    for (int64_t e = 0; e < hd; e++) {
                        g[e] += ds * (double)k[base + c * ld + e];
                        gk[c * hd + e] += ds * (double)qt[e];
                    }
                }
                for (int64_t e = 0; dq && e < hd; e++)
                    dq[base + t * ld + e] = (float)((double)scale * g[e]);
            }
            for (int64_t c = 0; c < n; c++)
                for (int64_t e = 0; e < hd; e++) {
                    if (dk)
                        dk[base + c * ld + e] = (float)((double)scale * gk[c * hd + e]);
                    if (dv)
                        dv[base + c * ld + e] = (float)gv[c * hd + e];
                }
        }
    free(p);
    return LB_OK;
}

void lb_favor_features_backward_cpu(const float *phi, const float *x, float *d, float *dx, int64_t groups,
                                    int64_t n, int64_t m, int64_t hd, float scale)
{
    for (int64_t r = 0; r < groups * n; r++) {
        double dot = 0.0;
        for (int64_t j = 0; j < m; j++) {
            const double g = (double)d[r * m + j] * (double)phi[r * m + j];
            dot += g;
            d[r * m + j] = (float)g;
        }
        for (int64_t e = 0; dx && e < hd; e++)
            dx[r * hd + e] = (float)(-(double)scale * (double)scale * (double)x[r * hd + e] * dot);
    }
}

void lb_divide_by_last_backward_cpu(const float *x, const float *dy, float *dx, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * (cols + 1);
        const double den = (double)xr[cols];
        double dot = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            dot += (double)dy[r * cols + j] * (double)xr[j];
            dx[r * (cols + 1) + j] = (float)((double)dy[r * cols + j] / den);
        }
        dx[r * (cols + 1) + cols] = (float)(-dot / (den * den));
    }
}
