/* The emulated cuBLAS and cuBLASLt (gpu/emu/cublas.cc, cublaslt.cc), suite gpu-emu: products
 * against a naive double loop on fresh random data (every transpose pair, padded leading
 * dimensions, a stride-0 batch, alpha, beta, the BIAS epilogue, TF32 rounding), and the
 * documented status for each broken rule, so that a wrong leading dimension, transpose or layout
 * in gpu/matmul.cu fails here instead of on a user's GPU. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "gpu/emu/emu.h"
#include "tests/lib/check.h"

namespace {

float *dev_floats(const std::vector<float> &h)
{
    void *p = nullptr;
    if (cudaMalloc(&p, h.size() * sizeof(float)) != cudaSuccess) {
        printf("FAIL: cudaMalloc\n");
        exit(1);
    }
    cudaMemcpy(p, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
    return static_cast<float *>(p);
}

std::vector<float> random_floats(size_t n)
{
    std::vector<float> v(n);
    const uint64_t seed = lb_test_seed * 7919u + ++lb_test_stream;
    for (size_t i = 0; i < n; i++)
        v[i] = lb_rng_range(seed, i, -1.0f, 1.0f);
    return v;
}

/* Column-major reference: C = alpha op(A) op(B) + beta C, one batch. */
void ref_gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
              int ldb, float beta, float *C, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int p = 0; p < k; p++)
                s += (double)(ta ? A[p + i * lda] : A[i + p * lda]) * (double)(tb ? B[j + p * ldb] : B[p + j * ldb]);
            C[i + j * ldc] = (float)(alpha * s + beta * C[i + j * ldc]);
        }
}

double max_rel(const std::vector<float> &a, const std::vector<float> &b)
{
    double e = 0.0, n = 0.0;
    for (size_t i = 0; i < a.size(); i++) {
        e = fmax(e, fabs((double)a[i] - (double)b[i]));
        n = fmax(n, fabs((double)b[i]));
    }
    return n > 0.0 ? e / n : e;
}

void check_gemm_values(cublasHandle_t h)
{
    const int m = 7, n = 5, k = 9, batch = 3;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            const int lda = (ta ? k : m) + 2, ldb = (tb ? n : k) + 1, ldc = m + 3;
            const int sa = lda * (ta ? m : k), sb = 0 /* one B for every batch */, sc = ldc * n;
            std::vector<float> A = random_floats((size_t)sa * batch), B = random_floats((size_t)ldb * (tb ? k : n)),
                               C = random_floats((size_t)sc * batch), ref = C;
            float *dA = dev_floats(A), *dB = dev_floats(B), *dC = dev_floats(C);
            const float alpha = 0.75f, beta = -0.5f;
            const cublasStatus_t st = cublasGemmStridedBatchedEx_64(
                h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, dA,
                CUDA_R_32F, lda, sa, dB, CUDA_R_32F, ldb, sb, &beta, dC, CUDA_R_32F, ldc, sc, batch,
                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            for (int b = 0; b < batch; b++)
                ref_gemm(ta, tb, m, n, k, alpha, &A[(size_t)b * sa], lda, B.data(), ldb, beta, &ref[(size_t)b * sc], ldc);
            std::vector<float> out(C.size());
            cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
            const double err = max_rel(out, ref);
            lb_check(st == CUBLAS_STATUS_SUCCESS && err < 1e-6, "strided batched gemm ta %d tb %d: status %d, error %.3e",
                     ta, tb, (int)st, err);
            cudaFree(dA);
            cudaFree(dB);
            cudaFree(dC);
        }
}

void check_gemm_rules(cublasHandle_t h)
{
    std::vector<float> z(4096, 0.5f);
    float *d = dev_floats(z);
    const float one = 1.0f, zero = 0.0f;
    struct {
        const char *what;
        int m, n, k, lda, ldb, ldc, batch;
        long long sc;
        cudaDataType_t ct;
        cublasComputeType_t compute;
        cublasStatus_t want;
    } cases[] = {
        {"lda below the rows", 8, 4, 4, 7, 4, 8, 1, 0, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_INVALID_VALUE},
        {"ldb below the rows", 8, 4, 4, 8, 3, 8, 1, 0, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_INVALID_VALUE},
        {"ldc below the rows", 8, 4, 4, 8, 4, 7, 1, 0, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_INVALID_VALUE},
        {"negative m", -1, 4, 4, 8, 4, 8, 1, 0, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_INVALID_VALUE},
        {"batches of C overlap", 8, 4, 4, 8, 4, 8, 2, 16, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_INVALID_VALUE},
        {"fp32 inputs into an fp16 C", 8, 4, 4, 8, 4, 8, 1, 0, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_NOT_SUPPORTED},
        {"fp16 compute type", 8, 4, 4, 8, 4, 8, 1, 0, CUDA_R_32F, CUBLAS_COMPUTE_16F, CUBLAS_STATUS_NOT_SUPPORTED},
        {"a good call", 8, 4, 4, 8, 4, 8, 2, 32, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_STATUS_SUCCESS},
    };
    for (const auto &c : cases) {
        const cublasStatus_t st = cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, c.m, c.n, c.k, &one, d,
                                                                CUDA_R_32F, c.lda, 0, d + 1024, CUDA_R_32F, c.ldb, 0,
                                                                &zero, d + 2048, c.ct, c.ldc, c.sc, c.batch,
                                                                c.compute, CUBLAS_GEMM_DEFAULT);
        lb_check(st == c.want, "cublas %s: status %s, want %s", c.what, cublasGetStatusName(st), cublasGetStatusName(c.want));
    }
    /* An operand running off the end of its allocation: a fault, as an illegal access would be. */
    const cublasStatus_t st = cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, CUDA_R_32F, 64, d,
                                              CUDA_R_32F, 64, &zero, d + 2048, CUDA_R_32F, 64, CUBLAS_COMPUTE_32F,
                                              CUBLAS_GEMM_DEFAULT);
    lb_check(st == CUBLAS_STATUS_EXECUTION_FAILED && strstr(lb_emu_fault_message(), "outside every device allocation"),
             "a product past the end of C: status %s, fault \"%s\"", cublasGetStatusName(st), lb_emu_fault_message());
    lb_emu_reset();
    cudaFree(d);
}

/* TF32 keeps 10 mantissa bits: 1 + 2^-12 rounds to 1 under FAST_TF32 and not under 32F. */
void check_tf32(cublasHandle_t h)
{
    std::vector<float> a(1, 1.0f + 1.0f / 4096.0f), b(1, 1.0f), c(1, 0.0f);
    float *da = dev_floats(a), *db = dev_floats(b), *dc = dev_floats(c);
    const float one = 1.0f, zero = 0.0f;
    float out32 = 0.0f, outtf = 0.0f;
    cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, da, CUDA_R_32F, 1, db, CUDA_R_32F, 1, &zero, dc,
                    CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaMemcpy(&out32, dc, sizeof out32, cudaMemcpyDeviceToHost);
    cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, da, CUDA_R_32F, 1, db, CUDA_R_32F, 1, &zero, dc,
                    CUDA_R_32F, 1, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    cudaMemcpy(&outtf, dc, sizeof outtf, cudaMemcpyDeviceToHost);
    lb_check(out32 == a[0] && outtf == 1.0f, "TF32 rounding: 32F gives %.9g, FAST_TF32 %.9g", (double)out32, (double)outtf);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
}

struct Lt {
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
};

/* y (m x n) = W^T (m x k) x (k x n) + bias, the layout of gpu/matmul.cu's linear. */
Lt lt_make(int m, int n, int k, bool bias, const void *bias_ptr, uint64_t ws, uint32_t align)
{
    Lt t{};
    cublasLtCreate(&t.h);
    cublasLtMatmulDescCreate(&t.op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t T = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(t.op, CUBLASLT_MATMUL_DESC_TRANSA, &T, sizeof T);
    const cublasLtEpilogue_t epi = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    cublasLtMatmulDescSetAttribute(t.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (bias_ptr)
        cublasLtMatmulDescSetAttribute(t.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof bias_ptr);
    cublasLtMatrixLayoutCreate(&t.la, CUDA_R_32F, k, m, k);
    cublasLtMatrixLayoutCreate(&t.lb, CUDA_R_32F, k, n, k);
    cublasLtMatrixLayoutCreate(&t.lc, CUDA_R_32F, m, n, m);
    cublasLtMatmulPreferenceCreate(&t.pref);
    cublasLtMatmulPreferenceSetAttribute(t.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulPreferenceSetAttribute(t.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align, sizeof align);
    return t;
}

void lt_free(Lt &t)
{
    cublasLtMatmulPreferenceDestroy(t.pref);
    cublasLtMatrixLayoutDestroy(t.la);
    cublasLtMatrixLayoutDestroy(t.lb);
    cublasLtMatrixLayoutDestroy(t.lc);
    cublasLtMatmulDescDestroy(t.op);
    cublasLtDestroy(t.h);
}

void check_lt()
{
    const int m = 6, n = 5, k = 8;
    std::vector<float> W = random_floats(k * m + 64), X = random_floats(k * n), bias = random_floats(m),
                       ws(1 << 18, 0.0f);
    float *dW = dev_floats(W), *dX = dev_floats(X), *dB = dev_floats(bias), *dY = dev_floats(std::vector<float>(m * n, NAN)),
          *dWs = dev_floats(ws);
    const float one = 1.0f, zero = 0.0f;
    const size_t ws_bytes = ws.size() * sizeof(float);

    Lt t = lt_make(m, n, k, true, dB, ws_bytes, 256);
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(t.h, t.op, t.la, t.lb, t.lc, t.lc, t.pref, 1, &res, &found);
    lb_check(st == CUBLAS_STATUS_SUCCESS && found == 1, "heuristic: status %s, %d found", cublasGetStatusName(st), found);
    st = cublasLtMatmul(t.h, t.op, &one, dW, t.la, dX, t.lb, &zero, dY, t.lc, dY, t.lc, &res.algo, dWs, ws_bytes, nullptr);
    std::vector<float> out(m * n), ref(m * n, 0.0f);
    cudaMemcpy(out.data(), dY, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
    ref_gemm(true, false, m, n, k, 1.0f, W.data(), k, X.data(), k, 0.0f, ref.data(), m);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            ref[i + j * m] += bias[i];
    lb_check(st == CUBLAS_STATUS_SUCCESS && max_rel(out, ref) < 1e-6, "cublasLtMatmul with bias: status %s, error %.3e",
             cublasGetStatusName(st), max_rel(out, ref));

    st = cublasLtMatmul(t.h, t.op, &one, dW, t.la, dX, t.lb, &zero, dY, t.lc, dY, t.lc, &res.algo, dWs,
                        res.workspaceSize - 1, nullptr);
    lb_check(st == CUBLAS_STATUS_INVALID_VALUE, "a workspace under the algorithm's: %s", cublasGetStatusName(st));
    st = cublasLtMatmul(t.h, t.op, &one, dW + 1, t.la, dX, t.lb, &zero, dY, t.lc, dY, t.lc, &res.algo, dWs, ws_bytes,
                        nullptr);
    lb_check(st == CUBLAS_STATUS_INVALID_VALUE, "A less aligned than promised: %s", cublasGetStatusName(st));
    lt_free(t);

    t = lt_make(m, n, k, true, nullptr, ws_bytes, 256);
    st = cublasLtMatmul(t.h, t.op, &one, dW, t.la, dX, t.lb, &zero, dY, t.lc, dY, t.lc, nullptr, dWs, ws_bytes, nullptr);
    lb_check(st == CUBLAS_STATUS_INVALID_VALUE, "BIAS epilogue without a bias pointer: %s", cublasGetStatusName(st));
    lt_free(t);

    /* A bias of the wrong length: m elements must lie in device memory. */
    t = lt_make(m, n, k, true, dB + 3, ws_bytes, 256);
    st = cublasLtMatmul(t.h, t.op, &one, dW, t.la, dX, t.lb, &zero, dY, t.lc, dY, t.lc, nullptr, dWs, ws_bytes, nullptr);
    lb_check(st == CUBLAS_STATUS_EXECUTION_FAILED && strstr(lb_emu_fault_message(), "bias"),
             "a bias shorter than the rows: %s, \"%s\"", cublasGetStatusName(st), lb_emu_fault_message());
    lb_emu_reset();
    lt_free(t);

    /* A layout whose leading dimension is below its rows, and shapes that do not chain. */
    t = lt_make(m, n, k, false, nullptr, ws_bytes, 256);
    cublasLtMatrixLayout_t bad;
    cublasLtMatrixLayoutCreate(&bad, CUDA_R_32F, k, m, k - 1);
    st = cublasLtMatmulAlgoGetHeuristic(t.h, t.op, bad, t.lb, t.lc, t.lc, t.pref, 1, &res, &found);
    lb_check(st == CUBLAS_STATUS_INVALID_VALUE, "ld below the rows: %s", cublasGetStatusName(st));
    cublasLtMatrixLayoutDestroy(bad);
    cublasLtMatrixLayoutCreate(&bad, CUDA_R_32F, m, k, m); /* A not transposed as TRANSA says */
    st = cublasLtMatmulAlgoGetHeuristic(t.h, t.op, bad, t.lb, t.lc, t.lc, t.pref, 1, &res, &found);
    lb_check(st == CUBLAS_STATUS_INVALID_VALUE, "A's shape against TRANSA: %s", cublasGetStatusName(st));
    cublasLtMatrixLayoutDestroy(bad);
    const int32_t wrong_size = 1;
    st = cublasLtMatmulDescSetAttribute(t.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &wrong_size, sizeof wrong_size);
    lb_check(st == CUBLAS_STATUS_INVALID_VALUE, "an attribute of the wrong size: %s", cublasGetStatusName(st));
    setenv("LB_EMU_LT_NO_ALGO", "1", 1);
    st = cublasLtMatmulAlgoGetHeuristic(t.h, t.op, t.la, t.lb, t.lc, t.lc, t.pref, 1, &res, &found);
    lb_check(st == CUBLAS_STATUS_NOT_SUPPORTED && found == 0, "LB_EMU_LT_NO_ALGO: %s, %d found", cublasGetStatusName(st), found);
    unsetenv("LB_EMU_LT_NO_ALGO");
    lt_free(t);
    cudaFree(dW);
    cudaFree(dX);
    cudaFree(dB);
    cudaFree(dY);
    cudaFree(dWs);
}

} // namespace

int main()
{
    lb_test_init("test_emu_blas");
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        printf("FAIL: cublasCreate\n");
        return 1;
    }
    check_gemm_values(h);
    check_gemm_rules(h);
    check_tf32(h);
    check_lt();
    cublasDestroy(h);
    return lb_test_finish("test_emu_blas");
}
