/* The emulated GPU's cuBLAS: the handle calls and the GEMMs linbench makes (cublasGemmEx and
 * cublasGemmStridedBatchedEx, 32- and 64-bit), under their own names and signatures
 * (cublas_api.h), with the checks NVIDIA's cuBLAS documentation gives for them:
 *   CUBLAS_STATUS_NOT_INITIALIZED  no handle (or no device when it was created);
 *   CUBLAS_STATUS_INVALID_VALUE    m, n, k or the batch count negative, an operation other than
 *                                  N/T/C, a leading dimension below the rows of the matrix as
 *                                  stored, a NULL alpha or beta, batches of C that overlap, a
 *                                  workspace that is not 256-byte aligned;
 *   CUBLAS_STATUS_NOT_SUPPORTED    a type or compute-type combination outside the set below.
 * Supported (a subset of cuBLAS's table, all linbench uses): A = B in 16F, 16BF or 32F with C
 * of the same type or 32F under CUBLAS_COMPUTE_32F (float alpha and beta); 32F only under
 * CUBLAS_COMPUTE_32F_FAST_TF32 (inputs rounded to TF32). An operand outside every cudaMalloc
 * block is a fault (cudaErrorIllegalAddress, sticky) and CUBLAS_STATUS_EXECUTION_FAILED, as an
 * illegal access inside the library's kernel would be on a GPU. LB_EMU_BLAS_ALLOC=SIZE makes every
 * GEMM take SIZE bytes of device memory for the call, as cuBLAS may without a workspace, and
 * return CUBLAS_STATUS_ALLOC_FAILED when they are not there. */
#include <cublas_v2.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/emu/emu_internal.h"
#include "gpu/emu/gemm_ref.h"

using namespace lb_emu;

struct cublasContext {
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    cublasMath_t math;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!device_present())
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle = new cublasContext{nullptr, nullptr, 0, CUBLAS_DEFAULT_MATH};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream_valid(stream))
        return CUBLAS_STATUS_INVALID_VALUE;
    /* cuBLAS documents that setting a stream resets the workspace to its default pool. */
    handle->stream = stream;
    handle->workspace = nullptr;
    handle->workspace_bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if ((uintptr_t)workspace % 256 != 0 || (bytes > 0 && !workspace))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (bytes > 0 && !device_range_valid(workspace, bytes))
        return CUBLAS_STATUS_INVALID_VALUE;
    handle->workspace = workspace;
    handle->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->math;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char *cublasGetStatusString(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was used as an argument";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "unknown error";
    }
}

namespace {

bool op_ok(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

cublasStatus_t gemm(const char *api, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                    int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                    cudaDataType_t at, int64_t lda, long long sa, const void *B, cudaDataType_t bt,
                    int64_t ldb, long long sb, const void *beta, void *C, cudaDataType_t ct,
                    int64_t ldc, long long sc, int64_t batch, cublasComputeType_t compute)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || !op_ok(ta) || !op_ok(tb) || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool tra = ta != CUBLAS_OP_N, trb = tb != CUBLAS_OP_N;
    const int64_t a_rows = tra ? k : m, a_cols = tra ? m : k;
    const int64_t b_rows = trb ? n : k, b_cols = trb ? k : n;
    if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool ab_ok = at == bt && (at == CUDA_R_16F || at == CUDA_R_16BF || at == CUDA_R_32F);
    bool types_ok;
    switch (compute) {
    case CUBLAS_COMPUTE_32F: types_ok = ab_ok && (ct == at || ct == CUDA_R_32F); break;
    case CUBLAS_COMPUTE_32F_FAST_TF32: types_ok = at == CUDA_R_32F && bt == CUDA_R_32F && ct == CUDA_R_32F; break;
    default: types_ok = false;
    }
    if (!types_ok)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    GemmProblem g{};
    g.m = m;
    g.n = n;
    g.k = k;
    g.batch = batch;
    g.trans_a = tra;
    g.trans_b = trb;
    g.tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    g.alpha = *static_cast<const float *>(alpha);
    g.beta = *static_cast<const float *>(beta);
    g.a = GemmMatrix{A, at, a_rows, a_cols, lda, sa};
    g.b = GemmMatrix{B, bt, b_rows, b_cols, ldb, sb};
    g.c = GemmMatrix{C, ct, m, n, ldc, sc};
    g.d = g.c;
    if (batches_overlap(g.d, batch)) {
        fprintf(stderr, "linbench gpu emulator: %s: strideC %lld is below one matrix of C (%lld x %lld, ldc %lld): batches of C overlap\n",
                api, sc, (long long)m, (long long)n, (long long)ldc);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (m == 0 || n == 0 || batch == 0)
        return CUBLAS_STATUS_SUCCESS;
    if (!stream_valid(h->stream) || sticky_error() != cudaSuccess)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (!operands_in_memory(api, g))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    static const size_t internal_bytes = env_size("LB_EMU_BLAS_ALLOC", 0);
    void *internal = nullptr;
    if (internal_bytes && cudaMalloc(&internal, internal_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    gemm_ref(g);
    if (internal)
        (void)cudaFree(internal);
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

cublasStatus_t cublasGemmEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                               int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType at,
                               int64_t lda, const void *B, cudaDataType bt, int64_t ldb, const void *beta,
                               void *C, cudaDataType ct, int64_t ldc, cublasComputeType_t compute,
                               cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm("cublasGemmEx_64", h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C,
                ct, ldc, 0, 1, compute);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                            int k, const void *alpha, const void *A, cudaDataType at, int lda,
                            const void *B, cudaDataType bt, int ldb, const void *beta, void *C,
                            cudaDataType ct, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm("cublasGemmEx", h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct,
                ldc, 0, 1, compute);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                             int64_t m, int64_t n, int64_t k, const void *alpha,
                                             const void *A, cudaDataType at, int64_t lda, long long sa,
                                             const void *B, cudaDataType bt, int64_t ldb, long long sb,
                                             const void *beta, void *C, cudaDataType ct, int64_t ldc,
                                             long long sc, int64_t batch, cublasComputeType_t compute,
                                             cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm("cublasGemmStridedBatchedEx_64", h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb,
                sb, beta, C, ct, ldc, sc, batch, compute);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                          int m, int n, int k, const void *alpha, const void *A,
                                          cudaDataType at, int lda, long long sa, const void *B,
                                          cudaDataType bt, int ldb, long long sb, const void *beta,
                                          void *C, cudaDataType ct, int ldc, long long sc, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    return gemm("cublasGemmStridedBatchedEx", h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb,
                beta, C, ct, ldc, sc, batch, compute);
}
