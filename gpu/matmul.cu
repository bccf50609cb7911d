/* Matrix products of the CUDA backend: `linear` through cuBLASLt, `bmm` through cuBLAS's
 * strided-batched GEMM; fp16/bf16 with fp32 accumulation, fp32 with TF32 off unless --tf32.
 * Row-major on a column-major library: C = A B is computed as C^T = B^T A^T, nothing copied.
 * Split-K reductions only in place or in fp32. cuBLASLt's GELU epilogue is the tanh form and
 * METHOD.md asks for erf, so linear runs the BIAS epilogue, then gpu/bias_act.cu's erf GELU.
 * Each call walks fewer than 2^31 elements per matrix by rows (linear by rows, bmm by m) and at
 * most 65535 batch entries; operands walked along the inner dimension are not split (a split
 * would round partial sums to storage). On a shape's first use (the warm-up pass) each of the
 * heuristic's kCandidates is timed and the fastest cached. Checked by the check table
 * (attn/check.c) against attn/cpu/cpu_ref.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn/op_args.h"
#include "attn/base/status.h"
#include "gpu/backend_impl.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels.h"

namespace {

constexpr int64_t kMaxSpan = INT32_MAX;  /* elements one call may walk in a matrix */
constexpr int64_t kMaxBatch = 65535;     /* batch count per call */
constexpr int kCacheSize = 64;           /* linear shapes remembered */
constexpr int kCandidates = 8;           /* algorithms asked of the heuristic for tuning */
constexpr int kTimedCalls = 3;           /* timed calls per candidate, after one warm-up */

cudaDataType_t cuda_type(LbDtype t)
{
    switch (t) {
    case LB_DTYPE_FP16: return CUDA_R_16F;
    case LB_DTYPE_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

cublasComputeType_t compute_type(const LbBackend *be)
{
    if (be->storage == LB_DTYPE_FP32 && be->tf32)
        return CUBLAS_COMPUTE_32F_FAST_TF32;
    return CUBLAS_COMPUTE_32F;
}

/* Largest power of two (up to 256) dividing the address: what cuBLASLt must assume. */
uint32_t ptr_align(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && (a % al) != 0)
        al >>= 1;
    return al;
}

} // namespace

/* Everything the choice of algorithm depends on: shape, types, pointer alignments (the bias's 0
 * without one: the epilogue), workspace. Compared bytewise: no padding between the fields. */
struct LbLtKey {
    int64_t m, n, k; /* column-major: m = out, n = rows, k = in */
    size_t ws;
    int32_t dtype, compute;
    uint32_t align_a, align_b, align_c, align_bias;
};
static_assert(sizeof(LbLtKey) == 4 * 8 + 6 * 4, "LbLtKey has padding, which memcmp would compare");

/* One cuBLASLt problem: its descriptors and the algorithm the heuristic chose. */
struct LbLtEntry {
    int used;
    uint64_t last_use;
    LbLtKey key;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo; /* the one used: the fastest candidate, or the heuristic's first */
    cublasLtMatmulAlgo_t cand[kCandidates]; /* the heuristic's, in its order */
    int n_cand; /* 0: no algorithm for this problem; use the cuBLAS fallback */
    int tuned; /* the choice is made (by timing, or by taking the first) */
};

struct LbCudaMatmulCache {
    LbLtEntry e[kCacheSize];
    uint64_t clock;
    cudaEvent_t ev[2]; /* tuning's own, so a timer_start of the caller is left alone */
    LbMatmulTuning stats; /* every tuning so far (entries are evicted; this is not) */
};

static void lt_entry_free(LbLtEntry *e)
{
    if (e->op)
        cublasLtMatmulDescDestroy(e->op);
    if (e->la)
        cublasLtMatrixLayoutDestroy(e->la);
    if (e->lb)
        cublasLtMatrixLayoutDestroy(e->lb);
    if (e->lc)
        cublasLtMatrixLayoutDestroy(e->lc);
    memset(e, 0, sizeof *e);
}

extern "C" int lb_cuda_matmul_cache_create(LbCudaMatmulCache **out)
{
    LbCudaMatmulCache *c = (LbCudaMatmulCache *)calloc(1, sizeof(LbCudaMatmulCache));
    *out = c; /* on a failure below, the caller's destroy frees what was made */
    if (!c)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory for the matmul cache");
    c->stats.gain = 1.0;
#ifdef LB_GPU_EMULATOR
    c->stats.host_clock = 1;
#endif
    LB_CUDA_CHECK(cudaEventCreate(&c->ev[0]));
    LB_CUDA_CHECK(cudaEventCreate(&c->ev[1]));
    return LB_OK;
}

extern "C" void lb_cuda_matmul_cache_destroy(LbCudaMatmulCache *c)
{
    if (!c)
        return;
    for (int i = 0; i < kCacheSize; i++)
        if (c->e[i].used)
            lt_entry_free(&c->e[i]);
    for (int i = 0; i < 2; i++)
        if (c->ev[i])
            cudaEventDestroy(c->ev[i]);
    free(c);
}

extern "C" int lb_cuda_matmul_tuning(LbBackend *be, LbMatmulTuning *out)
{
    *out = lb_cuda_state(be)->mm->stats;
    return LB_OK;
}

/* Build descriptors and ask the heuristic for one problem into *e (already keyed). */
static int lt_entry_build(LbCudaState *st, LbLtEntry *e, const void *bias_ptr)
{
    const cudaDataType_t t = cuda_type((LbDtype)e->key.dtype);
    LB_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&e->op, (cublasComputeType_t)e->key.compute, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LB_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LB_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const cublasLtEpilogue_t epi = e->key.align_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    LB_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (e->key.align_bias) {
        /* The bias has the storage type, as D (the default for fp16/bf16/fp32 D); the
         * heuristic reads the pointer for its alignment. */
        LB_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                         &bias_ptr, sizeof bias_ptr));
    }
    /* A = W: (k x m) column-major, ld k; B = x: (k x n), ld k; C = D = y: (m x n), ld m. */
    LB_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&e->la, t, (uint64_t)e->key.k, (uint64_t)e->key.m, e->key.k));
    LB_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&e->lb, t, (uint64_t)e->key.k, (uint64_t)e->key.n, e->key.k));
    LB_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&e->lc, t, (uint64_t)e->key.m, (uint64_t)e->key.n, e->key.m));

    cublasLtMatmulPreference_t pref = NULL;
    LB_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    /* Split-K reductions in place or in the compute type (fp32), never in the output type. */
    const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    const struct {
        cublasLtMatmulPreferenceAttributes_t attr;
        const void *value;
        size_t size;
    } prefs[] = {
        {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &e->key.ws, sizeof e->key.ws},
        {CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions, sizeof reductions},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &e->key.align_a, sizeof e->key.align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &e->key.align_b, sizeof e->key.align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &e->key.align_c, sizeof e->key.align_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &e->key.align_c, sizeof e->key.align_c},
    };
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (size_t i = 0; s == CUBLAS_STATUS_SUCCESS && i < sizeof prefs / sizeof prefs[0]; i++)
        s = cublasLtMatmulPreferenceSetAttribute(pref, prefs[i].attr, prefs[i].value, prefs[i].size);
    if (s != CUBLAS_STATUS_SUCCESS) {
        cublasLtMatmulPreferenceDestroy(pref);
        return LB_FAIL(LB_ERR_DEVICE, "cublasLtMatmulPreferenceSetAttribute failed: %s",
                       cublasLtGetStatusString(s));
    }
    cublasLtMatmulHeuristicResult_t res[kCandidates];
    memset(res, 0, sizeof res);
    int found = 0;
    s = cublasLtMatmulAlgoGetHeuristic(st->lt, e->op, e->la, e->lb, e->lc, e->lc, pref, kCandidates, res, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    /* Not supported: no algorithm, so the cuBLAS fallback (n_cand 0). */
    if (s != CUBLAS_STATUS_SUCCESS && s != CUBLAS_STATUS_NOT_SUPPORTED)
        return LB_FAIL(LB_ERR_DEVICE, "cublasLtMatmulAlgoGetHeuristic failed: %s", cublasLtGetStatusString(s));
    for (int i = 0; s == CUBLAS_STATUS_SUCCESS && i < found && i < kCandidates; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS) /* one the library says it can run */
            e->cand[e->n_cand++] = res[i].algo;
    e->algo = e->cand[0];
    return LB_OK;
}

/* The cached entry for this problem, built on first use; LRU replacement. */
static int lt_lookup(LbCudaState *st, const LbLtKey *key, const void *bias_ptr, LbLtEntry **out)
{
    LbCudaMatmulCache *c = st->mm;
    LbLtEntry *victim = &c->e[0];
    for (int i = 0; i < kCacheSize; i++) {
        LbLtEntry *e = &c->e[i];
        if (e->used && memcmp(&e->key, key, sizeof *key) == 0) {
            e->last_use = ++c->clock;
            *out = e;
            return LB_OK;
        }
        if (!e->used || (victim->used && e->last_use < victim->last_use))
            victim = e;
    }
    if (victim->used)
        lt_entry_free(victim);
    victim->key = *key;
    victim->used = 1;
    victim->last_use = ++c->clock;
    int rc = lt_entry_build(st, victim, bias_ptr);
    if (rc != LB_OK) {
        lt_entry_free(victim);
        return rc;
    }
    *out = victim;
    return LB_OK;
}

/* One call with algorithm `algo`, y (n, m) = x (n, k) W^T (+ b) row-major. */
static int lt_call(LbCudaState *st, LbLtEntry *e, const cublasLtMatmulAlgo_t *algo, const void *x, const void *w,
                   void *y)
{
    const float alpha = 1.0f, beta = 0.0f;
    LB_CUBLASLT_CHECK(cublasLtMatmul(st->lt, e->op, &alpha, w, e->la, x, e->lb, &beta, y, e->lc, y, e->lc, algo,
                                      st->workspace, e->key.ws, st->stream));
    return LB_OK;
}

/* The entry's first call with autotuning on: every candidate timed on these operands (a warm-up
 * call, then the fastest of kTimedCalls), the fastest kept. y is overwritten by each; the caller's
 * own call follows. Waits for the stream: a shape's first use is in a warm-up pass. */
static int lt_tune(LbCudaState *st, LbLtEntry *e, const void *x, const void *w, void *y)
{
    LbCudaMatmulCache *c = st->mm;
    double ms[kCandidates] = {0};
    for (int i = 0; i < e->n_cand; i++) {
        LB_TRY(lt_call(st, e, &e->cand[i], x, w, y));
        ms[i] = -1;
        for (int r = 0; r < kTimedCalls; r++) {
            double t = 0;
            LB_CUDA_CHECK(cudaEventRecord(c->ev[0], st->stream));
            LB_TRY(lt_call(st, e, &e->cand[i], x, w, y));
            LB_CUDA_CHECK(cudaEventRecord(c->ev[1], st->stream));
            LB_TRY(lb_cuda_elapsed_ms(c->ev[0], c->ev[1], &t));
            if (ms[i] < 0 || t < ms[i])
                ms[i] = t;
        }
    }
    int best = 0;
    for (int i = 1; i < e->n_cand; i++)
        if (ms[i] < ms[best])
            best = i;
    e->algo = e->cand[best];
    c->stats.shapes++;
    c->stats.kept_first += best == 0;
    if (ms[best] > 0 && ms[0] / ms[best] > c->stats.gain) {
        c->stats.gain = ms[0] / ms[best];
        c->stats.first_ms = ms[0];
        c->stats.best_ms = ms[best];
    }
    return LB_OK;
}

/* One chunk of rows: y (n, m) = act(x (n, k) W^T + b) row-major; the bias in cuBLASLt's epilogue, or
 * with the erf GELU in gpu/bias_act.cu's pass after the fallback's product. */
static int linear_chunk(LbBackend *be, LbCudaState *st, const void *x, const void *w, const void *b,
                        void *y, int64_t n, int64_t k, int64_t m, int gelu)
{
    const LbLtKey key = {m, n, k, st->workspace ? st->workspace_bytes : 0, (int32_t)be->storage,
                         (int32_t)compute_type(be), ptr_align(w), ptr_align(x), ptr_align(y), b ? ptr_align(b) : 0};
    LbLtEntry *e = NULL;
    LB_TRY(lt_lookup(st, &key, b, &e));
    const float alpha = 1.0f, beta = 0.0f;
    if (e->n_cand > 0) {
        if (b)
            LB_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(e->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b));
        if (!e->tuned) {
            if (be->autotune && e->n_cand > 1)
                LB_TRY(lt_tune(st, e, x, w, y));
            e->tuned = 1;
        }
        LB_TRY(lt_call(st, e, &e->algo, x, w, y));
        b = NULL; /* the epilogue added it */
    } else {
        const cudaDataType_t t = cuda_type(be->storage);
        LB_CUBLAS_CHECK(cublasGemmEx_64(st->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, w, t, k, x, t, k,
                                        &beta, y, t, m, compute_type(be), CUBLAS_GEMM_DEFAULT));
    }
    return lb_cuda_bias_act(be, y, b, n, m, gelu); /* nothing to do without b or gelu */
}

extern "C" int lb_cuda_linear(LbBackend *be, const void *x, const void *w, const void *b, void *y,
                              int64_t rows, int64_t in, int64_t out, int gelu)
{
    LbCudaState *st = lb_cuda_state(be);
    if (rows < 0 || in < 1 || out < 0)
        return LB_FAIL(LB_ERR_INVALID, "cuda linear: bad shape (rows %lld, in %lld, out %lld)",
                       (long long)rows, (long long)in, (long long)out);
    if (rows == 0 || out == 0)
        return LB_OK;
    if (!x || !w || !y)
        return LB_FAIL(LB_ERR_INVALID, "cuda linear: NULL matrix");
    if (in > kMaxSpan || out > kMaxSpan)
        return LB_FAIL(LB_ERR_UNSUPPORTED, "cuda linear: a row of %lld or %lld elements is past 2^31",
                       (long long)in, (long long)out);
    const int64_t wide = in > out ? in : out;
    const int64_t chunk = kMaxSpan / wide;
    const size_t eb = be->elem_bytes;
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t nr = rows - r0 < chunk ? rows - r0 : chunk;
        LB_TRY(linear_chunk(be, st, (const char *)x + (size_t)(r0 * in) * eb, w, b, (char *)y + (size_t)(r0 * out) * eb,
                            nr, in, out, gelu));
    }
    return LB_OK;
}

/* --- bmm ------------------------------------------------------------------------------------ */

/* One strided-batched call per chunk of m: C_i = alpha op(A_i) op(B_i) + beta C_i, i < nb. */
static int bmm_call(LbBackend *be, const LbBmm *p, const char *a, const char *bm, char *c, int64_t kdim, int64_t nb,
                    float beta)
{
    LbCudaState *st = lb_cuda_state(be);
    const size_t eb = be->elem_bytes;
    /* Chunk of m: C rows, and A rows when A is not transposed, under kMaxSpan elements. */
    int64_t row_width = p->ldc;
    if (!p->trans_a && p->lda > row_width)
        row_width = p->lda;
    int64_t mc = kMaxSpan / row_width;
    if (mc < 1)
        mc = 1;
    /* Equal chunks rather than full ones and a sliver: 65536 rows in 3 calls of 21846, not
     * 32767 + 32767 + 2. */
    const int64_t pieces = (p->m + mc - 1) / mc;
    mc = (p->m + pieces - 1) / pieces;
    const float alpha = p->alpha;
    const cublasOperation_t op_first = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_second = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cudaDataType_t t = cuda_type(be->storage);
    for (int64_t m0 = 0; m0 < p->m; m0 += mc) {
        const int64_t nm = p->m - m0 < mc ? p->m - m0 : mc;
        /* Row m0 of op(A): row m0 of A (offset m0 * lda), or column m0 of A^T (offset m0). */
        const char *am = a + (size_t)(p->trans_a ? m0 : m0 * p->lda) * eb;
        char *cm = c + (size_t)(m0 * p->ldc) * eb;
        LB_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(st->blas, op_first, op_second, p->n, nm, kdim, &alpha, bm, t,
                                                      p->ldb, p->stride_b, am, t, p->lda, p->stride_a, &beta, cm, t,
                                                      p->ldc, p->stride_c, nb, compute_type(be), CUBLAS_GEMM_DEFAULT));
    }
    return LB_OK;
}

/* Whether sum_i op(A_i) op(B_i) is one product of kdim batch: the op(A_i) side by side and the
 * op(B_i) stacked, as a weight's gradient over a batch of rows is (A_i^T B_i, each A_i and B_i
 * the next rows of one matrix). */
static int bmm_sum_is_one(const LbBmm *p)
{
    const int64_t wide = p->kdim * p->batch;
    const int a_ok = p->trans_a ? p->stride_a == p->kdim * p->lda : p->stride_a == p->kdim && p->lda >= wide;
    const int b_ok = p->trans_b ? p->stride_b == p->kdim && p->ldb >= wide : p->stride_b == p->kdim * p->ldb;
    return a_ok && b_ok;
}

extern "C" int lb_cuda_bmm(LbBackend *be, const LbBmm *p)
{
    LB_TRY(lb_args_bmm(be, p));
    if (p->m == 0 || p->n == 0 || p->batch == 0)
        return LB_OK;
    if (p->kdim == 0)
        return LB_FAIL(LB_ERR_UNSUPPORTED, "cuda bmm: empty inner dimension");
    const size_t eb = be->elem_bytes;
    const char *a = (const char *)p->a, *b = (const char *)p->b;
    if (p->stride_c == 0 && p->batch > 1) {
        /* The sum into one C: one product over the batch's inner dimensions where the operands
         * lie so, else a product per entry accumulating (beta 1) after the first; cuBLAS refuses
         * batches of C that overlap, and a batch sum needs its own order anyway. */
        if (bmm_sum_is_one(p))
            return bmm_call(be, p, a, b, (char *)p->c, p->kdim * p->batch, 1, p->beta);
        for (int64_t i = 0; i < p->batch; i++)
            LB_TRY(bmm_call(be, p, a + (size_t)(i * p->stride_a) * eb, b + (size_t)(i * p->stride_b) * eb,
                            (char *)p->c, p->kdim, 1, i ? 1.0f : p->beta));
        return LB_OK;
    }
    for (int64_t b0 = 0; b0 < p->batch; b0 += kMaxBatch) {
        const int64_t nb = p->batch - b0 < kMaxBatch ? p->batch - b0 : kMaxBatch;
        LB_TRY(bmm_call(be, p, a + (size_t)(b0 * p->stride_a) * eb, b + (size_t)(b0 * p->stride_b) * eb,
                        (char *)p->c + (size_t)(b0 * p->stride_c) * eb, p->kdim, nb, p->beta));
    }
    return LB_OK;
}
