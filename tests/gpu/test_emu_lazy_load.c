/* Kernels loaded on first use (CUDA 12.2 and later; LB_EMU_MODULE_BYTES on the emulated GPU): with
 * the arena holding nearly all device memory (`--headroom 0`) the load fails, and that must be out
 * of memory (LB_ERR_NOMEM), not a device error: a launch, and flash's cudaFuncSetAttribute, fail
 * with it and run once memory is free; a cell with no memory to spare steps its batch down until
 * the kernels fit, where a device error would end the sweep. Suite gpu-emu. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn/measure/measure.h"
#include "attn/plan.h"
#include "tests/gpu/gpu_check.h"
#include "tests/lib/model.h"

#define MODULE_BYTES 4096 /* LB_EMU_MODULE_BYTES: each kernel's code */

/* Everything the device has free but `keep` bytes, in one block (NULL when that is none). */
static void *ballast(LbBackend *be, size_t keep)
{
    size_t free_b = 0, total_b = 0;
    lb_gpu_ok(be->ops->mem_info(be, &free_b, &total_b), "mem_info");
    void *p = NULL;
    if (free_b > keep)
        lb_gpu_ok(be->ops->mem_alloc(be, free_b - keep, &p), "ballast");
    return p;
}

static void check_ops(void)
{
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    const int64_t count = 1000, n = 4, hd = 128, ld = 3 * hd;
    void *d_x = lb_gpu_alloc(be, count), *d_qkv = lb_gpu_alloc(be, n * ld), *d_o = lb_gpu_alloc(be, n * hd);
    lb_gpu_ok(be->ops->sync(be), "sync");

    void *full = ballast(be, MODULE_BYTES / 2);
    int rc = be->ops->fill_uniform(be, d_x, count, 7, -1.0f, 1.0f);
    lb_check(rc == LB_ERR_NOMEM, "first launch with no room for its code: %s, want NOMEM (%s)", lb_status_name(rc),
             lb_error_message());
    /* fp16 flash at hd 128 opts into 85 KiB of shared memory first, which loads the kernel too */
    rc = be->ops->flash_attention(be, d_qkv, lb_gpu_at(be, d_qkv, hd), lb_gpu_at(be, d_qkv, 2 * hd), ld, d_o, 1, n, 1,
                                  hd, 0.125f);
    lb_check(rc == LB_ERR_NOMEM, "flash's opt-in with no room for its code: %s, want NOMEM (%s)", lb_status_name(rc),
             lb_error_message());
    lb_error_clear();
    be->ops->mem_free(be, full);

    /* not sticky: with the memory back, the same calls run */
    lb_gpu_ok(be->ops->fill_uniform(be, d_x, count, 7, -1.0f, 1.0f), "fill_uniform once memory is free");
    float *h = lb_test_alloc(count);
    lb_gpu_ok(be->ops->download(be, h, d_x, count), "download");
    int in_range = 1;
    for (int64_t i = 0; i < count; i++)
        in_range &= h[i] >= -1.0f && h[i] <= 1.0f;
    lb_check(in_range, "fill_uniform wrote its values after the failed first launch");
    lb_gpu_ok(be->ops->fill_uniform(be, d_qkv, n * ld, 8, -1.0f, 1.0f), "fill of Q, K, V");
    lb_gpu_ok(be->ops->flash_attention(be, d_qkv, lb_gpu_at(be, d_qkv, hd), lb_gpu_at(be, d_qkv, 2 * hd), ld, d_o, 1,
                                       n, 1, hd, 0.125f),
              "flash once memory is free");
    lb_gpu_ok(be->ops->sync(be), "sync");
    free(h);
    be->ops->mem_free(be, d_x);
    be->ops->mem_free(be, d_qkv);
    be->ops->mem_free(be, d_o);
    lb_backend_close(be);
}

/* bf16: none of its kernels has run in this process yet. */
static void check_cell(void)
{
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_BF16, 0);
    LbModelConfig cfg = lb_test_model(32, 8);
    cfg.dtype = LB_DTYPE_BF16;
    const int64_t batch = 32;
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    lb_gpu_ok(lb_plan_compute(&cfg, &pp, batch, &plan), "plan");
    /* the budget `--headroom 0` gives: every free byte, which the plan of `batch` nearly fills */
    void *full = ballast(be, plan.total + MODULE_BYTES / 2);
    size_t free_b = 0, total_b = 0;
    lb_gpu_ok(be->ops->mem_info(be, &free_b, &total_b), "mem_info");
    LbTimingOptions opt = lb_timing_defaults();
    opt.max_batch = batch;
    opt.max_passes = opt.min_passes;
    LbCellResult r;
    const int rc = lb_measure_cell(be, &cfg, free_b, &opt, 1, NULL, &r);
    printf("  cell with no memory to spare: %s, status %d, batch %lld (planned %lld)\n", lb_status_name(rc),
           (int)r.status, (long long)r.batch, (long long)batch);
    if (lb_check(rc == LB_OK && r.status == LB_CELL_OK, "the cell stepped down instead of failing: %s (%s)",
                 lb_status_name(rc), r.error))
        lb_check(r.batch < batch, "batch %lld, below %lld to make room", (long long)r.batch, (long long)batch);
    be->ops->mem_free(be, full);
    lb_backend_close(be);
}

int main(void)
{
    lb_test_init("test_emu_lazy_load");
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%d", MODULE_BYTES);
    setenv("LB_EMU_MODULE_BYTES", bytes, 1);
    check_ops();
    check_cell();
    return lb_test_finish("test_emu_lazy_load");
}
