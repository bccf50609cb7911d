/* The memory plan: exact bytes of weights, workspace and activations of one forward pass as a
 * function of the batch size B, and the largest B that fits a budget (METHOD.md, "Largest
 * batch"). It mirrors the allocation order of attn/model.c and attn/forward.c; the test
 * tests/cpu/test_plan.c holds it equal to the arena's high-water mark. */
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
    size_t weights;   /* embeddings, layers, projections */
    size_t workspace; /* backend scratch */
    size_t inputs;    /* ids, x, y: grows with B */
    size_t attention; /* the attention phase's temporaries: grows with B */
    size_t ffn;       /* the feed-forward phase's temporaries: grows with B */
    size_t total;     /* weights + workspace + inputs + max(attention, ffn) */
} LbPlan;

/* Returns LB_ERR_INVALID when a size overflows size_t. */
int lb_plan_compute(const LbModelConfig *cfg, const LbPlanParams *p, int64_t batch, LbPlan *out);

/* Largest B with total <= budget (0 when B = 1 does not fit), capped at max_batch. */
int64_t lb_plan_largest_batch(const LbModelConfig *cfg, const LbPlanParams *p, size_t budget,
                              int64_t max_batch);

#ifdef __cplusplus
}
#endif

#endif
