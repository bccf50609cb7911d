/* The forward pass of METHOD.md (attn/encoder.c): the encoder around the attention of the
 * model's table entry, written once against the ops table. Inputs: ids (B, n) int32; output:
 * the last layer's x (B, n, d), both in LbInputs after the weights; each phase's temporaries come
 * from the arena above them. The plan (attn/plan.c) is this code over a counting arena. */
#ifndef LB_FORWARD_H
#define LB_FORWARD_H

#include <stdint.h>

#include "attn/arena.h"
#include "attn/model.h"
#include "attn/pass_observer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LB_LAYERNORM_EPS 1e-5f

typedef struct LbInputs {
    int64_t batch;
    int32_t *ids; /* (B, n) */
    void *x;      /* (B, n, d): the hidden state, and the output */
    void *y;      /* (B, n, d): each sub-layer's output before the residual LayerNorm */
} LbInputs;

int lb_inputs_alloc(const LbModel *m, LbArena *a, int64_t batch, LbInputs *in);
/* Random token ids from `seed`. */
int lb_inputs_fill(const LbModel *m, LbInputs *in, uint64_t seed);

/* The token ids of a forward set-up are drawn from the model's seed ^ this, so weights and
 * tokens come from different streams of one --seed. */
#define LB_INPUT_SEED_MIX 0x5eedULL

/* The set-up every measured or dumped pass shares: build cfg's model from `seed` on `a` (its
 * weights, then the workspace), allocate the inputs of `batch` sequences and fill them with
 * tokens from seed ^ LB_INPUT_SEED_MIX. On failure nothing is left to release but the arena. */
int lb_forward_setup(LbModel *m, LbInputs *in, const LbModelConfig *cfg, LbBackend *be, LbArena *a, int64_t batch,
                     uint64_t seed);

/* One full forward pass: embedding, LayerNorm, L encoder layers. Result in in->x.
 * Temporaries come from `a` and are released before it returns. */
int lb_forward(const LbModel *m, LbArena *a, LbInputs *in);

/* lb_forward with every op called on obs->be and each group of calls named to obs (the
 * breakdown's pass, attn/measure/breakdown.c). */
int lb_forward_observed(const LbModel *m, LbArena *a, LbInputs *in, LbPassObserver *obs);

#ifdef __cplusplus
}
#endif

#endif
