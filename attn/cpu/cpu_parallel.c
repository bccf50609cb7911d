/* Threads for the CPU reference: one per online core (capped at 8) by default, started per call.
 * Starting a thread costs tens of microseconds, far below the milliseconds of the products worth
 * splitting, so there is no pool to manage. */
#include "attn/cpu/cpu_parallel.h"

#include <pthread.h>
#include <unistd.h>

#include "attn/cpu/cpu_ref.h"

#define LB_CPU_THREADS_DEFAULT_MAX 8
#define LB_CPU_THREADS_MAX 64
/* Below this many multiply-adds a call stays in one thread (starting one costs about as much as
 * 1e5 of them on a 2.5 GHz Xeon). */
#define LB_CPU_PARALLEL_MIN_WORK 262144.0

static int lb_cpu_threads_wanted; /* 0: default */
static int lb_cpu_threads_online;
static pthread_once_t lb_cpu_threads_once = PTHREAD_ONCE_INIT;

static void lb_cpu_threads_probe(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > LB_CPU_THREADS_DEFAULT_MAX)
        n = LB_CPU_THREADS_DEFAULT_MAX;
    lb_cpu_threads_online = (int)n;
}

void lb_cpu_set_threads(int threads)
{
    if (threads < 0)
        threads = 0;
    if (threads > LB_CPU_THREADS_MAX)
        threads = LB_CPU_THREADS_MAX;
    lb_cpu_threads_wanted = threads;
}

int lb_cpu_threads(void)
{
    if (lb_cpu_threads_wanted > 0)
        return lb_cpu_threads_wanted;
    pthread_once(&lb_cpu_threads_once, lb_cpu_threads_probe);
    return lb_cpu_threads_online;
}

typedef struct LbCpuChunk {
    LbCpuRangeFn fn;
    void *ctx;
    int64_t begin, end;
    pthread_t thread;
    int started;
} LbCpuChunk;

static void *lb_cpu_chunk_main(void *arg)
{
    LbCpuChunk *c = arg;
    c->fn(c->ctx, c->begin, c->end);
    return NULL;
}

void lb_cpu_parallel_for(int64_t count, double cost_per_item, LbCpuRangeFn fn, void *ctx)
{
    if (count <= 0)
        return;
    int64_t threads = lb_cpu_threads();
    if (threads > count)
        threads = count;
    if (threads <= 1 || (double)count * cost_per_item < LB_CPU_PARALLEL_MIN_WORK) {
        fn(ctx, 0, count);
        return;
    }

    LbCpuChunk chunks[LB_CPU_THREADS_MAX];
    for (int64_t t = 0; t < threads; t++) {
        /* count * t fits: count is far below 2^57 for anything that fits in memory */
        chunks[t] = (LbCpuChunk){.fn = fn, .ctx = ctx, .begin = count * t / threads,
                                 .end = count * (t + 1) / threads, .started = 0};
    }
    for (int64_t t = 1; t < threads; t++)
        chunks[t].started = pthread_create(&chunks[t].thread, NULL, lb_cpu_chunk_main, &chunks[t]) == 0;
    fn(ctx, chunks[0].begin, chunks[0].end);
    for (int64_t t = 1; t < threads; t++) {
        if (chunks[t].started)
            pthread_join(chunks[t].thread, NULL);
        else
            fn(ctx, chunks[t].begin, chunks[t].end);
    }
}
