/* The table of operations a backend fills, and the backend handle the forward passes drive.
 * The forward code never touches tensor memory itself: a tensor pointer is a `void *` into the
 * backend's memory (LbBackend.elem_bytes per element; token ids int32) that it may offset but
 * never dereference, so the same code drives the CPU reference and the GPU. Row-major; 64-bit
 * sizes; every op returns LB_OK or a negative LbStatus set through LB_FAIL. Numerics every
 * backend keeps (METHOD.md, "Precision"): products, softmax and LayerNorm statistics in fp32 or
 * wider; GELU in the erf form. */
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

/* One strided-batched product, row-major:
 *   for i in [0, batch): C_i (m x n) = alpha * op(A_i) (m x kdim) * op(B_i) (kdim x n)
 * where X_i = X + i * stride_x (elements), op(A) = A^T when trans_a (A_i stored kdim x m with
 * leading dimension lda), else A (stored m x kdim, leading dimension lda); likewise B. A stride of
 * 0 broadcasts one matrix over the batch (the shared projection E). C is overwritten. */
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
} LbBmm;

/* What a backend knows of its device (linbench info, meta.csv). Unknown numbers are -1 and
 * unknown strings "". */
typedef struct LbDeviceInfo {
    char name[128];
    int cc_major, cc_minor;
    int sm_count;
    int64_t total_bytes, free_bytes;
    int sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz;
    int driver_version, runtime_version, cublas_version; /* as the libraries report them */
    int device_index;
    /* as nvidia-smi prints it, "" for the CPU: tells apart the GPUs of a several-GPU sweep */
    char uuid[48];
    /* CUDA only (linbench check): the build's architectures and what this device runs ("sm_80,
     * 86,89,90,100 + PTX compute_100; this device: native sm_90"), ECC, MIG and persistence mode
     * (1 on, 0 off, -1 unknown), compute processes on the GPU besides this one (-1 unknown). */
    char code[224];
    int ecc, mig, persistence, other_processes;
} LbDeviceInfo;

typedef struct LbOps {
    const char *name; /* "cpu" or "cuda" */

    /* --- memory ------------------------------------------------------------------------ */
    /* One allocation per arena. LB_ERR_NOMEM (recoverable) when it does not fit. */
    int (*mem_alloc)(LbBackend *be, size_t bytes, void **ptr);
    void (*mem_free)(LbBackend *be, void *ptr);
    /* Memory the backend could give now, and its total. */
    int (*mem_info)(LbBackend *be, size_t *free_bytes, size_t *total_bytes);
    /* Scratch the backend's libraries may use (the cuBLAS workspace), carved from the arena so
     * the plan counts it; `bytes` is LbBackend.workspace_bytes. NULL where not needed. */
    int (*set_workspace)(LbBackend *be, void *ptr, size_t bytes);

    /* --- data in and out (tests, --dump; the forward passes never call these) ----------- */
    int (*upload)(LbBackend *be, void *dst, const float *src, int64_t count);
    int (*download)(LbBackend *be, float *dst, const void *src, int64_t count);
    int (*copy_raw_to_host)(LbBackend *be, void *dst, const void *src, size_t bytes);

    /* --- initialisation: x[i] = lb_rng_range(seed, i, lo, hi) (attn/rng.h), rounded to storage, so
     *     every backend draws the same values for the same seed ----------------------------- */
    int (*fill_uniform)(LbBackend *be, void *x, int64_t count, uint64_t seed, float lo, float hi);
    /* ids[i] = lb_rng_token(seed, i, vocab) */
    int (*fill_tokens)(LbBackend *be, int32_t *ids, int64_t count, uint64_t seed, int32_t vocab);

    /* --- compute ------------------------------------------------------------------------ */
    /* y (rows, out) = x (rows, in) . w (out, in)^T + b (out), then GELU (erf) when gelu != 0.
     * b may be NULL (no bias). x has row stride in, y row stride out. */
    int (*linear)(LbBackend *be, const void *x, const void *w, const void *b, void *y, int64_t rows,
                  int64_t in, int64_t out, int gelu);
    /* Strided-batched product, see LbBmm. */
    int (*bmm)(LbBackend *be, const LbBmm *p);
    /* x (rows, cols), each row in place: x = softmax(scale * x). */
    int (*softmax)(LbBackend *be, void *x, int64_t rows, int64_t cols, float scale);
    /* x (rows, d) = LayerNorm(x + r) * gamma + beta, in place; r (rows, d) may be NULL. */
    int (*layernorm)(LbBackend *be, void *x, const void *r, const void *gamma, const void *beta,
                     int64_t rows, int64_t d, float eps);
    /* x (batch, n, d) = tok[ids[b, t]] (vocab, d) + pos[t] (n, d); ids (batch, n) int32. */
    int (*embed)(LbBackend *be, const int32_t *ids, const void *tok, const void *pos, void *x,
                 int64_t batch, int64_t n, int64_t d);
    /* dst (batch, heads, n, hd)[b, h, t, j] = src[(b * n + t) * ld_src + h * hd + j]:
     * one of Q, K, V out of a fused projection output into head-major order. */
    int (*split_heads)(LbBackend *be, const void *src, int64_t ld_src, void *dst, int64_t batch,
                       int64_t n, int64_t heads, int64_t hd);
    /* dst (batch, n, heads * hd) = src (batch, heads, n, hd) back in token-major order. */
    int (*merge_heads)(LbBackend *be, const void *src, void *dst, int64_t batch, int64_t n,
                       int64_t heads, int64_t hd);
    /* FAVOR+'s features (attn/model_performer.c), in place: f (groups, n, m) holds w x', x' = scale
     * x, x (groups, n, hd), and becomes exp(f - scale^2 |x|^2 / 2 - s) / sqrt(m), s the row's max
     * (queries, keys == 0) or the group's (keys != 0). stat: lb_favor_stat_bytes(groups, n) of arena
     * scratch for keys, NULL for queries. Exponent and maxima in fp32 or wider. */
    int (*favor_features)(LbBackend *be, void *f, const void *x, void *stat, int64_t groups, int64_t n,
                          int64_t m, int64_t hd, float scale, int keys);
    /* y (rows, cols)[r, j] = x[r, j] / x[r, cols], x (rows, cols + 1): FAVOR+'s D^-1, the
     * normaliser held in x's last column; the quotient in fp32 or wider. y must not overlap x. */
    int (*divide_by_last)(LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols);

    /* --- timing --------------------------------------------------------------------------- */
    int (*sync)(LbBackend *be);
    /* Elapsed device time between timer_start and timer_stop, in ms (CUDA events on the GPU). */
    int (*timer_start)(LbBackend *be);
    int (*timer_stop)(LbBackend *be, double *ms);
    /* Current SM clock in MHz, or -1 where it cannot be read. */
    int (*sm_clock_mhz)(LbBackend *be);
    /* The clock-event (throttle) reasons in force now, NVML's bits (attn/measure/clock_events.h);
     * LB_ERR_UNSUPPORTED where they cannot be read (no NVML, the CPU). */
    int (*clock_events)(LbBackend *be, uint64_t *reasons);

    /* --- the device ----------------------------------------------------------------------- */
    int (*describe)(LbBackend *be, LbDeviceInfo *info);
    void (*close)(LbBackend *be);

    /* --- calibration and breakdown (attn/measure/calibrate.c, attn/measure/breakdown.c; the forward pass never
     *     calls these) ---------------------------------------------------------------------- */
    /* dst = src, device to device, no overlap: the copy bandwidth calibration measures. */
    int (*copy)(LbBackend *be, void *dst, const void *src, size_t bytes);
    /* y (rows, cols) = GELU(y) (erf) in place: the pass linear(..., gelu = 1) runs after its
     * product, so a breakdown can time the two apart. */
    int (*gelu)(LbBackend *be, void *y, int64_t rows, int64_t cols);
    /* Timer events for a breakdown: event_record marks event `index` (kept until close) where queued
     * work has got to, without waiting; event_elapsed gives the ms between two, waiting for the later. */
    int (*event_record)(LbBackend *be, int64_t index);
    int (*event_elapsed)(LbBackend *be, int64_t from, int64_t to, double *ms);

    /* --- fused attention (the flash model, attn/model_flash.c) ---------------------------- */
    /* Exact attention of every (sequence, head) in one op, never writing the n x n scores:
     * o[b, t, j hd + e] = sum_s softmax_s(scale q_t . k_s) v_s[e], q, k, v token-major read in place
     * (ld_qkv: 3 d in the fused QKV buffer); o (batch, n, heads hd), not overlapping them. Scores and
     * sums in fp32 or wider. A head width without a kernel is LB_ERR_INVALID (CUDA: multiples of 16
     * up to LB_FLASH_HD_MAX). */
    int (*flash_attention)(LbBackend *be, const void *q, const void *k, const void *v, int64_t ld_qkv, void *o,
                           int64_t batch, int64_t n, int64_t heads, int64_t hd, float scale);

    /* --- energy (attn/measure/measure.c) ------------------------------------------------------------ */
    /* An energy counter in joules from any origin, never decreasing (unwrapped): NVML's total energy
     * on the GPU, RAPL on the CPU. LB_ERR_UNSUPPORTED, saying why, where none can be read. */
    int (*energy_j)(LbBackend *be, double *joules);

    /* --- general projections (the Linformer's pooling and convolution, attn/model_linformer.c) --- */
    /* y[(b k + t) ld_y + c] = mean or max (mode: LbPoolMode) over j < w = n / k of
     * x[(b n + t w + j) ld_x + c], in place on strided rows; k must divide n. fp32 or wider sums. */
    int (*pool_seq)(LbBackend *be, const void *x, int64_t ld_x, void *y, int64_t ld_y, int64_t batch, int64_t n,
                    int64_t k, int64_t channels, int mode);
    /* Depthwise convolution, kernel and stride w = n / k: y[(b k + t) ld_y + c] = sum over j < w of
     * wt[j channels + c] x[(b n + t w + j) ld_x + c]; wt (taps >= w, channels) tap-major, read to its
     * first w taps (the k schedule). fp32 or wider sums; k must divide n. */
    int (*depthwise_conv_seq)(LbBackend *be, const void *x, int64_t ld_x, const void *wt, void *y, int64_t ld_y,
                              int64_t batch, int64_t n, int64_t k, int64_t channels);

    /* --- what the backend chose for its products (meta.csv's matmul_tuning) --------------- */
    /* The algorithm choices linear made so far, over the backend's life (LbMatmulTuning). NULL
     * where a backend has no choice to make (the CPU reference). */
    int (*matmul_tuning)(LbBackend *be, struct LbMatmulTuning *out);
} LbOps;

/* linear's algorithm choices (LbBackend.autotune): each product shape with more than one
 * candidate algorithm is timed on its first use, every candidate on the call's own operands, and
 * the fastest kept. */
typedef struct LbMatmulTuning {
    int64_t shapes;     /* shapes timed over several candidates (a shape evicted from the cache and
                         * met again counts again) */
    int64_t kept_first; /* of those, where the heuristic's first algorithm was the fastest */
    double gain;        /* the largest first_ms / best_ms of a shape; 1 with none */
    double first_ms, best_ms; /* that shape's call with the heuristic's first and with the fastest */
    int host_clock;     /* the times are the emulated device's host clock (gpu/emu): the choice runs,
                         * but they are no GPU's figures */
} LbMatmulTuning;

/* pool_seq's modes. */
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
    /* linear times each shape's candidate algorithms on first use and keeps the fastest; 0
     * (--no-autotune): the heuristic's first. Set by the caller after open; the CPU reference
     * ignores it. */
    int autotune;
};

/* Scratch bytes favor_features takes for the keys of `groups` groups of n rows: an fp32 maximum
 * per row and per group (the GPU's two-stage reduction; the CPU reference uses none of it). */
static inline size_t lb_favor_stat_bytes(int64_t groups, int64_t n) { return (size_t)(groups * (n + 1)) * 4u; }

/* Open the CPU reference backend. `capacity` bounds what mem_alloc hands out in all (the
 * emulated device memory, from --mem-limit). */
int lb_cpu_backend_open(LbDtype dtype, size_t capacity, LbBackend **out);

/* Open the CUDA backend on device `index` (gpu/backend.cu). LB_ERR_NODEVICE when linbench was
 * built without CUDA or no device is present. */
int lb_cuda_backend_open(int index, LbDtype dtype, int tf32, LbBackend **out);
/* What `--device cuda` runs on in this build: "CUDA" (nvcc and cuBLAS), "emulated GPU" (gpu/emu,
 * on the CPU: never a GPU measurement) or "none" (built without CUDA). */
const char *lb_cuda_backend_kind(void);

/* Close and free either backend; NULL is fine. */
void lb_backend_close(LbBackend *be);

#ifdef __cplusplus
}
#endif

#endif
