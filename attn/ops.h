/* The table of operations a backend fills, and the backend handle the forward passes drive. A
 * tensor is a `void *` into the backend's memory (elem_bytes per element; token ids int32) that
 * the forward code offsets but never dereferences, so one code drives the CPU and the GPU.
 * Row-major, 64-bit sizes; every op returns LB_OK or a negative LbStatus (LB_FAIL). Every backend
 * keeps products, softmax and LayerNorm statistics in fp32 or wider, GELU in the erf form. */
#ifndef LB_OPS_H
#define LB_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbBackend LbBackend;
struct LbMatmulTuning;

/* C_i (m, n) = alpha op(A_i) (m, kdim) op(B_i) (kdim, n) + beta C_i for i < batch, X_i = X + i
 * stride_x elements, op(A) = A^T (stored (kdim, m)) when trans_a; likewise B. Stride 0 of A or B
 * broadcasts one matrix (the shared projection E); stride_c 0 with batch > 1 sums the products
 * into one C = alpha sum_i op(A_i) op(B_i) + beta C (that matrix's gradient). beta 0 overwrites
 * C without reading it (NaN there stays out); the backward passes accumulate with beta 1. */
typedef struct LbBmm {
    int trans_a, trans_b;
    int64_t m, n, kdim;
    float alpha;
    const void *a;
    int64_t lda, stride_a;
    const void *b;
    int64_t ldb, stride_b;
    void *c;
    int64_t ldc, stride_c;
    int64_t batch;
    float beta; /* last, so that an initializer that leaves it out overwrites C */
} LbBmm;

/* What a backend knows of its device (linbench info, meta.csv); unknown: -1 or "". */
typedef struct LbDeviceInfo {
    char name[128];
    int cc_major, cc_minor;
    int sm_count;
    int64_t total_bytes, free_bytes;
    int sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz;
    int driver_version, runtime_version, cublas_version; /* as the libraries report them */
    int device_index;
    char uuid[48]; /* as nvidia-smi prints it: tells apart the GPUs of a sweep; "" for the CPU */
    /* CUDA only (linbench check): the build's architectures and what this device runs ("sm_80,
     * 86,89,90,100 + PTX compute_100; this device: native sm_90"), ECC, MIG and persistence mode
     * (1 on, 0 off, -1 unknown), other compute processes on the GPU (-1 unknown). */
    char code[224];
    int ecc, mig, persistence, other_processes;
} LbDeviceInfo;

/* The ops a pass calls (the forward, the training step, the weights' set-up), as X(name, (params)):
 * the fields of LbOps below, and the plan's counting backend's no-ops (attn/plan.c), from one list. */
#define LB_PASS_OPS(X)                                                                                                 \
    X(upload, (LbBackend *be, void *dst, const float *src, int64_t count))                                             \
    /* x[i] = lb_rng_range(seed, i, lo, hi) (attn/rng.h) rounded to storage: every backend draws                       \
     * the same values from a seed */                                                                                  \
    X(fill_uniform, (LbBackend *be, void *x, int64_t count, uint64_t seed, float lo, float hi))                        \
    /* y (rows, out) = x (rows, in) w (out, in)^T + b (out, may be NULL), then GELU if gelu. */                        \
    X(linear, (LbBackend *be, const void *x, const void *w, const void *b, void *y, int64_t rows, int64_t in,          \
               int64_t out, int gelu))                                                                                 \
    X(bmm, (LbBackend *be, const LbBmm *p))                                                                            \
    /* x (rows, cols), each row in place: x = softmax(scale * x). */                                                   \
    X(softmax, (LbBackend *be, void *x, int64_t rows, int64_t cols, float scale))                                      \
    /* x (rows, d) = LayerNorm(x + r) * gamma + beta, in place; r (rows, d) may be NULL. */                            \
    X(layernorm, (LbBackend *be, void *x, const void *r, const void *gamma, const void *beta, int64_t rows,            \
                  int64_t d, float eps))                                                                               \
    /* x (batch, n, d) = tok[ids[b, t]] (vocab, d) + pos[t] (n, d); ids (batch, n) int32. */                           \
    X(embed, (LbBackend *be, const int32_t *ids, const void *tok, const void *pos, void *x, int64_t batch,             \
              int64_t n, int64_t d))                                                                                   \
    /* dst (batch, heads, n, hd)[b, h, t, j] = src[(b n + t) ld_src + h hd + j]: one of Q, K, V                        \
     * out of the fused projection into head-major order. */                                                           \
    X(split_heads, (LbBackend *be, const void *src, int64_t ld_src, void *dst, int64_t batch, int64_t n,               \
                    int64_t heads, int64_t hd))                                                                        \
    /* dst (batch, n, heads hd) = src (batch, heads, n, hd): back to token-major. */                                   \
    X(merge_heads, (LbBackend *be, const void *src, void *dst, int64_t batch, int64_t n, int64_t heads,                \
                    int64_t hd))                                                                                       \
    /* FAVOR+'s features (attn/model_performer.c), in place: f (groups, n, m) holds w x', x' = scale                   \
     * x, x (groups, n, hd), and becomes exp(f - scale^2 |x|^2 / 2 - s) / sqrt(m), s the row's max                     \
     * (queries, keys == 0) or the group's (keys != 0). stat: lb_favor_stat_bytes(groups, n) of                        \
     * arena scratch for keys, NULL for queries. Exponent and maxima in fp32 or wider. */                              \
    X(favor_features, (LbBackend *be, void *f, const void *x, void *stat, int64_t groups, int64_t n, int64_t m,        \
                       int64_t hd, float scale, int keys))                                                             \
    /* y (rows, cols)[r, j] = x[r, j] / x[r, cols], x (rows, cols + 1): FAVOR+'s D^-1 (the                             \
     * normaliser in x's last column), in fp32 or wider. y must not overlap x. */                                      \
    X(divide_by_last, (LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols))                             \
    /* dst = src, device to device, no overlap: the bandwidth calibration measures. */                                 \
    X(copy, (LbBackend *be, void *dst, const void *src, size_t bytes))                                                 \
    /* y (rows, cols) = GELU(y) in place: linear's GELU alone, which a breakdown times apart. */                       \
    X(gelu, (LbBackend *be, void *y, int64_t rows, int64_t cols))                                                      \
    /* The flash model's exact attention of every (sequence, head), never writing the n x n                            \
     * scores: o[b, t, j hd + e] = sum_s softmax_s(scale q_t . k_s) v_s[e], q, k, v token-major                        \
     * read in place (ld_qkv: 3 d in the fused QKV buffer); o (batch, n, heads hd), not                                \
     * overlapping them. Scores and sums in fp32 or wider. A head width without a kernel is                            \
     * LB_ERR_INVALID (CUDA: multiples of 16 up to LB_FLASH_HD_MAX). */                                                \
    X(flash_attention, (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld_qkv, void *o,           \
                        int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale))                             \
    /* The Linformer's general projections. y[(b k + t) ld_y + c] = mean or max (mode: LbPoolMode)                     \
     * over j < w = n / k of x[(b n + t w + j) ld_x + c], in place on strided rows; k must divide                      \
     * n. fp32 or wider sums. */                                                                                       \
    X(pool_seq, (LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n,          \
                 int64_t k, int64_t channels, int mode))                                                               \
    /* Depthwise convolution, kernel and stride w = n / k: y[(b k + t) ld_y + c] = sum over j < w of                   \
     * wt[j channels + c] x[(b n + t w + j) ld_x + c]; wt (taps >= w, channels) tap-major, read to                     \
     * its first w taps (the k schedule). fp32 or wider sums; k must divide n. */                                      \
    X(depthwise_conv_seq, (LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y,          \
                           int64_t batch, int64_t n, int64_t k, int64_t channels))                                     \
    /* --- the training step's backward (--pass train) ------------------------------------------                      \
     * For a forward op, the gradients of its inputs and parameters from the upstream gradient of                      \
     * its output. A d-prefixed tensor is the gradient of the tensor it names, laid out as that                        \
     * tensor; gradients are written (=), never accumulated (products accumulate through bmm's                         \
     * beta). Sums in fp32 or wider. Each has a double reference in attn/cpu/cpu_backward.h,                           \
     * checked against finite differences. `scratch` is arena memory of the size its function                          \
     * below gives (the plan counts it), NULL where that size is 0. */                                                 \
    /* y (count) += x (count), element-wise in fp32 or wider: where gradients meet (a residual, a                      \
     * weight shared by layers). */                                                                                    \
    X(add, (LbBackend *be, const void *x, void *y, int64_t count))                                                     \
    /* y (cols) = the sums of x (rows, cols)'s columns: a bias's gradient. */                                          \
    X(column_sums, (LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols, void *scratch))                 \
    /* d (rows, cols) holds dy of y = GELU(z) and becomes dz in place: d = d GELU'(z), erf form. */                    \
    X(gelu_backward, (LbBackend *be, const void *z, void *d, int64_t rows, int64_t cols))                              \
    /* y = softmax(scale x) kept from the forward (rows, cols); d holds dy and becomes dx in                           \
     * place: dx = scale y (dy - sum_j dy_j y_j). */                                                                   \
    X(softmax_backward, (LbBackend *be, const void *y, void *d, int64_t rows, int64_t cols, float scale))              \
    /* layernorm's gradients from its inputs as the forward saw them, x and r (r may be NULL),                         \
     * and dy (rows, d): dv (rows, d), the gradient of v = x + r and so of x and of r alike (dv                        \
     * may be dy itself); dgamma and dbeta (d) summed over the rows. The statistics are                                \
     * recomputed. */                                                                                                  \
    X(layernorm_backward, (LbBackend *be, const void *x, const void *r, const void *gamma, const void *dy,             \
                           void *dv, void *dgamma, void *dbeta, int64_t rows, int64_t d, float eps, void *scratch))    \
    /* embed's gradients from dx (batch, n, d): dtok (vocab, d) the sum of dx's rows by token id                       \
     * (rows of absent ids 0), dpos (n, d) the sum over the batch. Deterministic: each row sums                        \
     * its positions in (b, t) order (a stable counting sort by id in the scratch), no atomics. */                     \
    X(embed_backward, (LbBackend *be, const int32_t *ids, const void *dx, void *dtok, void *dpos, int64_t batch,       \
                       int64_t n, int64_t d, int64_t vocab, void *scratch))                                            \
    /* pool_seq's gradient dx (laid out as x; elements between rows untouched): mean spreads                           \
     * dy / w over the window, max gives dy to the window's first maximum of x and 0 to the rest. */                   \
    X(pool_seq_backward, (LbBackend *be, const void *x, int64_t ld_x, const void *dy, int64_t ld_y, void *dx,          \
                          int64_t batch, int64_t n, int64_t k, int64_t channels, int mode))                            \
    /* depthwise_conv_seq's gradients: dx (laid out as x) and dwt (w = n / k taps, channels). */                       \
    X(depthwise_conv_seq_backward, (LbBackend *be, const void *x, int64_t ld_x, const void *wt, const void *dy,        \
                                    int64_t ld_y, void *dx, void *dwt, int64_t batch, int64_t n, int64_t k,            \
                                    int64_t channels, void *scratch))                                                  \
    /* favor_features' gradients, the stabiliser s held constant (it cancels in the attention                          \
     * output): from its output phi (groups, n, m) and input x (groups, n, hd), d holds dphi and                       \
     * becomes the gradient of the projections f in place; dx gets the norm term's share,                              \
     * -scale^2 x sum_j dphi_j phi_j (the projection's share comes from its product). */                               \
    X(favor_features_backward, (LbBackend *be, const void *phi, const void *x, void *d, void *dx, int64_t groups,      \
                                int64_t n, int64_t m, int64_t hd, float scale))                                        \
    /* divide_by_last's gradient dx (rows, cols + 1) from x and dy (rows, cols). */                                    \
    X(divide_by_last_backward, (LbBackend *be, const void *x, const void *dy, void *dx, int64_t rows,                  \
                                int64_t cols))                                                                         \
    /* flash_attention's gradients, FlashAttention-2's way: P recomputed per tile from q, k and                        \
     * the forward's log-sum-exp lse; dq, dk, dv laid out as q, k, v (rows of ld_qkv: the fused                        \
     * QKV gradient), o and do_ as flash_attention's o. */                                                             \
    X(flash_attention_backward, (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld_qkv,           \
                                 const void *o, const float *lse, const void *do_, void *dq, void *dk, void *dv,       \
                                 int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale, void *scratch))     \
    /* flash_attention that also writes lse (batch, heads, n) fp32, each query row's log-sum-exp                       \
     * of its scaled scores, which the backward needs. */                                                              \
    X(flash_attention_lse, (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld_qkv, void *o,       \
                            float *lse, int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale))

#define LB_OP_FIELD(name, params) int(*name) params;

typedef struct LbOps {
    const char *name; /* "cpu" or "cuda" */

    /* One allocation per arena; LB_ERR_NOMEM (recoverable) when it does not fit. */
    int (*mem_alloc)(LbBackend *be, size_t bytes, void **ptr);
    void (*mem_free)(LbBackend *be, void *ptr);
    int (*mem_info)(LbBackend *be, size_t *free_bytes, size_t *total_bytes);
    /* The libraries' scratch (cuBLAS workspace, workspace_bytes), carved from the arena so the
     * plan counts it. NULL where not needed. */
    int (*set_workspace)(LbBackend *be, void *ptr, size_t bytes);

    /* data out (tests, --dump); upload, the way in, is a pass op */
    int (*download)(LbBackend *be, float *dst, const void *src, int64_t count);
    int (*copy_raw_to_host)(LbBackend *be, void *dst, const void *src, size_t bytes);
    /* ids[i] = lb_rng_token(seed, i, vocab) */
    int (*fill_tokens)(LbBackend *be, int32_t *ids, int64_t count, uint64_t seed, int32_t vocab);

    int (*sync)(LbBackend *be);
    /* Device time in ms between timer_start and timer_stop (CUDA events on the GPU). */
    int (*timer_start)(LbBackend *be);
    int (*timer_stop)(LbBackend *be, double *ms);
    int (*sm_clock_mhz)(LbBackend *be); /* -1 where it cannot be read */
    /* The clock-event (throttle) reasons in force, NVML's bits (attn/measure/clock_events.h);
     * LB_ERR_UNSUPPORTED without NVML. */
    int (*clock_events)(LbBackend *be, uint64_t *reasons);
    int (*describe)(LbBackend *be, LbDeviceInfo *info);
    void (*close)(LbBackend *be);
    /* A breakdown's events: event_record marks `index` (kept until close) where queued work has
     * got to, without waiting; event_elapsed gives the ms between two, waiting for the later. */
    int (*event_record)(LbBackend *be, int64_t index);
    int (*event_elapsed)(LbBackend *be, int64_t from, int64_t to, double *ms);
    /* An energy counter in joules from any origin, never decreasing: NVML's on the GPU, RAPL on
     * the CPU. LB_ERR_UNSUPPORTED, saying why, where none can be read. */
    int (*energy_j)(LbBackend *be, double *joules);
    /* linear's algorithm choices over the backend's life (meta.csv); NULL where it has none. */
    int (*matmul_tuning)(LbBackend *be, struct LbMatmulTuning *out);

    LB_PASS_OPS(LB_OP_FIELD)
} LbOps;


/* The scratch bytes of the backward ops above: backend-independent, so that a plan for a GPU
 * needs no GPU. Room for LB_GRAD_PARTS partial sums of each column (a two-stage, deterministic
 * reduction over rows) and per-row statistics or sort keys. */
#define LB_GRAD_PARTS 256
static inline size_t lb_column_sums_scratch_bytes(int64_t rows, int64_t cols)
{
    (void)rows;
    return (size_t)(LB_GRAD_PARTS * cols) * 4u;
}
static inline size_t lb_layernorm_backward_scratch_bytes(int64_t rows, int64_t d)
{
    return (size_t)(2 * LB_GRAD_PARTS * d + 2 * rows) * 4u;
}
static inline size_t lb_embed_backward_scratch_bytes(int64_t batch, int64_t n, int64_t vocab)
{
    return (size_t)(2 * batch * n + vocab + 1) * 4u;
}
static inline size_t lb_depthwise_conv_seq_backward_scratch_bytes(int64_t n, int64_t k, int64_t channels)
{
    return (size_t)(LB_GRAD_PARTS * (k > 0 ? n / k : 0) * channels) * 4u;
}
/* D = rowsum(dO o) per query row and an fp32 dq accumulator. */
static inline size_t lb_flash_backward_scratch_bytes(int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    return (size_t)(batch * heads * n * (1 + hd)) * 4u;
}

/* linear's algorithm choices (LbBackend.autotune): a shape's candidates timed on its first use,
 * on the call's own operands, and the fastest kept. */
typedef struct LbMatmulTuning {
    int64_t shapes;     /* shapes timed over several candidates (a shape evicted from the cache and
                         * met again counts again) */
    int64_t kept_first; /* of those, where the heuristic's first algorithm was the fastest */
    double gain;        /* the largest first_ms / best_ms of a shape; 1 with none */
    double first_ms, best_ms; /* that shape's call with the heuristic's first and with the fastest */
    int host_clock;     /* the times are the emulated device's host clock (gpu/emu): the choice runs,
                         * but they are no GPU's figures */
} LbMatmulTuning;

typedef enum LbPoolMode { LB_POOL_MEAN = 0, LB_POOL_MAX = 1 } LbPoolMode;

/* The widest head the flash model takes, and the multiple its width must be (the tensor-core
 * tile's k, gpu/flash.cu). */
#define LB_FLASH_HD_MAX 128
#define LB_FLASH_HD_STEP 16

struct LbBackend {
    const LbOps *ops;
    void *impl;             /* the backend's own state */
    LbDtype dtype;          /* what the user asked for */
    LbDtype storage;        /* what the backend stores (the CPU reference stores fp32 always) */
    size_t elem_bytes;      /* bytes per stored element */
    size_t workspace_bytes; /* scratch taken from every arena (cuBLAS workspace), 0 on CPU */
    size_t alignment;       /* arena alignment in bytes (power of two) */
    int tf32;               /* fp32 products may use TF32 (--tf32) */
    /* linear keeps each shape's fastest algorithm (LbMatmulTuning); 0 (--no-autotune): the
     * heuristic's first. Set after open; the CPU ignores it. */
    int autotune;
};

/* Scratch bytes favor_features takes for the keys of `groups` groups of n rows: an fp32 maximum
 * per row and per group (the GPU's two-stage reduction; the CPU reference uses none of it). */
static inline size_t lb_favor_stat_bytes(int64_t groups, int64_t n) { return (size_t)(groups * (n + 1)) * 4u; }

/* The CPU reference; `capacity` bounds what mem_alloc hands out in all (--mem-limit). */
int lb_cpu_backend_open(LbDtype dtype, size_t capacity, LbBackend **out);

/* The CUDA backend on device `index`; LB_ERR_NODEVICE without CUDA or a device. */
int lb_cuda_backend_open(int index, LbDtype dtype, int tf32, LbBackend **out);
/* What `--device cuda` runs on in this build: "CUDA" (nvcc and cuBLAS), "emulated GPU" (gpu/emu,
 * on the CPU: never a GPU measurement) or "none" (built without CUDA). */
const char *lb_cuda_backend_kind(void);

/* NULL is fine. */
void lb_backend_close(LbBackend *be);

#ifdef __cplusplus
}
#endif

#endif
