/* Every CUDA kernel behind the ops table against its CPU reference (attn/cpu/cpu_ref.h), in all
 * three storage types: softmax (rows of 1 to 100000 elements, every kernel path, 16-byte aligned
 * and not), LayerNorm (with and without the residual, both kernels), embedding, split/merge
 * heads, bias + erf GELU, and the seeded fills (bit-exact). Inputs are fresh random values drawn
 * on the device and read back, so the reference sees exactly what the kernel saw; outputs are
 * poisoned with NaN first. Thresholds: lb_gpu_kernel_tol (tests/gpu/gpu_check.h). Exit 77 without
 * a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/cpu/cpu_ref.h"
#include "tests/gpu/gpu_check.h"

/* rows x cols softmax at `offset` elements past an aligned buffer (1 takes the scalar path). */
static void check_softmax(LbBackend *be, int64_t rows, int64_t cols, int64_t offset)
{
    const int64_t count = rows * cols;
    void *buf = lb_gpu_alloc(be, count);
    void *d_x = lb_gpu_at(be, buf, offset);
    float *ref = lb_test_alloc(count), *out = lb_test_alloc(count);
    /* Scores of the size attention produces before the 1/sqrt(hd) scale, every third row shifted
     * by 40 more: softmax does not see a shift of its own row, but a kernel that takes another
     * row's max underflows every exp2 to 0 and shows NaN. The stored values go back into ref. */
    lb_gpu_random(be, d_x, ref, count, -8.0f, 8.0f);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++)
            ref[r * cols + j] += 40.0f * (float)(r % 3);
    lb_gpu_ok(be->ops->upload(be, d_x, ref, count), "upload of shifted rows");
    lb_gpu_ok(be->ops->download(be, ref, d_x, count), "download of shifted rows");
    const float scale = 0.125f + 0.5f * (float)lb_test_randint(0, 3);
    lb_gpu_ok(be->ops->softmax(be, d_x, rows, cols, scale), "softmax");
    lb_gpu_ok(be->ops->download(be, out, d_x, count), "download");
    lb_softmax_cpu(ref, rows, cols, scale);
    char what[128];
    snprintf(what, sizeof what, "softmax %s %lld x %lld%s", lb_gpu_dtype(be), (long long)rows,
             (long long)cols, offset ? " (unaligned)" : "");
    lb_gpu_check_rel(what, out, ref, count, be->storage, lb_gpu_kernel_tol(be->storage));
    be->ops->mem_free(be, buf);
    free(ref);
    free(out);
}

static void check_layernorm(LbBackend *be, int64_t rows, int64_t d, int with_r, int64_t offset)
{
    const int64_t count = rows * d;
    void *bx = lb_gpu_alloc(be, count), *br = lb_gpu_alloc(be, count);
    void *d_g = lb_gpu_alloc(be, d), *d_b = lb_gpu_alloc(be, d);
    void *d_x = lb_gpu_at(be, bx, offset), *d_r = lb_gpu_at(be, br, offset);
    float *x = lb_test_alloc(count), *r = lb_test_alloc(count), *g = lb_test_alloc(d),
          *b = lb_test_alloc(d), *out = lb_test_alloc(count);
    /* An offset mean, so a kernel that forgets to subtract it shows. */
    lb_gpu_random(be, d_x, x, count, -1.0f, 3.0f);
    lb_gpu_random(be, d_r, r, count, -1.0f, 1.0f);
    lb_gpu_random(be, d_g, g, d, 0.5f, 1.5f);
    lb_gpu_random(be, d_b, b, d, -0.5f, 0.5f);
    lb_gpu_ok(be->ops->layernorm(be, d_x, with_r ? d_r : NULL, d_g, d_b, rows, d, 1e-5f), "layernorm");
    lb_gpu_ok(be->ops->download(be, out, d_x, count), "download");
    lb_layernorm_cpu(x, with_r ? r : NULL, g, b, rows, d, 1e-5f);
    char what[128];
    snprintf(what, sizeof what, "layernorm %s %lld x %lld%s%s", lb_gpu_dtype(be), (long long)rows,
             (long long)d, with_r ? " + residual" : "", offset ? " (unaligned)" : "");
    lb_gpu_check_rel(what, out, x, count, be->storage, lb_gpu_kernel_tol(be->storage));
    be->ops->mem_free(be, bx);
    be->ops->mem_free(be, br);
    be->ops->mem_free(be, d_g);
    be->ops->mem_free(be, d_b);
    free(x);
    free(r);
    free(g);
    free(b);
    free(out);
}

static void check_embed(LbBackend *be, int64_t batch, int64_t n, int64_t d, int32_t vocab)
{
    const int64_t rows = batch * n, count = rows * d;
    void *d_tok = lb_gpu_alloc(be, (int64_t)vocab * d), *d_pos = lb_gpu_alloc(be, n * d);
    void *d_x = lb_gpu_alloc(be, count);
    int32_t *d_ids = NULL, *ids = malloc((size_t)rows * sizeof *ids);
    lb_gpu_ok(be->ops->mem_alloc(be, (size_t)rows * sizeof *ids, (void **)&d_ids), "mem_alloc ids");
    float *tok = lb_test_alloc((int64_t)vocab * d), *pos = lb_test_alloc(n * d);
    float *ref = lb_test_alloc(count), *out = lb_test_alloc(count);
    lb_gpu_random(be, d_tok, tok, (int64_t)vocab * d, -1.0f, 1.0f);
    lb_gpu_random(be, d_pos, pos, n * d, -1.0f, 1.0f);
    lb_gpu_ok(be->ops->fill_tokens(be, d_ids, rows, lb_gpu_next_seed(), vocab), "fill_tokens");
    lb_gpu_ok(be->ops->copy_raw_to_host(be, ids, d_ids, (size_t)rows * sizeof *ids), "ids to host");
    lb_gpu_poison(be, d_x, count);
    lb_gpu_ok(be->ops->embed(be, d_ids, d_tok, d_pos, d_x, batch, n, d), "embed");
    lb_gpu_ok(be->ops->download(be, out, d_x, count), "download");
    lb_embed_cpu(ids, tok, pos, ref, batch, n, d);
    char what[128];
    snprintf(what, sizeof what, "embed %s B %lld n %lld d %lld", lb_gpu_dtype(be), (long long)batch,
             (long long)n, (long long)d);
    lb_gpu_check_rel(what, out, ref, count, be->storage, lb_gpu_kernel_tol(be->storage));
    be->ops->mem_free(be, d_tok);
    be->ops->mem_free(be, d_pos);
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_ids);
    free(ids);
    free(tok);
    free(pos);
    free(ref);
    free(out);
}

/* split one of Q, K, V (column block `which`) out of a fused (B n, 3 heads hd) buffer, then merge
 * it back; both pure copies, so bit-exact. */
static void check_heads(LbBackend *be, int64_t batch, int64_t n, int64_t heads, int64_t hd, int which)
{
    const int64_t d = heads * hd, ld = 3 * d, rows = batch * n;
    void *d_qkv = lb_gpu_alloc(be, rows * ld), *d_h = lb_gpu_alloc(be, rows * d), *d_m = lb_gpu_alloc(be, rows * d);
    float *qkv = lb_test_alloc(rows * ld), *ref_h = lb_test_alloc(rows * d), *out_h = lb_test_alloc(rows * d);
    float *ref_m = lb_test_alloc(rows * d), *out_m = lb_test_alloc(rows * d);
    lb_gpu_random(be, d_qkv, qkv, rows * ld, -1.0f, 1.0f);
    lb_gpu_poison(be, d_h, rows * d);
    lb_gpu_poison(be, d_m, rows * d);
    lb_gpu_ok(be->ops->split_heads(be, lb_gpu_at(be, d_qkv, which * d), ld, d_h, batch, n, heads, hd), "split_heads");
    lb_gpu_ok(be->ops->merge_heads(be, d_h, d_m, batch, n, heads, hd), "merge_heads");
    lb_gpu_ok(be->ops->download(be, out_h, d_h, rows * d), "download");
    lb_gpu_ok(be->ops->download(be, out_m, d_m, rows * d), "download");
    lb_split_heads_cpu(qkv + which * d, ld, ref_h, batch, n, heads, hd);
    lb_merge_heads_cpu(ref_h, ref_m, batch, n, heads, hd);
    char what[128];
    snprintf(what, sizeof what, "split_heads %s B %lld n %lld h %lld hd %lld", lb_gpu_dtype(be),
             (long long)batch, (long long)n, (long long)heads, (long long)hd);
    lb_check_same(what, out_h, ref_h, rows * d);
    snprintf(what, sizeof what, "merge_heads %s B %lld n %lld h %lld hd %lld", lb_gpu_dtype(be),
             (long long)batch, (long long)n, (long long)heads, (long long)hd);
    lb_check_same(what, out_m, ref_m, rows * d);
    be->ops->mem_free(be, d_qkv);
    be->ops->mem_free(be, d_h);
    be->ops->mem_free(be, d_m);
    free(qkv);
    free(ref_h);
    free(out_h);
    free(ref_m);
    free(out_m);
}

/* y = act(y + b) through the kernel linear runs after its products. */
static void check_bias_act(LbBackend *be, int64_t rows, int64_t cols, int with_bias, int gelu)
{
    const int64_t count = rows * cols;
    void *d_y = lb_gpu_alloc(be, count), *d_b = lb_gpu_alloc(be, cols);
    float *y = lb_test_alloc(count), *b = lb_test_alloc(cols), *out = lb_test_alloc(count);
    lb_gpu_random(be, d_y, y, count, -4.0f, 4.0f);
    lb_gpu_random(be, d_b, b, cols, -1.0f, 1.0f);
    lb_gpu_ok(lb_cuda_bias_act(lb_cuda_backend_stream(be), be->storage, d_y, with_bias ? d_b : NULL, rows,
                               cols, gelu),
              "bias_act");
    lb_gpu_ok(be->ops->download(be, out, d_y, count), "download");
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            float v = y[r * cols + c] + (with_bias ? b[c] : 0.0f);
            y[r * cols + c] = gelu ? lb_gelu_cpu(v) : v;
        }
    char what[128];
    snprintf(what, sizeof what, "bias_act %s %lld x %lld%s%s", lb_gpu_dtype(be), (long long)rows,
             (long long)cols, with_bias ? " bias" : "", gelu ? " gelu" : "");
    lb_gpu_check_rel(what, out, y, count, be->storage, lb_gpu_kernel_tol(be->storage));
    be->ops->mem_free(be, d_y);
    be->ops->mem_free(be, d_b);
    free(y);
    free(b);
    free(out);
}

/* fill_uniform must give lb_rng_range rounded to storage, bit for bit; the rounding of the CPU
 * values goes through upload (host round-to-nearest-even), the same rounding the kernel does. */
static void check_fills(LbBackend *be, int64_t count)
{
    void *d_x = lb_gpu_alloc(be, count), *d_ref = lb_gpu_alloc(be, count);
    float *ref = lb_test_alloc(count), *out = lb_test_alloc(count), *ref_rounded = lb_test_alloc(count);
    const uint64_t seed = lb_gpu_next_seed();
    lb_gpu_ok(be->ops->fill_uniform(be, d_x, count, seed, -0.3f, 0.7f), "fill_uniform");
    lb_gpu_ok(be->ops->download(be, out, d_x, count), "download");
    lb_fill_uniform_cpu(ref, count, seed, -0.3f, 0.7f);
    lb_gpu_ok(be->ops->upload(be, d_ref, ref, count), "upload");
    lb_gpu_ok(be->ops->download(be, ref_rounded, d_ref, count), "download");
    char what[128];
    snprintf(what, sizeof what, "fill_uniform %s, %lld elements", lb_gpu_dtype(be), (long long)count);
    lb_check_same(what, out, ref_rounded, count);

    int32_t *d_ids = NULL, *ids = malloc((size_t)count * sizeof *ids), *ref_ids = malloc((size_t)count * sizeof *ids);
    lb_gpu_ok(be->ops->mem_alloc(be, (size_t)count * sizeof *ids, (void **)&d_ids), "mem_alloc ids");
    const int32_t vocab = 50265;
    lb_gpu_ok(be->ops->fill_tokens(be, d_ids, count, seed, vocab), "fill_tokens");
    lb_gpu_ok(be->ops->copy_raw_to_host(be, ids, d_ids, (size_t)count * sizeof *ids), "ids to host");
    lb_fill_tokens_cpu(ref_ids, count, seed, vocab);
    lb_check(memcmp(ids, ref_ids, (size_t)count * sizeof *ids) == 0, "fill_tokens: ids differ from lb_fill_tokens_cpu");
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_ref);
    be->ops->mem_free(be, d_ids);
    free(ref);
    free(out);
    free(ref_rounded);
    free(ids);
    free(ref_ids);
}

static void run_dtype(LbDtype dtype)
{
    LbBackend *be = lb_gpu_open_or_skip(dtype, 0);
    printf("%s:\n", lb_dtype_name(dtype));
    /* Softmax: each length picks a path (group kernel to 128 packs, block kernel to 8 packs per
     * thread x 1024 threads, online kernel past that; scalar variants when unaligned). */
    static const int64_t cols[] = {1, 3, 8, 17, 64, 200, 256, 1000, 1024, 1031, 2048, 4096,
                                   8192, 9000, 16384, 32768, 65536, 100000};
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        int64_t rows = ((int64_t)1 << 22) / cols[i];
        rows = rows > 300 ? 300 : rows < 3 ? 3 : rows;
        if (lb_gpu_quick() && rows > 4)
            rows = 4;
        check_softmax(be, rows, cols[i], 0);
        if (cols[i] % 8 == 0 && cols[i] <= 16384)
            check_softmax(be, rows / 2 + 1, cols[i], 1);
    }
    /* LayerNorm: RoBERTa's 768, odd widths (scalar path), and widths past the register kernel. */
    static const int64_t dims[] = {16, 64, 100, 768, 1024, 3000, 20000, 40000};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        const int64_t rows = lb_gpu_quick() ? 3 : dims[i] >= 20000 ? 7 : 129;
        check_layernorm(be, rows, dims[i], 1, 0);
        check_layernorm(be, rows, dims[i], 0, 0);
    }
    check_layernorm(be, 33, 768, 1, 1);
    check_embed(be, 3, 50, 64, 1000);
    check_embed(be, 2, 37, 100, 1000);
    check_embed(be, 2, 16, 768, 50265);
    check_heads(be, 2, 37, 4, 16, 1);
    check_heads(be, 3, 20, 12, 64, 2);
    check_heads(be, 2, 9, 3, 5, 0);
    for (int bias = 0; bias < 2; bias++)
        for (int gelu = 0; gelu < 2; gelu++) {
            if (!bias && !gelu)
                continue;
            check_bias_act(be, 33, 3072, bias, gelu);
            check_bias_act(be, 17, 77, bias, gelu);
        }
    check_fills(be, lb_gpu_quick() ? 10007 : 1000003);
    lb_gpu_ok(be->ops->sync(be), "sync");
    lb_backend_close(be);
}

int main(void)
{
    lb_test_init("test_gpu_kernels");
    run_dtype(LB_DTYPE_FP32);
    run_dtype(LB_DTYPE_FP16);
    run_dtype(LB_DTYPE_BF16);
    /* Again with 3 blocks per launch: every block walks many rows (grid-stride loops, shared
     * memory reused from row to row). */
    printf("grid capped at 3 blocks:\n");
    lb_cuda_set_grid_cap(3);
    run_dtype(LB_DTYPE_FP16);
    run_dtype(LB_DTYPE_FP32);
    lb_cuda_set_grid_cap(0);
    return lb_test_finish("test_gpu_kernels");
}
