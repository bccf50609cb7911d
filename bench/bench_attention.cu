/* Attention alone, fused against materialised (bench/NOTES.md, targets on an H100: the fused
 * kernel at least 200 TFLOP/s at n >= 4096, and at least 3 times faster than the standard model's
 * score path).
 *
 * For fp16 and bf16, head width 64 and 12 heads (RoBERTa-base), n from 512 to 16384, a batch of
 * about 64k tokens (fewer where the standard path's scores would pass --gib): Q, K, V in one fused
 * (B, n, 3d) buffer of random values, as the models lay them out. Timed with CUDA events on the
 * backend's stream, median of --reps runs after 3 warm-ups:
 *   flash     the flash model's op (gpu/flash.cu), reading Q, K, V in place;
 *   standard  the standard model's attention without its projections: per head, the scores
 *             (B, h, n, n) = Q K^T / sqrt(d_h) (strided-batched products), their softmax in place,
 *             then P V into the token-major output, as attn/attention_common.c makes them.
 * TFLOP/s counts the two products, 4 B h n^2 d_h, for both. Then the flash model's backward
 * (flash_attention_backward from the forward's log-sum-exp, random dO): its ms, its TFLOP/s at
 * FlashAttention-2's count of 10 B h n^2 d_h (the kernels execute 14), and its time over the
 * forward's. Exit 77 without a CUDA device.
 *
 * usage: bench_attention [--gpu N] [--gib G] [--reps R] */
#include <initializer_list>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"

namespace {

struct Shape {
    int64_t batch, n, heads, hd;
};

/* The standard model's score path for one layer (attn/attention_common.c's calls). */
void standard_path(LbBackend *be, const Shape &s, char *qkv, char *scores, char *o)
{
    const int64_t d = s.heads * s.hd, ld = 3 * d, e = (int64_t)be->elem_bytes;
    for (int64_t j = 0; j < s.heads; j++) {
        LbBmm p = {0, 1, s.n, s.n, s.hd, 1.0f / sqrtf((float)s.hd),
                   qkv + j * s.hd * e, ld, s.n * ld,
                   qkv + (d + j * s.hd) * e, ld, s.n * ld,
                   scores + j * s.n * s.n * e, s.n, s.heads * s.n * s.n, s.batch};
        lb_bench_ok(be->ops->bmm(be, &p), "bmm (scores)");
    }
    lb_bench_ok(be->ops->softmax(be, scores, s.batch * s.heads * s.n, s.n, 1.0f), "softmax");
    for (int64_t j = 0; j < s.heads; j++) {
        LbBmm p = {0, 0, s.n, s.hd, s.n, 1.0f,
                   scores + j * s.n * s.n * e, s.n, s.heads * s.n * s.n,
                   qkv + (2 * d + j * s.hd) * e, ld, s.n * ld,
                   o + j * s.hd * e, d, s.n * d, s.batch};
        lb_bench_ok(be->ops->bmm(be, &p), "bmm (P V)");
    }
}

/* The flash model's backward of one layer's attention, median ms; NAN where its buffers do not fit. */
double backward_ms(LbBackend *be, const Shape &s, char *qkv, char *o, int reps)
{
    const int64_t d = s.heads * s.hd, e = (int64_t)be->elem_bytes;
    const float scale = 1.0f / sqrtf((float)s.hd);
    void *lse = NULL, *dout = NULL, *dqkv = NULL, *scratch = NULL;
    double ms = NAN;
    if (be->ops->mem_alloc(be, (size_t)(s.batch * s.heads * s.n) * 4u, &lse) == LB_OK &&
        be->ops->mem_alloc(be, (size_t)(s.batch * s.n * d * e), &dout) == LB_OK &&
        be->ops->mem_alloc(be, (size_t)(s.batch * s.n * 3 * d * e), &dqkv) == LB_OK &&
        be->ops->mem_alloc(be, lb_flash_backward_scratch_bytes(s.batch, s.n, s.heads, s.hd), &scratch) == LB_OK) {
        lb_bench_ok(be->ops->fill_uniform(be, dout, s.batch * s.n * d, 11, -1.0f, 1.0f), "fill (dO)");
        lb_bench_ok(be->ops->flash_attention_lse(be, qkv, qkv + d * e, qkv + 2 * d * e, 3 * d, o, (float *)lse,
                                                 s.batch, s.n, s.heads, s.hd, scale),
                    "flash_attention_lse");
        char *dq = (char *)dqkv;
        ms = lb_bench_median_ms(
            lb_cuda_backend_stream(be), 3, reps,
            [&] {
                lb_bench_ok(be->ops->flash_attention_backward(be, qkv, qkv + d * e, qkv + 2 * d * e, 3 * d, o,
                                                              (const float *)lse, dout, dq, dq + d * e, dq + 2 * d * e,
                                                              s.batch, s.n, s.heads, s.hd, scale, scratch),
                            "flash_attention_backward");
            },
            [] {});
    }
    for (void *p : {lse, dout, dqkv, scratch})
        if (p)
            be->ops->mem_free(be, p);
    return ms;
}

} // namespace

int main(int argc, char **argv)
{
    int gpu = 0, reps = 10;
    long long gib = 16;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpu") == 0)
            gpu = (int)lb_bench_int_flag(argc, argv, &i, "gpu", 0, 1023);
        else if (strcmp(argv[i], "--gib") == 0)
            gib = lb_bench_int_flag(argc, argv, &i, "gib", 1, 1024);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = (int)lb_bench_int_flag(argc, argv, &i, "reps", 1, 10000);
        else {
            fprintf(stderr, "bench_attention: unknown flag \"%s\" (flags: --gpu N, --gib G, --reps R)\n", argv[i]);
            return 2;
        }
    }
    static const LbDtype dtypes[] = {LB_DTYPE_FP16, LB_DTYPE_BF16};
    static const int64_t lengths[] = {512, 1024, 2048, 4096, 8192, 16384};
    printf("%-5s %6s %5s %10s %9s %10s %9s %8s %10s %9s %8s\n", "dtype", "n", "batch", "flash ms", "TFLOP/s",
           "std ms", "TFLOP/s", "speedup", "bwd ms", "TFLOP/s", "bwd/fwd");
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        LbBackend *be = lb_bench_open(gpu, dtypes[t]);
        cudaStream_t st = lb_cuda_backend_stream(be);
        if (t == 0) {
            LbDeviceInfo info;
            lb_bench_ok(be->ops->describe(be, &info), "describe");
            printf("# device: %s (cc %d.%d, %d SMs), SM clock %d MHz\n", info.name, info.cc_major, info.cc_minor,
                   info.sm_count, be->ops->sm_clock_mhz(be));
        }
        void *ws = NULL;
        lb_bench_ok(be->ops->mem_alloc(be, be->workspace_bytes, &ws), "mem_alloc (workspace)");
        lb_bench_ok(be->ops->set_workspace(be, ws, be->workspace_bytes), "set_workspace");
        for (size_t c = 0; c < sizeof lengths / sizeof lengths[0]; c++) {
            Shape s = {0, lengths[c], 12, 64};
            s.batch = (65536 + s.n - 1) / s.n;
            const double e = (double)be->elem_bytes;
            while (s.batch > 1 && (double)s.batch * s.heads * s.n * s.n * e > (double)gib * (1 << 30))
                s.batch /= 2;
            const int64_t d = s.heads * s.hd;
            void *qkv = NULL, *o = NULL, *scores = NULL;
            lb_bench_ok(be->ops->mem_alloc(be, (size_t)(s.batch * s.n * 3 * d) * be->elem_bytes, &qkv), "mem_alloc");
            lb_bench_ok(be->ops->mem_alloc(be, (size_t)(s.batch * s.n * d) * be->elem_bytes, &o), "mem_alloc");
            lb_bench_ok(be->ops->fill_uniform(be, qkv, s.batch * s.n * 3 * d, 7, -1.0f, 1.0f), "fill");
            char *q = (char *)qkv;
            const double flash_ms = lb_bench_median_ms(
                st, 3, reps,
                [&] {
                    lb_bench_ok(be->ops->flash_attention(be, q, q + d * be->elem_bytes, q + 2 * d * be->elem_bytes,
                                                         3 * d, o, s.batch, s.n, s.heads, s.hd,
                                                         1.0f / sqrtf((float)s.hd)),
                                "flash_attention");
                },
                [] {});
            double std_ms = NAN;
            if (be->ops->mem_alloc(be, (size_t)(s.batch * s.heads * s.n * s.n) * be->elem_bytes, &scores) == LB_OK) {
                std_ms = lb_bench_median_ms(
                    st, 3, reps, [&] { standard_path(be, s, q, (char *)scores, (char *)o); }, [] {});
                be->ops->mem_free(be, scores);
            }
            const double bwd_ms = backward_ms(be, s, q, (char *)o, reps);
            const double flops = 4.0 * (double)s.batch * s.heads * (double)s.n * (double)s.n * s.hd;
            printf("%-5s %6lld %5lld %10.4f %9.1f %10.4f %9.1f %7.2fx %10.4f %9.1f %7.2fx\n", lb_dtype_name(dtypes[t]),
                   (long long)s.n, (long long)s.batch, flash_ms, flops / (flash_ms * 1e-3) / 1e12, std_ms,
                   flops / (std_ms * 1e-3) / 1e12, std_ms / flash_ms, bwd_ms, 2.5 * flops / (bwd_ms * 1e-3) / 1e12,
                   bwd_ms / flash_ms);
            be->ops->mem_free(be, qkv);
            be->ops->mem_free(be, o);
        }
        be->ops->mem_free(be, ws);
        lb_backend_close(be);
    }
    return 0;
}
