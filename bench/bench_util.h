/* Shared by the benchmarks of bench/: flag parsing (strtol with an end-pointer check, the house
 * message format), CUDA-event timing of a callable on the backend's stream (warm-up, then the
 * median of repeated runs), and the exit path for a failed call. CUDA C++ only (the .cu files of bench/). */
#ifndef LB_BENCH_UTIL_H
#define LB_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "attn/ops.h"
#include "attn/base/status.h"
#include "gpu/kernels.h"

/* A failed call ends the benchmark with the recorded message (benchmarks have no partial
 * results worth keeping). */
static inline void lb_bench_ok(int rc, const char *what)
{
    if (rc != LB_OK) {
        fprintf(stderr, "bench: %s: %s\n", what, lb_error_where());
        exit(1);
    }
}

static inline void lb_bench_cuda(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "bench: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

/* "--name value" at argv[*i]: the integer in [lo, hi], or exit 2 with the house message. */
static inline long long lb_bench_int_flag(int argc, char **argv, int *i, const char *name, long long lo,
                                          long long hi)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "bench: flag --%s needs a value\n", name);
        exit(2);
    }
    const char *s = argv[++*i];
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "bench: invalid argument \"%s\" for --%s: should be an integer from %lld to %lld\n", s,
                name, lo, hi);
        exit(2);
    }
    return v;
}

static inline int lb_bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of `reps` timings (ms) of run(ctx), each between two events on `stream` after
 * `warmup` untimed runs; prepare(ctx) (may be NULL) runs untimed before each run, e.g. to
 * refill an in-place op's input with fresh random data. */
template <typename Run, typename Prep>
static double lb_bench_median_ms(cudaStream_t stream, int warmup, int reps, Run run, Prep prepare)
{
    cudaEvent_t t0, t1;
    lb_bench_cuda(cudaEventCreate(&t0), "cudaEventCreate");
    lb_bench_cuda(cudaEventCreate(&t1), "cudaEventCreate");
    for (int i = 0; i < warmup; i++) {
        prepare();
        run();
    }
    double *ms = (double *)malloc((size_t)reps * sizeof *ms);
    if (!ms) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    for (int i = 0; i < reps; i++) {
        prepare();
        lb_bench_cuda(cudaEventRecord(t0, stream), "cudaEventRecord");
        run();
        lb_bench_cuda(cudaEventRecord(t1, stream), "cudaEventRecord");
        lb_bench_cuda(cudaEventSynchronize(t1), "cudaEventSynchronize");
        float f = 0.0f;
        lb_bench_cuda(cudaEventElapsedTime(&f, t0, t1), "cudaEventElapsedTime");
        ms[i] = f;
    }
    qsort(ms, (size_t)reps, sizeof *ms, lb_bench_cmp_double);
    const double med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    free(ms);
    lb_bench_cuda(cudaEventDestroy(t0), "cudaEventDestroy");
    lb_bench_cuda(cudaEventDestroy(t1), "cudaEventDestroy");
    return med;
}

/* The CUDA backend on device `gpu`; exit 77 (nothing to measure) without one. */
static inline LbBackend *lb_bench_open(int gpu, LbDtype dtype)
{
    LbBackend *be = NULL;
    int rc = lb_cuda_backend_open(gpu, dtype, 0, &be);
    if (rc == LB_ERR_NODEVICE) {
        fprintf(stderr, "bench: %s\n", lb_error_message());
        exit(77);
    }
    lb_bench_ok(rc, "opening the CUDA backend");
    return be;
}

#endif
