/* The harness of the GPU tests: the CUDA backend opened or the test skipped (exit 77), device
 * buffers, random inputs drawn on the device and read back (the reference sees the values the
 * kernel saw, rounded to the storage type), NaN poison. */
#ifndef LB_TESTS_GPU_CHECK_H
#define LB_TESTS_GPU_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "attn/check.h"
#include "attn/ops.h"
#include "attn/rng.h"
#include "attn/base/status.h"
#include "gpu/kernels.h"
#include "tests/lib/check.h"

#define LB_TEST_SKIP 77

/* The CUDA backend on device 0 (LB_TEST_GPU: another), or exit 77 without one; any other failure
 * to open fails the test. */
static inline LbBackend *lb_gpu_open_or_skip(LbDtype dtype, int tf32)
{
    const char *env = getenv("LB_TEST_GPU");
    int index = env && *env ? atoi(env) : 0;
    LbBackend *be = NULL;
    int rc = lb_cuda_backend_open(index, dtype, tf32, &be);
    if (rc == LB_ERR_NODEVICE) {
        printf("SKIP: %s\n", lb_error_message());
        exit(LB_TEST_SKIP);
    }
    if (rc != LB_OK) {
        printf("FAIL: opening the CUDA backend: %s\n", lb_error_where());
        exit(1);
    }
    return be;
}

/* Exit with a message when an op fails: later checks would only repeat it. */
static inline void lb_gpu_ok(int rc, const char *what)
{
    if (rc != LB_OK) {
        printf("FAIL: %s: %s (%s)\n", what, lb_error_where(), lb_status_name(rc));
        exit(1);
    }
}

/* In the AddressSanitizer build of the emulated GPU (LB_TEST_POISON_SLACK) the slack around the
 * tensor a test uses is poisoned, so an access one element past it is reported, not lost in it. */
#ifdef LB_TEST_POISON_SLACK
#include <sanitizer/asan_interface.h>
static struct {
    char *p;
    int64_t count;
} lb_gpu_slack[1024];
static int lb_gpu_slack_next;

/* Poison all of p's slack but the `count` elements from `first` on. */
static inline void lb_gpu_poison_slack(LbBackend *be, char *p, int64_t count, int64_t first)
{
    const size_t eb = be->elem_bytes;
    ASAN_UNPOISON_MEMORY_REGION(p, (size_t)(count + 16) * eb);
    ASAN_POISON_MEMORY_REGION(p, (size_t)first * eb);
    ASAN_POISON_MEMORY_REGION(p + (size_t)(first + count) * eb, (size_t)(16 - first) * eb);
}
#endif

/* count elements of the storage type, plus 16 of slack so a test can offset the pointer off the
 * kernels' 16-byte path. */
static inline void *lb_gpu_alloc(LbBackend *be, int64_t count)
{
    void *p = NULL;
    lb_gpu_ok(be->ops->mem_alloc(be, (size_t)(count + 16) * be->elem_bytes, &p), "mem_alloc");
#ifdef LB_TEST_POISON_SLACK
    const int i = lb_gpu_slack_next++ % 1024;
    lb_gpu_slack[i].p = (char *)p;
    lb_gpu_slack[i].count = count;
    lb_gpu_poison_slack(be, (char *)p, count, 0);
#endif
    return p;
}

/* p advanced by `elems` storage elements (at most 16). */
static inline void *lb_gpu_at(LbBackend *be, void *p, int64_t elems)
{
#ifdef LB_TEST_POISON_SLACK
    for (int i = 0; i < 1024; i++)
        if (lb_gpu_slack[i].p == (char *)p && elems <= 16)
            lb_gpu_poison_slack(be, (char *)p, lb_gpu_slack[i].count, elems);
#endif
    return (char *)p + elems * (int64_t)be->elem_bytes;
}

/* A fresh stream of random numbers for each call (the seed printed by lb_test_init replays). */
static inline uint64_t lb_gpu_next_seed(void)
{
    return lb_test_seed * 1000003u + 7919u * ++lb_test_stream;
}

/* d_x (count) uniform in [lo, hi] (attn/rng.h) drawn on the device; the stored values into host (count). */
static inline void lb_gpu_random(LbBackend *be, void *d_x, float *host, int64_t count, float lo, float hi)
{
    lb_gpu_ok(be->ops->fill_uniform(be, d_x, count, lb_gpu_next_seed(), lo, hi), "fill_uniform");
    lb_gpu_ok(be->ops->download(be, host, d_x, count), "download of a random input");
}

/* NaN (all bits set, in every dtype) in every element of d_x (count). */
static inline void lb_gpu_poison(LbBackend *be, void *d_x, int64_t count)
{
    cudaError_t e = cudaMemsetAsync(d_x, 0xff, (size_t)count * be->elem_bytes, lb_cuda_backend_stream(be));
    lb_check(e == cudaSuccess, "poison: %s", cudaGetErrorString(e));
}

/* LB_TEST_QUICK=1: fewer rows and shapes, every code path still taken, for the compute-sanitizer
 * runs (bench/run_device.sh). */
static inline int lb_gpu_quick(void)
{
    const char *env = getenv("LB_TEST_QUICK");
    return env && *env && *env != '0';
}

static inline const char *lb_gpu_dtype(const LbBackend *be) { return lb_dtype_name(be->storage); }

#endif
