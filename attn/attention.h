/* The model table (attn/models.c): one entry per attention model, its code in attn/model_<name>.c;
 * everything that differs between models is asked of it. Adding a model: its file, one
 * LbModelKind line (attn/config.h), one table line, one meson line, and its tests. */
#ifndef LB_ATTENTION_H
#define LB_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"

typedef struct LbPass LbPass;               /* one forward pass (attn/attention_impl.h) */
typedef struct LbBuilder LbBuilder;         /* weights being allocated (attn/attention_impl.h) */
typedef struct LbLayerWeights LbLayerWeights; /* attn/model.h */

typedef struct LbModelDesc {
    const char *name;      /* as the CLI and the CSV files write it */
    const char *k_meaning; /* what k is ("projected length"); NULL: no k axis, cells (n) alone */
    const char *k_range;   /* the k its check accepts, for --help ("1 to n"); NULL without a k axis */
    /* The flags only this model reads, space-separated ("sharing order"); NULL: none (--k is
     * every k-axis model's). A flag no model of a run reads is noted as having no effect. */
    const char *own_flags;
    /* Whether (n, k) is a cell of this model; k is 0 for a model without a k axis. NULL: every. */
    int (*cell_exists)(int64_t n, int64_t k);
    /* Why a k < n may be no cell, for a sweep's note ("k must divide n: ..."); NULL: k < n is all. */
    const char *skip_reason;
    /* The model's own settings, after the encoder's: LB_ERR_INVALID with one line naming the flag
     * and its range in msg. NULL: nothing to check. */
    int (*check)(const LbModelConfig *cfg, char *msg, size_t msg_size);
    /* The model's own weights, after the encoder's (lb_builder_*, attention_impl.h). NULL: none. */
    int (*build)(LbBuilder *b);
    /* y (B, n, d) = the attention block of `layer` on x (B, n, d), output projection included.
     * Temporaries come from the pass's arena; the encoder releases them afterwards. */
    int (*attention)(LbPass *p, int layer, const LbLayerWeights *w, const void *x, void *y);
    /* The training step (--pass train, attn/train.c). In its forward, attention runs with
     * p->keep set and records there (at most LB_KEEP_MAX pointers) the temporaries its backward
     * needs; the encoder keeps them until the backward is done. attention_backward then adds to
     * dx (B, n, d) the gradient of x through this layer's block, from dy (the gradient of y), x
     * and keep; it writes gw's w_qkv, b_qkv, w_o and b_o gradients (the layer's twin in the
     * gradient model p->grads) and adds to p->grads' own tensors (zeroed before the backward; a
     * projection shared by layers gets every layer's share); the step releases its temporaries with
     * the layer's. NULL: the model cannot train. */
    int (*attention_backward)(LbPass *p, int layer, const LbLayerWeights *w, void *const *keep, const void *x,
                              const void *dy, void *dx, LbLayerWeights *gw);
    /* FLOPs of one layer's attention block (Q/K/V and output projections included) for one
     * sequence, multiply-add = 2 (METHOD.md, "Work counted"). */
    double (*flops_per_layer)(const LbModelConfig *cfg);
    /* The variants `linbench check` (full) and the tests run: variant i (0 .. variants - 1) sets
     * the model's own settings in cfg (sharing, order, chunk...), the rest left as given. NULL
     * with variants 1: the model has no settings of its own. */
    int variants;
    void (*variant)(int i, LbModelConfig *cfg);
    /* The exact baselines every other model is compared with, in rank order: 1 the paper's
     * standard, 2 exact in linear memory (chunked), 3 exact fused (flash); 0: none. */
    int baseline;
    /* "linformer kv/late k 16": the model and its own settings, for check rows and test names. */
    void (*describe)(const LbModelConfig *cfg, char *buf, size_t size);
} LbModelDesc;

/* The table entry of kind m, or NULL when m is no model. */
const LbModelDesc *lb_model_desc(LbModelKind m);

/* cfg with kind m and variant i of that model (see LbModelDesc.variant). */
LbModelConfig lb_model_variant(LbModelKind m, int i, LbModelConfig cfg);

/* desc->describe, or the bare name. */
void lb_model_describe(const LbModelConfig *cfg, char *buf, size_t size);

#endif
