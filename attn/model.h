/* A built model: its configuration and its weights, allocated from an arena in a fixed order
 * (the encoder's, then the attention model's own from its table entry's build, then the backend
 * workspace) and initialised on the backend from one seed. Linear layers are PyTorch's (out, in),
 * row-major, so W_Q, W_K, W_V are consecutive row blocks of the fused w_qkv. */
#ifndef LB_MODEL_H
#define LB_MODEL_H

#include <stdint.h>

#include "attn/arena.h"
#include "attn/config.h"
#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbLayerWeights {
    void *w_qkv, *b_qkv; /* (3d, d), (3d) */
    void *w_o, *b_o;     /* (d, d), (d) */
    void *ln1_g, *ln1_b; /* (d) */
    void *w_ff1, *b_ff1; /* (f, d), (f) */
    void *w_ff2, *b_ff2; /* (d, f), (d) */
    void *ln2_g, *ln2_b; /* (d) */
} LbLayerWeights;

/* One weight tensor, for --dump and the tests: name ("layer3.w_qkv"), pointer, shape. */
typedef struct LbTensorRef {
    char name[48];
    void *ptr;
    int64_t rows, cols; /* cols = 1 for vectors */
    int fixed;          /* a constant of the model, not trained (Performer's random features and
                         * its ones): its gradient is not computed and stays 0 */
} LbTensorRef;

typedef struct LbModel {
    LbModelConfig cfg;
    LbBackend *be;
    void *tok_emb, *pos_emb, *emb_ln_g, *emb_ln_b; /* (vocab, d), (n, d), (d), (d) */
    LbLayerWeights *layers; /* host array of cfg.layers */
    LbTensorRef *own;       /* host array: the attention model's own weights, in allocation order */
    int64_t own_count, own_cap;
    void *workspace;        /* backend scratch (cuBLAS workspace), be->workspace_bytes */
} LbModel;

/* Weights, then workspace, from `a`, initialised from `seed` (not in a counting arena). */
int lb_model_build(LbModel *m, const LbModelConfig *cfg, LbBackend *be, LbArena *a, uint64_t seed);
void lb_model_release(LbModel *m); /* host arrays only: the arena owns the memory */

/* Every weight tensor in allocation order; returns the count, fills at most `max` refs. */
int64_t lb_model_tensors(const LbModel *m, LbTensorRef *refs, int64_t max);

#ifdef __cplusplus
}
#endif

#endif
