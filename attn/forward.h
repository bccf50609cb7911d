/* The two forward passes of METHOD.md, written once against the ops table.
 *
 * Inputs: token ids (B, n) int32. Output: the last layer's hidden state x (B, n, d). Both live
 * in LbInputs, allocated right after the model's weights; each layer's temporaries come from the
 * arena above them and are released at the end of their phase (attention, then feed-forward),
 * which the plan (attn/plan.c) mirrors byte for byte. */
#ifndef LB_FORWARD_H
#define LB_FORWARD_H

#include <stdint.h>

#include "attn/arena.h"
#include "attn/model.h"

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

/* One full forward pass: embedding, LayerNorm, L encoder layers. Result in in->x.
 * Temporaries come from `a` and are released before it returns. */
int lb_forward(const LbModel *m, LbArena *a, LbInputs *in);

#ifdef __cplusplus
}
#endif

#endif
