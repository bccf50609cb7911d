/* The reference products against the naive triple loop in double: linear (bias or not, GELU or
 * not) and bmm (every transpose pair, leading dimensions wider than the rows, batch strides with
 * gaps, stride 0 broadcast of A and of B), through the CPU backend's ops table. Also: the gaps
 * between rows of C are never written, and the result does not depend on the thread count. */
#include "attn/cpu/cpu_ref.h"
#include "attn/ops.h"
#include "attn/status.h"
#include "tests/lib/check.h"

/* fp32 storage, double sums rounded once: only the final rounding differs from the double
 * reference, so 1e-5 relative (METHOD.md's fp32 tolerance) is loose; atol covers sums that
 * cancel to near zero. */
#define LB_MM_RTOL 1e-5
#define LB_MM_ATOL 1e-6

static double lb_gelu_ref(double v) { return 0.5 * v * (1.0 + erf(v / sqrt(2.0))); }

/* y (rows, out) = x (rows, in) . w (out, in)^T + b, GELU, all in double. */
static void lb_linear_naive(const float *x, const float *w, const float *b, double *y,
                            int64_t rows, int64_t in, int64_t out, int gelu)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < out; j++) {
            double s = b ? (double)b[j] : 0.0;
            for (int64_t p = 0; p < in; p++)
                s += (double)x[i * in + p] * (double)w[j * in + p];
            y[i * out + j] = gelu ? lb_gelu_ref(s) : s;
        }
}

static void lb_test_linear(LbBackend *be, int64_t rows, int64_t in, int64_t out, int bias, int gelu)
{
    float *x = lb_test_alloc(rows * in), *w = lb_test_alloc(out * in), *b = lb_test_alloc(out);
    float *y = lb_test_alloc(rows * out);
    double *ref = malloc((size_t)(rows * out + 1) * sizeof *ref);
    lb_test_random(x, rows * in, -1.0f, 1.0f);
    lb_test_random(w, out * in, -0.5f, 0.5f);
    lb_test_random(b, out, -1.0f, 1.0f);
    lb_test_poison(y, rows * out);
    int rc = be->ops->linear(be, x, w, bias ? b : NULL, y, rows, in, out, gelu);
    char what[96];
    snprintf(what, sizeof what, "linear %" PRId64 "x%" PRId64 "x%" PRId64 " bias %d gelu %d", rows, in, out, bias, gelu);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where())) {
        lb_linear_naive(x, w, bias ? b : NULL, ref, rows, in, out, gelu);
        lb_check_close(what, y, ref, rows * out, LB_MM_ATOL, LB_MM_RTOL);
    }
    free(x);
    free(w);
    free(b);
    free(y);
    free(ref);
}

/* Element count a strided batch of `rows` x `ld` matrices spans. */
static int64_t lb_span(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (batch - 1) * stride + rows * ld;
}

/* C_i = alpha op(A_i) op(B_i) in double, as the LbBmm comment in attn/ops.h says. */
static void lb_bmm_naive(const LbBmm *p, const float *a, const float *b, double *c)
{
    for (int64_t bi = 0; bi < p->batch; bi++)
        for (int64_t i = 0; i < p->m; i++)
            for (int64_t j = 0; j < p->n; j++) {
                double s = 0.0;
                for (int64_t q = 0; q < p->kdim; q++) {
                    const float *ai = a + bi * p->stride_a, *bj = b + bi * p->stride_b;
                    double av = p->trans_a ? ai[q * p->lda + i] : ai[i * p->lda + q];
                    double bv = p->trans_b ? bj[j * p->ldb + q] : bj[q * p->ldb + j];
                    s += av * bv;
                }
                c[bi * p->stride_c + i * p->ldc + j] = (double)p->alpha * s;
            }
}

/* One bmm case: the stored shapes follow from m, n, kdim and the trans flags; ld = width + pad;
 * stride_x < 0 asks for a packed stride plus a gap, 0 broadcasts. */
static void lb_test_bmm(LbBackend *be, int ta, int tb, int64_t m, int64_t n, int64_t kdim,
                        int64_t batch, int64_t pad, int64_t sa, int64_t sb, float alpha)
{
    LbBmm p = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .kdim = kdim, .alpha = alpha, .batch = batch};
    int64_t a_rows = ta ? kdim : m, a_cols = ta ? m : kdim;
    int64_t b_rows = tb ? n : kdim, b_cols = tb ? kdim : n;
    p.lda = a_cols + pad;
    p.ldb = b_cols + pad + 1;
    p.ldc = n + pad + 2;
    p.stride_a = sa < 0 ? a_rows * p.lda + 13 : sa;
    p.stride_b = sb < 0 ? b_rows * p.ldb + 7 : sb;
    p.stride_c = m * p.ldc + 5;
    int64_t na = lb_span(batch, p.stride_a, a_rows, p.lda), nb = lb_span(batch, p.stride_b, b_rows, p.ldb);
    int64_t nc = lb_span(batch, p.stride_c, m, p.ldc);
    float *a = lb_test_alloc(na), *b = lb_test_alloc(nb), *c = lb_test_alloc(nc);
    double *ref = malloc((size_t)nc * sizeof *ref);
    lb_test_random(a, na, -1.0f, 1.0f);
    lb_test_random(b, nb, -1.0f, 1.0f);
    lb_test_poison(c, nc);
    p.a = a;
    p.b = b;
    p.c = c;
    char what[128];
    snprintf(what, sizeof what, "bmm ta %d tb %d %" PRId64 "x%" PRId64 "x%" PRId64 " batch %" PRId64 " sa %" PRId64 " sb %" PRId64,
             ta, tb, m, n, kdim, batch, p.stride_a, p.stride_b);
    int rc = be->ops->bmm(be, &p);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where())) {
        for (int64_t i = 0; i < nc; i++)
            ref[i] = NAN; /* the gaps: must still be poison */
        lb_bmm_naive(&p, a, b, ref);
        /* compare the products, then check every gap element is still NaN */
        int64_t count = 0, gaps_written = 0;
        float *got = lb_test_alloc(batch * m * n);
        double *want = malloc((size_t)(batch * m * n + 1) * sizeof *want);
        for (int64_t i = 0; i < nc; i++) {
            if (isnan(ref[i])) {
                gaps_written += !isnan(c[i]);
                continue;
            }
            got[count] = c[i];
            want[count++] = ref[i];
        }
        lb_check(count == batch * m * n, "%s: %" PRId64 " products compared, want %" PRId64, what, count, batch * m * n);
        lb_check_close(what, got, want, count, LB_MM_ATOL, LB_MM_RTOL);
        lb_check(gaps_written == 0, "%s: %" PRId64 " elements outside the m x n products written", what, gaps_written);
        free(got);
        free(want);
    }
    free(a);
    free(b);
    free(c);
    free(ref);
}

/* The same product with 1 thread and with 5, and with either kernel: identical bits (each
 * element has one owner and one summation order). */
static void lb_test_threads(void)
{
    int64_t m = 203, n = 171, k = 97, batch = 3;
    float *a = lb_test_alloc(batch * m * k), *b = lb_test_alloc(batch * k * n);
    float *c1 = lb_test_alloc(batch * m * n), *c5 = lb_test_alloc(batch * m * n);
    lb_test_random(a, batch * m * k, -1.0f, 1.0f);
    lb_test_random(b, batch * k * n, -1.0f, 1.0f);
    LbBmm p = {.trans_a = 0, .trans_b = 1, .m = m, .n = n, .kdim = k, .alpha = 0.25f,
               .a = a, .lda = k, .stride_a = m * k, .b = b, .ldb = k, .stride_b = n * k,
               .c = c1, .ldc = n, .stride_c = m * n, .batch = batch};
    lb_cpu_set_threads(1);
    lb_bmm_cpu(&p);
    lb_cpu_set_threads(5);
    p.c = c5;
    lb_bmm_cpu(&p);
    lb_check_same("bmm 1 thread vs 5", c1, c5, batch * m * n);
    lb_linear_cpu(a, b, NULL, c5, m, k, n, 1);
    lb_cpu_set_threads(1);
    lb_linear_cpu(a, b, NULL, c1, m, k, n, 1);
    lb_check_same("linear 1 thread vs 5", c1, c5, m * n);
    lb_cpu_set_threads(0);

    /* the AVX2 kernel (where the CPU has it) and the portable one: the same bits */
    lb_bmm_cpu(&p);
    setenv("LB_CPU_KERNEL", "generic", 1);
    p.c = c1;
    lb_bmm_cpu(&p);
    unsetenv("LB_CPU_KERNEL");
    lb_check_same("bmm, fast kernel vs portable kernel", c1, c5, batch * m * n);
    free(a);
    free(b);
    free(c1);
    free(c5);
}

int main(void)
{
    lb_test_init("test_matmul");
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) == LB_OK, "open: %s", lb_error_where()))
        return lb_test_finish("test_matmul");

    for (int bias = 0; bias <= 1; bias++)
        for (int gelu = 0; gelu <= 1; gelu++) {
            lb_test_linear(be, 67, 45, 83, bias, gelu);
            lb_test_linear(be, 1, 1, 1, bias, gelu);
        }
    lb_test_linear(be, 300, 128, 200, 1, 1);   /* large enough to run on several threads */
    lb_test_linear(be, 5, 5000, 33, 1, 0);     /* long reduction: smaller packed blocks */
    lb_test_linear(be, 9, 0, 11, 1, 1);        /* empty reduction: y = gelu(b) */
    lb_test_linear(be, lb_test_randint(1, 40), lb_test_randint(1, 90), lb_test_randint(1, 70), 1, 0);

    for (int ta = 0; ta <= 1; ta++)
        for (int tb = 0; tb <= 1; tb++) {
            lb_test_bmm(be, ta, tb, 37, 29, 53, 3, 5, -1, -1, 0.37f);  /* gaps everywhere */
            lb_test_bmm(be, ta, tb, 37, 29, 53, 3, 5, 0, -1, 1.0f);    /* broadcast A */
            lb_test_bmm(be, ta, tb, 37, 29, 53, 3, 5, -1, 0, -2.0f);   /* broadcast B */
            lb_test_bmm(be, ta, tb, 1, 1, 1, 2, 0, -1, -1, 1.0f);
            lb_test_bmm(be, ta, tb, 130, 300, 70, 2, 3, -1, -1, 0.125f); /* threaded */
        }
    lb_test_bmm(be, 0, 1, 20, 40, 5000, 2, 1, -1, 0, 1.0f); /* long reduction, shared B (E) */
    lb_test_bmm(be, 1, 0, 9, 17, 0, 2, 1, -1, -1, 1.0f);    /* kdim 0: C = 0 */
    lb_test_bmm(be, (int)lb_test_randint(0, 1), (int)lb_test_randint(0, 1), lb_test_randint(1, 50),
                lb_test_randint(1, 50), lb_test_randint(1, 50), lb_test_randint(1, 4), lb_test_randint(0, 9), -1, -1, 0.5f);
    lb_test_threads();

    be->ops->close(be);
    return lb_test_finish("test_matmul");
}
