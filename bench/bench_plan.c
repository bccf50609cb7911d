/* How long the memory plan takes for the whole default grid (issue 10: the plan is a dry run of
 * the forward pass, so its cost is worth knowing): the largest batch of every cell of the
 * default sweep, n = 512..65536 (powers of two), k = 128..2048, standard and Linformer
 * (layerwise, early), RoBERTa-base in fp16, an 80 GB budget, with the CUDA backend's element
 * size, alignment and workspace (gpu/backend_impl.h: 256 bytes, 32 MiB). Prints the batches and
 * the wall time of planning all cells, best of --reps R runs (default 5). A measurement, not a
 * test: run it by hand (`bench_plan`); no GPU needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/config.h"
#include "attn/plan.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Plan every cell once; the number of cells planned. print: list the batches. */
static int plan_grid(int print, int64_t *checksum)
{
    const LbPlanParams pp = {2, 256, (size_t)32 << 20};
    const size_t budget = (size_t)80 * 1000 * 1000 * 1000;
    int cells = 0;
    for (int64_t n = 512; n <= 65536; n *= 2)
        for (int m = 0; m < LB_MODEL_COUNT; m++) {
            if (m != LB_MODEL_STANDARD && m != LB_MODEL_LINFORMER)
                continue; /* the default sweep's models */
            for (int64_t k = 128; k <= 2048; k *= 2) {
                if (!lb_model_has_k((LbModelKind)m) && k > 128)
                    break;
                if (!lb_model_cell_exists((LbModelKind)m, n, k))
                    continue;
                LbModelConfig c = lb_config_default();
                c.kind = (LbModelKind)m;
                c.n = n;
                c.k = k;
                const int64_t B = lb_plan_largest_batch(&c, &pp, budget, 0);
                *checksum += B;
                cells++;
                if (print)
                    printf("%-10s n %6lld k %5lld: batch %lld\n", lb_model_name(c.kind), (long long)n,
                           lb_model_has_k(c.kind) ? (long long)k : 0LL, (long long)B);
            }
        }
    return cells;
}

int main(int argc, char **argv)
{
    int reps = 5;
    if (argc == 3 && strcmp(argv[1], "--reps") == 0)
        reps = atoi(argv[2]);
    if (reps < 1 || argc == 2 || argc > 3) {
        fprintf(stderr, "usage: bench_plan [--reps R]\n");
        return 2;
    }
    int64_t checksum = 0;
    const int cells = plan_grid(1, &checksum);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        const double t0 = now_s();
        plan_grid(0, &checksum);
        const double t = now_s() - t0;
        best = t < best ? t : best;
    }
    printf("planned %d cells (largest batch each, 80 GB) in %.3f ms, best of %d\n", cells, best * 1e3, reps);
    return checksum > 0 ? 0 : 1;
}
