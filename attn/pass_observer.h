/* What a pass tells whoever watches it (the plan, the breakdown): with an observer, a pass makes
 * its op calls on the observer's backend (a wrapper that counts or times, then calls the real
 * one) and names each group's role first. */
#ifndef LB_PASS_OBSERVER_H
#define LB_PASS_OBSERVER_H

#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an operation of the forward pass is for. The order is the breakdown's row order. */
typedef enum LbOpRole {
    LB_ROLE_UNLABELLED = 0, /* a call no role was set for */
    LB_ROLE_EMBED,          /* token + position embedding */
    LB_ROLE_LAYERNORM,      /* every LayerNorm (with its residual add) */
    LB_ROLE_QKV,            /* the Q, K, V projections (Linformer early: Q on n rows, K', V' on k) */
    LB_ROLE_COMPRESS,       /* Linformer's E X, F X (early) or E K, F V (late) */
    LB_ROLE_FEATURE_MAP,    /* feature maps of Q and K (Performer) */
    LB_ROLE_PERMUTE,        /* head split and merge copies, where a model still makes them */
    LB_ROLE_SCORES,         /* Q K^T / sqrt(hd) */
    LB_ROLE_SOFTMAX,
    LB_ROLE_KV_STATE,       /* K'^T V and its normaliser (Performer) */
    LB_ROLE_PV,             /* the product giving the attention output: P V (Performer: Q' (K'^T V)) */
    LB_ROLE_NORMALISE,      /* Performer's D^-1 */
    LB_ROLE_ATTENTION,      /* scores, softmax and P V fused in one op (the flash model) */
    LB_ROLE_OUT_PROJ,       /* the output projection */
    LB_ROLE_FFN_UP,         /* the first FFN product and its bias */
    LB_ROLE_GELU,           /* the erf GELU pass after it */
    LB_ROLE_FFN_DOWN,
    /* A training step's backward: each role above but unlabelled, its gradient, in the same
     * order (lb_role_backward), named ROLE_backward. */
    LB_ROLE_BACKWARD_FIRST,
    LB_ROLE_COUNT = LB_ROLE_BACKWARD_FIRST + LB_ROLE_FFN_DOWN
} LbOpRole;

/* The backward role of a forward role (itself for unlabelled and a backward role). */
static inline LbOpRole lb_role_backward(LbOpRole r)
{
    return r == LB_ROLE_UNLABELLED || r >= LB_ROLE_BACKWARD_FIRST ? r : (LbOpRole)(LB_ROLE_BACKWARD_FIRST + r - 1);
}

typedef struct LbPassObserver LbPassObserver;
struct LbPassObserver {
    LbBackend *be; /* the pass calls every op on this backend instead of the model's */
    /* The calls that follow, until the next call of this, play `role`. No status: an observer
     * that fails keeps the failure and reports it after the pass. */
    void (*role)(LbPassObserver *obs, LbOpRole role);
};

#ifdef __cplusplus
}
#endif

#endif
