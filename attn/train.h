/* The training step (--pass train) without the optimizer's update: the encoder's forward pass
 * keeping what the backward needs, then the backward from an upstream gradient dy of the output
 * drawn from the seed (as attention benchmarks do), giving the gradient of every parameter. Its
 * buffers come from the arena after the forward's inputs: the gradient model, laid out as the
 * model (lb_model_tensors names its tensors alike), and dy; the step's kept activations and
 * temporaries above them, released before it returns. The plan (attn/plan.c) is this code over
 * a counting arena. */
#ifndef LB_TRAIN_H
#define LB_TRAIN_H

#include <stdint.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/pass_observer.h"

typedef struct LbTrain {
    LbModel grads; /* each tensor the gradient of the model's tensor of the same name */
    void *dy;      /* (B, n, d): the upstream gradient of the encoder's output */
} LbTrain;

/* dy is drawn uniformly in [-1, 1] from the set-up's seed ^ this. */
#define LB_GRAD_SEED_MIX 0x9badULL

/* The gradient model and dy of `batch` sequences from `a` (nothing drawn). */
int lb_train_alloc(const LbModel *m, LbArena *a, int64_t batch, LbTrain *t);

/* lb_forward_setup, then lb_train_alloc and dy drawn from seed ^ LB_GRAD_SEED_MIX. On failure
 * nothing is left to release but the arena. */
int lb_train_setup(LbModel *m, LbInputs *in, LbTrain *t, const LbModelConfig *cfg, LbBackend *be, LbArena *a,
                   int64_t batch, uint64_t seed);

/* Host arrays only, as lb_model_release. */
void lb_train_release(LbTrain *t);

/* One step: the output in in->x as lb_forward leaves it, every gradient in t->grads. The model's
 * attention must have a backward (LbModelDesc.attention_backward). */
int lb_train_step(const LbModel *m, LbArena *a, LbInputs *in, LbTrain *t);

/* lb_train_step with every op called on obs->be and each group of calls named to obs. */
int lb_train_step_observed(const LbModel *m, LbArena *a, LbInputs *in, LbTrain *t, LbPassObserver *obs);

#endif
