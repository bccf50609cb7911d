/* The device side of the emulated GPU (gpu/emu/README.md): what a .cu file of gpu/ needs in order
 * to compile as host C++ and run its kernels on the CPU. The emulated build force-includes this
 * header (-include) into every translation unit made from a .cu file (gpu/emu/unit.cc.in), before
 * the file's own includes, so the kernel sources are the very ones nvcc compiles; their only
 * concession is the launch site, LB_LAUNCH (gpu/device_util.cuh).
 *
 * What it provides:
 *   - the qualifiers: __global__ and __device__ vanish; shared arrays (LB_SHARED) are buffers the
 *     scheduler fills with 0xFF bytes (NaN in fp16, bf16, fp32) before every block, so a read of
 *     shared memory that no thread of this block wrote shows;
 *   - threadIdx, blockIdx, blockDim, gridDim: read-only views of the scheduler's state;
 *   - __syncthreads, __syncwarp, the __shfl_*_sync family and the votes: each a meeting point of
 *     fibers, checked by the scheduler (gpu/emu/scheduler.cc) as PTX defines it, with the call
 *     site taken from __builtin_FILE/__builtin_LINE so that a fault names file:line;
 *   - the device-only math intrinsics the kernels use, on the host;
 *   - lb_emu::launcher, what LB_LAUNCH expands to: converts the arguments to the kernel's
 *     parameter types as a real launch does, then runs the grid.
 * One host thread launches at a time (the runtime holds a lock) and blocks run one after another.
 * C++17. */
#ifndef LB_GPU_EMU_DEVICE_H
#define LB_GPU_EMU_DEVICE_H

#ifndef __cplusplus
#error "gpu/emu/emu_device.h is for the C++ units of the emulated build"
#endif

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <tuple>
#include <type_traits>
#include <utility>

#define LB_GPU_EMULATOR 1

/* --- qualifiers ---------------------------------------------------------------------------- */
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __launch_bounds__
#define __launch_bounds__(...)
/* A plain static would be one array for every block, never poisoned (and g++ drops a section
 * attribute on the statics of template functions): shared arrays are declared with LB_SHARED
 * (gpu/device_util.cuh), and __shared__ itself fails to compile with a name that says so. */
#undef __shared__
#define __shared__ __shared___is_not_emulated_declare_shared_arrays_with_LB_SHARED

namespace lb_emu {

/* What device code reads of the running thread and block (gpu/emu/scheduler.cc). */
struct LaneRegs {
    uint3 thread_idx;
};
extern LaneRegs *cur_lane;
extern uint3 cur_block_idx;
extern dim3 cur_block_dim, cur_grid_dim;

enum WarpOpKind {
    WARP_SHFL_IDX,
    WARP_SHFL_UP,
    WARP_SHFL_DOWN,
    WARP_SHFL_XOR,
    WARP_BALLOT,
    WARP_ANY,
    WARP_ALL,
    WARP_SYNC,
    WARP_COLLECTIVE, /* ldmatrix, mma.sync: gpu/emu/emu_tensor_core.h */
};

/* A warp-wide operation: blocks the calling fiber until every lane of `mask` has reached the same
 * operation at the same site, then returns this lane's result (the value's bits). */
uint64_t warp_op(WarpOpKind kind, unsigned mask, uint64_t bits, int arg, int width,
                 const char *file, int line);
/* __syncthreads: blocks until every live thread of the block is at this barrier. */
void block_barrier(const char *file, int line);
/* The block's buffer for the shared array declared at file:line (`bytes`, 16-byte aligned): the
 * same for every thread of a block, 0xFF bytes at the block's start. */
void *shared_slot(const char *file, int line, size_t bytes);

template <typename T, size_t N> inline T (&shared_array(const char *file, int line))[N]
{
    return *static_cast<T(*)[N]>(shared_slot(file, line, sizeof(T[N])));
}

template <typename T> inline uint64_t to_bits(T v)
{
    static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}

template <typename T> inline T from_bits(uint64_t b)
{
    T v;
    memcpy(&v, &b, sizeof v);
    return v;
}

} // namespace lb_emu

#define threadIdx (static_cast<const uint3 &>(lb_emu::cur_lane->thread_idx))
#define blockIdx (static_cast<const uint3 &>(lb_emu::cur_block_idx))
#define blockDim (static_cast<const dim3 &>(lb_emu::cur_block_dim))
#define gridDim (static_cast<const dim3 &>(lb_emu::cur_grid_dim))

/* --- barriers, shuffles, votes ------------------------------------------------------------- */
inline void __syncthreads(const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    lb_emu::block_barrier(file, line);
}

inline void __syncwarp(unsigned mask = 0xffffffffu, const char *file = __builtin_FILE(),
                       int line = __builtin_LINE())
{
    (void)lb_emu::warp_op(lb_emu::WARP_SYNC, mask, 0, 0, 32, file, line);
}

template <typename T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32,
                     const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    return lb_emu::from_bits<T>(
        lb_emu::warp_op(lb_emu::WARP_SHFL_IDX, mask, lb_emu::to_bits(var), src_lane, width, file, line));
}

template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32,
                        const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    return lb_emu::from_bits<T>(lb_emu::warp_op(lb_emu::WARP_SHFL_UP, mask, lb_emu::to_bits(var),
                                                (int)delta, width, file, line));
}

template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32,
                          const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    return lb_emu::from_bits<T>(lb_emu::warp_op(lb_emu::WARP_SHFL_DOWN, mask, lb_emu::to_bits(var),
                                                (int)delta, width, file, line));
}

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32,
                         const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    return lb_emu::from_bits<T>(lb_emu::warp_op(lb_emu::WARP_SHFL_XOR, mask, lb_emu::to_bits(var),
                                                lane_mask, width, file, line));
}

inline unsigned __ballot_sync(unsigned mask, int pred, const char *file = __builtin_FILE(),
                              int line = __builtin_LINE())
{
    return (unsigned)lb_emu::warp_op(lb_emu::WARP_BALLOT, mask, pred != 0, 0, 32, file, line);
}

inline int __any_sync(unsigned mask, int pred, const char *file = __builtin_FILE(),
                      int line = __builtin_LINE())
{
    return (int)lb_emu::warp_op(lb_emu::WARP_ANY, mask, pred != 0, 0, 32, file, line);
}

inline int __all_sync(unsigned mask, int pred, const char *file = __builtin_FILE(),
                      int line = __builtin_LINE())
{
    return (int)lb_emu::warp_op(lb_emu::WARP_ALL, mask, pred != 0, 0, 32, file, line);
}

/* --- device-only intrinsics, on the host ----------------------------------------------------
 * Correctly rounded or nearly so: the emulator checks indexing and synchronisation, not the
 * accuracy of the GPU's approximations (gpu/emu/README.md says what it does not prove). */
inline float rsqrtf(float x) { return (float)(1.0 / sqrt((double)x)); }
inline float __expf(float x) { return expf(x); }
inline float __exp2f(float x) { return exp2f(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __uint_as_float(unsigned int u) { return lb_emu::from_bits<float>(u); }
inline unsigned int __float_as_uint(float f) { return (unsigned int)lb_emu::to_bits(f); }
inline float __int_as_float(int i) { return lb_emu::from_bits<float>((uint32_t)i); }
inline int __float_as_int(float f) { return (int)(uint32_t)lb_emu::to_bits(f); }

/* --- launches ------------------------------------------------------------------------------ */
namespace lb_emu {

struct LaunchConfig {
    dim3 grid, block;
    size_t shared_bytes;
    cudaStream_t stream;
    const char *kernel, *file;
    int line;
    const void *func; /* the kernel, as cudaFuncSetAttribute names it */
};

/* Runs `body(ctx)` as every thread of every block (gpu/emu/scheduler.cc); the outcome is what
 * cudaGetLastError and the next synchronising call report, as on a GPU. */
void launch_grid(const LaunchConfig &cfg, void (*body)(void *ctx), void *ctx);

template <typename... P> struct Launcher {
    LaunchConfig cfg;
    void (*kernel)(P...);

    struct Call {
        void (*kernel)(P...);
        std::tuple<P...> args;
    };

    static void body(void *ctx)
    {
        Call *c = static_cast<Call *>(ctx);
        std::apply(c->kernel, c->args);
    }

    /* One argument as the kernel's parameter type. A launch passes NULL for a pointer as nvcc's
     * <<<>>> call allows; forwarded, g++'s NULL is no longer a null pointer constant but a long 0,
     * so an integer for a pointer parameter is taken as that (nvcc has refused any other). */
    template <typename T, typename A> static T arg(A &&a)
    {
        if constexpr (std::is_pointer<T>::value && std::is_integral<typename std::decay<A>::type>::value)
            return a == 0 ? nullptr : reinterpret_cast<T>(static_cast<uintptr_t>(a));
        else
            return static_cast<T>(std::forward<A>(a));
    }

    template <typename... A> void operator()(A &&...a) const
    {
        static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong number of arguments");
        Call c{kernel, std::tuple<P...>(arg<P>(std::forward<A>(a))...)};
        launch_grid(cfg, &Launcher::body, &c);
    }
};

template <typename... P>
Launcher<P...> launcher(dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                        const char *kernel_name, const char *file, int line, void (*kernel)(P...))
{
    return Launcher<P...>{LaunchConfig{grid, block, shared_bytes, stream, kernel_name, file, line,
                                       reinterpret_cast<const void *>(kernel)},
                          kernel};
}

} // namespace lb_emu

#endif
