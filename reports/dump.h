/* `linbench run --dump DIR`: one forward pass written out so that a user can rebuild the same
 * model in PyTorch and compare: ids.npy ('<i4', (B, n)), one '<f4' file per weight tensor named
 * after it (layer3.w_qkv.npy; shapes as attn/model.h lists them: (rows, cols), or (rows,) for a
 * vector), output.npy ('<f4', (B, n, d): the last layer's hidden state), and index.csv
 * (name,file,dtype,shape, shape written as "2x512x768"). Values are the backend's storage
 * rounded to float32. */
#ifndef LB_DUMP_H
#define LB_DUMP_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "attn/forward.h"
#include "attn/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dir must exist. LB_ERR_IO when a file cannot be written. */
int lb_dump_write(const char *dir, const LbModel *m, const LbInputs *in);

#ifdef __cplusplus
}
#endif

#endif
