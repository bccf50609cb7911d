/* Checks for every CUDA runtime and cuBLAS call (host code of the .cu files): each macro returns
 * LB_FAIL(LB_ERR_DEVICE, or LB_ERR_NOMEM for out of memory, "<call> failed: <error string>") from
 * the enclosing int function. */
#ifndef LB_GPU_CUDA_CHECK_H
#define LB_GPU_CUDA_CHECK_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "attn/base/status.h"

/* Out of device memory from any call is LB_ERR_NOMEM, not only from cudaMalloc: the runtime loads
 * a kernel's code into device memory on first launch (lazy loading), outside the arena, and that
 * load can fail where the arena left too little. As NOMEM the batch search steps down and the
 * kernel loads on the retry (tests/gpu/test_emu_lazy_load.c). */
#define LB_CUDA_ERR_STATUS(err) ((err) == cudaErrorMemoryAllocation ? LB_ERR_NOMEM : LB_ERR_DEVICE)

/* A failed runtime call. cudaGetLastError clears a non-sticky error so it does not surface again
 * at the next unrelated check; a sticky error (a kernel fault) stays and every later call fails,
 * which is what we want: the sweep must stop then. */
#define LB_CUDA_CHECK(call)                                                                      \
    do {                                                                                         \
        cudaError_t lb_cuda_err_ = (call);                                                       \
        if (lb_cuda_err_ != cudaSuccess) {                                                       \
            (void)cudaGetLastError();                                                            \
            return LB_FAIL(LB_CUDA_ERR_STATUS(lb_cuda_err_), "%s failed: %s", #call,             \
                           cudaGetErrorString(lb_cuda_err_));                                    \
        }                                                                                        \
    } while (0)

/* A failed cuBLAS or cuBLASLt call, `text` the call as written; an allocation failure inside the
 * library is out of memory (recoverable, as above), anything else a device error. */
#define LB_BLAS_CHECK_(call, text, string_fn)                                                    \
    do {                                                                                         \
        cublasStatus_t lb_blas_st_ = (call);                                                     \
        if (lb_blas_st_ != CUBLAS_STATUS_SUCCESS)                                                \
            return LB_FAIL(lb_blas_st_ == CUBLAS_STATUS_ALLOC_FAILED ? LB_ERR_NOMEM : LB_ERR_DEVICE, \
                           "%s failed: %s", text, string_fn(lb_blas_st_));                       \
    } while (0)
#define LB_CUBLAS_CHECK(call) LB_BLAS_CHECK_((call), #call, cublasGetStatusString)
#define LB_CUBLASLT_CHECK(call) LB_BLAS_CHECK_((call), #call, cublasLtGetStatusString)

/* After every kernel launch: a bad configuration (too many threads, too much shared memory), or
 * no memory to load the kernel's code into, shows here; a fault inside the kernel shows at the
 * next synchronising call. */
#define LB_LAUNCH_CHECK(kernel_name)                                                             \
    do {                                                                                         \
        cudaError_t lb_launch_err_ = cudaGetLastError();                                         \
        if (lb_launch_err_ != cudaSuccess)                                                       \
            return LB_FAIL(LB_CUDA_ERR_STATUS(lb_launch_err_), "launch of %s failed: %s",        \
                           kernel_name, cudaGetErrorString(lb_launch_err_));                     \
    } while (0)

#endif
