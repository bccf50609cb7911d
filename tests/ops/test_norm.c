/* Softmax, LayerNorm and GELU of the CPU reference: the properties that hold whatever the inputs
 * (rows of a softmax sum to 1, a normalised row has mean 0 and variance 1) and agreement with
 * naive double versions, on random rows from 1 to a few thousand columns. */
#include "attn/cpu/cpu_ref.h"
#include "attn/ops.h"
#include "attn/status.h"
#include "tests/lib/check.h"

/* Outputs are double results rounded once to float: 1e-5 relative (METHOD.md's fp32 tolerance)
 * leaves room only for that rounding and for float inputs scaled in float vs double. */
#define LB_NORM_RTOL 1e-5

static void lb_softmax_naive(const float *x, double *y, int64_t rows, int64_t cols, float scale)
{
    for (int64_t r = 0; r < rows; r++) {
        double max = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < cols; j++)
            max = fmax(max, (double)scale * x[r * cols + j]);
        for (int64_t j = 0; j < cols; j++)
            sum += exp((double)scale * x[r * cols + j] - max);
        for (int64_t j = 0; j < cols; j++)
            y[r * cols + j] = exp((double)scale * x[r * cols + j] - max) / sum;
    }
}

static void lb_test_softmax(LbBackend *be, int64_t rows, int64_t cols, float scale, float range)
{
    float *x = lb_test_alloc(rows * cols), *in = lb_test_alloc(rows * cols);
    double *ref = malloc((size_t)(rows * cols) * sizeof *ref);
    lb_test_random(in, rows * cols, -range, range);
    memcpy(x, in, (size_t)(rows * cols) * sizeof *x);
    char what[96];
    snprintf(what, sizeof what, "softmax %" PRId64 "x%" PRId64 " scale %g", rows, cols, (double)scale);
    int rc = be->ops->softmax(be, x, rows, cols, scale);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where())) {
        /* each row sums to 1 to 1e-6: the float roundings of its elements add up to less */
        int64_t bad = 0;
        double worst = 0.0;
        for (int64_t r = 0; r < rows; r++) {
            double sum = 0.0;
            for (int64_t j = 0; j < cols; j++)
                sum += x[r * cols + j];
            if (!(fabs(sum - 1.0) <= 1e-6)) {
                if (bad++ < 5)
                    printf("  %s row %" PRId64 ": sums to %.12g\n", what, r, sum);
            }
            if (!(fabs(sum - 1.0) <= worst))
                worst = fabs(sum - 1.0);
        }
        lb_check(bad == 0, "%s: %" PRId64 " rows do not sum to 1 (worst |sum - 1| %.3g)", what, bad, worst);
        lb_softmax_naive(in, ref, rows, cols, scale);
        /* atol 1e-12: probabilities that underflow to float denormals keep no relative precision */
        lb_check_close(what, x, ref, rows * cols, 1e-12, LB_NORM_RTOL);
    }
    free(x);
    free(in);
    free(ref);
}

/* x (rows, d) = LayerNorm(x + r) * gamma + beta in double, biased variance. */
static void lb_layernorm_naive(const float *x, const float *r, const float *g, const float *b,
                               double *y, int64_t rows, int64_t d, double eps)
{
    for (int64_t i = 0; i < rows; i++) {
        double mean = 0.0, var = 0.0;
        for (int64_t j = 0; j < d; j++)
            mean += (double)x[i * d + j] + (r ? r[i * d + j] : 0.0);
        mean /= d;
        for (int64_t j = 0; j < d; j++) {
            double c = (double)x[i * d + j] + (r ? r[i * d + j] : 0.0) - mean;
            var += c * c;
        }
        var /= d;
        for (int64_t j = 0; j < d; j++) {
            double c = (double)x[i * d + j] + (r ? r[i * d + j] : 0.0) - mean;
            y[i * d + j] = c / sqrt(var + eps) * g[j] + b[j];
        }
    }
}

static void lb_test_layernorm(LbBackend *be, int64_t rows, int64_t d)
{
    float *x = lb_test_alloc(rows * d), *in = lb_test_alloc(rows * d), *r = lb_test_alloc(rows * d);
    float *g = lb_test_alloc(d), *b = lb_test_alloc(d);
    double *ref = malloc((size_t)(rows * d) * sizeof *ref);
    char what[96];
    const float eps = 1e-5f;

    /* gamma 1, beta 0: every row mean 0 and variance 1 to 1e-4. The variance comes out as
     * var / (var + eps), so eps is 1e-12 here: a short row of close values (d = 2) may have a
     * variance near 1e-3. An offset so that the mean matters. */
    lb_test_random(x, rows * d, 3.0f, 7.0f);
    for (int64_t j = 0; j < d; j++) {
        g[j] = 1.0f;
        b[j] = 0.0f;
    }
    snprintf(what, sizeof what, "layernorm %" PRId64 "x%" PRId64 " (gamma 1, beta 0)", rows, d);
    int rc = be->ops->layernorm(be, x, NULL, g, b, rows, d, 1e-12f);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where())) {
        int64_t bad = 0;
        for (int64_t i = 0; i < rows; i++) {
            double mean = 0.0, var = 0.0;
            for (int64_t j = 0; j < d; j++)
                mean += x[i * d + j];
            mean /= d;
            for (int64_t j = 0; j < d; j++)
                var += (x[i * d + j] - mean) * (x[i * d + j] - mean);
            var /= d;
            if (!(fabs(mean) <= 1e-4 && fabs(var - 1.0) <= 1e-4) && bad++ < 5)
                printf("  %s row %" PRId64 ": mean %.3g, variance %.9g\n", what, i, mean, var);
        }
        lb_check(bad == 0, "%s: %" PRId64 " rows not at mean 0, variance 1", what, bad);
    }

    /* residual, random gamma and beta against the naive version */
    lb_test_random(in, rows * d, -2.0f, 3.0f);
    lb_test_random(r, rows * d, -1.0f, 1.0f);
    lb_test_random(g, d, 0.5f, 1.5f);
    lb_test_random(b, d, -0.5f, 0.5f);
    memcpy(x, in, (size_t)(rows * d) * sizeof *x);
    snprintf(what, sizeof what, "layernorm %" PRId64 "x%" PRId64 " (residual, gamma, beta)", rows, d);
    rc = be->ops->layernorm(be, x, r, g, b, rows, d, eps);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where())) {
        lb_layernorm_naive(in, r, g, b, ref, rows, d, eps);
        lb_check_close(what, x, ref, rows * d, 1e-6, LB_NORM_RTOL);
    }
    free(x);
    free(in);
    free(r);
    free(g);
    free(b);
    free(ref);
}

static void lb_test_gelu(void)
{
    /* 0.5 v (1 + erf(v / sqrt 2)) in double (Python's math.erf); the float result is within one
     * rounding, 6e-8 relative */
    static const double known[][2] = {
        {1.0, 0.8413447460685429},   {0.0, 0.0},
        {-1.0, -0.15865525393145707}, {2.0, 1.9544997361036416},
        {-3.0, -0.00404969409489031}, {0.5, 0.34573123063700656},
        {3.0, 2.99595030590511},     {10.0, 10.0},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        double got = lb_gelu_cpu((float)known[i][0]);
        lb_check(fabs(got - known[i][1]) <= 1e-7 * fabs(known[i][1]), "gelu(%g) = %.17g, want %.17g",
                 known[i][0], got, known[i][1]);
    }
    /* the tanh approximation differs from erf by about 1e-4 near |v| = 2: must not be it */
    double t = 0.5 * 2.0 * (1.0 + tanh(sqrt(2.0 / M_PI) * (2.0 + 0.044715 * 8.0)));
    lb_check(fabs(lb_gelu_cpu(2.0f) - t) > 1e-5, "gelu(2) = %.9g is the tanh approximation", (double)lb_gelu_cpu(2.0f));
    lb_check(lb_gelu_cpu(-20.0f) == 0.0f && !isnan(lb_gelu_cpu(-20.0f)), "gelu(-20) = %g, want 0", (double)lb_gelu_cpu(-20.0f));
}

/* The softmax's own exp against libm's, over the whole range it is used on, and at its edges. */
static void lb_test_exp(void)
{
    int64_t bad = 0;
    double worst = 0.0;
    for (int64_t i = 0; i <= 700000; i++) {
        double x = -(double)i * 1e-3 - (double)lb_rng_uniform(lb_test_seed, (uint64_t)i) * 1e-3;
        if (x < -700.0)
            break;
        double got = lb_exp_nonpos_cpu(x), want = exp(x);
        double rel = fabs(got - want) / want;
        if (!(rel <= 1e-15) && bad++ < 5)
            printf("  exp(%.17g): got %.17g, want %.17g\n", x, got, want);
        if (!(rel <= worst))
            worst = rel;
    }
    lb_check(bad == 0, "lb_exp_nonpos_cpu: %" PRId64 " of 700000 points off libm's exp by more than 1e-15 (worst %.3g)", bad, worst);
    lb_check(lb_exp_nonpos_cpu(0.0) == 1.0, "lb_exp_nonpos_cpu(0) = %.17g", lb_exp_nonpos_cpu(0.0));
    lb_check(lb_exp_nonpos_cpu(-700.5) == 0.0 && lb_exp_nonpos_cpu(-INFINITY) == 0.0, "lb_exp_nonpos_cpu below -700 is not 0");
    lb_check(isnan(lb_exp_nonpos_cpu(NAN)), "lb_exp_nonpos_cpu(NaN) is not NaN");
}

/* The AVX2 softmax row (where the CPU has it) and the portable one: the same bits. */
static void lb_test_softmax_paths(void)
{
    const int64_t rows = 7, cols = 1029; /* not a multiple of 8: the tails too */
    float *a = lb_test_alloc(rows * cols), *b = lb_test_alloc(rows * cols);
    lb_test_random(a, rows * cols, -20.0f, 20.0f);
    memcpy(b, a, (size_t)(rows * cols) * sizeof *a);
    lb_softmax_cpu(a, rows, cols, 0.7f);
    setenv("LB_CPU_KERNEL", "generic", 1);
    lb_softmax_cpu(b, rows, cols, 0.7f);
    unsetenv("LB_CPU_KERNEL");
    lb_check_same("softmax, fast row vs portable row", a, b, rows * cols);
    free(a);
    free(b);
}

int main(void)
{
    lb_test_init("test_norm");
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP16, (size_t)1 << 30, &be) == LB_OK, "open: %s", lb_error_where()))
        return lb_test_finish("test_norm");

    static const int64_t cols[] = {1, 2, 3, 7, 16, 64, 257, 1000, 4096};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        lb_test_softmax(be, 9, cols[i], 1.0f, 4.0f);
        lb_test_softmax(be, 5, cols[i], 0.125f, 8.0f);  /* 1 / sqrt(64), the attention scale */
        lb_test_softmax(be, 3, cols[i], 40.0f, 3.0f);   /* large: most probabilities underflow */
        lb_test_softmax(be, 3, cols[i], 1e-3f, 1.0f);   /* small: nearly uniform */
    }
    lb_test_softmax(be, 4, 333, 1.0f, 1e4f);             /* huge scores: max subtraction */
    lb_test_softmax(be, 200, 1500, 0.25f, 4.0f);         /* threaded */
    lb_test_softmax(be, lb_test_randint(1, 50), lb_test_randint(1, 3000), 0.5f, 5.0f);

    static const int64_t dims[] = {2, 7, 64, 768, 3000};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        lb_test_layernorm(be, 13, dims[i]);
    lb_test_layernorm(be, 600, 256); /* threaded */
    lb_test_layernorm(be, lb_test_randint(1, 40), lb_test_randint(2, 2000));

    lb_test_gelu();
    lb_test_exp();
    lb_test_softmax_paths();
    be->ops->close(be);
    return lb_test_finish("test_norm");
}
