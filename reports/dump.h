/* `linbench run --dump DIR`: one forward pass written out so that a user can rebuild the same
 * model in PyTorch and compare: ids.npy ('<i4', (B, n)), one '<f4' file per weight tensor named
 * after it (layer3.w_qkv.npy; shapes as attn/model.h lists them: (rows, cols), or (rows,) for a
 * vector), output.npy ('<f4', (B, n, d): the last layer's hidden state), index.csv
 * (name,file,dtype,shape, shape written as "2x512x768"), and meta.csv (key,value, as a sweep's):
 * what the pass ran with, so a dump can be checked later without its command line:
 * linbench_version, git_revision, model, n, k (k or m; empty for a model without a k axis),
 * batch, then the settings under their meta.csv keys (reports/settings.h: layers, d_model,
 * heads, ffn, vocab, dtype, tf32, sharing, order, chunk, device, seed; a model's own setting
 * empty for a model that does not read it, as raw.csv has them), and storage_dtype. Values are
 * the backend's storage rounded to float32. Every CSV through libcsv, each written to a
 * temporary name and renamed into place. */
#ifndef LB_DUMP_H
#define LB_DUMP_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "attn/forward.h"
#include "attn/model.h"
#include "reports/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The pass of model m on inputs in, run with `settings` (seed, device and the model's settings,
 * as meta.csv records them). dir must exist. LB_ERR_IO when a file cannot be written. */
int lb_dump_write(const char *dir, const LbModel *m, const LbInputs *in, const LbRunSettings *settings);

#ifdef __cplusplus
}
#endif

#endif
