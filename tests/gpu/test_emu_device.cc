/* The emulated GPU itself (gpu/emu/), suite gpu-emu: correct kernels (CUDA C compiled as host C++
 * with gpu/emu/emu_device.h force-included, as gpu/'s are in the emulated build) give the values
 * PTX defines, and each kind of wrong kernel is a fault naming its site (sticky until
 * lb_emu_reset), never a hang or a silent pass: shuffles, votes and barriers; tensor-core mma,
 * ldmatrix and cp.async by the PTX ISA's fragment layouts; launch configurations; the runtime's
 * memory, copies, events and streams; several devices (LB_EMU_DEVICES), each with its own memory,
 * streams and events, the current one per host thread. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <thread>
#include <vector>

#include "attn/base/status.h"
#include "gpu/device_util.cuh"
#include "gpu/emu/emu.h"
#include "gpu/kernels.h"
#include "gpu/tensor_core.cuh"
#include "tests/lib/check.h"

namespace {

/* --- correct kernels ----------------------------------------------------------------------- */

__global__ void shuffles_kernel(int *out, int width)
{
    const int lane = threadIdx.x & 31;
    const int base = blockIdx.x * blockDim.x + threadIdx.x;
    int *o = out + (int64_t)base * 8;
    o[0] = __shfl_xor_sync(0xffffffffu, lane * 10, 5, width);
    o[1] = __shfl_down_sync(0xffffffffu, lane * 10, 3, width);
    o[2] = __shfl_up_sync(0xffffffffu, lane * 10, 2, width);
    o[3] = __shfl_sync(0xffffffffu, lane * 10, 7, width);
    o[4] = (int)__ballot_sync(0xffffffffu, lane % 3 == 0);
    o[5] = __any_sync(0xffffffffu, lane == 31);
    o[6] = __all_sync(0xffffffffu, lane < 31);
    __syncwarp();
    o[7] = lane < 16 ? (int)__shfl_xor_sync(0x0000ffffu, (float)lane, 1) : 0; /* half-warp mask */
}

/* Block sum through shared memory, with the barriers (or without the first, when broken). */
template <int BROKEN>
__global__ void block_sum_kernel(const float *x, float *out)
{
    LB_SHARED(float, sh, 32);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0)
        sh[warp] = v;
    if (!BROKEN)
        __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}

/* Threads past `live` exit at once; the rest meet at a barrier, which must still release. */
__global__ void early_exit_kernel(int *out, int live)
{
    LB_SHARED(int, sh, 256);
    if ((int)threadIdx.x >= live)
        return;
    sh[threadIdx.x] = (int)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = sh[live - 1 - (int)threadIdx.x];
}

/* --- wrong kernels ------------------------------------------------------------------------- */

__global__ void divergent_shuffle_kernel(float *out)
{
    float v = (float)threadIdx.x;
    if ((threadIdx.x & 31) < 16)
        v += __shfl_xor_sync(0xffffffffu, v, 1);
    out[threadIdx.x] = v;
}

__global__ void two_sites_kernel(float *out)
{
    float v = (float)threadIdx.x;
    if (threadIdx.x & 1)
        v = __shfl_xor_sync(0xffffffffu, v, 2);
    else
        v = __shfl_xor_sync(0xffffffffu, v, 2);
    out[threadIdx.x] = v;
}

__global__ void outside_mask_kernel(float *out)
{
    float v = (float)threadIdx.x;
    if ((threadIdx.x & 31) < 16)
        v = __shfl_xor_sync(0x0000ffffu, v, 16); /* lane 16 + j is not in the mask */
    out[threadIdx.x] = v;
}

/* Half the block at one barrier, half at another: CUDA leaves it undefined (a hang on some GPUs). */
__global__ void divergent_barrier_kernel(float *out)
{
    if (threadIdx.x < 64)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 1.0f;
}

__global__ void noop_kernel(int *out)
{
    if (out)
        out[threadIdx.x] = 1;
}

/* --- helpers -------------------------------------------------------------------------------- */

template <typename T> T *dev_alloc(size_t count)
{
    void *p = nullptr;
    if (cudaMalloc(&p, count * sizeof(T)) != cudaSuccess) {
        printf("FAIL: cudaMalloc of %zu bytes\n", count * sizeof(T));
        exit(1);
    }
    return static_cast<T *>(p);
}

/* A call that must fail with `want`; the error then cleared, as the backend's checks clear it. */
void expect_error(cudaError_t got, cudaError_t want, const char *what)
{
    lb_check(got == want, "%s: %s, want %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
    (void)cudaGetLastError();
}

/* A launch that must fault: the message names `site`, the error is sticky, reset clears it. */
void expect_fault(const char *what, const char *expect_in_message)
{
    const cudaError_t sync = cudaStreamSynchronize(nullptr);
    const char *msg = lb_emu_fault_message();
    lb_check(sync == cudaErrorLaunchFailure, "%s: synchronising returns %s, not the launch failure", what,
             cudaGetErrorName(sync));
    lb_check(strstr(msg, expect_in_message) != nullptr, "%s: the fault \"%s\" does not say \"%s\"", what, msg,
             expect_in_message);
    void *p = nullptr;
    lb_check(cudaMalloc(&p, 16) == cudaErrorLaunchFailure, "%s: the error is not sticky", what);
    printf("  %-36s caught: %.200s\n", what, msg);
    lb_emu_reset();
    lb_check(cudaGetLastError() == cudaSuccess, "%s: lb_emu_reset leaves an error", what);
}

void check_shuffles()
{
    for (int width : {32, 8}) {
        const int threads = 64;
        int *d = dev_alloc<int>(threads * 8);
        LB_LAUNCH(1, threads, 0, nullptr, shuffles_kernel)(d, width);
        int h[threads * 8];
        lb_check(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
        int bad = 0;
        for (int t = 0; t < threads; t++) {
            const int lane = t & 31, seg = lane & ~(width - 1);
            const int *o = h + t * 8;
            const int x = lane ^ 5, dn = lane + 3, up = lane - 2;
            bad += o[0] != ((x < seg + width) ? x : lane) * 10;
            bad += o[1] != ((dn < seg + width) ? dn : lane) * 10;
            bad += o[2] != ((up >= seg) ? up : lane) * 10;
            bad += o[3] != (seg + (7 & (width - 1))) * 10;
            bad += (unsigned)o[4] != 0x49249249u;
            bad += o[5] != 1 || o[6] != 0;
            bad += o[7] != (lane < 16 ? (lane ^ 1) : 0);
        }
        lb_check(bad == 0, "shuffles and votes at width %d: %d wrong values", width, bad);
        cudaFree(d);
    }
}

/* The broken block sum must come out wrong (NaN from the poison, or a stale value) in some block,
 * since every other block runs its lanes in the other order; the correct one never. */
void check_missing_barrier()
{
    const int blocks = 4, threads = 256;
    float *x = dev_alloc<float>(blocks * threads), *out = dev_alloc<float>(blocks);
    float hx[blocks * threads];
    for (int i = 0; i < blocks * threads; i++)
        hx[i] = (float)(i % 7);
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    float good[blocks], broken[blocks], ref[blocks];
    for (int b = 0; b < blocks; b++) {
        ref[b] = 0.0f;
        for (int t = 0; t < threads; t++)
            ref[b] += hx[b * threads + t];
    }
    LB_LAUNCH(blocks, threads, 0, nullptr, block_sum_kernel<0>)(x, out);
    cudaMemcpy(good, out, sizeof good, cudaMemcpyDeviceToHost);
    LB_LAUNCH(blocks, threads, 0, nullptr, block_sum_kernel<1>)(x, out);
    cudaMemcpy(broken, out, sizeof broken, cudaMemcpyDeviceToHost);
    int good_ok = 1, broken_wrong = 0;
    for (int b = 0; b < blocks; b++) {
        good_ok &= good[b] == ref[b];
        broken_wrong += !(broken[b] == ref[b]);
    }
    lb_check(good_ok, "block sum with its barrier is wrong");
    lb_check(broken_wrong > 0, "block sum without its barrier came out right in every block: the lane orders do not expose the race");
    printf("  %-36s caught: %d of %d blocks wrong (first %g, want %g)\n", "missing __syncthreads",
           broken_wrong, blocks, (double)broken[0], (double)ref[0]);
    cudaFree(x);
    cudaFree(out);
}

void check_early_exit()
{
    int *d = dev_alloc<int>(256);
    LB_LAUNCH(1, 256, 0, nullptr, early_exit_kernel)(d, 100);
    int h[100];
    lb_check(cudaStreamSynchronize(nullptr) == cudaSuccess, "a barrier after some threads exited: %s",
             lb_emu_fault_message());
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad += h[i] != 99 - i;
    lb_check(bad == 0, "barrier after early exits: %d wrong values", bad);
    lb_emu_reset();
    cudaFree(d);
}

void check_faults()
{
    float *d = dev_alloc<float>(1024);
    LB_LAUNCH(2, 64, 0, nullptr, divergent_shuffle_kernel)(d);
    expect_fault("shuffle in a divergent branch", "test_emu_device.cc");
    LB_LAUNCH(1, 32, 0, nullptr, two_sites_kernel)(d);
    expect_fault("one shuffle meeting another", "__shfl_xor_sync");
    LB_LAUNCH(1, 32, 0, nullptr, outside_mask_kernel)(d);
    expect_fault("shuffle reading outside its mask", "not in the mask");
    LB_LAUNCH(1, 128, 0, nullptr, divergent_barrier_kernel)(d);
    expect_fault("barrier in a divergent branch", "deadlock");
    cudaFree(d);
}

/* --- tensor cores ------------------------------------------------------------------------ */

/* A (16 x 16) = row + 2 col - 20, B (16 x 8) = k - col: small integers, exact in fp16 and bf16 and
 * in every fp32 sum, so D = A B + C is checked exactly. Each lane packs its fragments by the
 * PTX ISA's layout (gpu/tensor_core.cuh) and writes D back by it. */
float mma_a(int r, int c) { return (float)(r + 2 * c - 20); }
float mma_b(int k, int c) { return (float)(k - c); }

template <typename T> void mma_kernel(float *d)
{
    const int lane = threadIdx.x, group = lane >> 2, tig = lane & 3;
    uint32_t a[4], b[2];
    for (int r = 0; r < 4; r++) {
        const int row = group + (r & 1) * 8, col = 2 * tig + (r >> 1) * 8;
        a[r] = lb_pack2<T>(mma_a(row, col), mma_a(row, col + 1));
    }
    for (int r = 0; r < 2; r++)
        b[r] = lb_pack2<T>(mma_b(2 * tig + r * 8, group), mma_b(2 * tig + r * 8 + 1, group));
    float acc[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    lb_mma_16816<T>(acc, a, b);
    for (int i = 0; i < 4; i++)
        d[(group + (i >> 1) * 8) * 8 + 2 * tig + (i & 1)] = acc[i] - (float)(i + 1);
}

/* m (16 x 16) in shared memory; lane l points at row l % 8 + 8 ((l / 8) % 2), column 8 (l / 16):
 * the four 8 x 8 quarters; r[lane][i] as loaded. */
template <bool TRANS> void ldmatrix_kernel(uint32_t *out)
{
    LB_SHARED(uint16_t, m, 16 * 16);
    for (int i = threadIdx.x; i < 256; i += 32)
        m[i] = (uint16_t)i;
    __syncwarp();
    const int lane = threadIdx.x;
    uint32_t r[4];
    const uint16_t *row = m + (lane % 8 + 8 * ((lane / 8) % 2)) * 16 + 8 * (lane / 16);
    if (TRANS)
        lb_ldmatrix_x4_trans(r, row);
    else
        lb_ldmatrix_x4(r, row);
    for (int i = 0; i < 4; i++)
        out[lane * 4 + i] = r[i];
}

void early_mma_kernel(float *d)
{
    if (threadIdx.x == 31)
        return;
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float acc[4] = {0, 0, 0, 0};
    lb_mma_16816<__half>(acc, a, b);
    d[threadIdx.x] = acc[0];
}

void global_ldmatrix_kernel(const uint16_t *g)
{
    uint32_t r[4];
    lb_ldmatrix_x4(r, g + 8 * threadIdx.x);
}

/* cp.async of 16 bytes: out[0..3] read before the wait, out[4..7] after; no wait at all when
 * `skip_wait` (a fault when the thread exits). */
void cp_async_kernel(const float *src, float *out, int skip_wait)
{
    LB_SHARED(float, buf, 4);
    if (threadIdx.x == 0) {
        lb_cp_async16(buf, src, true);
        lb_cp_async_commit();
        for (int i = 0; i < 4; i++)
            out[i] = buf[i];
        if (!skip_wait) {
            lb_cp_async_wait<0>();
            for (int i = 0; i < 4; i++)
                out[4 + i] = buf[i];
        }
    }
}

void dynamic_shared_kernel(float *out)
{
    LB_DYNAMIC_SHARED(float, x);
    x[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = x[31 - threadIdx.x];
}

void check_tensor_core()
{
    for (int bf16 = 0; bf16 < 2; bf16++) {
        float *d = dev_alloc<float>(128), h[128];
        LB_LAUNCH(1, 32, 0, nullptr, bf16 ? mma_kernel<__nv_bfloat16> : mma_kernel<__half>)(d);
        lb_check(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
        int bad = 0;
        for (int r = 0; r < 16; r++)
            for (int c = 0; c < 8; c++) {
                double want = 0;
                for (int k = 0; k < 16; k++)
                    want += (double)mma_a(r, k) * mma_b(k, c);
                bad += h[r * 8 + c] != (float)want;
            }
        lb_check(bad == 0, "mma.sync m16n8k16 %s: %d of 128 elements of D wrong", bf16 ? "bf16" : "fp16", bad);
        cudaFree(d);
    }
    for (int trans = 0; trans < 2; trans++) {
        uint32_t *d = dev_alloc<uint32_t>(128), h[128];
        LB_LAUNCH(1, 32, 0, nullptr, trans ? ldmatrix_kernel<true> : ldmatrix_kernel<false>)(d);
        lb_check(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
        int bad = 0;
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < 4; i++) {
                /* quarter i: rows 8 (i % 2), columns 8 (i / 2); the lane's row l / 4, elements
                 * 2 (l % 4) and + 1 (or, transposed, that column's rows) */
                const int r0 = 8 * (i % 2), c0 = 8 * (i / 2), a = l / 4, b = 2 * (l % 4);
                const unsigned lo = trans ? (r0 + b) * 16 + c0 + a : (r0 + a) * 16 + c0 + b;
                const unsigned hi = trans ? (r0 + b + 1) * 16 + c0 + a : (r0 + a) * 16 + c0 + b + 1;
                bad += h[l * 4 + i] != (lo | hi << 16);
            }
        lb_check(bad == 0, "ldmatrix.x4%s: %d of 128 registers wrong", trans ? ".trans" : "", bad);
        cudaFree(d);
    }
    float *d = dev_alloc<float>(64);
    LB_LAUNCH(1, 32, 0, nullptr, early_mma_kernel)(d);
    expect_fault("mma after a lane exited", "exited");
    uint16_t *g = dev_alloc<uint16_t>(512);
    LB_LAUNCH(1, 32, 0, nullptr, global_ldmatrix_kernel)(g);
    expect_fault("ldmatrix from global memory", "not 16 bytes of shared memory");
    float src[4] = {1, 2, 3, 4}, h[8];
    float *dsrc = dev_alloc<float>(4);
    lb_check(cudaMemcpy(dsrc, src, sizeof src, cudaMemcpyHostToDevice) == cudaSuccess, "copy in");
    LB_LAUNCH(1, 32, 0, nullptr, cp_async_kernel)(dsrc, d, 0);
    lb_check(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess, "copy back");
    lb_check(isnan(h[0]) && isnan(h[3]) && h[4] == 1 && h[7] == 4,
             "cp.async: NaN before the wait (%g, %g), the data after it (%g, %g)", h[0], h[3], h[4], h[7]);
    LB_LAUNCH(1, 32, 0, nullptr, cp_async_kernel)(dsrc, d, 1);
    expect_fault("cp.async never waited for", "cp.async copies no cp.async.wait_group completed");
    LB_LAUNCH(1, 32, 64 << 10, nullptr, dynamic_shared_kernel)(d);
    lb_check(cudaGetLastError() == cudaErrorInvalidValue, "64 KiB of dynamic shared memory without the opt-in");
    lb_check(cudaFuncSetAttribute(reinterpret_cast<const void *>(dynamic_shared_kernel),
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10) == cudaSuccess,
             "cudaFuncSetAttribute");
    LB_LAUNCH(1, 32, 64 << 10, nullptr, dynamic_shared_kernel)(d);
    lb_check(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess && h[0] == 31 && h[7] == 24,
             "dynamic shared memory after the opt-in: %g, %g", h[0], h[7]);
    cudaFree(d);
    cudaFree(g);
    cudaFree(dsrc);
}

void check_launch_config()
{
    LB_LAUNCH(1, 1025, 0, nullptr, noop_kernel)(nullptr);
    lb_check(cudaGetLastError() == cudaErrorInvalidConfiguration, "1025 threads per block accepted");
    lb_check(cudaGetLastError() == cudaSuccess, "a bad configuration is sticky");
    LB_LAUNCH(dim3(1, 65536, 1), 32, 0, nullptr, noop_kernel)(nullptr);
    lb_check(cudaGetLastError() == cudaErrorInvalidConfiguration, "gridDim.y 65536 accepted");
    const unsigned long long before = lb_emu_launch_count();
    LB_LAUNCH(3, 32, 0, nullptr, noop_kernel)(nullptr);
    lb_check(cudaGetLastError() == cudaSuccess && lb_emu_launch_count() == before + 1, "a good launch did not run");
    LB_LAUNCH(1, 32, 0, nullptr, noop_kernel)(NULL); /* NULL for a pointer, as nvcc's <<<>>> takes it */
    lb_check(cudaGetLastError() == cudaSuccess && lb_emu_launch_count() == before + 2, "a launch with NULL for a pointer did not run");
}

void check_runtime()
{
    size_t free_b = 0, total_b = 0;
    lb_check(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && total_b > 0 && free_b <= total_b,
             "cudaMemGetInfo");
    void *p = nullptr;
    lb_check(cudaMalloc(&p, total_b + 1) == cudaErrorMemoryAllocation, "cudaMalloc past the capacity succeeded");
    lb_check(cudaGetLastError() == cudaErrorMemoryAllocation, "out of memory not reported by cudaGetLastError");
    lb_check(cudaGetLastError() == cudaSuccess, "out of memory is sticky");
    int *d = dev_alloc<int>(16);
    int h[32] = {0};
    lb_check(cudaMemcpy(d, h, 16 * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess, "a copy inside");
    expect_error(cudaMemcpy(d, h, 17 * sizeof(int), cudaMemcpyHostToDevice), cudaErrorInvalidValue,
                 "a copy one element past the allocation");
    expect_error(cudaMemcpy(h, h + 16, 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue,
                 "a host pointer taken for device memory");
    expect_error(cudaFree(h), cudaErrorInvalidValue, "freeing a host pointer accepted");
    cudaEvent_t a, b;
    float ms = -1.0f;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    expect_error(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle, "elapsed time of unrecorded events");
    cudaEventRecord(a, nullptr);
    cudaEventRecord(b, nullptr);
    lb_check(cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms >= 0.0f, "elapsed time %g", (double)ms);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    lb_check(cudaStreamDestroy(s) == cudaSuccess, "stream destroy");
    expect_error(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle, "a destroyed stream accepted");
    cudaDeviceProp prop;
    lb_check(cudaGetDeviceProperties(&prop, 0) == cudaSuccess && strstr(prop.name, "emulated") != nullptr,
             "the device name does not say emulated: \"%s\"", prop.name);
    cudaFree(d);
}

/* The permutes refuse element sizes they have no code for (a backend's elem_bytes set by hand). */
void check_permute_sizes()
{
    LbBackend *be = nullptr;
    lb_check(lb_cuda_backend_open(0, LB_DTYPE_FP32, 0, &be) == LB_OK, "open: %s", lb_error_message());
    if (!be)
        return;
    void *src = dev_alloc<char>(4096), *dst = dev_alloc<char>(4096);
    for (size_t eb : {(size_t)6, (size_t)32, (size_t)1}) {
        be->elem_bytes = eb;
        const int rc = lb_cuda_split_heads(be, src, 8, dst, 1, 4, 2, 4);
        lb_check(rc == LB_ERR_INVALID, "split_heads with %zu-byte elements returned %d, not LB_ERR_INVALID", eb, rc);
    }
    lb_check(cudaStreamSynchronize(lb_cuda_backend_stream(be)) == cudaSuccess, "a refused permute faulted: %s",
             lb_emu_fault_message());
    cudaFree(src);
    cudaFree(dst);
    lb_backend_close(be);
}

/* --- several devices ------------------------------------------------------------------------ */

/* cudaGetDeviceCount in a child process (the count is read once per process) with
 * LB_EMU_DEVICES set to `value` (unset when NULL); -1 when the child fails. */
int device_count_with(const char *value)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        if (value)
            setenv("LB_EMU_DEVICES", value, 1);
        else
            unsetenv("LB_EMU_DEVICES");
        int count = -1;
        if (cudaGetDeviceCount(&count) != cudaSuccess)
            count = -1;
        /* a second device exists only when the count says so */
        if (count == 1 && cudaSetDevice(1) != cudaErrorInvalidDevice)
            count = -2;
        if (write(fd[1], &count, sizeof count) != (ssize_t)sizeof count)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    int count = -1;
    if (read(fd[0], &count, sizeof count) != (ssize_t)sizeof count)
        count = -1;
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return count;
}

void check_device_count_switch()
{
    lb_check(device_count_with(nullptr) == 1, "LB_EMU_DEVICES unset: 1 device (%d)", device_count_with(nullptr));
    lb_check(device_count_with("5") == 5, "LB_EMU_DEVICES=5: 5 devices (%d)", device_count_with("5"));
    for (const char *bad : {"0", "65", "2x", "-1"})
        lb_check(device_count_with(bad) == 1, "LB_EMU_DEVICES=%s (not 1..64): 1 device (%d)", bad, device_count_with(bad));
}

/* Between lo and hi, from the test's seed. */
size_t random_size(size_t lo, size_t hi)
{
    float u;
    lb_test_random(&u, 1, 0.0f, 1.0f);
    return lo + (size_t)((double)u * (double)(hi - lo));
}

void check_devices(int want)
{
    int count = 0, cur = -1;
    lb_check(cudaGetDeviceCount(&count) == cudaSuccess && count == want, "%d devices (%d)", want, count);
    lb_check(cudaGetDevice(&cur) == cudaSuccess && cur == 0, "device 0 current at first (%d)", cur);
    for (int bad : {-1, want, want + 7}) {
        cudaDeviceProp prop;
        int v = 0;
        lb_check(cudaSetDevice(bad) == cudaErrorInvalidDevice, "cudaSetDevice(%d) refused", bad);
        lb_check(cudaGetLastError() == cudaErrorInvalidDevice && cudaGetLastError() == cudaSuccess,
                 "cudaSetDevice(%d): cudaErrorInvalidDevice for cudaGetLastError, once", bad);
        lb_check(cudaGetDeviceProperties(&prop, bad) == cudaErrorInvalidDevice &&
                     cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, bad) == cudaErrorInvalidDevice,
                 "properties and attributes of device %d refused", bad);
        (void)cudaGetLastError();
        lb_check(cudaGetDevice(&cur) == cudaSuccess && cur == 0, "a refused cudaSetDevice(%d) left device 0 current (%d)", bad, cur);
    }

    /* one model, told apart by UUID */
    std::vector<cudaDeviceProp> props((size_t)want);
    for (int d = 0; d < want; d++)
        lb_check(cudaGetDeviceProperties(&props[(size_t)d], d) == cudaSuccess, "properties of device %d", d);
    for (int d = 1; d < want; d++) {
        lb_check(strcmp(props[(size_t)d].name, props[0].name) == 0 && props[(size_t)d].totalGlobalMem == props[0].totalGlobalMem,
                 "device %d is the model device 0 is (\"%s\")", d, props[(size_t)d].name);
        for (int e = 0; e < d; e++)
            lb_check(memcmp(props[(size_t)d].uuid.bytes, props[(size_t)e].uuid.bytes, sizeof props[0].uuid.bytes) != 0,
                     "devices %d and %d have the same UUID", e, d);
    }

    /* each device its own capacity and table */
    size_t free0 = 0, total = 0, f = 0, t = 0;
    cudaMemGetInfo(&free0, &total);
    const size_t big = random_size(total / 2, total - total / 8);
    void *on1 = nullptr, *on2 = nullptr, *more = nullptr;
    lb_check(cudaSetDevice(1) == cudaSuccess && cudaGetDevice(&cur) == cudaSuccess && cur == 1, "device 1 made current");
    lb_check(cudaMalloc(&on1, big) == cudaSuccess, "%zu bytes on device 1", big);
    lb_check(cudaMemGetInfo(&f, &t) == cudaSuccess && t == total && f == total - big, "device 1: %zu of %zu free (%zu)",
             total - big, t, f);
    expect_error(cudaMalloc(&more, total - big + 256), cudaErrorMemoryAllocation, "device 1 past its capacity");
    lb_check(cudaSetDevice(2) == cudaSuccess && cudaMemGetInfo(&f, &t) == cudaSuccess && f == total,
             "device 2 untouched by device 1's allocation: %zu of %zu free", f, t);
    lb_check(cudaMalloc(&on2, big) == cudaSuccess, "device 2 has its own %zu bytes while device 1 holds %zu", big, big);
    lb_check(cudaSetDevice(0) == cudaSuccess && cudaMemGetInfo(&f, &t) == cudaSuccess && f == free0,
             "device 0 untouched by the others: %zu free, %zu before", f, free0);

    /* copies reach any device (unified addressing); cuBLAS only the current one's memory */
    const int64_t count_f = 4096;
    std::vector<float> h((size_t)count_f), back((size_t)count_f);
    lb_test_random(h.data(), count_f, -1.0f, 1.0f);
    lb_check(cudaMemcpy(on1, h.data(), (size_t)count_f * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
                 cudaMemcpy(on2, on1, (size_t)count_f * sizeof(float), cudaMemcpyDeviceToDevice) == cudaSuccess &&
                 cudaMemcpy(back.data(), on2, (size_t)count_f * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
             "copies from device 0 into and between devices 1 and 2");
    lb_check(memcmp(h.data(), back.data(), (size_t)count_f * sizeof(float)) == 0, "what went through devices 1 and 2 came back");
    cublasHandle_t blas = nullptr;
    if (lb_check(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate")) {
        lb_check(cublasSetWorkspace(blas, on1, 1 << 20) == CUBLAS_STATUS_INVALID_VALUE,
                 "device 1's memory as cuBLAS workspace while device 0 is current");
        cudaSetDevice(1);
        lb_check(cublasSetWorkspace(blas, on1, 1 << 20) == CUBLAS_STATUS_SUCCESS, "device 1's memory as workspace on device 1");
        cublasSetWorkspace(blas, nullptr, 0);
        cublasDestroy(blas);
    }

    /* streams and events belong to the device current at their creation */
    cudaSetDevice(1);
    cudaStream_t s1;
    cudaEvent_t e1, e0;
    lb_check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess,
             "a stream and an event on device 1");
    cudaSetDevice(0);
    cudaEventCreate(&e0);
    unsigned long long launches = lb_emu_launch_count();
    LB_LAUNCH(1, 32, 0, s1, noop_kernel)(nullptr);
    lb_check(cudaGetLastError() == cudaErrorInvalidResourceHandle && lb_emu_launch_count() == launches,
             "a launch on device 0 into device 1's stream refused");
    lb_check(cudaMemcpyAsync(back.data(), on1, 64, cudaMemcpyDeviceToHost, s1) == cudaSuccess &&
                 cudaStreamSynchronize(s1) == cudaSuccess,
             "a copy and a synchronisation on device 1's stream from device 0");
    expect_error(cudaEventRecord(e1, nullptr), cudaErrorInvalidResourceHandle,
                 "device 1's event recorded on device 0's stream");
    lb_check(cudaEventRecord(e0, nullptr) == cudaSuccess, "device 0's event on its legacy stream");
    cudaSetDevice(1);
    LB_LAUNCH(1, 32, 0, s1, noop_kernel)(nullptr);
    lb_check(cudaGetLastError() == cudaSuccess && lb_emu_launch_count() == launches + 1, "a launch on device 1 into its stream");
    lb_check(cudaEventRecord(e1, s1) == cudaSuccess, "device 1's event on its stream");
    float ms = -1.0f;
    expect_error(cudaEventElapsedTime(&ms, e0, e1), cudaErrorInvalidResourceHandle, "time between two devices' events");

    /* the current device is per host thread */
    int other = -1;
    std::thread([&other] { cudaGetDevice(&other); }).join();
    lb_check(other == 0 && cudaGetDevice(&cur) == cudaSuccess && cur == 1,
             "a new host thread starts on device 0 (%d) while this one stays on 1 (%d)", other, cur);

    /* freed from another device, the memory returns to its own */
    cudaSetDevice(2);
    lb_check(cudaFree(on1) == cudaSuccess && cudaFree(on2) == cudaSuccess, "device 1's and 2's blocks freed from device 2");
    lb_check(cudaMemGetInfo(&f, &t) == cudaSuccess && f == total, "device 2 all free again (%zu)", f);
    cudaSetDevice(1);
    lb_check(cudaMemGetInfo(&f, &t) == cudaSuccess && f == total, "device 1 all free again (%zu)", f);
    cudaSetDevice(0);
    lb_check(cudaStreamDestroy(s1) == cudaSuccess && cudaEventDestroy(e1) == cudaSuccess && cudaEventDestroy(e0) == cudaSuccess,
             "device 1's stream and event destroyed from device 0");
}

} // namespace

int main()
{
    lb_test_init("test_emu_device");
    check_device_count_switch();
    setenv("LB_EMU_DEVICES", "3", 1); /* before the first call here reads it */
    check_devices(3);
    check_shuffles();
    check_missing_barrier();
    check_early_exit();
    check_faults();
    check_tensor_core();
    check_launch_config();
    check_runtime();
    check_permute_sizes();
    return lb_test_finish("test_emu_device");
}
