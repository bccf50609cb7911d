/* The linear layer and LayerNorm in double, the plain loops of the tests' own forward references
 * (tests/model/test_model.c forward_naive, tests/reports/test_cli_dump_recompute.c). */
#ifndef LB_TESTS_LIB_NAIVE_LAYERS_H
#define LB_TESTS_LIB_NAIVE_LAYERS_H

#include <math.h>
#include <stdint.h>

/* out (rows, o) = x (rows, in) W[row0 : row0 + o] (o, in)^T + b[row0 : row0 + o]; b may be NULL. */
static inline void lb_naive_linear(const double *x, int64_t rows, int64_t in, const float *W, const float *b,
                                   int64_t row0, int64_t o, double *out)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < o; j++) {
            double s = b ? b[row0 + j] : 0;
            for (int64_t i = 0; i < in; i++)
                s += x[r * in + i] * W[(row0 + j) * in + i];
            out[r * o + j] = s;
        }
}

/* x = LayerNorm(x + y) g + b over rows of d; y may be NULL. */
static inline void lb_naive_layernorm(double *x, const double *y, int64_t rows, int64_t d, const float *g,
                                      const float *b, double eps)
{
    for (int64_t r = 0; r < rows; r++) {
        double *v = x + r * d, mean = 0, var = 0;
        for (int64_t i = 0; i < d; i++)
            mean += (v[i] += y ? y[r * d + i] : 0);
        mean /= d;
        for (int64_t i = 0; i < d; i++)
            var += (v[i] - mean) * (v[i] - mean);
        var /= d;
        for (int64_t i = 0; i < d; i++)
            v[i] = (v[i] - mean) / sqrt(var + eps) * g[i] + b[i];
    }
}

#endif
