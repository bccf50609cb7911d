/* The reference of the Performer's two ops (cpu_ref.h): FAVOR+'s features in place over the
 * projections, and the division by the normaliser in a last column; in double, rounded once. */
#include <math.h>

#include "attn/cpu/cpu_ref.h"
#include "attn/op_args.h"
#include "attn/base/status.h"

/* |scale x|^2 / 2 of one row x (hd), in double: the -|x'|^2/2 of phi(x'). */
static double half_norm2(const float *x, int64_t hd, double scale)
{
    double s = 0.0;
    for (int64_t e = 0; e < hd; e++)
        s += (double)x[e] * (double)x[e];
    return 0.5 * scale * scale * s;
}

int lb_cpu_favor_features(LbBackend *be, void *f_v, const void *x_v, void *stat, int64_t groups, int64_t n, int64_t m,
                          int64_t hd, float scale, int keys)
{
    float *f = f_v;
    const float *x = x_v;
    (void)stat; /* the reference needs no scratch */
    LB_TRY(lb_args_favor(be, f, x, groups, n, m, hd));
    if (groups <= 0 || n <= 0 || m <= 0)
        return LB_OK;
    const double inv_sqrt_m = 1.0 / sqrt((double)m);
    for (int64_t g = 0; g < groups; g++) {
        float *fg = f + g * n * m;
        const float *xg = x + g * n * hd;
        /* keys: one stabiliser for the whole group (every key of one head and sequence), as the
         * authors' code takes the max over all keys; queries: each row's own, below */
        const double group_max = keys ? lb_row_extreme_cpu(fg, n * m, 1) : 0.0;
        for (int64_t r = 0; r < n; r++) {
            float *row = fg + r * m;
            const double top = keys ? group_max : lb_row_extreme_cpu(row, m, 1);
            const double shift = half_norm2(xg + r * hd, hd, (double)scale) + top;
            for (int64_t j = 0; j < m; j++)
                row[j] = (float)(exp((double)row[j] - shift) * inv_sqrt_m);
        }
    }
    return LB_OK;
}

int lb_cpu_divide_by_last(LbBackend *be, const void *x_v, void *y_v, int64_t rows, int64_t cols)
{
    const float *x = x_v;
    float *y = y_v;
    LB_TRY(lb_args_divide_by_last(be, x, y, rows, cols));
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * (cols + 1);
        const double den = (double)xr[cols];
        for (int64_t j = 0; j < cols; j++)
            y[r * cols + j] = (float)((double)xr[j] / den);
    }
    return LB_OK;
}
