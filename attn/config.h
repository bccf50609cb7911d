/* The model configuration (METHOD.md, "What runs"): the model, the encoder's shape, precision and
 * the models' own settings, validated here for the CLI, the sweep and the tests alike. */
#ifndef LB_CONFIG_H
#define LB_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum LbDtype { LB_DTYPE_FP16 = 0, LB_DTYPE_BF16 = 1, LB_DTYPE_FP32 = 2 } LbDtype;

/* The attention models in the model table's order (loops walk them all and ask the table). */
typedef enum LbModelKind {
    LB_MODEL_STANDARD = 0,
    LB_MODEL_LINFORMER = 1,
    LB_MODEL_CHUNKED = 2,
    LB_MODEL_PERFORMER = 3,
    LB_MODEL_FLASH = 4,
    /* The paper's general projections (section 4) in place of E and F, over windows of n / k */
    LB_MODEL_LINFORMER_MEAN = 5,
    LB_MODEL_LINFORMER_MAX = 6,
    LB_MODEL_LINFORMER_CONV = 7,
    LB_MODEL_COUNT
} LbModelKind;

/* Which projections are shared (METHOD.md): layerwise one E for all; kv one E per layer;
 * headwise E and F per layer; none E_i, F_i per head and layer. */
typedef enum LbSharing {
    LB_SHARE_LAYERWISE = 0,
    LB_SHARE_KV = 1,
    LB_SHARE_HEADWISE = 2,
    LB_SHARE_NONE = 3
} LbSharing;

/* early: K' = (E X) W_K + b_K (fairseq; cheap). late: K' = E (X W_K + b_K) (the paper's figure). */
typedef enum LbOrder { LB_ORDER_EARLY = 0, LB_ORDER_LATE = 1 } LbOrder;

/* What one measured step runs (--pass): the forward pass (the paper's), or a training step
 * without the optimizer (attn/train.h). */
typedef enum LbPassKind { LB_PASS_FORWARD = 0, LB_PASS_TRAIN = 1 } LbPassKind;

/* The projected length per layer (--k-schedule): uniform k; halve, k, k/2, k/4 on the layers'
 * thirds; list, k times one factor in (0, 1] per layer. Every k below the cell's is rounded up to
 * a multiple of LB_KSCHED_STEP (never above the cell's k). */
typedef enum LbKSchedule { LB_KSCHED_UNIFORM = 0, LB_KSCHED_HALVE = 1, LB_KSCHED_LIST = 2 } LbKSchedule;
#define LB_KSCHED_STEP 8

/* Supported ranges, checked by lb_config_check and quoted in the CLI's messages. */
#define LB_N_MIN 2
#define LB_N_MAX 1048576
#define LB_K_MIN 1
#define LB_CHUNK_DEFAULT 1024
#define LB_CHUNK_MIN 1
#define LB_CHUNK_MAX LB_N_MAX
#define LB_LAYERS_MAX 1024
#define LB_DMODEL_MAX 65536
#define LB_HEADS_MAX 1024
#define LB_FFN_MAX 1048576
#define LB_VOCAB_MAX 16777216

typedef struct LbModelConfig {
    LbModelKind kind;
    int layers;   /* L */
    int d_model;  /* d */
    int heads;    /* h; head width d / h */
    int ffn;      /* f */
    int vocab;    /* token embedding rows */
    int64_t n;    /* sequence length */
    int64_t k;    /* the k axis: projected length (Linformer), random features m (Performer) */
    int64_t chunk; /* query rows per block of the chunked model (--chunk) */
    LbSharing sharing;
    LbOrder order;
    LbDtype dtype;
    LbPassKind pass;
    LbKSchedule k_schedule;
    int k_factors;                    /* LB_KSCHED_LIST: how many factors the list gave */
    double k_factor[LB_LAYERS_MAX];   /* LB_KSCHED_LIST: layer l's factor in (0, 1] */
} LbModelConfig;

/* RoBERTa-base, standard model, n = 512, fp16, layerwise / early. */
LbModelConfig lb_config_default(void);

/* Check ranges and consistency. On failure returns LB_ERR_INVALID and writes one line naming the
 * offending setting (as its CLI flag) and what it accepts into msg. */
int lb_config_check(const LbModelConfig *cfg, char *msg, size_t msg_size);

int64_t lb_config_head_dim(const LbModelConfig *cfg);

/* The projected length of `layer` under cfg's k schedule (the cell's k for layer 0). */
int64_t lb_config_layer_k(const LbModelConfig *cfg, int layer);

/* --k-schedule ("uniform", "halve" or a comma list of factors in (0, 1]) into cfg: 0, or -1 with
 * what it accepts in should. lb_config_check holds its length to --layers. */
int lb_kschedule_parse(const char *text, LbModelConfig *cfg, char *should, size_t size);
/* As --k-schedule takes it and meta.csv records it, into buf. */
void lb_kschedule_text(const LbModelConfig *cfg, char *buf, size_t size);

/* FLOPs of one forward pass of one sequence (METHOD.md, "Work counted"): feed-forward plus attention.
 * A training step's are counted by its breakdown (lb_measure_flops_per_seq). */
double lb_config_flops_per_seq(const LbModelConfig *cfg);

/* Names as the CLI and the CSV files write them, and their parsers (return 0 on success). */
const char *lb_dtype_name(LbDtype d);
const char *lb_model_name(LbModelKind m);
const char *lb_sharing_name(LbSharing s);
const char *lb_order_name(LbOrder o);
/* Whether a model's cells have a k ((n, k), else (n)), and what k means ("" without one). */
int lb_model_has_k(LbModelKind m);
const char *lb_model_k_meaning(LbModelKind m);
/* LbModelDesc.baseline: 1 standard, 2 chunked, 3 flash; 0 for a model that is no baseline. */
int lb_model_baseline(LbModelKind m);
/* The k a model accepts, as --help says it ("1 to n"); "" when it has no k axis. */
const char *lb_model_k_range(LbModelKind m);
/* Whether model m reads --FLAG (no "--"): 1 or 0 for k and the models' own_flags; -1 for a flag
 * no model owns (--layers, --dtype ...: every model reads it). */
int lb_model_reads_flag(LbModelKind m, const char *flag);
/* Whether (n, k) is a cell of model m (k ignored without a k axis; Linformer's k below n). */
int lb_model_cell_exists(LbModelKind m, int64_t n, int64_t k);
/* LbModelDesc.skip_reason: why a k < n may be no cell of m; NULL when k < n is its only rule. */
const char *lb_model_skip_reason(LbModelKind m);
int lb_dtype_parse(const char *s, LbDtype *out);
int lb_model_parse(const char *s, LbModelKind *out);
int lb_sharing_parse(const char *s, LbSharing *out);
int lb_order_parse(const char *s, LbOrder *out);

/* "NAME n=N k=K" (without k for a model without a k axis): how messages name a cell. */
void lb_model_cell_name(const char *name, LbModelKind model, int64_t n, int64_t k, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
