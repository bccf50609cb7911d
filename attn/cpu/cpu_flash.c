/* The reference of the flash model's op (attn/cpu/cpu_ref.h): exact softmax attention per query
 * row, in double, from Q, K and V read in place. It materialises one row of n scores at a time
 * (the reference has no memory plan to keep), never the n x n matrix. */
#include <math.h>
#include <stdlib.h>

#include "attn/cpu/cpu_parallel.h"
#include "attn/cpu/cpu_ref.h"
#include "attn/op_args.h"
#include "attn/base/status.h"

typedef struct LbFlashJob {
    const float *q, *k, *v;
    float *o;
    float *lse; /* (batch, heads, n), or NULL */
    int64_t ld, n, heads, hd;
    double scale;
    volatile int out_of_memory; /* a worker without its scratch row: the op fails */
} LbFlashJob;

/* Query row `item` = (b n + t) heads + j: row t of head j of sequence b. */
static void flash_row(const LbFlashJob *job, int64_t item, double *s, double *acc)
{
    const int64_t n = job->n, hd = job->hd, j = item % job->heads, bt = item / job->heads, b = bt / n;
    const float *qr = job->q + bt * job->ld + j * hd;
    const float *kb = job->k + b * n * job->ld + j * hd, *vb = job->v + b * n * job->ld + j * hd;
    double top = -INFINITY;
    for (int64_t c = 0; c < n; c++) {
        double dot = 0.0;
        for (int64_t e = 0; e < hd; e++)
            dot += (double)qr[e] * (double)kb[c * job->ld + e];
        s[c] = job->scale * dot;
        top = s[c] > top ? s[c] : top;
    }
    double sum = 0.0;
    for (int64_t e = 0; e < hd; e++)
        acc[e] = 0.0;
    for (int64_t c = 0; c < n; c++) {
        const double p = exp(s[c] - top);
        sum += p;
        for (int64_t e = 0; e < hd; e++)
            acc[e] += p * (double)vb[c * job->ld + e];
    }
    float *orow = job->o + bt * job->heads * hd + j * hd;
    for (int64_t e = 0; e < hd; e++)
        orow[e] = (float)(acc[e] / sum);
    if (job->lse)
        job->lse[(b * job->heads + j) * n + bt % n] = (float)(top + log(sum));
}

/* Query rows [begin, end) with a row of scores and an output row as scratch s (n + hd). */
static void flash_rows(void *ctx, int64_t begin, int64_t end, double *s)
{
    LbFlashJob *job = ctx;
    if (!s) {
        job->out_of_memory = 1;
        return;
    }
    for (int64_t i = begin; i < end; i++)
        flash_row(job, i, s, s + job->n);
}

static int flash(const float *q, const float *k, const float *v, int64_t ld, float *o, float *lse, int64_t batch,
                 int64_t n, int64_t heads, int64_t hd, float scale)
{
    if (batch <= 0 || n <= 0 || heads <= 0 || hd <= 0)
        return LB_OK;
    LbFlashJob job = {q, k, v, o, lse, ld, n, heads, hd, (double)scale, 0};
    /* two products of n x hd per row */
    lb_cpu_parallel_for(batch * n * heads, 2.0 * (double)n * (double)hd, (size_t)(n + hd), flash_rows, &job);
    return job.out_of_memory ? LB_FAIL(LB_ERR_NOMEM, "flash_attention: out of host memory for a row of %lld scores",
                                       (long long)n)
                             : LB_OK;
}

int lb_cpu_flash_attention(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o,
                           int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale)
{
    LB_TRY(lb_args_flash(be, q, k, v, ld, o, batch, n, heads, hd));
    return flash(q, k, v, ld, o, NULL, batch, n, heads, hd, scale);
}

int lb_cpu_flash_attention_lse(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, void *o,
                               float *lse, int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale)
{
    LB_TRY(lb_args_flash_backward(be, "flash_attention_lse", q, k, v, ld, o, lse, NULL, NULL, NULL, NULL, batch, n,
                                  heads, hd));
    return flash(q, k, v, ld, o, lse, batch, n, heads, hd, scale);
}
