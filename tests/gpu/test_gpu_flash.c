/* The fused attention kernels (gpu/flash.cu) against the CPU reference lb_flash_attention_cpu
 * (attn/cpu/cpu_ref.h, double), in all three storage types: lengths of one row, under one tile,
 * exactly one tile, and several tiles with a short last one (1, 15, 64, 200, 1000), head widths
 * 16 to 128, two sequences of three heads read in place from one fused QKV buffer as the model
 * lays it out, and again with the grid capped so each block walks several tiles. Inputs are fresh
 * random values drawn on the device and read back; the keys grow with their position, so a
 * row's maximum score keeps rising from tile to tile (a kernel that does not rescale its running
 * output is far off); the output is poisoned with NaN first, so a row left unwritten shows.
 * Exit 77 without a CUDA device (never on the emulator). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn/cpu/cpu_ref.h"
#include "tests/gpu/gpu_check.h"

/* Two roundings to the storage type (P before P V, then the output) and the softmax's sums. */
static double flash_tol(LbDtype t) { return t == LB_DTYPE_FP32 ? 2e-5 : 2.0 * lb_gpu_kernel_tol(t); }

static void check_flash(LbBackend *be, int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    const int64_t width = heads * hd, ld = 3 * width, qkv_count = batch * n * ld, o_count = batch * n * width;
    void *d_qkv = lb_gpu_alloc(be, qkv_count), *d_o = lb_gpu_alloc(be, o_count);
    float *qkv = lb_test_alloc(qkv_count), *out = lb_test_alloc(o_count), *ref = lb_test_alloc(o_count);
    lb_gpu_random(be, d_qkv, qkv, qkv_count, -2.0f, 2.0f);
    /* keys grow with their position: scores of later tiles are larger */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++)
            for (int64_t e = 0; e < width; e++)
                qkv[(b * n + t) * ld + width + e] *= 0.5f + 2.0f * (float)t / (float)n;
    lb_gpu_ok(be->ops->upload(be, d_qkv, qkv, qkv_count), "upload of the grown keys");
    lb_gpu_ok(be->ops->download(be, qkv, d_qkv, qkv_count), "download of the grown keys");
    lb_gpu_poison(be, d_o, o_count);
    const float scale = 1.0f / sqrtf((float)hd);
    lb_gpu_ok(be->ops->flash_attention(be, d_qkv, lb_gpu_at(be, d_qkv, width), lb_gpu_at(be, d_qkv, 2 * width), ld,
                                       d_o, batch, n, heads, hd, scale),
              "flash_attention");
    lb_gpu_ok(be->ops->download(be, out, d_o, o_count), "download");
    lb_gpu_ok(lb_flash_attention_cpu(qkv, qkv + width, qkv + 2 * width, ld, ref, batch, n, heads, hd, scale),
              "lb_flash_attention_cpu");
    char what[128];
    snprintf(what, sizeof what, "flash %s B %lld n %lld h %lld hd %lld", lb_gpu_dtype(be), (long long)batch,
             (long long)n, (long long)heads, (long long)hd);
    lb_gpu_check_rel(what, out, ref, o_count, be->storage, flash_tol(be->storage));
    be->ops->mem_free(be, d_qkv);
    be->ops->mem_free(be, d_o);
    free(qkv);
    free(out);
    free(ref);
}

static void run_dtype(LbDtype dtype, int capped)
{
    LbBackend *be = lb_gpu_open_or_skip(dtype, 0);
    printf("%s%s:\n", lb_dtype_name(dtype), capped ? ", grid capped at 3 blocks" : "");
    static const int64_t ns[] = {1, 15, 64, 200, 1000};
    static const int64_t hds[] = {32, 64, 128};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof hds / sizeof hds[0]; j++) {
            /* the emulator takes n = 1000 at RoBERTa's head width only: minutes otherwise */
            if (ns[i] > 200 && hds[j] != 64 && (capped || getenv("LB_TEST_EMULATED") || lb_gpu_quick()))
                continue;
            if (capped && ns[i] != 200)
                continue;
            check_flash(be, 2, ns[i], 3, hds[j]);
        }
    if (!capped) {
        /* the other widths the kernels take, one row past a tile */
        for (int64_t hd = 16; hd <= 128; hd += 32)
            check_flash(be, 1, 65, 2, hd);
        /* a width they do not take is refused, not computed */
        void *d = lb_gpu_alloc(be, 3 * 24 * 4);
        const int rc = be->ops->flash_attention(be, d, d, d, 3 * 24, lb_gpu_at(be, d, 0), 1, 4, 1, 24, 1.0f);
        lb_check(rc == LB_ERR_INVALID, "a head width of 24 is refused (LB_ERR_INVALID), got %d", rc);
        be->ops->mem_free(be, d);
    }
    lb_gpu_ok(be->ops->sync(be), "sync");
    lb_backend_close(be);
}

int main(void)
{
    lb_test_init("test_gpu_flash");
    run_dtype(LB_DTYPE_FP16, 0);
    run_dtype(LB_DTYPE_BF16, 0);
    run_dtype(LB_DTYPE_FP32, 0);
    lb_cuda_set_grid_cap(3);
    run_dtype(LB_DTYPE_FP16, 1);
    run_dtype(LB_DTYPE_FP32, 1);
    lb_cuda_set_grid_cap(0);
    return lb_test_finish("test_gpu_flash");
}
