/* Device-side helpers shared by the kernels of gpu/: conversions between the storage types
 * (fp16, bf16, fp32) and fp32, 16-byte packs of elements, warp and block reductions in fp32,
 * 64-bit index helpers, and the dispatch from LbDtype to a template. CUDA C++ only. */
#ifndef LB_GPU_DEVICE_UTIL_CUH
#define LB_GPU_DEVICE_UTIL_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "attn/config.h"
#include "attn/op_args.h"
#include "gpu/backend_impl.h" /* the launchers take the backend */
#include "gpu/kernels.h"

/* A kernel launch, written once for both builds: LB_LAUNCH(grid, block, shared_bytes, stream,
 * kernel<...>)(args...) is kernel<...><<<grid, block, shared_bytes, stream>>>(args...) under
 * nvcc (the same PTX), and the emulated GPU's launcher where gpu/emu/emu_device.h is
 * force-included (-Dgpu_emulator=true and the gpu-emu tests). */
#ifdef LB_GPU_EMULATOR
#define LB_LAUNCH(grid, block, shared_bytes, stream, ...)                                        \
    lb_emu::launcher(grid, block, shared_bytes, stream, #__VA_ARGS__, __FILE__, __LINE__, __VA_ARGS__)
#else
#define LB_LAUNCH(grid, block, shared_bytes, stream, ...)                                        \
    __VA_ARGS__<<<grid, block, shared_bytes, stream>>>
#endif

/* A static shared-memory array of `count` elements of `type`, one per block: __shared__ under
 * nvcc; in the emulated build a per-block buffer filled with 0xFF bytes (NaN) before each block,
 * each array a heap block of its own so AddressSanitizer sees an access past its end. */
#ifdef LB_GPU_EMULATOR
#define LB_SHARED(type, name, count)                                                              \
    type(&name)[count] = lb_emu::shared_array<type, count>(__FILE__, __LINE__)
#else
#define LB_SHARED(type, name, count) __shared__ type name[count]
#endif

/* --- conversions: every kernel computes in fp32 and rounds once, to nearest even, on store --- */
__device__ __forceinline__ float lb_to_float(float v) { return v; }
__device__ __forceinline__ float lb_to_float(__half v) { return __half2float(v); }
/* bf16 is the top half of an fp32: widen by a shift (cheaper than the intrinsic, no registers
 * lost to its inline assembly). */
__device__ __forceinline__ float lb_to_float(__nv_bfloat16 v)
{
    return __uint_as_float((uint32_t)__bfloat16_as_ushort(v) << 16);
}

template <typename T> __device__ __forceinline__ T lb_from_float(float v);
template <> __device__ __forceinline__ float lb_from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half lb_from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 lb_from_float<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

/* N consecutive elements moved as one access: N * sizeof(T) = 16 gives a 16-byte load or store
 * (LDG.128 / STG.128); N = 1 is the scalar path for rows that are not 16-byte aligned. */
template <typename T, int N> struct alignas(sizeof(T) * N) LbPack {
    T v[N];
};

template <typename T, int N>
__device__ __forceinline__ LbPack<T, N> lb_load_pack(const T *p)
{
    return *reinterpret_cast<const LbPack<T, N> *>(p);
}

template <typename T, int N> __device__ __forceinline__ void lb_store_pack(T *p, const LbPack<T, N> &x)
{
    *reinterpret_cast<LbPack<T, N> *>(p) = x;
}

/* Whether `n` elements from p are 16-byte aligned and a whole number of packs. */
static inline int lb_can_vec16(const void *p, int64_t n_elems, size_t elem_bytes)
{
    return ((uintptr_t)p % 16u == 0) && ((n_elems * (int64_t)elem_bytes) % 16 == 0);
}

/* --- reductions in fp32 ------------------------------------------------------------------ */
struct LbSum {
    static __device__ __forceinline__ float op(float a, float b) { return a + b; }
    static __device__ __forceinline__ float identity() { return 0.0f; }
};
struct LbMax {
    static __device__ __forceinline__ float op(float a, float b) { return fmaxf(a, b); }
    static __device__ __forceinline__ float identity() { return -INFINITY; }
};

/* Op (LbSum or LbMax) over G consecutive lanes, G a power of two up to the warp's 32. Every lane
 * of the warp must call it (full mask), including lanes whose row is past the end. */
template <typename Op, int G = 32> __device__ __forceinline__ float lb_lane_reduce(float v)
{
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1)
        v = Op::op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Op over the block; blockDim.x a multiple of 32, `sh` at least 33 floats of shared memory;
 * every thread gets the result. Two calls in a row on the same `sh` are safe: each call's writes
 * come after barriers that every thread passes once the previous call's reads are done. */
template <typename Op> __device__ __forceinline__ float lb_block_reduce(float v, float *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = lb_lane_reduce<Op>(v);
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lb_lane_reduce<Op>(lane < nwarps ? sh[lane] : Op::identity());
        if (lane == 0)
            sh[32] = v;
    }
    __syncthreads();
    return sh[32];
}

/* --- 64-bit index arithmetic ---------------------------------------------------------------
 * Division of 64-bit integers costs tens of instructions; most quotients here fit in 32 bits
 * (row indices of tensors under 4e9 rows), so take the 32-bit path when both operands allow. */
__device__ __forceinline__ uint64_t lb_udiv64(uint64_t a, uint64_t b)
{
    if (((a | b) >> 32) == 0)
        return (uint64_t)((uint32_t)a / (uint32_t)b);
    /* Past 32 bits, restoring division in line: the compiler's 64-bit division is a subroutine
     * call, and a call makes the kernel keep registers on the stack around it (ptxas counts them
     * as spills). b <= 2^63 here, so r << 1 cannot overflow. */
    uint64_t q = 0, r = 0;
#pragma unroll 1
    for (int i = 63; i >= 0; i--) {
        r = (r << 1) | ((a >> i) & 1u);
        if (r >= b) {
            r -= b;
            q |= (uint64_t)1 << i;
        }
    }
    return q;
}

/* Grid size for a grid-stride loop over `work` items of `per_block` each: never above what
 * gridDim.x allows (nor the cap tests set to make every block loop), never zero. */
static inline unsigned int lb_grid_for(int64_t work, int64_t per_block)
{
    int64_t blocks = (work + per_block - 1) / per_block;
    const int64_t cap = (int64_t)lb_cuda_grid_cap();
    if (blocks > cap)
        blocks = cap;
    if (blocks < 1)
        blocks = 1;
    return (unsigned int)blocks;
}

/* Element-wise kernels over rows (embed, permutes, bias + GELU) use blocks of kRowBlock threads
 * with `tpr` threads per row (a power of two up to kRowBlock, no more than the row has packs), so
 * short rows (a 64-wide head) do not leave most of a block idle and 64-bit row arithmetic is paid
 * once per row, not once per element. */
constexpr int kRowBlock = 256;

static inline int lb_threads_per_row(int64_t packs_per_row)
{
    int t = 1;
    while (t < kRowBlock && t < packs_per_row)
        t <<= 1;
    return t;
}

/* Call F.template operator()<T>() with T the storage type of `dtype`. */
#define LB_DISPATCH_DTYPE(dtype, T, ...)                                                          \
    do {                                                                                          \
        switch (dtype) {                                                                          \
        case LB_DTYPE_FP16: {                                                                     \
            typedef __half T;                                                                     \
            __VA_ARGS__;                                                                          \
        } break;                                                                                  \
        case LB_DTYPE_BF16: {                                                                     \
            typedef __nv_bfloat16 T;                                                              \
            __VA_ARGS__;                                                                          \
        } break;                                                                                  \
        default: {                                                                                \
            typedef float T;                                                                      \
            __VA_ARGS__;                                                                          \
        } break;                                                                                  \
        }                                                                                         \
    } while (0)

/* LB_DISPATCH_DTYPE and then N, the elements of a 16-byte pack of T where `vec16` (which may
 * name T) holds, else 1. */
#define LB_DISPATCH_PACKS(dtype, T, N, vec16, ...)                                                \
    LB_DISPATCH_DTYPE(dtype, T, if (vec16) {                                                      \
        constexpr int N = 16 / (int)sizeof(T);                                                    \
        __VA_ARGS__;                                                                              \
    } else {                                                                                      \
        constexpr int N = 1;                                                                      \
        __VA_ARGS__;                                                                              \
    })

#endif
