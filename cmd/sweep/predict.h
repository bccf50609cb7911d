/* linbench predict: the roofline's forecast of a sweep on a GPU that is not here (METHOD.md,
 * "Predicting"), also the price of each cell in the shard split. Per cell: the largest batch the
 * plan fits on the card, and a pass's time as the sum over its calls of
 *     max(FLOPs / (rate x product efficiency), bytes / (bandwidth x copy efficiency)) + launch.
 * The cards' datasheet figures are in gpu_specs.c. */
#ifndef LB_PREDICT_H
#define LB_PREDICT_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stddef.h>
#include <stdint.h>

#include "attn/measure/breakdown.h"
#include "attn/config.h"
#include "attn/measure/measure.h"
#include "reports/grid.h"
#include "reports/settings.h"

typedef struct LbGpuSpec {
    const char *name;     /* what --gpu takes: "h100-sxm" */
    const char *label;    /* the card in words: "NVIDIA H100 SXM 80GB" */
    const char *cuda_name; /* what cudaGetDeviceProperties calls it; NULL: none known */
    /* dense TFLOP/s with fp32 accumulation: fp16, bf16 and TF32 tensor cores, plain fp32; 0: none */
    double fp16_tflops, bf16_tflops, tf32_tflops, fp32_tflops;
    double bandwidth_gb_s; /* memory bandwidth, GB/s (1e9 bytes) */
    double memory_gib;     /* memory as the datasheet says it ("80 GB"), read as GiB (2^30 bytes) */
    const char *source;    /* the datasheet, short: docs/METHOD.md gives its title and address */
} LbGpuSpec;

extern const LbGpuSpec lb_gpu_specs[];
extern const size_t lb_gpu_spec_count;

/* The card a prediction is for, with the product rate of the run's dtype picked. */
typedef struct LbPredictCard {
    char name[32];        /* --gpu NAME, or "spec" for --spec */
    char label[160];      /* the table's label, or "card of --spec ..." */
    double tflops;        /* product rate of the run's dtype, TFLOP/s */
    char rate_kind[48];   /* which of the datasheet's rates that is: "fp16 tensor", "fp32", "--spec" */
    double bandwidth_gb_s;
    uint64_t memory_bytes;
    char source[160];     /* the datasheet (docs/METHOD.md cites it), or "--spec" */
} LbPredictCard;

typedef struct LbPredictParams {
    double product_efficiency; /* (0, 1]: of the rate a product reaches */
    double copy_efficiency;    /* (0, 1]: of the bandwidth a memory-bound call reaches */
    double launch_us;          /* >= 0: added per call (kernel) */
} LbPredictParams;

LbPredictParams lb_predict_defaults(void);

/* The table's entry called `name`, or NULL; the entry CUDA calls `cuda_name`, or NULL. */
const LbGpuSpec *lb_gpu_spec_find(const char *name);
const LbGpuSpec *lb_gpu_spec_for_device(const char *cuda_name);
/* Every name of the table, ", "-joined. */
void lb_gpu_spec_names(char *buf, size_t size);

/* The card of a table entry for `dtype` (tf32: fp32 products on TF32 tensor cores): 0, or -1 with
 * why (a rate the datasheet does not give: the V100 has no bf16 nor TF32). */
int lb_predict_card_from_spec(const LbGpuSpec *g, LbDtype dtype, int tf32, LbPredictCard *c, char *why,
                              size_t size);
/* --spec tflops=T,bw=B,mem=SIZE (every field once, each positive; SIZE as --mem-limit takes it):
 * 0, or -1 with what it should be in `should`. */
int lb_predict_card_parse(const char *text, LbPredictCard *c, char *should, size_t size);

/* One cell: the largest batch the CUDA plan fits in `budget` (max_batch 0: no cap) and its pass
 * predicted into a raw.csv row (ok, or OOM with batch 0), and *bd when not NULL and it fits. */
int lb_predict_cell(const LbModelConfig *cfg, const LbPredictCard *c, const LbPredictParams *p, uint64_t budget,
                    int64_t max_batch, LbCellResult *out, LbBreakdown *bd);

/* The card's memory less the sweep's headroom, or --mem-limit if smaller. */
uint64_t lb_predict_budget(const LbRunSettings *s, const LbPredictCard *c);

/* A whole prediction into `dir` (exists, empty), as a sweep writes its own plus breakdown.csv;
 * *grid as a sweep's; *sweep_s what the sweep would take at its fewest passes. */
typedef struct LbPredictJob {
    const LbRunSettings *settings;
    const LbPredictCard *card;
    const LbPredictParams *params;
    const char *dir;
    const char *command_line;
} LbPredictJob;
int lb_predict_run(const LbPredictJob *job, LbGrid *grid, double *sweep_s);

#endif
