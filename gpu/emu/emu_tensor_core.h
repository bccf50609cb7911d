/* The emulated GPU's tensor-core, ldmatrix and cp.async instructions (gpu/tensor_core.cuh calls
 * them in the emulated build; gpu/emu/tensor_core.cc and scheduler.cc implement them). Each
 * .sync.aligned instruction is a warp collective: it completes when all 32 lanes of the warp have
 * reached it at the same site, then computes every lane's registers from every lane's operands
 * by the PTX ISA's fragment layouts; a lane that is missing, or waits elsewhere, is a fault. C++. */
#ifndef LB_GPU_EMU_TENSOR_CORE_H
#define LB_GPU_EMU_TENSOR_CORE_H

#include <stddef.h>
#include <stdint.h>

namespace lb_emu {

/* d += a b for the warp's 16 x 8 x 16 product (fp16 inputs, or bf16 when bf16), fp32 accumulate. */
void mma_16816(bool bf16, float d[4], const uint32_t a[4], const uint32_t b[2], const char *file, int line);
/* ldmatrix .m8n8 .x4 (.trans) .b16: r from the rows whose addresses lanes 0-31 give. */
void ldmatrix_x4(uint32_t r[4], const void *row, bool trans, const char *file, int line);
/* cp.async of `bytes` bytes (src_bytes of them read, the rest zeros) into shared memory: the
 * destination holds 0xFF bytes (NaN) until a wait covers the copy's group. */
void cp_async(void *dst, const void *src, size_t bytes, size_t src_bytes, const char *file, int line);
void cp_async_commit();
/* Complete every committed group but the `pending` most recent ones. */
void cp_async_wait(int pending);
/* The launch's dynamic shared memory (its third launch argument), 16-byte aligned, 0xFF bytes at
 * each block's start; a fault when the launch gave none. */
void *dynamic_shared();

} // namespace lb_emu

#endif
