/* The reference row-wise ops: softmax, LayerNorm, and the erf-form GELU (attn/cpu/cpu_ref.h).
 * Statistics are kept in double and every output is rounded to float once, so a kernel that
 * keeps them in fp32 (as METHOD.md allows) differs by a few float ulps at most. Rows are split
 * over threads; each row is done by one thread, in order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/cpu/cpu_parallel.h"
#include "attn/cpu/cpu_ref.h"

float lb_gelu_cpu(float v)
{
    double x = (double)v;
    return (float)(0.5 * x * (1.0 + erf(x * 0.70710678118654752440)));
}

void lb_gelu_array_cpu(float *y, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        y[i] = lb_gelu_cpu(y[i]);
}

/* exp for the softmax's arguments <= 0, vectorisable where glibc's call per element is not:
 * x = k ln 2 + r (Cody and Waite's split, k ln 2 exact), e^r by its Taylor series to degree 13,
 * times 2^k built in the exponent bits; within 1e-15 relative of glibc's (tests/ops/test_ops.c).
 * Below -700 it returns 0, which changes neither a sum holding e^0 = 1 nor its float quotient.
 * The scalar and AVX2 versions do the same operations in the same order: the same bits. */
#define LB_EXP_MIN (-700.0)
#define LB_EXP_MAGIC 6755399441055744.0 /* 1.5 * 2^52: adding it rounds to an integer */
#define LB_LOG2E 1.4426950408889634074
#define LB_LN2_HI 6.93147180369123816490e-01 /* 32 significant bits: k * LB_LN2_HI is exact */
#define LB_LN2_LO 1.90821492927058770002e-10
/* e^r = sum r^i / i!, i = 0..13, in Estrin's order: pairs, then pairs of pairs by r^2, r^4, r^8.
 * Four levels deep, where Horner's chain of 13 dependent multiply-adds waits on latency. */
static const double lb_exp_c[14] = {1.0, 1.0, 1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0,
                                    1.0 / 5040.0, 1.0 / 40320.0, 1.0 / 362880.0, 1.0 / 3628800.0,
                                    1.0 / 39916800.0, 1.0 / 479001600.0, 1.0 / 6227020800.0}; /* 1 / i! */
#define LB_EXP_C(i) lb_exp_c[i]
#define LB_EXP_POLY(p, r, T)                                                                     \
    do {                                                                                         \
        T r2_ = (r) * (r), r4_ = r2_ * r2_, r8_ = r4_ * r4_;                                     \
        T q0_ = LB_EXP_C(0) + LB_EXP_C(1) * (r), q1_ = LB_EXP_C(2) + LB_EXP_C(3) * (r);          \
        T q2_ = LB_EXP_C(4) + LB_EXP_C(5) * (r), q3_ = LB_EXP_C(6) + LB_EXP_C(7) * (r);          \
        T q4_ = LB_EXP_C(8) + LB_EXP_C(9) * (r), q5_ = LB_EXP_C(10) + LB_EXP_C(11) * (r);        \
        T q6_ = LB_EXP_C(12) + LB_EXP_C(13) * (r);                                               \
        T s0_ = q0_ + q1_ * r2_, s1_ = q2_ + q3_ * r2_, s2_ = q4_ + q5_ * r2_;                   \
        T t0_ = s0_ + s1_ * r4_, t1_ = s2_ + q6_ * r4_;                                          \
        (p) = t0_ + t1_ * r8_;                                                                   \
    } while (0)

double lb_exp_nonpos_cpu(double x)
{
    if (x < LB_EXP_MIN)
        return 0.0;
    double t = x * LB_LOG2E + LB_EXP_MAGIC;
    double kf = t - LB_EXP_MAGIC;
    double r = (x - kf * LB_LN2_HI) - kf * LB_LN2_LO;
    double p;
    LB_EXP_POLY(p, r, double);
    uint64_t tb, mb;
    const double magic = LB_EXP_MAGIC;
    memcpy(&tb, &t, sizeof tb);
    memcpy(&mb, &magic, sizeof mb);
    /* 2^k, k = tb - mb >= -1010; unsigned so that a NaN's garbage wraps instead of overflowing */
    uint64_t sb = (tb - mb + 1023u) << 52;
    double scale;
    memcpy(&scale, &sb, sizeof scale);
    return p * scale;
}

/* row (cols) = softmax(scale * row) given max = max(scale * row), with e (cols) as scratch:
 * e = exp(scale * row - max), then row = e / sum(e); without e (no host memory for it), each
 * exponential twice, the same numbers. The sum runs in four interleaved partial sums (element j
 * into sum j % 4) added pairwise at the end, so that the AVX2 version can keep them in one
 * register and still give the same bits. */
static void lb_softmax_row(float *row, int64_t cols, double scale, double max, double *e)
{
    double lanes[4] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t j = 0; j < cols; j++) {
        double v = lb_exp_nonpos_cpu(scale * (double)row[j] - max);
        if (e)
            e[j] = v;
        lanes[j % 4] += v;
    }
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (int64_t j = 0; j < cols; j++)
        row[j] = (float)((e ? e[j] : lb_exp_nonpos_cpu(scale * (double)row[j] - max)) / sum);
}

#if (defined(__GNUC__) && __GNUC__ >= 9 || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define LB_HAVE_AVX2_SOFTMAX 1
typedef double lb_v4d __attribute__((vector_size(32)));
typedef int64_t lb_v4l __attribute__((vector_size(32)));
typedef uint64_t lb_v4u __attribute__((vector_size(32)));
typedef float lb_v4f __attribute__((vector_size(16)));

/* lb_softmax_row with lb_exp_nonpos_cpu written for vectors of four. */
__attribute__((target("avx2"))) static void lb_softmax_row_avx2(float *row, int64_t cols, double scale,
                                                                double max, double *e)
{
    const lb_v4d lim = {LB_EXP_MIN, LB_EXP_MIN, LB_EXP_MIN, LB_EXP_MIN};
    const lb_v4d magic = {LB_EXP_MAGIC, LB_EXP_MAGIC, LB_EXP_MAGIC, LB_EXP_MAGIC};
    lb_v4d sum = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
    /* eight at a time: two independent chains through the polynomial keep the multipliers
     * busy; adding v[0] then v[1] still feeds each lane in element order */
    for (; j + 8 <= cols; j += 8) {
        lb_v4d v[2];
        for (int h = 0; h < 2; h++) {
            const float *xr = row + j + 4 * h;
            lb_v4d x = {(double)xr[0], (double)xr[1], (double)xr[2], (double)xr[3]};
            x = scale * x - max;
            lb_v4l under = x < lim; /* all ones where the result is 0 */
            x = (lb_v4d)(((lb_v4l)x & ~under) | ((lb_v4l)lim & under));
            lb_v4d t = x * LB_LOG2E + magic;
            lb_v4d kf = t - magic;
            lb_v4d r = (x - kf * LB_LN2_HI) - kf * LB_LN2_LO;
            lb_v4d p;
            LB_EXP_POLY(p, r, lb_v4d);
            lb_v4u sb = ((lb_v4u)t - (lb_v4u)magic + 1023u) << 52;
            v[h] = (lb_v4d)((lb_v4l)(p * (lb_v4d)sb) & ~under);
        }
        memcpy(e + j, v, sizeof v);
        sum += v[0];
        sum += v[1];
    }
    double lanes[4];
    memcpy(lanes, &sum, sizeof lanes);
    for (; j < cols; j++) { /* the tail: element j still goes into lane j % 4 */
        double v = lb_exp_nonpos_cpu(scale * (double)row[j] - max);
        e[j] = v;
        lanes[j % 4] += v;
    }
    double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    const lb_v4d total4 = {total, total, total, total};
    for (j = 0; j + 4 <= cols; j += 4) {
        lb_v4d v;
        memcpy(&v, e + j, sizeof v);
        lb_v4f f = __builtin_convertvector(v / total4, lb_v4f);
        memcpy(row + j, &f, sizeof f);
    }
    for (; j < cols; j++)
        row[j] = (float)(e[j] / total);
}
#endif

/* Four running extremes (one comparison chain would wait on itself); an extreme does not depend
 * on the order. */
float lb_row_extreme_cpu(const float *row, int64_t cols, int largest)
{
    const float sign = largest ? 1.0f : -1.0f; /* the smallest x is minus the largest -x */
    float m[4] = {sign * row[0], sign * row[0], sign * row[0], sign * row[0]};
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4)
        for (int l = 0; l < 4; l++) {
            float v = sign * row[j + l];
            m[l] = v > m[l] ? v : m[l];
        }
    for (; j < cols; j++) {
        float v = sign * row[j];
        m[0] = v > m[0] ? v : m[0];
    }
    float top = m[0];
    for (int l = 1; l < 4; l++)
        top = m[l] > top ? m[l] : top;
    return sign * top;
}

typedef void (*LbSoftmaxRow)(float *row, int64_t cols, double scale, double max, double *e);

typedef struct LbSoftmaxJob {
    float *x;
    int64_t cols;
    double scale;
    LbSoftmaxRow row_fn; /* lb_softmax_row or its AVX2 version */
} LbSoftmaxJob;

/* Rows [begin, end) of x (rows, cols): x = softmax(scale * x), with the double row e (cols) as
 * scratch (NULL: none). */
static void lb_softmax_rows(void *ctx, int64_t begin, int64_t end, double *e)
{
    const LbSoftmaxJob *job = ctx;
    int64_t cols = job->cols;
    for (int64_t r = begin; r < end; r++) {
        float *row = job->x + r * cols;
        /* max of scale * x: scale times the largest x (the smallest for scale < 0), the same
         * double since the product of two floats is exact in double; cheaper than scaling all */
        double max = job->scale * (double)lb_row_extreme_cpu(row, cols, job->scale >= 0.0);
        (e ? job->row_fn : lb_softmax_row)(row, cols, job->scale, max, e);
    }
}

void lb_softmax_cpu(float *x, int64_t rows, int64_t cols, float scale)
{
    if (rows <= 0 || cols <= 0)
        return;
    LbSoftmaxJob job = {.x = x, .cols = cols, .scale = (double)scale, .row_fn = lb_softmax_row};
    /* LB_CPU_KERNEL=generic forces the portable row (to compare them) */
    const char *force = getenv("LB_CPU_KERNEL");
#if defined(LB_HAVE_AVX2_SOFTMAX)
    if (!(force && strcmp(force, "generic") == 0) && __builtin_cpu_supports("avx2"))
        job.row_fn = lb_softmax_row_avx2;
#else
    (void)force;
#endif
    /* about 10 multiply-adds' worth per element */
    lb_cpu_parallel_for(rows, 10.0 * (double)cols, (size_t)cols, lb_softmax_rows, &job);
}

typedef struct LbLayerNormJob {
    float *x;
    const float *r, *gamma, *beta;
    int64_t d;
    double eps;
} LbLayerNormJob;

/* Rows [begin, end) of x (rows, d): v = x + r; x = (v - mean) / sqrt(var + eps) * gamma + beta,
 * mean and biased variance in double, two passes (no cancellation from sum of squares). */
static void lb_layernorm_rows(void *ctx, int64_t begin, int64_t end, double *scratch)
{
    const LbLayerNormJob *job = ctx;
    (void)scratch; /* none asked for */
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
        double sd = sqrt(var + job->eps);
        for (int64_t j = 0; j < d; j++) {
            double c = (double)row[j] + (res ? (double)res[j] : 0.0) - mean;
            row[j] = (float)(c / sd * (double)job->gamma[j] + (double)job->beta[j]);
        }
    }
}

void lb_layernorm_cpu(float *x, const float *r, const float *gamma, const float *beta,
                      int64_t rows, int64_t d, float eps)
{
    if (rows <= 0 || d <= 0)
        return;
    LbLayerNormJob job = {.x = x, .r = r, .gamma = gamma, .beta = beta, .d = d, .eps = (double)eps};
    lb_cpu_parallel_for(rows, 8.0 * (double)d, 0, lb_layernorm_rows, &job);
}
