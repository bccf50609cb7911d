/* The CUDA backend's plumbing: opening (and the error for a device that is not there),
 * describe, memory (an allocation that cannot fit is LB_ERR_NOMEM and leaves the device usable:
 * the batch search depends on it), upload/download round trips in every storage type, the
 * workspace, CUDA-event timing, and the argument checks every op does before touching the
 * device. Exit 77 without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu/gpu_check.h"

static void check_describe(LbBackend *be)
{
    LbDeviceInfo d;
    lb_gpu_ok(be->ops->describe(be, &d), "describe");
    printf("  device %d: %s, cc %d.%d, %d SMs, %lld of %lld bytes free, SM %d/%d MHz, mem %d MHz, "
           "driver %d, runtime %d, cuBLAS %d\n",
           d.device_index, d.name, d.cc_major, d.cc_minor, d.sm_count, (long long)d.free_bytes,
           (long long)d.total_bytes, d.sm_clock_mhz, d.sm_clock_max_mhz, d.mem_clock_mhz,
           d.driver_version, d.runtime_version, d.cublas_version);
    lb_check(d.name[0] != '\0', "describe: empty device name");
    lb_check(d.cc_major >= 5, "describe: compute capability %d.%d", d.cc_major, d.cc_minor);
    lb_check(d.sm_count > 0, "describe: %d SMs", d.sm_count);
    lb_check(d.total_bytes > 0 && d.free_bytes > 0 && d.free_bytes <= d.total_bytes,
             "describe: %lld of %lld bytes free", (long long)d.free_bytes, (long long)d.total_bytes);
    lb_check(d.driver_version > 0 && d.runtime_version > 0 && d.cublas_version > 0,
             "describe: versions %d %d %d", d.driver_version, d.runtime_version, d.cublas_version);
    /* Clocks: unknown (-1, no NVML) or plausible. */
    lb_check(d.sm_clock_mhz == -1 || (d.sm_clock_mhz > 50 && d.sm_clock_mhz < 10000),
             "describe: SM clock %d MHz", d.sm_clock_mhz);
    lb_check(d.sm_clock_max_mhz == -1 || (d.sm_clock_max_mhz > 100 && d.sm_clock_max_mhz < 10000),
             "describe: max SM clock %d MHz", d.sm_clock_max_mhz);
    const int now = be->ops->sm_clock_mhz(be);
    lb_check(now == -1 || (now > 50 && now < 10000), "sm_clock_mhz: %d", now);
}

/* Far more than the device has: NOMEM, recoverable; the device still works afterwards. */
static void check_nomem(LbBackend *be)
{
    size_t free_b = 0, total_b = 0;
    lb_gpu_ok(be->ops->mem_info(be, &free_b, &total_b), "mem_info");
    void *p = NULL;
    int rc = be->ops->mem_alloc(be, total_b * 2, &p);
    lb_check(rc == LB_ERR_NOMEM && p == NULL, "mem_alloc of twice the device: got %s, want NOMEM",
             lb_status_name(rc));
    printf("  oversized allocation: %s\n", lb_error_message());
    lb_error_clear();
    const int64_t count = 1000;
    void *d = lb_gpu_alloc(be, count);
    float *h = lb_test_alloc(count);
    lb_gpu_random(be, d, h, count, 0.0f, 1.0f);
    lb_gpu_ok(be->ops->sync(be), "sync after NOMEM");
    int fine = 1;
    for (int64_t i = 0; i < count; i++)
        fine &= h[i] >= 0.0f && h[i] <= 1.0f;
    lb_check(fine, "device usable after NOMEM");
    be->ops->mem_free(be, d);
    free(h);
}

/* Values exact in every storage type (multiples of 1/64 under 4) survive the round trip. */
static void check_roundtrip(LbBackend *be)
{
    const int64_t count = 5000003; /* past one staging chunk (2^22 elements) */
    float *src = lb_test_alloc(count), *back = lb_test_alloc(count);
    for (int64_t i = 0; i < count; i++)
        src[i] = (float)((i * 7919) % 512 - 256) / 64.0f;
    void *d = lb_gpu_alloc(be, count);
    lb_gpu_ok(be->ops->upload(be, d, src, count), "upload");
    lb_gpu_ok(be->ops->download(be, back, d, count), "download");
    char what[64];
    snprintf(what, sizeof what, "upload/download %s", lb_gpu_dtype(be));
    lb_check_same(what, back, src, count);
    /* The raw bytes of the first element, in the storage type. */
    unsigned char raw[4] = {0};
    lb_gpu_ok(be->ops->copy_raw_to_host(be, raw, d, be->elem_bytes), "copy_raw_to_host");
    lb_check(be->elem_bytes == (be->storage == LB_DTYPE_FP32 ? 4u : 2u), "elem_bytes %zu", be->elem_bytes);
    be->ops->mem_free(be, d);
    free(src);
    free(back);
}

static void check_timer(LbBackend *be)
{
    double ms = -1.0;
    int rc = be->ops->timer_stop(be, &ms);
    lb_check(rc == LB_ERR_INVALID, "timer_stop before timer_start: got %s", lb_status_name(rc));
    lb_error_clear();
    const int64_t count = (int64_t)1 << 26;
    void *d = lb_gpu_alloc(be, count);
    struct timespec t0, t1;
    lb_gpu_ok(be->ops->sync(be), "sync");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lb_gpu_ok(be->ops->timer_start(be), "timer_start");
    lb_gpu_ok(be->ops->fill_uniform(be, d, count, 1, 0.0f, 1.0f), "fill_uniform");
    lb_gpu_ok(be->ops->timer_stop(be, &ms), "timer_stop");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double host_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    printf("  fill of %lld elements: %.3f ms (host clock around it: %.3f ms)\n", (long long)count, ms, host_ms);
    /* Milliseconds, inside the host's interval and not a five-hundredth of it: a unit slip (seconds
     * or microseconds, a factor of 1000) lands outside, and no fixed bound fails a slow machine (an
     * instrumented emulated build took 18.7 s) or a fast one. */
    lb_check(ms > host_ms / 500 && ms <= host_ms * 1.01 + 0.5, "timer: %.3f ms, host clock around it %.3f ms", ms,
             host_ms);
    be->ops->mem_free(be, d);
}

/* Nonsense is refused before anything reaches the device. */
static void check_arguments(LbBackend *be)
{
    void *d = lb_gpu_alloc(be, 1024);
    int rc;
#define LB_EXPECT_INVALID(call, what)                                                         \
    rc = (call);                                                                              \
    lb_check(rc == LB_ERR_INVALID, "%s: got %s, want INVALID", what, lb_status_name(rc));  \
    lb_error_clear()
    LB_EXPECT_INVALID(be->ops->softmax(be, d, -1, 4, 1.0f), "softmax with negative rows");
    LB_EXPECT_INVALID(be->ops->softmax(be, NULL, 4, 4, 1.0f), "softmax of NULL");
    LB_EXPECT_INVALID(be->ops->layernorm(be, d, NULL, NULL, d, 4, 4, 1e-5f), "layernorm without gamma");
    LB_EXPECT_INVALID(be->ops->linear(be, d, d, NULL, NULL, 4, 4, 4, 0), "linear into NULL");
    LB_EXPECT_INVALID(be->ops->split_heads(be, d, 3, d, 1, 4, 2, 2), "split_heads with ld_src < heads * hd");
    LB_EXPECT_INVALID(be->ops->set_workspace(be, (char *)d + 16, 256), "misaligned workspace");
    const LbBmm q = {.m = 4, .n = 4, .kdim = 4, .alpha = 1.0f, .a = d, .lda = 4, .stride_a = 16, .b = d, .ldb = 4,
                     .stride_b = 16, .c = d, .ldc = 3, .stride_c = 16, .batch = 2};
    LB_EXPECT_INVALID(be->ops->bmm(be, &q), "bmm with ldc < n");
#undef LB_EXPECT_INVALID
    be->ops->mem_free(be, d);
}

int main(void)
{
    lb_test_init("test_gpu_backend");
    LbBackend *be = lb_gpu_open_or_skip(LB_DTYPE_FP16, 0);
    LbBackend *none = NULL;
    int rc = lb_cuda_backend_open(100000, LB_DTYPE_FP16, 0, &none);
    /* an index the machine does not have is the user's input, named as --gpu with its range */
    lb_check(rc == LB_ERR_INVALID && none == NULL && strstr(lb_error_message(), "for --gpu") &&
                 strstr(lb_error_message(), "0 to "),
             "opening device 100000: got %s (%s)", lb_status_name(rc), lb_error_message());
    printf("  device 100000: %s\n", lb_error_message());
    lb_error_clear();
    lb_check(lb_cuda_backend_stream(be) != NULL, "the backend has a stream");
    lb_check(be->workspace_bytes == ((size_t)32 << 20) && be->alignment == 256,
             "workspace %zu bytes, alignment %zu", be->workspace_bytes, be->alignment);
    lb_check(strcmp(be->ops->name, "cuda") == 0, "ops name %s", be->ops->name);
    check_describe(be);
    check_nomem(be);
    check_timer(be);
    check_arguments(be);
    check_roundtrip(be);
    lb_backend_close(be);
    static const LbDtype others[] = {LB_DTYPE_BF16, LB_DTYPE_FP32};
    for (int i = 0; i < 2; i++) {
        be = lb_gpu_open_or_skip(others[i], 0);
        check_roundtrip(be);
        lb_backend_close(be);
    }
    return lb_test_finish("test_gpu_backend");
}
