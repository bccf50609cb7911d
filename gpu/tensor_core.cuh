/* The warp-level instructions of gpu/flash.cu, written once for both builds: inline PTX under
 * nvcc; in the emulated build a warp collective (gpu/emu/tensor_core.cc) that places each element
 * where the PTX ISA says and faults on a missing lane, a bad shared address or a cp.async read
 * before its wait, so a wrong fragment layout fails on the emulator as on a GPU. Layouts: PTX
 * ISA 9.0, "Matrix Fragments for mma.m16n8k16" and "ldmatrix" (groupID = lane >> 2, tig = lane % 4). */
#ifndef LB_GPU_TENSOR_CORE_CUH
#define LB_GPU_TENSOR_CORE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

#ifdef LB_GPU_EMULATOR
#include "gpu/emu/emu_tensor_core.h"
#endif

/* Dynamic shared memory: the launch's third argument sizes it, cudaFuncSetAttribute(kernel,
 * cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) allows more than 48 KiB. In the emulated
 * build a buffer of that size, 0xFF bytes at every block's start, as LB_SHARED's. */
#ifdef LB_GPU_EMULATOR
#define LB_DYNAMIC_SHARED(type, name) type *name = static_cast<type *>(lb_emu::dynamic_shared())
#else
#define LB_DYNAMIC_SHARED(type, name)                                                             \
    extern __shared__ __align__(16) unsigned char lb_dynamic_shared_[];                           \
    type *name = reinterpret_cast<type *>(lb_dynamic_shared_)
#endif

/* Two elements in one .b32 register, the first in the low half (the fragments' packing). */
template <typename T> __device__ __forceinline__ uint32_t lb_pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t lb_pack2<__half>(float lo, float hi)
{
    return (uint32_t)__half_as_ushort(__float2half_rn(lo)) | (uint32_t)__half_as_ushort(__float2half_rn(hi)) << 16;
}
template <> __device__ __forceinline__ uint32_t lb_pack2<__nv_bfloat16>(float lo, float hi)
{
    return (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) |
           (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16;
}

#ifndef LB_GPU_EMULATOR

/* d (16 x 8, fp32) += a (16 x 16) b (16 x 8), fp32 accumulation; AB the PTX type of a and b. The
 * flash kernels need sm_80 (the build's architectures all are). */
template <typename T> __device__ __forceinline__ void lb_mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2]);
#if __CUDA_ARCH__ >= 800
#define LB_MMA_16816(T, AB)                                                                                    \
    template <> __device__ __forceinline__ void lb_mma_16816<T>(float d[4], const uint32_t a[4], const uint32_t b[2]) \
    {                                                                                                          \
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." AB "." AB ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, " \
                     "{%8, %9}, {%0, %1, %2, %3};\n"                                                          \
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                          \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));                      \
    }
#else
#define LB_MMA_16816(T, AB)                                                                                    \
    template <> __device__ __forceinline__ void lb_mma_16816<T>(float *, const uint32_t *, const uint32_t *) { __trap(); }
#endif
LB_MMA_16816(__half, "f16")
LB_MMA_16816(__nv_bfloat16, "bf16")

/* Four 8 x 8 matrices of 16-bit elements from shared memory, this lane's row address at p; the
 * _trans one transposes each matrix. */
#define LB_LDMATRIX_X4(name, TRANS)                                                                \
    __device__ __forceinline__ void name(uint32_t r[4], const void *p)                             \
    {                                                                                              \
        const unsigned s = (unsigned)__cvta_generic_to_shared(p);                                  \
        asm volatile("ldmatrix.sync.aligned.m8n8.x4" TRANS ".shared.b16 {%0, %1, %2, %3}, [%4];\n" \
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                              \
                     : "r"(s)                                                                      \
                     : "memory");                                                                  \
    }
LB_LDMATRIX_X4(lb_ldmatrix_x4, "")
LB_LDMATRIX_X4(lb_ldmatrix_x4_trans, ".trans")

/* 16 bytes from global src to shared dst, asynchronously; zeros instead when !fill (src is then
 * not read, but must still be a valid address). */
__device__ __forceinline__ void lb_cp_async16(void *dst, const void *src, bool fill)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(fill ? 16 : 0) : "memory");
}
/* Close the group of copies issued since the last commit. */
__device__ __forceinline__ void lb_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* Wait until at most `pending` of the most recent groups are still in flight. */
template <int pending> __device__ __forceinline__ void lb_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

/* 2^x on the special-function unit, subnormal arguments and results flushed to zero
 * (ex2.approx.ftz.f32: PTX ISA "Floating Point Instructions: ex2"): the softmax's exponent, where
 * a term below 2^-126 is 0 once P is rounded to fp16 or bf16 and nothing beside the row's largest
 * term of 1. exp2f would add the compare and two multiplies that keep subnormals. */
__device__ __forceinline__ float lb_exp2_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

#else /* the emulated build: gpu/emu/tensor_core.cc */

/* ex2.approx.ftz.f32: exp2 with results below the smallest normal float flushed to zero. */
inline float lb_exp2_ftz(float x)
{
    const float y = exp2f(x);
    return y < FLT_MIN ? 0.0f : y;
}

template <typename T> inline void lb_mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2],
                                               const char *file = __builtin_FILE(), int line = __builtin_LINE())
{
    lb_emu::mma_16816(std::is_same<T, __nv_bfloat16>::value, d, a, b, file, line);
}
inline void lb_ldmatrix_x4(uint32_t r[4], const void *p, const char *file = __builtin_FILE(),
                           int line = __builtin_LINE())
{
    lb_emu::ldmatrix_x4(r, p, false, file, line);
}
inline void lb_ldmatrix_x4_trans(uint32_t r[4], const void *p, const char *file = __builtin_FILE(),
                                 int line = __builtin_LINE())
{
    lb_emu::ldmatrix_x4(r, p, true, file, line);
}
inline void lb_cp_async16(void *dst, const void *src, bool fill, const char *file = __builtin_FILE(),
                          int line = __builtin_LINE())
{
    lb_emu::cp_async(dst, src, 16, fill ? 16 : 0, file, line);
}
inline void lb_cp_async_commit() { lb_emu::cp_async_commit(); }
template <int pending> inline void lb_cp_async_wait() { lb_emu::cp_async_wait(pending); }

#endif

#endif
