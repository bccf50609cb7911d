/* The CUDA backend: attn/ops.h's table on one GPU. One non-blocking stream for every op, cuBLAS
 * and cuBLASLt bound to it, device memory (out of memory is recoverable LB_ERR_NOMEM), CUDA-event
 * timing and NVML clocks; the kernels' ops in gpu/'s kernel files, products in gpu/matmul.cu.
 * Every op checks its sizes and pointers first, so a forward-pass bug is a message, not a fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "attn/op_args.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "gpu/backend_impl.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels.h"
#include "gpu/nvml.h"
#include "gpu/open_errors.h"

#include <unistd.h>

/* The architectures this build has code for: meson passes them (the emulated device's 9.0 for the
 * emulated build); bench/kernel_report.py compiles this file alone, without them. */
#ifndef LB_GPU_ARCHS
#define LB_GPU_ARCHS "90"
#define LB_GPU_PTX 90
#endif

/* Host staging for upload/download conversions, in elements. */
#define LB_CUDA_STAGE_ELEMS ((int64_t)1 << 22)

/* --- memory ------------------------------------------------------------------------------- */

static int lb_cuda_mem_alloc(LbBackend *be, size_t bytes, void **ptr)
{
    LbCudaState *st = lb_cuda_state(be);
    *ptr = NULL;
    if (bytes == 0)
        return LB_OK;
    if (st->n_allocs == st->cap_allocs) {
        size_t cap = st->cap_allocs ? 2 * st->cap_allocs : 8;
        LbCudaAlloc *a = (LbCudaAlloc *)realloc(st->allocs, cap * sizeof *a);
        if (!a)
            return LB_FAIL(LB_ERR_NOMEM, "out of host memory for the allocation table");
        st->allocs = a;
        st->cap_allocs = cap;
    }
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        /* Not sticky: clear it so the next call does not report it, and let the batch search
         * step down. */
        (void)cudaGetLastError();
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
            (void)cudaGetLastError();
            return LB_FAIL(LB_ERR_NOMEM, "out of device memory: cudaMalloc of %zu bytes failed", bytes);
        }
        return LB_FAIL(LB_ERR_NOMEM, "out of device memory: cudaMalloc of %zu bytes failed (%zu of %zu bytes free)",
                       bytes, free_b, total_b);
    }
    LB_CUDA_CHECK(e);
    st->allocs[st->n_allocs].ptr = p;
    st->allocs[st->n_allocs].bytes = bytes;
    st->n_allocs++;
    *ptr = p;
    return LB_OK;
}

static void lb_cuda_mem_free(LbBackend *be, void *ptr)
{
    if (!ptr)
        return;
    LbCudaState *st = lb_cuda_state(be);
    for (size_t i = 0; i < st->n_allocs; i++) {
        LbCudaAlloc *a = &st->allocs[i];
        if (a->ptr != ptr)
            continue;
        const char *lo = (const char *)a->ptr, *ws = (const char *)st->workspace;
        if (ws && ws >= lo && ws < lo + a->bytes) {
            /* The workspace dies with its arena: cuBLAS must not keep the pointer. Work still
             * queued may use it, so wait for the stream first (cudaFree would anyway). */
            (void)cudaStreamSynchronize(st->stream);
            (void)cublasSetWorkspace(st->blas, NULL, 0);
            st->workspace = NULL;
            st->workspace_bytes = 0;
        }
        *a = st->allocs[--st->n_allocs];
        break;
    }
    /* A failure here can only be a fault left by earlier work, which the next checked call
     * reports; there is no status to return. */
    (void)cudaFree(ptr);
}

static int lb_cuda_mem_info(LbBackend *be, size_t *free_bytes, size_t *total_bytes)
{
    (void)be;
    LB_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
    return LB_OK;
}

static int lb_cuda_set_workspace(LbBackend *be, void *ptr, size_t bytes)
{
    LbCudaState *st = lb_cuda_state(be);
    if (bytes > 0 && !ptr)
        return LB_FAIL(LB_ERR_INVALID, "cuda set_workspace: NULL workspace of %zu bytes", bytes);
    if ((uintptr_t)ptr % LB_CUDA_ALIGNMENT != 0)
        return LB_FAIL(LB_ERR_INVALID, "cuda set_workspace: workspace not %zu-byte aligned", LB_CUDA_ALIGNMENT);
    LB_CUBLAS_CHECK(cublasSetWorkspace(st->blas, bytes ? ptr : NULL, bytes));
    st->workspace = bytes ? ptr : NULL;
    st->workspace_bytes = bytes;
    return LB_OK;
}

/* --- data in and out ------------------------------------------------------------------------ */

/* n elements of src converted through f on the host: fp16/bf16 staging, f rounding to nearest even. */
template <typename D, typename S> static void lb_convert(D *dst, const S *src, int64_t n, D (*f)(S))
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = f(src[i]);
}

/* Host <-> device in floats; fp16/bf16 through a host stage of at most LB_CUDA_STAGE_ELEMS. */
static int lb_cuda_transfer(LbBackend *be, int up, void *dev, float *host, int64_t count)
{
    LbCudaState *st = lb_cuda_state(be);
    const cudaMemcpyKind kind = up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    LB_TRY(lb_args_transfer(be, up ? "upload" : "download", dev, host, count));
    if (count == 0)
        return LB_OK;
    if (be->storage == LB_DTYPE_FP32) {
        const size_t bytes = (size_t)count * sizeof(float);
        LB_CUDA_CHECK(up ? cudaMemcpyAsync(dev, host, bytes, kind, st->stream)
                         : cudaMemcpyAsync(host, dev, bytes, kind, st->stream));
        LB_CUDA_CHECK(cudaStreamSynchronize(st->stream));
        return LB_OK;
    }
    const int64_t chunk = count < LB_CUDA_STAGE_ELEMS ? count : LB_CUDA_STAGE_ELEMS;
    void *stage = malloc((size_t)chunk * be->elem_bytes);
    if (!stage)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory for %s", up ? "an upload" : "a download");
    int rc = LB_OK;
    for (int64_t i = 0; i < count && rc == LB_OK; i += chunk) {
        const int64_t nc = count - i < chunk ? count - i : chunk;
        char *d = (char *)dev + (size_t)i * be->elem_bytes;
        const bool fp16 = be->storage == LB_DTYPE_FP16;
        if (up && fp16)
            lb_convert((__half *)stage, host + i, nc, __float2half_rn);
        else if (up)
            lb_convert((__nv_bfloat16 *)stage, host + i, nc, __float2bfloat16_rn);
        cudaError_t e = up ? cudaMemcpyAsync(d, stage, (size_t)nc * be->elem_bytes, kind, st->stream)
                           : cudaMemcpyAsync(stage, d, (size_t)nc * be->elem_bytes, kind, st->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(st->stream); /* before the stage is refilled or read */
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            rc = LB_FAIL(LB_ERR_DEVICE, "cudaMemcpyAsync (%s) failed: %s", up ? "upload" : "download",
                         cudaGetErrorString(e));
        } else if (!up && fp16) {
            lb_convert(host + i, (const __half *)stage, nc, __half2float);
        } else if (!up) {
            lb_convert(host + i, (const __nv_bfloat16 *)stage, nc, __bfloat162float);
        }
    }
    free(stage);
    return rc;
}

static int lb_cuda_upload(LbBackend *be, void *dst, const float *src, int64_t count)
{
    return lb_cuda_transfer(be, 1, dst, (float *)src, count);
}

static int lb_cuda_download(LbBackend *be, float *dst, const void *src, int64_t count)
{
    return lb_cuda_transfer(be, 0, (void *)src, dst, count);
}

static int lb_cuda_copy_raw_to_host(LbBackend *be, void *dst, const void *src, size_t bytes)
{
    LbCudaState *st = lb_cuda_state(be);
    LB_TRY(lb_args_copy(be, "copy_raw_to_host", dst, src, bytes, 0));
    if (bytes == 0)
        return LB_OK;
    LB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, st->stream));
    LB_CUDA_CHECK(cudaStreamSynchronize(st->stream));
    return LB_OK;
}

/* --- compute: the kernels' ops in gpu/kernels.h, products in gpu/matmul.cu -------------------- */

extern "C" int lb_emu_corrupt(LbBackend *be, const char *op, void *x, int64_t count)
{
#ifdef LB_GPU_EMULATOR
    const char *want = getenv("LB_EMU_CORRUPT");
    if (count == 0 || !want || strcmp(want, op) != 0)
        return LB_OK;
    float v = 0.0f;
    LB_TRY(lb_cuda_download(be, &v, x, 1));
    v = 2.0f * v + 1.0f;
    return lb_cuda_upload(be, x, &v, 1);
#else
    (void)be, (void)op, (void)x, (void)count;
    return LB_OK;
#endif
}

static int lb_cuda_copy(LbBackend *be, void *dst, const void *src, size_t bytes)
{
    LB_TRY(lb_args_copy(be, "copy", dst, src, bytes, 1));
    if (bytes > 0)
        LB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, lb_cuda_state(be)->stream));
    return LB_OK;
}

/* --- timing -------------------------------------------------------------------------------- */

static int lb_cuda_sync(LbBackend *be)
{
    LB_CUDA_CHECK(cudaStreamSynchronize(lb_cuda_state(be)->stream));
    return LB_OK;
}

extern "C" int lb_cuda_elapsed_ms(cudaEvent_t from, cudaEvent_t to, double *ms)
{
    float f = 0.0f;
    LB_CUDA_CHECK(cudaEventSynchronize(to));
    LB_CUDA_CHECK(cudaEventElapsedTime(&f, from, to));
    *ms = (double)f;
    return LB_OK;
}

static int lb_cuda_timer_start(LbBackend *be)
{
    LbCudaState *st = lb_cuda_state(be);
    LB_CUDA_CHECK(cudaEventRecord(st->ev_start, st->stream));
    st->timing = 1;
    return LB_OK;
}

static int lb_cuda_timer_stop(LbBackend *be, double *ms)
{
    LbCudaState *st = lb_cuda_state(be);
    if (!st->timing)
        return LB_FAIL(LB_ERR_INVALID, "cuda timer_stop without timer_start");
    st->timing = 0;
    LB_CUDA_CHECK(cudaEventRecord(st->ev_stop, st->stream));
    return lb_cuda_elapsed_ms(st->ev_start, st->ev_stop, ms);
}

static int lb_cuda_event_record(LbBackend *be, int64_t index)
{
    LbCudaState *st = lb_cuda_state(be);
    if (index < 0 || index > INT32_MAX)
        return LB_FAIL(LB_ERR_INVALID, "cuda event_record: event %lld is out of range", (long long)index);
    if (index >= st->n_events) {
        int64_t n = st->n_events ? st->n_events : 64;
        while (n <= index)
            n *= 2;
        cudaEvent_t *e = (cudaEvent_t *)realloc(st->events, (size_t)n * sizeof *e);
        if (!e)
            return LB_FAIL(LB_ERR_NOMEM, "out of host memory for %lld timer events", (long long)n);
        for (int64_t i = st->n_events; i < n; i++)
            e[i] = NULL;
        st->events = e;
        st->n_events = n;
    }
    /* Created on first use: a breakdown's warm-up pass creates them, so the timed pass does not. */
    if (!st->events[index])
        LB_CUDA_CHECK(cudaEventCreate(&st->events[index]));
    LB_CUDA_CHECK(cudaEventRecord(st->events[index], st->stream));
    return LB_OK;
}

static int lb_cuda_event_elapsed(LbBackend *be, int64_t from, int64_t to, double *ms)
{
    LbCudaState *st = lb_cuda_state(be);
    if (from < 0 || to < 0 || from >= st->n_events || to >= st->n_events || !st->events[from] || !st->events[to])
        return LB_FAIL(LB_ERR_INVALID, "cuda event_elapsed: event %lld or %lld was never recorded", (long long)from,
                       (long long)to);
    return lb_cuda_elapsed_ms(st->events[from], st->events[to], ms);
}

static int lb_cuda_sm_clock_mhz(LbBackend *be)
{
    return lb_nvml_clock(lb_cuda_state(be)->nvml, LB_NVML_SM_NOW);
}

static int lb_cuda_clock_events(LbBackend *be, uint64_t *reasons)
{
    unsigned long long r = 0;
    *reasons = 0;
    if (lb_nvml_clock_events(lb_cuda_state(be)->nvml, &r) != 0)
        return LB_ERR_UNSUPPORTED;
    *reasons = (uint64_t)r;
    return LB_OK;
}

/* NVML's counter is 64 bits of mJ: it does not wrap in the life of a GPU. */
static int lb_cuda_energy_j(LbBackend *be, double *joules)
{
    unsigned long long mj = 0;
    *joules = 0;
    if (!lb_cuda_state(be)->nvml)
        return LB_FAIL(LB_ERR_UNSUPPORTED, "no energy counter: NVML (libnvidia-ml.so.1) could not be loaded for this GPU");
    if (lb_nvml_energy_mj(lb_cuda_state(be)->nvml, &mj) != 0)
        return LB_FAIL(LB_ERR_UNSUPPORTED, "no energy counter: NVML has no total energy for this GPU (it needs Volta "
                                           "or later and a driver that reports it)");
    *joules = (double)mj / 1000.0;
    return LB_OK;
}

/* --- the device --------------------------------------------------------------------------- */

static int lb_cuda_describe(LbBackend *be, LbDeviceInfo *info)
{
    LbCudaState *st = lb_cuda_state(be);
    memset(info, 0, sizeof *info);
    cudaDeviceProp prop;
    LB_CUDA_CHECK(cudaGetDeviceProperties(&prop, st->device));
    /* Device names are far shorter than the 256 bytes the runtime allows. */
    memcpy(info->name, prop.name, sizeof info->name - 1);
    info->name[sizeof info->name - 1] = '\0';
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(info->uuid, sizeof info->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->sm_count = prop.multiProcessorCount;
    size_t free_b = 0, total_b = 0;
    LB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    info->total_bytes = (int64_t)total_b;
    info->free_bytes = (int64_t)free_b;
    /* Clocks from NVML; without it the peak clocks the runtime knows (kHz). */
    info->sm_clock_mhz = lb_nvml_clock(st->nvml, LB_NVML_SM_NOW);
    info->sm_clock_max_mhz = lb_nvml_clock(st->nvml, LB_NVML_SM_MAX);
    info->mem_clock_mhz = lb_nvml_clock(st->nvml, LB_NVML_MEM_NOW);
    int khz = 0;
    if (info->sm_clock_max_mhz < 0 && cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, st->device) == cudaSuccess && khz > 0)
        info->sm_clock_max_mhz = khz / 1000;
    if (info->mem_clock_mhz < 0 && cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, st->device) == cudaSuccess && khz > 0)
        info->mem_clock_mhz = khz / 1000;
    (void)cudaGetLastError(); /* an attribute this runtime lacks is not an error */
    int v = 0;
    LB_CUDA_CHECK(cudaDriverGetVersion(&v));
    info->driver_version = v;
    LB_CUDA_CHECK(cudaRuntimeGetVersion(&v));
    info->runtime_version = v;
    LB_CUBLAS_CHECK(cublasGetVersion(st->blas, &v));
    info->cublas_version = v;
    info->device_index = st->device;
    char what[96];
    (void)lb_cuda_arch_verdict(prop.major, prop.minor, LB_GPU_ARCHS, LB_GPU_PTX, what, sizeof what);
    snprintf(info->code, sizeof info->code, "built for sm %s, PTX of compute_%d; this device runs %s", LB_GPU_ARCHS, LB_GPU_PTX, what);
    info->ecc = prop.ECCEnabled != 0;
    lb_nvml_state(st->nvml, &info->persistence, &info->mig, &info->other_processes);
    return LB_OK;
}

static void lb_cuda_close(LbBackend *be)
{
    if (!be)
        return;
    LbCudaState *st = lb_cuda_state(be);
    if (st) {
        /* Errors on the way out have nobody to go to; a pending fault was already reported by
         * the op that synchronised last. */
        if (st->stream)
            (void)cudaStreamSynchronize(st->stream);
        lb_cuda_matmul_cache_destroy(st->mm);
        if (st->lt)
            (void)cublasLtDestroy(st->lt);
        if (st->blas)
            (void)cublasDestroy(st->blas);
        if (st->ev_start)
            (void)cudaEventDestroy(st->ev_start);
        if (st->ev_stop)
            (void)cudaEventDestroy(st->ev_stop);
        for (int64_t i = 0; i < st->n_events; i++)
            if (st->events[i])
                (void)cudaEventDestroy(st->events[i]);
        free(st->events);
        if (st->stream)
            (void)cudaStreamDestroy(st->stream);
        (void)cudaGetLastError();
        lb_nvml_close(st->nvml);
        free(st->allocs);
        free(st);
    }
    free(be);
}

/* Positional (C++): LbOps' order, the pass ops last. */
#define LB_CUDA_OP_ENTRY(name, params) lb_cuda_##name,
static const LbOps lb_cuda_ops = {
    "cuda",
    lb_cuda_mem_alloc,
    lb_cuda_mem_free,
    lb_cuda_mem_info,
    lb_cuda_set_workspace,
    lb_cuda_download,
    lb_cuda_copy_raw_to_host,
    lb_cuda_fill_tokens,
    lb_cuda_sync,
    lb_cuda_timer_start,
    lb_cuda_timer_stop,
    lb_cuda_sm_clock_mhz,
    lb_cuda_clock_events,
    lb_cuda_describe,
    lb_cuda_close,
    lb_cuda_event_record,
    lb_cuda_event_elapsed,
    lb_cuda_energy_j,
    lb_cuda_matmul_tuning,
    LB_PASS_OPS(LB_CUDA_OP_ENTRY)
};

#define LB_CUDA_GRID_CAP_DEFAULT (1u << 30) /* gridDim.x allows 2^31 - 1 */
static unsigned int lb_cuda_grid_cap_blocks = LB_CUDA_GRID_CAP_DEFAULT;

extern "C" void lb_cuda_set_grid_cap(unsigned int blocks)
{
    lb_cuda_grid_cap_blocks = blocks ? blocks : LB_CUDA_GRID_CAP_DEFAULT;
}

extern "C" unsigned int lb_cuda_grid_cap(void) { return lb_cuda_grid_cap_blocks; }

extern "C" const char *lb_cuda_backend_kind(void)
{
#ifdef LB_GPU_EMULATOR
    return "emulated GPU";
#else
    return "CUDA";
#endif
}

extern "C" cudaStream_t lb_cuda_backend_stream(LbBackend *be)
{
    if (!be || be->ops != &lb_cuda_ops)
        return NULL;
    return lb_cuda_state(be)->stream;
}

/* A device this process cannot use, or one this build has no code for, stops here with its
 * cause rather than at the first kernel launch. */
static int lb_cuda_usable(int index)
{
    int mode = 0, major = 0, minor = 0;
    LB_CUDA_CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, index));
    if (mode == cudaComputeModeProhibited)
        return LB_FAIL(LB_ERR_DEVICE, "CUDA device %d is in prohibited compute mode: no process may use it (nvidia-smi -c DEFAULT changes it)", index);
    LB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
    LB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index));
    char what[160];
    if (lb_cuda_arch_verdict(major, minor, LB_GPU_ARCHS, LB_GPU_PTX, what, sizeof what) == 0)
        return LB_FAIL(LB_ERR_DEVICE, "CUDA device %d (compute capability %d.%d) has %s: rebuild linbench with -Dgpu_arch=%d%d",
                       index, major, minor, what, major, minor);
    return LB_OK;
}

/* Everything after the state is allocated; on failure the caller closes the half-built backend. */
static int lb_cuda_setup(LbCudaState *st, int index)
{
    st->device = index;
    LB_TRY(lb_cuda_usable(index));
    LB_CUDA_CHECK(cudaSetDevice(index));
    LB_CUDA_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    LB_CUDA_CHECK(cudaEventCreate(&st->ev_start));
    LB_CUDA_CHECK(cudaEventCreate(&st->ev_stop));
    LB_CUBLAS_CHECK(cublasCreate(&st->blas));
    /* cublasSetStream resets the workspace to cuBLAS's own pool, so it comes first; then no
     * workspace until set_workspace hands over the arena's bytes (the plan counts them). */
    LB_CUBLAS_CHECK(cublasSetStream(st->blas, st->stream));
    LB_CUBLAS_CHECK(cublasSetWorkspace(st->blas, NULL, 0));
    /* TF32 only through the compute type (CUBLAS_COMPUTE_32F_FAST_TF32 under --tf32); and no
     * split-K reduction in the output type: METHOD.md has products accumulate in fp32, and an
     * fp16 reduction of partial sums would round them once more. */
    LB_CUBLAS_CHECK(cublasSetMathMode(st->blas, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                                               CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    LB_CUBLASLT_CHECK(cublasLtCreate(&st->lt));
    LB_TRY(lb_cuda_matmul_cache_create(&st->mm));
    char bus[32];
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, index) == cudaSuccess)
        st->nvml = lb_nvml_open(bus);
    else
        (void)cudaGetLastError();
    return LB_OK;
}

extern "C" int lb_cuda_backend_open(int index, LbDtype dtype, int tf32, LbBackend **out)
{
    *out = NULL;
    if (dtype != LB_DTYPE_FP16 && dtype != LB_DTYPE_BF16 && dtype != LB_DTYPE_FP32)
        return LB_FAIL(LB_ERR_INVALID, "cuda backend: unknown dtype %d", (int)dtype);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        /* Said as what it is: no GPU (tests skip) or a GPU that cannot be used (tests fail). */
        (void)cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaErrorNoDevice;
        int driver = 0, runtime = 0;
        (void)cudaDriverGetVersion(&driver);
        (void)cudaRuntimeGetVersion(&runtime);
        (void)cudaGetLastError();
        return lb_cuda_explain_no_device((int)e, cudaGetErrorName(e), cudaGetErrorString(e), driver, runtime,
                                         access("/proc/driver/nvidia/version", F_OK) == 0);
    }
    /* An index this machine does not have is the user's input (exit 2), as --gpus words it. */
    if (index < 0 || index >= count)
        return LB_FAIL(LB_ERR_INVALID, "invalid argument \"%d\" for --gpu: there is no GPU %d (this machine has %d, 0 to %d)",
                       index, index, count, count - 1);
    LbBackend *be = (LbBackend *)calloc(1, sizeof *be);
    LbCudaState *st = (LbCudaState *)calloc(1, sizeof *st);
    if (!be || !st) {
        free(be);
        free(st);
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory opening the CUDA backend");
    }
    be->ops = &lb_cuda_ops;
    be->impl = st;
    be->dtype = dtype;
    be->storage = dtype;
    be->elem_bytes = dtype == LB_DTYPE_FP32 ? 4 : 2;
    be->workspace_bytes = LB_CUDA_WORKSPACE_BYTES;
    be->alignment = LB_CUDA_ALIGNMENT;
    be->tf32 = tf32 ? 1 : 0;
    be->autotune = 1; /* the caller turns it off for --no-autotune */
    int rc = lb_cuda_setup(st, index);
    if (rc != LB_OK) {
        lb_cuda_close(be);
        return rc;
    }
    *out = be;
    return LB_OK;
}
