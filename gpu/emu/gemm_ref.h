/* The product behind the emulated cuBLAS and cuBLASLt (cublas.cc, cublaslt.cc), written from
 * NVIDIA's cuBLAS documentation: column-major matrices, op(X) = X or X^T, leading dimensions,
 * strided batches (a stride of 0 reuses one matrix), alpha and beta, an optional bias added to
 * every column (cuBLASLt's BIAS epilogue). Inputs widened to double (fp32 inputs first rounded to
 * TF32 when `tf32`), each dot product accumulated in double, the result rounded once to D's type.
 * C++ only, internal to gpu/emu/. */
#ifndef LB_GPU_EMU_GEMM_REF_H
#define LB_GPU_EMU_GEMM_REF_H

#include <library_types.h>
#include <stddef.h>
#include <stdint.h>

namespace lb_emu {

/* One matrix operand of a batch: element (i, j) of batch b is at p + b * stride + i + j * ld. */
struct GemmMatrix {
    const void *p;
    cudaDataType_t type;
    int64_t rows, cols, ld, stride;
};

struct GemmProblem {
    int64_t m, n, k, batch;
    bool trans_a, trans_b, tf32;
    double alpha, beta;
    GemmMatrix a, b, c, d;             /* a: rows x cols as stored (k x m when trans_a) */
    const void *bias;                  /* m elements of bias_type, or NULL */
    cudaDataType_t bias_type;
};

/* Bytes of one element of a type the reference handles (16F, 16BF, 32F), 0 for any other. */
size_t type_bytes(cudaDataType_t t);
/* Bytes from X.p to one past the last element any batch touches. */
size_t matrix_span_bytes(const GemmMatrix &x, int64_t batch);
/* Whether two batches of D overlap (D's stride under one matrix's span). */
bool batches_overlap(const GemmMatrix &x, int64_t batch);
/* Whether every operand lies inside a live cudaMalloc block; if one does not, the fault an
 * illegal access inside the library's kernel would be (cudaErrorIllegalAddress, sticky), naming
 * `api`, the problem and the operand, and false. */
bool operands_in_memory(const char *api, const GemmProblem &g);
/* D = alpha op(A) op(B) + beta C (+ bias), every batch, holding the device lock. */
void gemm_ref(const GemmProblem &g);

} // namespace lb_emu

#endif
