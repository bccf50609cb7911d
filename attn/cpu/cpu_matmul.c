/* The reference products: linear layers and strided-batched matrix products (cpu_ref.h).
 *
 * Every output element is one sum over p = 0 .. k-1 in that order, in double, of exact
 * float x float products, rounded to float once: it agrees with the naive triple loop of
 * tests/ops/test_ops.c to that rounding. The fast path blocks over i and j only (packed
 * panels of LB_MR rows and LB_NR columns, an LB_MR x LB_NR tile of sums in registers), never
 * reordering a sum, so the bits do not depend on the threads or the kernel. */
#include <stdlib.h>
#include <string.h>

#include "attn/cpu/cpu_parallel.h"
#include "attn/cpu/cpu_ref.h"

#define LB_MR 4   /* rows of the register tile */
#define LB_NR 8   /* columns of the register tile */
#define LB_MB 64  /* rows of A per work item (a multiple of LB_MR) */
#define LB_NC 256 /* columns of B per packed block (a multiple of LB_NR) */
/* Bound on a packed block, in doubles, so that a long reduction (the n = 65536 product of scores
 * and values) shrinks the blocks instead of asking for hundreds of megabytes of scratch. */
#define LB_PACK_A_MAX ((int64_t)1 << 18)
#define LB_PACK_B_MAX ((int64_t)1 << 20)

/* acc (LB_MR, LB_NR) = ap (k, LB_MR)^T . bp (k, LB_NR): the register tile (below). */
typedef void (*LbMicroKernel)(int64_t k, const double *ap, const double *bp, double *acc);

/* c (LB_MR, LB_NR), row stride ldc = (float)(alpha * acc (LB_MR, LB_NR)): a whole tile. */
typedef void (*LbStoreTile)(const double *acc, double alpha, float *c, int64_t ldc);

/* One product, as strides, so that transposes, linear layers and batches all run the same code:
 *   C_bi(i, j) = epilogue(alpha * sum_p A_bi(i, p) * B_bi(p, j)), bi in [0, batch) */
typedef struct LbCpuGemm {
    int64_t m, n, k;
    const float *a;
    int64_t a_rs, a_cs; /* A(i, p) = a[i * a_rs + p * a_cs] */
    const float *b;
    int64_t b_rs, b_cs; /* B(p, j) = b[p * b_rs + j * b_cs] */
    float *c;
    int64_t c_rs; /* C(i, j) = c[i * c_rs + j] */
    double alpha;
    const float *bias; /* (n), added after alpha; NULL for none */
    int gelu;
    int64_t batch, stride_a, stride_b, stride_c;
    LbMicroKernel kernel;
    LbStoreTile store_tile; /* NULL: lb_gemm_store's loops */
    int64_t mb, nc;       /* block sizes for this k */
    int64_t row_blocks;   /* ceil(m / mb): work items per batch entry */
} LbCpuGemm;

static int64_t lb_min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Round the finished sum: scale, bias, one rounding to float, GELU. */
static inline float lb_gemm_finish(const LbCpuGemm *g, double sum, int64_t j)
{
    double v = g->alpha * sum;
    if (g->bias)
        v += (double)g->bias[j];
    float y = (float)v;
    return g->gelu ? lb_gelu_cpu(y) : y;
}

/* c (mr, nr), row stride g->c_rs, columns from j of the full C = the finished tile acc (LB_MR,
 * LB_NR). The products of scores (k = head width, 16 to 64) spend as long here as in the kernel,
 * so the common case (no bias, no GELU) has its own loop. */
static void lb_gemm_store(const LbCpuGemm *g, const double *acc, float *c, int64_t mr, int64_t nr, int64_t j)
{
    if (g->store_tile && mr == LB_MR && nr == LB_NR && !g->bias && !g->gelu) {
        g->store_tile(acc, g->alpha, c, g->c_rs);
        return;
    }
    if (!g->bias && !g->gelu) {
        for (int64_t ii = 0; ii < mr; ii++)
            for (int64_t jj = 0; jj < nr; jj++)
                c[ii * g->c_rs + jj] = (float)(g->alpha * acc[ii * LB_NR + jj]);
        return;
    }
    for (int64_t ii = 0; ii < mr; ii++)
        for (int64_t jj = 0; jj < nr; jj++)
            c[ii * g->c_rs + jj] = lb_gemm_finish(g, acc[ii * LB_NR + jj], j + jj);
}

/* ap: ceil(rows / LB_MR) panels of (k, LB_MR), ap[r k LB_MR + p LB_MR + ii] = A(r LB_MR + ii, p),
 * zero past `rows`. A(i, p) = a[i * rs + p * cs]. */
static void lb_pack_a(const float *a, int64_t rs, int64_t cs, int64_t rows, int64_t k, double *ap)
{
    for (int64_t r0 = 0; r0 < rows; r0 += LB_MR) {
        double *panel = ap + r0 * k;
        int64_t mr = lb_min64(LB_MR, rows - r0);
        if (mr < LB_MR)
            memset(panel, 0, (size_t)(k * LB_MR) * sizeof *panel);
        if (cs == 1 && mr == LB_MR) { /* four rows contiguous along p: write the panel in order */
            const float *a0 = a + r0 * rs, *a1 = a0 + rs, *a2 = a1 + rs, *a3 = a2 + rs;
            for (int64_t p = 0; p < k; p++) {
                panel[p * LB_MR + 0] = a0[p];
                panel[p * LB_MR + 1] = a1[p];
                panel[p * LB_MR + 2] = a2[p];
                panel[p * LB_MR + 3] = a3[p];
            }
        } else { /* transposed, or the last panel's few rows */
            for (int64_t p = 0; p < k; p++)
                for (int64_t ii = 0; ii < mr; ii++)
                    panel[p * LB_MR + ii] = a[(r0 + ii) * rs + p * cs];
        }
    }
}

/* bp: ceil(cols / LB_NR) panels of (k, LB_NR), bp[q k LB_NR + p LB_NR + jj] = B(p, q LB_NR + jj),
 * zero past `cols`. B(p, j) = b[p * rs + j * cs]. */
static void lb_pack_b(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t cols, double *bp)
{
    for (int64_t j0 = 0; j0 < cols; j0 += LB_NR) {
        double *panel = bp + j0 * k;
        int64_t nr = lb_min64(LB_NR, cols - j0);
        if (nr < LB_NR)
            memset(panel, 0, (size_t)(k * LB_NR) * sizeof *panel);
        if (rs == 1) { /* B^T stored (weights, keys): each column contiguous along p */
            for (int64_t jj = 0; jj < nr; jj++) {
                const float *col = b + (j0 + jj) * cs;
                for (int64_t p = 0; p < k; p++)
                    panel[p * LB_NR + jj] = col[p];
            }
        } else {
            for (int64_t p = 0; p < k; p++)
                for (int64_t jj = 0; jj < nr; jj++)
                    panel[p * LB_NR + jj] = b[p * rs + (j0 + jj) * cs];
        }
    }
}

/* The kernel: acc (LB_MR, LB_NR) = ap (k, LB_MR)^T . bp (k, LB_NR), each sum in p order, so
 * the three versions give the same bits: AVX2, two-double vectors (SSE2, NEON) with GCC or
 * Clang, plain loops otherwise. Vector types because GCC at -O2 neither vectorises the plain
 * loops nor keeps four-double vectors in registers without AVX. */
#if defined(__GNUC__)
typedef double lb_v2d __attribute__((vector_size(16)));

/* Columns [j0, j0 + 2 W) of the tile in 8 sums of W doubles (the vector type V): four rows of two
 * vectors. Multiply then add, as C says (ISO C mode does not contract them); a fused multiply-add
 * would give the same bits anyway, the product of two floats being exact in double. memcpy: the
 * panels are only 8-byte aligned. */
#define LB_MICRO_COLS(V, k, ap, bp, acc, j0)                                          \
    do {                                                                              \
        const int w_ = (int)(sizeof(V) / sizeof(double));                             \
        V c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0};                                 \
        V c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};                                 \
        for (int64_t p = 0; p < (k); p++) {                                           \
            V b0, b1;                                                                 \
            memcpy(&b0, (bp) + p * LB_NR + (j0), sizeof b0);                          \
            memcpy(&b1, (bp) + p * LB_NR + (j0) + w_, sizeof b1);                     \
            const double *a_ = (ap) + p * LB_MR;                                      \
            c00 += a_[0] * b0;                                                        \
            c01 += a_[0] * b1;                                                        \
            c10 += a_[1] * b0;                                                        \
            c11 += a_[1] * b1;                                                        \
            c20 += a_[2] * b0;                                                        \
            c21 += a_[2] * b1;                                                        \
            c30 += a_[3] * b0;                                                        \
            c31 += a_[3] * b1;                                                        \
        }                                                                             \
        memcpy((acc) + 0 * LB_NR + (j0), &c00, sizeof c00);                           \
        memcpy((acc) + 0 * LB_NR + (j0) + w_, &c01, sizeof c01);                      \
        memcpy((acc) + 1 * LB_NR + (j0), &c10, sizeof c10);                           \
        memcpy((acc) + 1 * LB_NR + (j0) + w_, &c11, sizeof c11);                      \
        memcpy((acc) + 2 * LB_NR + (j0), &c20, sizeof c20);                           \
        memcpy((acc) + 2 * LB_NR + (j0) + w_, &c21, sizeof c21);                      \
        memcpy((acc) + 3 * LB_NR + (j0), &c30, sizeof c30);                           \
        memcpy((acc) + 3 * LB_NR + (j0) + w_, &c31, sizeof c31);                      \
    } while (0)

/* Two halves of two-double sums (SSE2, NEON): 11 of the 16 SSE registers each. */
static void lb_micro_kernel_v2(int64_t k, const double *ap, const double *bp, double *acc)
{
    LB_MICRO_COLS(lb_v2d, k, ap, bp, acc, 0);
    LB_MICRO_COLS(lb_v2d, k, ap, bp, acc, 4);
}
#define LB_MICRO_DEFAULT lb_micro_kernel_v2
#else
static void lb_micro_kernel_plain(int64_t k, const double *ap, const double *bp, double *acc)
{
    for (int i = 0; i < LB_MR * LB_NR; i++)
        acc[i] = 0.0;
    for (int64_t p = 0; p < k; p++)
        for (int ii = 0; ii < LB_MR; ii++)
            for (int jj = 0; jj < LB_NR; jj++)
                acc[ii * LB_NR + jj] += ap[p * LB_MR + ii] * bp[p * LB_NR + jj];
}
#define LB_MICRO_DEFAULT lb_micro_kernel_plain
#endif

#if (defined(__GNUC__) && __GNUC__ >= 9 || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define LB_HAVE_AVX2_KERNEL 1
typedef double lb_v4d __attribute__((vector_size(32)));
typedef float lb_v4f __attribute__((vector_size(16)));

/* LbStoreTile with vectors: the score matrices of standard attention are written here, and one
 * conversion at a time took as long as the products of a head width of 16. */
__attribute__((target("avx2"))) static void lb_store_tile_avx2(const double *acc, double alpha,
                                                               float *c, int64_t ldc)
{
    for (int ii = 0; ii < LB_MR; ii++)
        for (int h = 0; h < LB_NR; h += 4) {
            lb_v4d v;
            memcpy(&v, acc + ii * LB_NR + h, sizeof v);
            lb_v4f f = __builtin_convertvector(v * alpha, lb_v4f);
            memcpy(c + ii * ldc + h, &f, sizeof f);
        }
}

/* The whole tile in 8 four-double sums (ymm registers). */
__attribute__((target("avx2"))) static void lb_micro_kernel_avx2(int64_t k, const double *ap,
                                                                 const double *bp, double *acc)
{
    LB_MICRO_COLS(lb_v4d, k, ap, bp, acc, 0);
}
#endif

/* The kernel and tile store for this CPU. LB_CPU_KERNEL=generic forces the portable ones (to
 * compare them). */
static void lb_micro_kernel_pick(LbCpuGemm *g)
{
    g->kernel = LB_MICRO_DEFAULT;
    g->store_tile = NULL;
    const char *force = getenv("LB_CPU_KERNEL");
    if (force && strcmp(force, "generic") == 0)
        return;
#if defined(LB_HAVE_AVX2_KERNEL)
    if (__builtin_cpu_supports("avx2")) {
        g->kernel = lb_micro_kernel_avx2;
        g->store_tile = lb_store_tile_avx2;
    }
#endif
}

/* Work item `item` of g: batch entry and block of rows, as pointers to their first row. */
static void lb_gemm_item(const LbCpuGemm *g, int64_t item, const float **a, const float **b,
                         float **c, int64_t *rows)
{
    int64_t bi = item / g->row_blocks;
    int64_t i0 = (item % g->row_blocks) * g->mb;
    *rows = lb_min64(g->mb, g->m - i0);
    *a = g->a + bi * g->stride_a + i0 * g->a_rs;
    *b = g->b + bi * g->stride_b;
    *c = g->c + bi * g->stride_c + i0 * g->c_rs;
}

/* Items [begin, end) without scratch memory: the same sums, one element at a time. */
static void lb_gemm_plain_range(const LbCpuGemm *g, int64_t begin, int64_t end)
{
    for (int64_t item = begin; item < end; item++) {
        const float *a, *b;
        float *c;
        int64_t rows;
        lb_gemm_item(g, item, &a, &b, &c, &rows);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < g->n; j++) {
                double sum = 0.0;
                for (int64_t p = 0; p < g->k; p++)
                    sum += (double)a[i * g->a_rs + p * g->a_cs] * (double)b[p * g->b_rs + j * g->b_cs];
                c[i * g->c_rs + j] = lb_gemm_finish(g, sum, j);
            }
    }
}

/* Items [begin, end) of g with scratch ap (g->mb * k) and bp (g->nc * k): pack, multiply tile by
 * tile, finish. */
static void lb_gemm_items(const LbCpuGemm *g, int64_t begin, int64_t end, double *ap, double *bp)
{
    int64_t k = g->k;
    double acc[LB_MR * LB_NR];
    for (int64_t item = begin; item < end; item++) {
        const float *a, *b;
        float *c;
        int64_t rows;
        lb_gemm_item(g, item, &a, &b, &c, &rows);
        lb_pack_a(a, g->a_rs, g->a_cs, rows, k, ap);
        for (int64_t j0 = 0; j0 < g->n; j0 += g->nc) {
            int64_t cols = lb_min64(g->nc, g->n - j0);
            lb_pack_b(b + j0 * g->b_cs, g->b_rs, g->b_cs, k, cols, bp);
            /* one panel of B stays in cache while every panel of A passes it */
            for (int64_t q0 = 0; q0 < cols; q0 += LB_NR) {
                int64_t nr = lb_min64(LB_NR, cols - q0);
                for (int64_t r0 = 0; r0 < rows; r0 += LB_MR) {
                    int64_t mr = lb_min64(LB_MR, rows - r0);
                    g->kernel(k, ap + r0 * k, bp + q0 * k, acc);
                    lb_gemm_store(g, acc, c + r0 * g->c_rs + j0 + q0, mr, nr, j0 + q0);
                }
            }
        }
    }
}

/* Items [begin, end) of g (an LbCpuRangeFn) with its packing scratch: ap, then bp. */
static void lb_gemm_range(void *ctx, int64_t begin, int64_t end, double *scratch)
{
    const LbCpuGemm *g = ctx;
    if (scratch)
        lb_gemm_items(g, begin, end, scratch, scratch + g->mb * g->k + 1);
    else /* out of host memory for scratch: slower, same numbers */
        lb_gemm_plain_range(g, begin, end);
}

/* Choose blocks for g's k, then run every (batch entry, row block) item over the threads. */
static void lb_gemm_run(LbCpuGemm *g)
{
    if (g->m <= 0 || g->n <= 0 || g->batch <= 0)
        return;
    int64_t k = g->k > 0 ? g->k : 1;
    int64_t mb = lb_min64(LB_MB, LB_PACK_A_MAX / k / LB_MR * LB_MR);
    int64_t nc = lb_min64(LB_NC, LB_PACK_B_MAX / k / LB_NR * LB_NR);
    /* no bigger than the matrix, rounded up to whole panels */
    g->mb = lb_min64(mb > LB_MR ? mb : LB_MR, (g->m + LB_MR - 1) / LB_MR * LB_MR);
    g->nc = lb_min64(nc > LB_NR ? nc : LB_NR, (g->n + LB_NR - 1) / LB_NR * LB_NR);
    g->row_blocks = (g->m + g->mb - 1) / g->mb;
    lb_micro_kernel_pick(g);
    double cost = (double)g->mb * (double)g->n * (double)k;
    lb_cpu_parallel_for(g->batch * g->row_blocks, cost, (size_t)((g->mb + g->nc) * g->k + 2), lb_gemm_range, g);
}

void lb_linear_cpu(const float *x, const float *w, const float *b, float *y, int64_t rows,
                   int64_t in, int64_t out, int gelu)
{
    LbCpuGemm g = {
        .m = rows, .n = out, .k = in,
        .a = x, .a_rs = in, .a_cs = 1,
        .b = w, .b_rs = 1, .b_cs = in, /* B(p, j) = w[j, p]: the rows of w */
        .c = y, .c_rs = out,
        .alpha = 1.0, .bias = b, .gelu = gelu,
        .batch = 1,
    };
    lb_gemm_run(&g);
}

void lb_bmm_cpu(const LbBmm *p)
{
    LbCpuGemm g = {
        .m = p->m, .n = p->n, .k = p->kdim,
        .a = p->a, .a_rs = p->trans_a ? 1 : p->lda, .a_cs = p->trans_a ? p->lda : 1,
        .b = p->b, .b_rs = p->trans_b ? 1 : p->ldb, .b_cs = p->trans_b ? p->ldb : 1,
        .c = p->c, .c_rs = p->ldc,
        .alpha = (double)p->alpha, .bias = NULL, .gelu = 0,
        .batch = p->batch, .stride_a = p->stride_a, .stride_b = p->stride_b,
        .stride_c = p->stride_c,
    };
    lb_gemm_run(&g);
}
