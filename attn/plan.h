/* The memory plan: exact bytes of weights, workspace and activations of one pass, or of one
 * training step (cfg->pass), at batch B, and the largest B that fits a budget (METHOD.md,
 * "Largest batch"), by a dry run of the code; tests/model hold it equal to a real arena's
 * high-water mark. */
#ifndef LB_PLAN_H
#define LB_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"
#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbPlanParams {
    size_t elem_bytes; /* storage bytes per element */
    size_t alignment;  /* arena alignment */
    size_t workspace;  /* backend workspace bytes */
} LbPlanParams;

/* The CUDA backend's plan parameters, here so a plan for a GPU (linbench predict) needs no CUDA:
 * the cuBLAS workspace every arena carves out (cublasSetWorkspace's recommendation for sm_90,
 * one figure on every device so plans compare) and the arena alignment cuBLAS(Lt) assumes. */
#define LB_CUDA_WORKSPACE_BYTES ((size_t)32 << 20)
#define LB_CUDA_ALIGNMENT ((size_t)256)

/* The plan parameters of the CUDA backend storing `dtype` (2 bytes for fp16 and bf16, 4 for fp32). */
LbPlanParams lb_plan_params_cuda(LbDtype dtype);

typedef struct LbPlan {
    size_t weights;     /* embeddings, layers, the model's own weights */
    size_t workspace;   /* backend scratch */
    size_t inputs;      /* ids, x, y: grows with B */
    size_t gradients;   /* a training step's gradient model and upstream gradient dy; 0 forward */
    size_t temporaries; /* the largest phase's temporaries (attention or feed-forward); a training
                         * step's kept activations and its backward's: grows with B */
    size_t total;       /* weights + workspace + inputs + gradients + temporaries: the arena's
                         * high-water mark */
} LbPlan;

/* Returns LB_ERR_INVALID (no message) when B < 1 or the sizes approach 2^60 bytes (they could
 * overflow 64 bits), the config's own error when the model cannot be built. */
int lb_plan_compute(const LbModelConfig *cfg, const LbPlanParams *p, int64_t batch, LbPlan *out);

/* Largest B with total <= budget (0 when B = 1 does not fit), capped at max_batch. */
int64_t lb_plan_largest_batch(const LbModelConfig *cfg, const LbPlanParams *p, size_t budget,
                              int64_t max_batch);

/* The plan's counting backend, for a pass that is counted and not computed (the plan itself,
 * lb_breakdown_count): every op succeeds and touches nothing; p's element size, alignment and
 * workspace; dtype and storage `dtype`. */
void lb_plan_counting_backend(LbDtype dtype, const LbPlanParams *p, LbBackend *be);

#ifdef __cplusplus
}
#endif

#endif
