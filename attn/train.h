/* The training step (--pass train) without the optimizer's update: the forward pass keeping what
 * the backward needs, then the backward from a random upstream gradient dy of the output to every
 * parameter's gradient. The gradient model and dy follow the forward's inputs in the arena; the
 * step's activations and temporaries go above them and are released before it returns. */
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

/* lb_forward_setup, lb_train_alloc and dy drawn; on failure only the arena is left to release. */
int lb_train_setup(LbModel *m, LbInputs *in, LbTrain *t, const LbModelConfig *cfg, LbBackend *be, LbArena *a,
                   int64_t batch, uint64_t seed);

/* Host arrays only, as lb_model_release. */
void lb_train_release(LbTrain *t);

/* One step: the output in in->x as lb_forward leaves it, every gradient in t->grads. The model's
 * attention must have a backward (LbModelDesc.attention_backward). */
int lb_train_step(const LbModel *m, LbArena *a, LbInputs *in, LbTrain *t);

/* lb_train_step with every op called on obs->be and each group of calls named to obs. */
int lb_train_step_observed(const LbModel *m, LbArena *a, LbInputs *in, LbTrain *t, LbPassObserver *obs);

/* The pass a cell runs, by cfg->pass: a forward pass, or a training step with its gradients. */
typedef struct LbOnePass {
    LbModel model;
    LbInputs in;
    LbTrain train; /* a training step's */
    LbArena *arena;
    int step, built;
} LbOnePass;

/* The model and inputs (and gradients) of `batch` sequences in `a`, as lb_forward_setup and
 * lb_train_setup draw them from seed; then one pass and the device synchronized. Release p
 * whatever it returns. */
int lb_one_pass_setup(LbOnePass *p, const LbModelConfig *cfg, LbBackend *be, LbArena *a, int64_t batch, uint64_t seed);

/* One more pass (not synchronized). */
int lb_one_pass_run(LbOnePass *p);

/* Host arrays only; nothing where the set-up failed. */
void lb_one_pass_release(LbOnePass *p);

#endif
