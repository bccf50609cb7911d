/* The reference row-wise ops: softmax, LayerNorm, and the erf-form GELU (attn/cpu/cpu_ref.h).
 * Statistics are kept in double and every output is rounded to float once, so a kernel that
 * keeps them in fp32 (as METHOD.md allows) differs by a few float ulps at most. Rows are split
 * over threads; each row is done by one thread, in order. */
#include <math.h>
#include <stdlib.h>

#include "attn/cpu/cpu_parallel.h"
#include "attn/cpu/cpu_ref.h"

float lb_gelu_cpu(float v)
{
    double x = (double)v;
    return (float)(0.5 * x * (1.0 + erf(x * 0.70710678118654752440)));
}

typedef struct LbSoftmaxJob {
    float *x;
    int64_t cols;
    double scale;
} LbSoftmaxJob;

/* Rows [begin, end) of x (rows, cols): x = softmax(scale * x). The exponentials are kept in a
 * double row so that each output is rounded once; without that scratch they are recomputed. */
static void lb_softmax_range(void *ctx, int64_t begin, int64_t end)
{
    const LbSoftmaxJob *job = ctx;
    int64_t cols = job->cols;
    double *e = malloc((size_t)cols * sizeof *e);
    for (int64_t r = begin; r < end; r++) {
        float *row = job->x + r * cols;
        double max = -INFINITY;
        for (int64_t j = 0; j < cols; j++) {
            double v = job->scale * (double)row[j];
            if (v > max)
                max = v;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            double v = exp(job->scale * (double)row[j] - max);
            if (e)
                e[j] = v;
            sum += v;
        }
        for (int64_t j = 0; j < cols; j++) {
            double v = e ? e[j] : exp(job->scale * (double)row[j] - max);
            row[j] = (float)(v / sum);
        }
    }
    free(e);
}

void lb_softmax_cpu(float *x, int64_t rows, int64_t cols, float scale)
{
    if (rows <= 0 || cols <= 0)
        return;
    LbSoftmaxJob job = {.x = x, .cols = cols, .scale = (double)scale};
    /* an exponential costs about as much as 20 multiply-adds */
    lb_cpu_parallel_for(rows, 20.0 * (double)cols, lb_softmax_range, &job);
}

typedef struct LbLayerNormJob {
    float *x;
    const float *r, *gamma, *beta;
    int64_t d;
    double eps;
} LbLayerNormJob;

/* Rows [begin, end) of x (rows, d): v = x + r; x = (v - mean) / sqrt(var + eps) * gamma + beta,
 * mean and biased variance in double, two passes (no cancellation from sum of squares). */
static void lb_layernorm_range(void *ctx, int64_t begin, int64_t end)
{
    const LbLayerNormJob *job = ctx;
    int64_t d = job->d;
    for (int64_t i = begin; i < end; i++) {
        float *row = job->x + i * d;
        const float *res = job->r ? job->r + i * d : NULL;
        double mean = 0.0;
        for (int64_t j = 0; j < d; j++)
            mean += (double)row[j] + (res ? (double)res[j] : 0.0);
        mean /= (double)d;
        double var = 0.0;
        for (int64_t j = 0; j < d; j++) {
            double c = (double)row[j] + (res ? (double)res[j] : 0.0) - mean;
            var += c * c;
        }
        var /= (double)d;
        double inv = 1.0 / sqrt(var + job->eps);
        for (int64_t j = 0; j < d; j++) {
            double c = (double)row[j] + (res ? (double)res[j] : 0.0) - mean;
            row[j] = (float)(c * inv * (double)job->gamma[j] + (double)job->beta[j]);
        }
    }
}

void lb_layernorm_cpu(float *x, const float *r, const float *gamma, const float *beta,
                      int64_t rows, int64_t d, float eps)
{
    if (rows <= 0 || d <= 0)
        return;
    LbLayerNormJob job = {.x = x, .r = r, .gamma = gamma, .beta = beta, .d = d, .eps = (double)eps};
    lb_cpu_parallel_for(rows, 8.0 * (double)d, lb_layernorm_range, &job);
}
