/* The tiles of the fp16/bf16 flash kernel (gpu/flash.cu), in plain C so that what reads them
 * without compiling CUDA (bench/kernel_report.py, for the shared memory a block asks for) uses
 * the kernel's own numbers. */
#ifndef LB_GPU_FLASH_TILES_H
#define LB_GPU_FLASH_TILES_H

#define LB_FLASH_WARPS 4 /* warps per block */
#define LB_FLASH_KEYS 64 /* keys per K, V tile */
/* Each shared row padded by 16 bytes: the 8 rows one ldmatrix reads then start in 8 different
 * 16-byte bank groups (a row of 64 elements is 128 bytes, a whole number of bank rows). */
#define LB_FLASH_PAD 8
/* Query rows per warp, in m16 tiles: two where the registers allow, so that each K and V
 * fragment read from shared memory feeds two mma (FlashAttention-2's 128-row blocks); one for
 * the widest heads, whose two sets of output accumulators and Q fragments would not fit. */
#define LB_FLASH_M_TILES(hd) ((hd) <= 64 ? 2 : 1)
#define LB_FLASH_BLOCK_ROWS(hd) (LB_FLASH_WARPS * 16 * LB_FLASH_M_TILES(hd))
/* Dynamic shared memory of a block: the Q tile, two K tiles, two V tiles, 2-byte elements. */
#define LB_FLASH_SHARED_BYTES(hd) \
    ((size_t)(LB_FLASH_BLOCK_ROWS(hd) + 4 * LB_FLASH_KEYS) * (size_t)((hd) + LB_FLASH_PAD) * 2u)

/* The backward's blocks (flash_backward_tensor_kernel): 16 rows a warp of the tile a block owns
 * (keys for dK and dV, queries for dQ), and the rows of the other side it walks per step: fewer
 * as d_h grows, where the keys pass's two 16 x d_h fp32 accumulators per warp leave fewer
 * registers for S and dP (at d_h 112, 32 rows spilled: nvcc 13.0, sm_90). */
#define LB_FLASH_BWD_ROWS (LB_FLASH_WARPS * 16)
#define LB_FLASH_BWD_INNER(hd) ((hd) <= 64 ? 64 : (hd) <= 96 ? 32 : 16)
/* Its dynamic shared memory: two tiles of its own rows, two of the other side, double-buffered. */
#define LB_FLASH_BWD_SHARED_BYTES(hd) \
    ((size_t)(2 * LB_FLASH_BWD_ROWS + 4 * LB_FLASH_BWD_INNER(hd)) * (size_t)((hd) + LB_FLASH_PAD) * 2u)

#endif
