/* Tensors past 2^31 elements on the CUDA backend, where a 32-bit index would wrap: fill_uniform
 * and softmax over 2^31 + 2^16 fp16 elements, and a bmm whose C of 2.3e9 elements the backend
 * splits into calls; sampled rows either side of each boundary against the CPU reference, and
 * every row scanned (a distribution; C written over its NaN poison). Needs about 10 GB of device
 * memory; exits 77 (skip) without a device or with less free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/check.h"
#include "attn/cpu/cpu_ref.h"
#include "tests/gpu/gpu_check.h"

#define ROWS_PER_CHUNK 256

/* Rows sampled for a full comparison: the first, the last, those either side of `boundary`,
 * and a few at random. Returns the count written to rows[]. */
static int sample_rows(int64_t nrows, int64_t boundary, int64_t *rows)
{
    int k = 0;
    const int64_t fixed[] = {0, 1, boundary - 1, boundary, boundary + 1, nrows - 1};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i] >= 0 && fixed[i] < nrows)
            rows[k++] = fixed[i];
    for (int i = 0; i < 6; i++)
        rows[k++] = lb_test_randint(0, nrows - 1);
    return k;
}

/* The rows of d_x (nrows, cols) that bad_row(row) flags, read ROWS_PER_CHUNK at a time: their
 * count, the first in *first (-1 without any). */
static int64_t count_bad_rows(LbBackend *be, void *d_x, int64_t nrows, int64_t cols, int (*bad_row)(const float *, int64_t),
                              int64_t *first)
{
    float *chunk = lb_test_alloc(ROWS_PER_CHUNK * cols);
    int64_t bad = 0;
    *first = -1;
    for (int64_t r0 = 0; r0 < nrows; r0 += ROWS_PER_CHUNK) {
        const int64_t nr = nrows - r0 < ROWS_PER_CHUNK ? nrows - r0 : ROWS_PER_CHUNK;
        lb_gpu_ok(be->ops->download(be, chunk, lb_gpu_at(be, d_x, r0 * cols), nr * cols), "download rows");
        for (int64_t r = 0; r < nr; r++)
            if (bad_row(chunk + r * cols, cols)) {
                if (*first < 0)
                    *first = r0 + r;
                bad++;
            }
    }
    free(chunk);
    return bad;
}

/* Not a distribution: an element outside [0, 1] (or NaN), or a sum off 1 by more than fp16
 * rounding allows (each of 65536 terms off by at most 2^-11 of itself). */
static int not_distribution(const float *row, int64_t cols)
{
    double sum = 0.0;
    int ok = 1;
    for (int64_t j = 0; j < cols; j++) {
        ok &= row[j] >= 0.0f && row[j] <= 1.0f; /* false for NaN */
        sum += row[j];
    }
    return !ok || fabs(sum - 1.0) > 2e-3;
}

/* An element left unwritten: still the NaN poison (or not finite). */
static int not_written(const float *row, int64_t cols)
{
    for (int64_t j = 0; j < cols; j++)
        if (!isfinite(row[j]))
            return 1;
    return 0;
}

static void check_softmax_large(LbBackend *be)
{
    const int64_t cols = 65536, nrows = 32769, count = nrows * cols; /* 2^31 + 2^16 */
    void *d_x = lb_gpu_alloc(be, count);
    void *d_tmp = lb_gpu_alloc(be, cols);
    const uint64_t seed = lb_gpu_next_seed();
    lb_gpu_ok(be->ops->fill_uniform(be, d_x, count, seed, -8.0f, 8.0f), "fill_uniform (2^31+ elements)");
    int64_t rows[16];
    const int ns = sample_rows(nrows, ((int64_t)1 << 31) / cols, rows);
    float *in = lb_test_alloc((int64_t)ns * cols), *want = lb_test_alloc(cols), *got = lb_test_alloc(cols);
    /* The inputs of the sampled rows: as drawn on the device, and as the CPU draws them (rounded
     * to fp16 through upload). */
    int fill_same = 1;
    for (int i = 0; i < ns; i++) {
        float *row = in + (int64_t)i * cols;
        lb_gpu_ok(be->ops->download(be, row, lb_gpu_at(be, d_x, rows[i] * cols), cols), "download row");
        for (int64_t j = 0; j < cols; j++)
            want[j] = lb_rng_range(seed, (uint64_t)(rows[i] * cols + j), -8.0f, 8.0f);
        lb_gpu_ok(be->ops->upload(be, d_tmp, want, cols), "upload");
        lb_gpu_ok(be->ops->download(be, want, d_tmp, cols), "download");
        fill_same &= memcmp(want, row, (size_t)cols * sizeof *row) == 0;
    }
    lb_check(fill_same, "fill_uniform past 2^31: sampled rows equal lb_rng_range rounded to fp16");

    lb_gpu_ok(be->ops->softmax(be, d_x, nrows, cols, 0.125f), "softmax (2^31+ elements)");
    lb_gpu_ok(be->ops->sync(be), "sync");
    for (int i = 0; i < ns; i++) {
        lb_gpu_ok(be->ops->download(be, got, lb_gpu_at(be, d_x, rows[i] * cols), cols), "download row");
        lb_softmax_cpu(in + (int64_t)i * cols, 1, cols, 0.125f);
        char what[96];
        snprintf(what, sizeof what, "softmax fp16 row %lld of %lld x %lld", (long long)rows[i],
                 (long long)nrows, (long long)cols);
        lb_check_against(be, "softmax", what, got, in + (int64_t)i * cols, cols);
    }
    int64_t first_bad;
    const int64_t bad_rows = count_bad_rows(be, d_x, nrows, cols, not_distribution, &first_bad);
    lb_check(bad_rows == 0, "softmax past 2^31: %lld rows not a distribution (first %lld)",
             (long long)bad_rows, (long long)first_bad);
    free(in);
    free(want);
    free(got);
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_tmp);
}

static void check_bmm_large(LbBackend *be)
{
    const int64_t m = 70000, n = 32768, kd = 16;
    void *d_a = lb_gpu_alloc(be, m * kd), *d_b = lb_gpu_alloc(be, kd * n), *d_c = lb_gpu_alloc(be, m * n);
    float *a = lb_test_alloc(m * kd), *b = lb_test_alloc(kd * n);
    lb_gpu_random(be, d_a, a, m * kd, -1.0f, 1.0f);
    lb_gpu_random(be, d_b, b, kd * n, -1.0f, 1.0f);
    lb_gpu_poison(be, d_c, m * n);
    const LbBmm q = {.m = m, .n = n, .kdim = kd, .alpha = 1.0f, .a = d_a, .lda = kd, .b = d_b, .ldb = n,
                     .c = d_c, .ldc = n, .batch = 1};
    lb_gpu_ok(be->ops->bmm(be, &q), "bmm (C past 2^31 elements)");
    lb_gpu_ok(be->ops->sync(be), "sync");
    /* gpu/matmul.cu splits m into equal calls of at most (2^31 - 1) / ldc rows: here 2 of 35000. */
    const int64_t most = INT32_MAX / n, pieces = (m + most - 1) / most, boundary = (m + pieces - 1) / pieces;
    int64_t rows[16];
    const int ns = sample_rows(m, boundary, rows);
    float *got = lb_test_alloc(n), *want = lb_test_alloc(n);
    for (int i = 0; i < ns; i++) {
        lb_gpu_ok(be->ops->download(be, got, lb_gpu_at(be, d_c, rows[i] * n), n), "download row");
        LbBmm h = q;
        h.m = 1;
        h.a = a + rows[i] * kd;
        h.b = b;
        h.c = want;
        lb_bmm_cpu(&h);
        char what[96];
        snprintf(what, sizeof what, "bmm fp16 row %lld of C %lld x %lld", (long long)rows[i], (long long)m,
                 (long long)n);
        lb_check_against(be, "bmm", what, got, want, n);
    }
    int64_t first;
    const int64_t unwritten = count_bad_rows(be, d_c, m, n, not_written, &first);
    lb_check(unwritten == 0, "bmm past 2^31: %lld rows of C not all written (first %lld)", (long long)unwritten,
             (long long)first);
    free(got);
    free(want);
    free(a);
    free(b);
    be->ops->mem_free(be, d_a);
    be->ops->mem_free(be, d_b);
    be->ops->mem_free(be, d_c);
}

int main(void)
{
    lb_test_init("test_gpu_large");
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    size_t free_b = 0, total_b = 0;
    lb_gpu_ok(be->ops->mem_info(be, &free_b, &total_b), "mem_info");
    const size_t need = (size_t)5200 << 20; /* the larger test: C of 2.3e9 fp16 + A, B, slack */
    if (free_b < need) {
        printf("SKIP: %zu bytes free on the device, %zu needed\n", free_b, need);
        lb_backend_close(be);
        return LB_TEST_SKIP;
    }
    void *ws = NULL;
    lb_gpu_ok(be->ops->mem_alloc(be, be->workspace_bytes, &ws), "workspace");
    lb_gpu_ok(be->ops->set_workspace(be, ws, be->workspace_bytes), "set_workspace");
    check_softmax_large(be);
    check_bmm_large(be);
    be->ops->mem_free(be, ws);
    lb_backend_close(be);
    return lb_test_finish("test_gpu_large");
}
