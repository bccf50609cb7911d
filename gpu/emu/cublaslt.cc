/* The emulated GPU's cuBLASLt: descriptors, preferences, the heuristic and cublasLtMatmul, under
 * their own names and signatures (cublasLt.h), enforcing what NVIDIA's cuBLASLt documentation
 * states, with the documented status when a rule is broken:
 *   CUBLAS_STATUS_INVALID_VALUE  an attribute buffer of the wrong size; layouts whose shapes do
 *                                not chain (op(A) m x k, op(B) k x n, C and D m x n); a leading
 *                                dimension below the rows; different batch counts; batches of D
 *                                that overlap; C == D with different layouts; the BIAS epilogue
 *                                without a bias pointer; a workspace smaller than the algorithm
 *                                asked for; a pointer less aligned than the alignment promised
 *                                to the heuristic (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES,
 *                                256 by default);
 *   CUBLAS_STATUS_NOT_SUPPORTED  a type or compute combination outside the set of cublas.cc, an
 *                                order other than column-major, an epilogue other than DEFAULT
 *                                or BIAS; and from the heuristic, no algorithm.
 * The bias has D's type unless CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE says otherwise, and m
 * elements of it must lie in device memory (a fault otherwise, like any operand outside every
 * allocation). The heuristic returns up to kAlgos algorithms, distinct records (an index
 * apiece) that all compute the one exact product, so a caller that times them and picks one
 * (gpu/matmul.cu's tuning) runs its choice; LB_EMU_LT_SLOW_ALGO=LIST (indices, comma separated)
 * makes a call with each listed algorithm take kSlowMs longer on the host clock the events read,
 * so a test can tell which one was chosen. LB_EMU_LT_NO_ALGO=1 makes the heuristic find no
 * algorithm, so the caller's fallback runs. */
#include <cublasLt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/emu/emu_internal.h"
#include "gpu/emu/gemm_ref.h"

using namespace lb_emu;

struct cublasLtContext {
    int unused;
};

namespace {

constexpr uint64_t kAlgoMagic = 0x4c42454d55414c47ull; /* "LBEMUALG" */
constexpr size_t kAlgoWorkspace = (size_t)1 << 20;      /* what every emulated algorithm asks */
constexpr int kAlgos = 3;                                /* algorithms the heuristic offers */
constexpr long kSlowMs = 5;                              /* LB_EMU_LT_SLOW_ALGO's delay */

struct MatmulDesc {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    int32_t trans_a, trans_b;
    uint32_t epilogue;
    const void *bias;
    int32_t bias_type; /* -1: D's type */
};

struct Layout {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
    int32_t order, batch;
    int64_t stride;
};

struct Preference {
    uint64_t max_workspace;
    uint32_t align_a, align_b, align_c, align_d;
    uint32_t reduction_mask, search_mode;
};

/* What the opaque algorithm carries: the promises it was chosen under. */
enum { ALGO_MAGIC, ALGO_ALIGN_A, ALGO_ALIGN_B, ALGO_ALIGN_C, ALGO_ALIGN_D, ALGO_WORKSPACE, ALGO_INDEX };

/* Whether LB_EMU_LT_SLOW_ALGO lists algorithm `index`. */
bool slow_algo(uint64_t index)
{
    const char *e = getenv("LB_EMU_LT_SLOW_ALGO");
    while (e && *e) {
        char *end = NULL;
        const unsigned long long v = strtoull(e, &end, 10);
        if (end == e)
            return false;
        if (v == index)
            return true;
        e = *end == ',' ? end + 1 : end;
        if (*end != ',')
            break;
    }
    return false;
}

/* A broken rule: the status cuBLASLt documents, and one line on stderr saying which rule, so a
 * wrong layout in gpu/matmul.cu reads as what it is rather than a bare "invalid value". */
cublasStatus_t reject(cublasStatus_t st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cublasStatus_t reject(cublasStatus_t st, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "linbench gpu emulator: cuBLASLt refuses: %s (%s)\n", buf, cublasGetStatusName(st));
    return st;
}

template <typename T> cublasStatus_t set_field(T &field, const void *buf, size_t size)
{
    if (!buf || size != sizeof(T))
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&field, buf, sizeof(T));
    return CUBLAS_STATUS_SUCCESS;
}

MatmulDesc *desc_of(cublasLtMatmulDesc_t d) { return reinterpret_cast<MatmulDesc *>(d); }
Layout *layout_of(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout *>(l); }
Preference *pref_of(cublasLtMatmulPreference_t p) { return reinterpret_cast<Preference *>(p); }

bool types_supported(const MatmulDesc &op, const Layout &a, const Layout &b, const Layout &c, const Layout &d)
{
    if (op.scale != CUDA_R_32F || c.type != d.type || a.type != b.type)
        return false;
    if (op.compute == CUBLAS_COMPUTE_32F)
        return (a.type == CUDA_R_16F || a.type == CUDA_R_16BF || a.type == CUDA_R_32F) &&
               (d.type == a.type || d.type == CUDA_R_32F);
    if (op.compute == CUBLAS_COMPUTE_32F_FAST_TF32)
        return a.type == CUDA_R_32F && d.type == CUDA_R_32F;
    return false;
}

/* The problem the descriptors describe, or the status that rejects it. */
cublasStatus_t build_problem(const MatmulDesc &op, const Layout &a, const Layout &b, const Layout &c,
                             const Layout &d, GemmProblem *g)
{
    if (a.order != CUBLASLT_ORDER_COL || b.order != CUBLASLT_ORDER_COL || c.order != CUBLASLT_ORDER_COL ||
        d.order != CUBLASLT_ORDER_COL)
        return reject(CUBLAS_STATUS_NOT_SUPPORTED, "an order other than column-major");
    if (op.epilogue != CUBLASLT_EPILOGUE_DEFAULT && op.epilogue != CUBLASLT_EPILOGUE_BIAS)
        return reject(CUBLAS_STATUS_NOT_SUPPORTED, "epilogue %u (the emulator has DEFAULT and BIAS)", op.epilogue);
    if (!types_supported(op, a, b, c, d))
        return reject(CUBLAS_STATUS_NOT_SUPPORTED, "types A %d, B %d, C %d, D %d under compute type %d, scale %d",
                      (int)a.type, (int)b.type, (int)c.type, (int)d.type, (int)op.compute, (int)op.scale);
    const bool ta = op.trans_a != CUBLAS_OP_N, tb = op.trans_b != CUBLAS_OP_N;
    const int64_t m = (int64_t)(ta ? a.cols : a.rows), k = (int64_t)(ta ? a.rows : a.cols);
    const int64_t kb = (int64_t)(tb ? b.cols : b.rows), n = (int64_t)(tb ? b.rows : b.cols);
    if (k != kb || (int64_t)c.rows != m || (int64_t)c.cols != n || (int64_t)d.rows != m ||
        (int64_t)d.cols != n)
        return reject(CUBLAS_STATUS_INVALID_VALUE,
                      "shapes do not chain: op(A) is %lld x %lld (A %llu x %llu, %s), op(B) %lld x %lld (B %llu x %llu, %s), C %llu x %llu, D %llu x %llu",
                      (long long)m, (long long)k, (unsigned long long)a.rows, (unsigned long long)a.cols,
                      ta ? "T" : "N", (long long)kb, (long long)n, (unsigned long long)b.rows,
                      (unsigned long long)b.cols, tb ? "T" : "N", (unsigned long long)c.rows,
                      (unsigned long long)c.cols, (unsigned long long)d.rows, (unsigned long long)d.cols);
    const Layout *ls[4] = {&a, &b, &c, &d};
    const char *names = "ABCD";
    for (int i = 0; i < 4; i++) {
        if (ls[i]->ld < (int64_t)(ls[i]->rows > 1 ? ls[i]->rows : 1))
            return reject(CUBLAS_STATUS_INVALID_VALUE, "%c's leading dimension %lld is below its %llu rows", names[i],
                          (long long)ls[i]->ld, (unsigned long long)ls[i]->rows);
        if (ls[i]->batch < 1)
            return reject(CUBLAS_STATUS_INVALID_VALUE, "%c's batch count %d", names[i], ls[i]->batch);
    }
    if (a.batch != d.batch || b.batch != d.batch || c.batch != d.batch)
        return reject(CUBLAS_STATUS_INVALID_VALUE, "batch counts differ: A %d, B %d, C %d, D %d", a.batch, b.batch,
                      c.batch, d.batch);
    memset(g, 0, sizeof *g);
    g->m = m;
    g->n = n;
    g->k = k;
    g->batch = d.batch;
    g->trans_a = ta;
    g->trans_b = tb;
    g->tf32 = op.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    g->a = GemmMatrix{nullptr, a.type, (int64_t)a.rows, (int64_t)a.cols, a.ld, a.stride};
    g->b = GemmMatrix{nullptr, b.type, (int64_t)b.rows, (int64_t)b.cols, b.ld, b.stride};
    g->c = GemmMatrix{nullptr, c.type, m, n, c.ld, c.stride};
    g->d = GemmMatrix{nullptr, d.type, m, n, d.ld, d.stride};
    g->bias_type = op.bias_type < 0 ? d.type : (cudaDataType_t)op.bias_type;
    if (batches_overlap(g->d, g->batch))
        return reject(CUBLAS_STATUS_INVALID_VALUE, "batches of D overlap (stride %lld under one %lld x %lld matrix, ld %lld)",
                      (long long)d.stride, (long long)m, (long long)n, (long long)d.ld);
    if (op.epilogue == CUBLASLT_EPILOGUE_BIAS && type_bytes(g->bias_type) == 0)
        return reject(CUBLAS_STATUS_NOT_SUPPORTED, "bias type %d", (int)g->bias_type);
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!device_present())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = new cublasLtContext{0};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasLtGetStatusName(cublasStatus_t s) { return cublasGetStatusName(s); }
const char *cublasLtGetStatusString(cublasStatus_t s) { return cublasGetStatusString(s); }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    if (!desc)
        return CUBLAS_STATUS_INVALID_VALUE;
    MatmulDesc *d = new MatmulDesc{compute, scale, CUBLAS_OP_N, CUBLAS_OP_N, CUBLASLT_EPILOGUE_DEFAULT, nullptr, -1};
    *desc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    delete desc_of(desc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    MatmulDesc *d = desc_of(desc);
    if (!d)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return set_field(d->compute, buf, size);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return set_field(d->scale, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSA: return set_field(d->trans_a, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSB: return set_field(d->trans_b, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return set_field(d->epilogue, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return set_field(d->bias, buf, size);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return set_field(d->bias_type, buf, size);
    default: return CUBLAS_STATUS_INVALID_VALUE; /* not modelled */
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    if (!layout)
        return CUBLAS_STATUS_INVALID_VALUE;
    Layout *l = new Layout{type, rows, cols, ld, CUBLASLT_ORDER_COL, 1, 0};
    *layout = reinterpret_cast<cublasLtMatrixLayout_t>(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    delete layout_of(layout);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                size_t size)
{
    Layout *l = layout_of(layout);
    if (!l)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return set_field(l->type, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return set_field(l->order, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return set_field(l->rows, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return set_field(l->cols, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_LD: return set_field(l->ld, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return set_field(l->batch, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return set_field(l->stride, buf, size);
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    if (!pref)
        return CUBLAS_STATUS_INVALID_VALUE;
    /* The alignments default to 256 bytes (cuBLASLt documentation). */
    Preference *p = new Preference{0, 256, 256, 256, 256, 0xffffffffu, 0};
    *pref = reinterpret_cast<cublasLtMatmulPreference_t>(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    delete pref_of(pref);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size)
{
    Preference *p = pref_of(pref);
    if (!p)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: return set_field(p->search_mode, buf, size);
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return set_field(p->max_workspace, buf, size);
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: return set_field(p->reduction_mask, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return set_field(p->align_a, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return set_field(p->align_b, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return set_field(p->align_c, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return set_field(p->align_d, buf, size);
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t op,
                                              cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                                              cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int *returned)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!op || !la || !lb || !lc || !ld || !pref || requested < 1 || !results || !returned)
        return CUBLAS_STATUS_INVALID_VALUE;
    *returned = 0;
    GemmProblem g;
    const cublasStatus_t s = build_problem(*desc_of(op), *layout_of(la), *layout_of(lb), *layout_of(lc),
                                           *layout_of(ld), &g);
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    if (env_flag("LB_EMU_LT_NO_ALGO"))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const Preference &p = *pref_of(pref);
    const int count = requested < kAlgos ? requested : kAlgos;
    for (int i = 0; i < count; i++) {
        memset(&results[i], 0, sizeof results[i]);
        uint64_t *a = results[i].algo.data;
        a[ALGO_MAGIC] = kAlgoMagic;
        a[ALGO_ALIGN_A] = p.align_a;
        a[ALGO_ALIGN_B] = p.align_b;
        a[ALGO_ALIGN_C] = p.align_c;
        a[ALGO_ALIGN_D] = p.align_d;
        a[ALGO_WORKSPACE] = p.max_workspace < kAlgoWorkspace ? p.max_workspace : kAlgoWorkspace;
        a[ALGO_INDEX] = (uint64_t)i;
        results[i].workspaceSize = (size_t)a[ALGO_WORKSPACE];
        results[i].state = CUBLAS_STATUS_SUCCESS;
        results[i].wavesCount = 1.0f;
    }
    *returned = count;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t op, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t la, const void *B,
                              cublasLtMatrixLayout_t lb, const void *beta, const void *C,
                              cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspace_bytes,
                              cudaStream_t stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!op || !la || !lb || !lc || !ld || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    const MatmulDesc &o = *desc_of(op);
    GemmProblem g;
    const cublasStatus_t s = build_problem(o, *layout_of(la), *layout_of(lb), *layout_of(lc), *layout_of(ld), &g);
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    g.a.p = A;
    g.b.p = B;
    g.c.p = C;
    g.d.p = D;
    g.alpha = *static_cast<const float *>(alpha);
    g.beta = *static_cast<const float *>(beta);
    if (o.epilogue == CUBLASLT_EPILOGUE_BIAS) {
        if (!o.bias)
            return reject(CUBLAS_STATUS_INVALID_VALUE, "the BIAS epilogue without a bias pointer");
        g.bias = o.bias;
    }
    if (C == D && memcmp(layout_of(lc), layout_of(ld), sizeof(Layout)) != 0)
        return reject(CUBLAS_STATUS_INVALID_VALUE, "C and D are one buffer with different layouts");
    if (algo) {
        const uint64_t *a = algo->data;
        if (a[ALGO_MAGIC] != kAlgoMagic)
            return reject(CUBLAS_STATUS_INVALID_VALUE, "an algorithm the heuristic did not return");
        if (workspace_bytes < a[ALGO_WORKSPACE])
            return reject(CUBLAS_STATUS_INVALID_VALUE, "a workspace of %zu bytes, under the %llu the algorithm asked for",
                          workspace_bytes, (unsigned long long)a[ALGO_WORKSPACE]);
        const void *ptrs[4] = {A, B, C, D};
        for (int i = 0; i < 4; i++)
            if ((uintptr_t)ptrs[i] % a[ALGO_ALIGN_A + i])
                return reject(CUBLAS_STATUS_INVALID_VALUE, "%c at %p is less aligned than the %llu bytes promised to the heuristic",
                              "ABCD"[i], ptrs[i], (unsigned long long)a[ALGO_ALIGN_A + i]);
    }
    if (workspace_bytes > 0 && (!workspace || !device_range_valid(workspace, workspace_bytes)))
        return reject(CUBLAS_STATUS_INVALID_VALUE, "a workspace of %zu bytes that is not device memory", workspace_bytes);
    if (g.m == 0 || g.n == 0)
        return CUBLAS_STATUS_SUCCESS;
    if (!stream_valid(stream) || sticky_error() != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!operands_in_memory("cublasLtMatmul", g))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    gemm_ref(g);
    if (algo && slow_algo(algo->data[ALGO_INDEX])) {
        const struct timespec delay = {0, kSlowMs * 1000000L};
        nanosleep(&delay, NULL);
    }
    return CUBLAS_STATUS_SUCCESS;
}
