/* .npy files (NumPy format version 1.0): what `linbench run --dump` writes so a user can check a
 * forward pass against PyTorch. Little-endian float32 ('<f4') or int32 ('<i4'), C order, up to
 * four dimensions; the header is padded with spaces to a multiple of 64 bytes as NumPy does. */
#ifndef LB_NPY_H
#define LB_NPY_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stdint.h>

typedef enum LbNpyType { LB_NPY_F32, LB_NPY_I32 } LbNpyType;

#define LB_NPY_MAX_DIMS 4

/* data holds prod(shape) elements of 4 bytes in host order; ndim 0..4. LB_ERR_IO on failure. */
int lb_npy_write(const char *path, LbNpyType type, const int64_t *shape, int ndim,
                 const void *data);

#endif
