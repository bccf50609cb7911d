/* The memory plan: exact bytes of weights, workspace and activations of one forward pass at
 * batch size B, and the largest B that fits a budget (METHOD.md, "Largest batch"). It is a dry
 * run: the model built and one forward pass run over a counting arena with a backend that does
 * no arithmetic, so it counts what the code allocates; tests/model/test_plan.c holds it equal
 * to a real arena's high-water mark. */
#ifndef LB_PLAN_H
#define LB_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbPlanParams {
    size_t elem_bytes; /* storage bytes per element */
    size_t alignment;  /* arena alignment */
    size_t workspace;  /* backend workspace bytes */
} LbPlanParams;

typedef struct LbPlan {
    size_t weights;     /* embeddings, layers, the model's own weights */
    size_t workspace;   /* backend scratch */
    size_t inputs;      /* ids, x, y: grows with B */
    size_t temporaries; /* the largest phase's temporaries (attention or feed-forward): grows with B */
    size_t total;       /* weights + workspace + inputs + temporaries: the arena's high-water mark */
} LbPlan;

/* Returns LB_ERR_INVALID (no message) when B < 1 or the sizes approach 2^60 bytes (they could
 * overflow 64 bits), the config's own error when the model cannot be built. */
int lb_plan_compute(const LbModelConfig *cfg, const LbPlanParams *p, int64_t batch, LbPlan *out);

/* Largest B with total <= budget (0 when B = 1 does not fit), capped at max_batch. */
int64_t lb_plan_largest_batch(const LbModelConfig *cfg, const LbPlanParams *p, size_t budget,
                              int64_t max_batch);

#ifdef __cplusplus
}
#endif

#endif
