/* The CUDA backend's state, shared by the host code of gpu/backend.cu (device, memory, data in
 * and out, timing), gpu/'s launchers (the ops of gpu/kernels.h) and gpu/matmul.cu (linear and bmm through cuBLASLt and
 * cuBLAS). Internal to gpu/: nothing outside it sees the struct. */
#ifndef LB_GPU_BACKEND_IMPL_H
#define LB_GPU_BACKEND_IMPL_H

#include <stddef.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "attn/ops.h"
#include "attn/plan.h"
#include "gpu/nvml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LB_CUDA_WORKSPACE_BYTES and LB_CUDA_ALIGNMENT are attn/plan.h's, so a plan for a GPU needs no
 * CUDA (linbench predict). */

typedef struct LbCudaMatmulCache LbCudaMatmulCache; /* gpu/matmul.cu */

typedef struct LbCudaAlloc {
    void *ptr;
    size_t bytes;
} LbCudaAlloc;

typedef struct LbCudaState {
    int device;
    cudaStream_t stream; /* every op runs on it, in order */
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cudaEvent_t ev_start, ev_stop;
    int timing;              /* timer_start seen, timer_stop not yet */
    cudaEvent_t *events;     /* event_record's events, created on first use, NULL-padded */
    int64_t n_events;
    void *workspace;         /* set_workspace's buffer, NULL until then (then no workspace) */
    size_t workspace_bytes;
    LbNvml *nvml;            /* NULL where NVML cannot be loaded */
    LbCudaMatmulCache *mm;
    LbCudaAlloc *allocs;     /* live mem_alloc blocks, so freeing the arena that holds the */
    size_t n_allocs, cap_allocs; /* workspace also drops it from cuBLAS */
} LbCudaState;

static inline LbCudaState *lb_cuda_state(LbBackend *be) { return (LbCudaState *)be->impl; }
static inline cudaStream_t lb_cuda_stream(LbBackend *be) { return lb_cuda_state(be)->stream; }

/* LB_EMU_CORRUPT=OP, a test switch of the emulated build only (gpu/emu/README.md): op OP writes one
 * wrong element of x (count), so the tests can watch `linbench check` and the sweep's quick check
 * catch a broken kernel (gpu/backend.cu). */
int lb_emu_corrupt(LbBackend *be, const char *op, void *x, int64_t count);

/* Milliseconds from event `from` to `to`, waiting for `to` (gpu/backend.cu). */
int lb_cuda_elapsed_ms(cudaEvent_t from, cudaEvent_t to, double *ms);

/* gpu/matmul.cu */
int lb_cuda_matmul_cache_create(LbCudaMatmulCache **out);
void lb_cuda_matmul_cache_destroy(LbCudaMatmulCache *c);
int lb_cuda_matmul_tuning(LbBackend *be, LbMatmulTuning *out);
int lb_cuda_linear(LbBackend *be, const void *x, const void *w, const void *b, void *y, int64_t rows,
                   int64_t in, int64_t out, int gelu);
int lb_cuda_bmm(LbBackend *be, const LbBmm *p);

#ifdef __cplusplus
}
#endif

#endif
