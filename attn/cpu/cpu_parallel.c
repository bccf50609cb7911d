/* Threads for the CPU reference: one per online core (capped at 8) by default, started per call,
 * taking chunks of items from a shared counter. Starting a thread costs tens of microseconds,
 * far below the milliseconds of the products worth splitting, so there is no pool to manage. */
#include "attn/cpu/cpu_parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
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

static int lb_cpu_threads(void)
{
    if (lb_cpu_threads_wanted > 0)
        return lb_cpu_threads_wanted;
    pthread_once(&lb_cpu_threads_once, lb_cpu_threads_probe);
    return lb_cpu_threads_online;
}

typedef struct LbCpuWork {
    atomic_int_fast64_t next; /* first item not yet handed out */
    int64_t count, chunk;
    size_t scratch;
    LbCpuRangeFn fn;
    void *ctx;
} LbCpuWork;

/* One worker: its scratch, then chunks of items until none is left. */
static void *lb_cpu_worker_main(void *arg)
{
    LbCpuWork *w = arg;
    double *scratch = w->scratch ? malloc(w->scratch * sizeof *scratch) : NULL;
    int64_t b;
    while ((b = atomic_fetch_add(&w->next, w->chunk)) < w->count)
        w->fn(w->ctx, b, b + w->chunk < w->count ? b + w->chunk : w->count, scratch);
    free(scratch);
    return NULL;
}

void lb_cpu_parallel_for(int64_t count, double cost_per_item, size_t scratch, LbCpuRangeFn fn, void *ctx)
{
    if (count <= 0)
        return;
    int64_t threads = lb_cpu_threads();
    if (threads > count)
        threads = count;
    if ((double)count * cost_per_item < LB_CPU_PARALLEL_MIN_WORK)
        threads = 1;
    LbCpuWork work = {.count = count, .scratch = scratch, .fn = fn, .ctx = ctx};
    atomic_init(&work.next, 0);
    /* about four chunks per thread: small enough to even out a thread that starts late or is
     * preempted, large enough that each grab does real work */
    work.chunk = count / (threads * 4) > 0 ? count / (threads * 4) : 1;
    if (threads <= 1) {
        work.chunk = count;
        lb_cpu_worker_main(&work);
        return;
    }

    pthread_t workers[LB_CPU_THREADS_MAX];
    int started[LB_CPU_THREADS_MAX];
    for (int64_t t = 1; t < threads; t++)
        started[t] = pthread_create(&workers[t], NULL, lb_cpu_worker_main, &work) == 0;
    lb_cpu_worker_main(&work);
    for (int64_t t = 1; t < threads; t++)
        if (started[t])
            pthread_join(workers[t], NULL);
}
