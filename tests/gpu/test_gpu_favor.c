/* The Performer's kernels (gpu/favor.cu) against their CPU references (attn/cpu/cpu_ref.h), in
 * all three storage types: favor_features for queries (each row's own max) and keys (one max per
 * group, through the scratch), rows of 1 to 300 features, 16-byte aligned and not, head widths
 * below, at and above a warp; divide_by_last on rows of 1 to 129 columns. Inputs are fresh random
 * values drawn on the device and read back, so the reference sees what the kernel saw; outputs
 * are poisoned with NaN first (divide_by_last) or are the inputs (features, in place). Rows and
 * groups are shifted apart so a kernel that takes another row's or group's max is far off, not
 * close. Exit 77 without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn/cpu/cpu_ref.h"
#include "tests/gpu/gpu_check.h"

static void check_features(LbBackend *be, int64_t groups, int64_t n, int64_t m, int64_t hd, int keys, int64_t offset)
{
    const int64_t fc = groups * n * m, xc = groups * n * hd;
    void *bf = lb_gpu_alloc(be, fc), *d_x = lb_gpu_alloc(be, xc);
    void *d_f = lb_gpu_at(be, bf, offset);
    /* the scratch in storage elements, rounded up */
    const int64_t stat_elems = (int64_t)((lb_favor_stat_bytes(groups, n) + be->elem_bytes - 1) / be->elem_bytes);
    void *d_stat = keys ? lb_gpu_alloc(be, stat_elems) : NULL;
    float *f = lb_test_alloc(fc), *x = lb_test_alloc(xc), *out = lb_test_alloc(fc);
    /* Projections of the size w x' takes for unit-scale heads, then shifts: queries every third
     * row by +6 (its own max must be taken), keys every group by -3 g and one row of each group by
     * +4 (the group's max, not the row's). */
    lb_gpu_random(be, d_f, f, fc, -3.0f, 3.0f);
    lb_gpu_random(be, d_x, x, xc, -1.5f, 1.5f);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t r = 0; r < n; r++)
            for (int64_t j = 0; j < m; j++) {
                float *v = &f[(g * n + r) * m + j];
                if (!keys)
                    *v += 6.0f * (float)(r % 3);
                else
                    *v += -3.0f * (float)g + (r == (g * 7) % n ? 4.0f : 0.0f);
            }
    lb_gpu_ok(be->ops->upload(be, d_f, f, fc), "upload of shifted projections");
    lb_gpu_ok(be->ops->download(be, f, d_f, fc), "download of shifted projections");
    const float scale = (float)pow((double)hd, -0.25);
    lb_gpu_ok(be->ops->favor_features(be, d_f, d_x, d_stat, groups, n, m, hd, scale, keys), "favor_features");
    lb_gpu_ok(be->ops->download(be, out, d_f, fc), "download");
    lb_favor_features_cpu(f, x, groups, n, m, hd, scale, keys);
    char what[128];
    snprintf(what, sizeof what, "favor %s %s %lldx%lld m %lld hd %lld%s", keys ? "keys" : "queries", lb_gpu_dtype(be),
             (long long)groups, (long long)n, (long long)m, (long long)hd, offset ? " (unaligned)" : "");
    lb_gpu_check_rel(what, out, f, fc, be->storage, lb_gpu_kernel_tol(be->storage));
    be->ops->mem_free(be, bf);
    be->ops->mem_free(be, d_x);
    if (d_stat)
        be->ops->mem_free(be, d_stat);
    free(f);
    free(x);
    free(out);
}

static void check_divide(LbBackend *be, int64_t rows, int64_t cols)
{
    const int64_t xc = rows * (cols + 1), yc = rows * cols;
    void *d_x = lb_gpu_alloc(be, xc), *d_y = lb_gpu_alloc(be, yc);
    float *x = lb_test_alloc(xc), *y = lb_test_alloc(yc), *ref = lb_test_alloc(yc);
    /* numerators of either sign, normalisers positive and of different sizes per row (a kernel
     * that divides by another row's shows) */
    lb_gpu_random(be, d_x, x, xc, -1.0f, 1.0f);
    for (int64_t r = 0; r < rows; r++)
        x[r * (cols + 1) + cols] = 0.25f + fabsf(x[r * (cols + 1) + cols]) * 4.0f;
    lb_gpu_ok(be->ops->upload(be, d_x, x, xc), "upload of the normalisers");
    lb_gpu_ok(be->ops->download(be, x, d_x, xc), "download of the normalisers");
    lb_gpu_poison(be, d_y, yc);
    lb_gpu_ok(be->ops->divide_by_last(be, d_x, d_y, rows, cols), "divide_by_last");
    lb_gpu_ok(be->ops->download(be, y, d_y, yc), "download");
    lb_divide_by_last_cpu(x, ref, rows, cols);
    char what[128];
    snprintf(what, sizeof what, "divide_by_last %s %lld x %lld", lb_gpu_dtype(be), (long long)rows, (long long)cols);
    lb_gpu_check_rel(what, y, ref, yc, be->storage, lb_gpu_kernel_tol(be->storage));
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_y);
    free(x);
    free(y);
    free(ref);
}

static void run_dtype(LbDtype dtype)
{
    LbBackend *be = lb_gpu_open_or_skip(dtype, 0);
    printf("%s:\n", lb_dtype_name(dtype));
    /* m: one feature, fewer than a pack, a pack per lane and more, not a multiple of a warp's packs */
    static const int64_t ms[] = {1, 5, 8, 64, 100, 256, 300};
    static const int64_t hds[] = {4, 32, 64, 100};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (int keys = 0; keys < 2; keys++) {
            const int64_t hd = hds[i % 4];
            check_features(be, 3, lb_gpu_quick() ? 5 : 37, ms[i], hd, keys, 0);
            if (ms[i] % 8 == 0)
                check_features(be, 2, 9, ms[i], hd, keys, 1);
        }
    check_features(be, 1, 1, 64, 64, 1, 0); /* one key: its own row is the group */
    check_features(be, 5, 300, 16, 16, 1, 0); /* a group longer than the reduction block */
    static const int64_t cols[] = {1, 16, 64, 65, 129};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        check_divide(be, lb_gpu_quick() ? 7 : 131, cols[i]);
    lb_gpu_ok(be->ops->sync(be), "sync");
    lb_backend_close(be);
}

int main(void)
{
    lb_test_init("test_gpu_favor");
    run_dtype(LB_DTYPE_FP32);
    run_dtype(LB_DTYPE_FP16);
    run_dtype(LB_DTYPE_BF16);
    /* Again with 3 blocks per launch: every block walks many rows and groups. */
    printf("grid capped at 3 blocks:\n");
    lb_cuda_set_grid_cap(3);
    run_dtype(LB_DTYPE_FP16);
    run_dtype(LB_DTYPE_FP32);
    lb_cuda_set_grid_cap(0);
    return lb_test_finish("test_gpu_favor");
}
