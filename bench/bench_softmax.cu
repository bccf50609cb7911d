/* Softmax kernel bandwidth against a device-to-device copy (bench/NOTES.md, target: at least
 * 80% of the copy at rows of 8192 elements and more).
 *
 * For each storage type and row length: a tensor of about --mib MiB (default 1024, far past L2),
 * refilled with fresh random scores before every timed run (untimed), softmax timed with CUDA
 * events on the backend's stream, median of --reps runs after 3 warm-ups. Bandwidth counts the
 * bytes the op must move: each element read once and written once (2 x bytes), as for the copy
 * (cudaMemcpyAsync device to device of the same bytes, read + written). Prints a table; the
 * last column is the ratio to the copy. Exit 77 without a CUDA device.
 *
 * usage: bench_softmax [--gpu N] [--mib M] [--reps R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"

int main(int argc, char **argv)
{
    int gpu = 0, reps = 20;
    long long mib = 1024;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpu") == 0)
            gpu = (int)lb_bench_int_flag(argc, argv, &i, "gpu", 0, 1023);
        else if (strcmp(argv[i], "--mib") == 0)
            mib = lb_bench_int_flag(argc, argv, &i, "mib", 16, 65536);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = (int)lb_bench_int_flag(argc, argv, &i, "reps", 1, 10000);
        else {
            fprintf(stderr, "bench_softmax: unknown flag \"%s\" (flags: --gpu N, --mib M, --reps R)\n", argv[i]);
            return 2;
        }
    }
    const size_t bytes = (size_t)mib << 20;
    static const LbDtype dtypes[] = {LB_DTYPE_FP16, LB_DTYPE_BF16, LB_DTYPE_FP32};
    static const long long lengths[] = {128, 512, 2048, 8192, 16384, 32768, 65536, 131072};

    /* The copy: the bandwidth ceiling every row is compared with. */
    LbBackend *be = lb_bench_open(gpu, LB_DTYPE_FP16);
    cudaStream_t st = lb_cuda_backend_stream(be);
    void *src = NULL, *dst = NULL;
    lb_bench_ok(be->ops->mem_alloc(be, bytes, &src), "mem_alloc");
    lb_bench_ok(be->ops->mem_alloc(be, bytes, &dst), "mem_alloc");
    lb_bench_ok(be->ops->fill_uniform(be, src, (int64_t)(bytes / 2), 1, -1.0f, 1.0f), "fill");
    const double copy_ms = lb_bench_median_ms(
        st, 3, reps,
        [&] { lb_bench_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st), "cudaMemcpyAsync"); },
        [] {});
    const double copy_gbs = 2.0 * (double)bytes / (copy_ms * 1e-3) / 1e9;
    LbDeviceInfo info;
    lb_bench_ok(be->ops->describe(be, &info), "describe");
    printf("device: %s (cc %d.%d, %d SMs), SM clock %d MHz\n", info.name, info.cc_major, info.cc_minor,
           info.sm_count, be->ops->sm_clock_mhz(be));
    printf("device-to-device copy of %lld MiB: %.3f ms, %.1f GB/s (read + written)\n\n", mib, copy_ms, copy_gbs);
    be->ops->mem_free(be, src);
    be->ops->mem_free(be, dst);
    lb_backend_close(be);

    printf("%-5s %8s %9s %10s %10s %10s\n", "dtype", "cols", "rows", "ms", "GB/s", "of copy");
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        be = lb_bench_open(gpu, dtypes[t]);
        st = lb_cuda_backend_stream(be);
        void *x = NULL;
        lb_bench_ok(be->ops->mem_alloc(be, bytes, &x), "mem_alloc");
        for (size_t c = 0; c < sizeof lengths / sizeof lengths[0]; c++) {
            const int64_t cols = lengths[c];
            const int64_t rows = (int64_t)(bytes / be->elem_bytes) / cols;
            if (rows < 1)
                continue;
            uint64_t seed = 100;
            const double ms = lb_bench_median_ms(
                st, 3, reps, [&] { lb_bench_ok(be->ops->softmax(be, x, rows, cols, 0.125f), "softmax"); },
                [&] { lb_bench_ok(be->ops->fill_uniform(be, x, rows * cols, ++seed, -8.0f, 8.0f), "fill"); });
            const double moved = 2.0 * (double)(rows * cols) * (double)be->elem_bytes;
            const double gbs = moved / (ms * 1e-3) / 1e9;
            printf("%-5s %8lld %9lld %10.4f %10.1f %9.1f%%\n", lb_dtype_name(dtypes[t]), (long long)cols,
                   (long long)rows, ms, gbs, 100.0 * gbs / copy_gbs);
        }
        be->ops->mem_free(be, x);
        lb_backend_close(be);
    }
    return 0;
}
