/* `linbench run --dump DIR`: one forward pass written out for a user to rebuild the same model
 * in PyTorch and compare: ids.npy ('<i4', (B, n)), one '<f4' file per weight tensor named after
 * it (layer3.w_qkv.npy, shapes as attn/model.h lists them), output.npy ('<f4', (B, n, d)),
 * index.csv (name,file,dtype,shape as "2x512x768") and meta.csv (lb_meta_write_dump). After a
 * training step (--pass train) also each gradient, named grad.<the array's name>: grad.output
 * the upstream gradient dy, grad.layer3.w_qkv and so on for every trained tensor (a model's fixed
 * tensors, Performer's random features, have none). Values are the backend's storage rounded to
 * float32; each CSV written to a temporary name and renamed. */
#ifndef LB_DUMP_H
#define LB_DUMP_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include "attn/forward.h"
#include "attn/model.h"
#include "attn/train.h"
#include "reports/settings.h"

/* The pass of model m on inputs in, run with `settings` (seed, device and the model's settings,
 * as meta.csv records them); train: the step's gradients, NULL after a forward pass. dir must
 * exist. LB_ERR_IO when a file cannot be written. */
int lb_dump_write(const char *dir, const LbModel *m, const LbInputs *in, const LbTrain *train,
                  const LbRunSettings *settings);

#endif
