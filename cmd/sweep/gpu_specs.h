/* The device table of linbench predict: what each GPU's vendor datasheet gives for the roofline
 * (dense tensor rates, memory bandwidth, memory size). Data only, in cmd/sweep/gpu_specs.c; each
 * entry's datasheet is cited in docs/METHOD.md ("Predicting"). */
#ifndef LB_GPU_SPECS_H
#define LB_GPU_SPECS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbGpuSpec {
    const char *name;     /* what --gpu takes: "h100-sxm" */
    const char *label;    /* the card in words: "NVIDIA H100 SXM 80GB" */
    const char *cuda_name; /* the name CUDA gives the card (cudaGetDeviceProperties), for check and
                            * sweep to find their device in the table; NULL: none known */
    /* TFLOP/s, dense (no structured sparsity), fp32 accumulation: tensor-core products of fp16
     * and of bf16 inputs, TF32 tensor-core products, and plain fp32; 0 where the card has none */
    double fp16_tflops, bf16_tflops, tf32_tflops, fp32_tflops;
    double bandwidth_gb_s; /* memory bandwidth, GB/s (1e9 bytes) */
    double memory_gib;     /* memory as the datasheet says it ("80 GB"), read as GiB (2^30 bytes) */
    const char *source;    /* the datasheet, short: docs/METHOD.md gives its title and address */
} LbGpuSpec;

extern const LbGpuSpec lb_gpu_specs[];
extern const size_t lb_gpu_spec_count;

/* Looking an entry up: cmd/sweep/predict.h. */

#ifdef __cplusplus
}
#endif

#endif
