/* `linbench run --dump DIR` (README, "run --dump DIR"): one pass written out for a user to
 * rebuild the model in PyTorch and compare: a .npy file per array (ids, every weight, output;
 * after a training step grad.<name> of each trained array), index.csv (name,file,dtype,shape as
 * "2x512x768") and meta.csv. Values are the backend's storage rounded to float32. */
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
