/* Threads for the CPU reference: one per online core (capped at 8) by default, started per call,
 * taking chunks of items from a shared counter. Starting a thread costs tens of microseconds,
 * far below the milliseconds of the products worth splitting, so there is no pool to manage. */
#include "attn/cpu/cpu_parallel.h"

#include <pthread.h>
#include <stdatomic.h>
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

struct LbCpuWork {
    atomic_int_fast64_t next; /* first item not yet handed out */
    int64_t count, chunk;
};

int lb_cpu_work_next(LbCpuWork *w, int64_t *begin, int64_t *end)
{
    int64_t b = atomic_fetch_add(&w->next, w->chunk);
    if (b >= w->count)
        return 0;
    *begin = b;
    *end = b + w->chunk < w->count ? b + w->chunk : w->count;
    return 1;
}

typedef struct LbCpuWorker {
    LbCpuWorkerFn fn;
    void *ctx;
    LbCpuWork *work;
    pthread_t thread;
} LbCpuWorker;

static void *lb_cpu_worker_main(void *arg)
{
    LbCpuWorker *t = arg;
    t->fn(t->ctx, t->work);
    return NULL;
}

void lb_cpu_parallel_for(int64_t count, double cost_per_item, LbCpuWorkerFn fn, void *ctx)
{
    if (count <= 0)
        return;
    int64_t threads = lb_cpu_threads();
    if (threads > count)
        threads = count;
    if ((double)count * cost_per_item < LB_CPU_PARALLEL_MIN_WORK)
        threads = 1;
    LbCpuWork work;
    atomic_init(&work.next, 0);
    work.count = count;
    /* about four chunks per thread: small enough to even out a thread that starts late or is
     * preempted, large enough that each grab does real work */
    work.chunk = count / (threads * 4) > 0 ? count / (threads * 4) : 1;
    if (threads <= 1) {
        work.chunk = count;
        fn(ctx, &work);
        return;
    }

    LbCpuWorker workers[LB_CPU_THREADS_MAX];
    int started[LB_CPU_THREADS_MAX];
    for (int64_t t = 1; t < threads; t++) {
        workers[t] = (LbCpuWorker){.fn = fn, .ctx = ctx, .work = &work};
        started[t] = pthread_create(&workers[t].thread, NULL, lb_cpu_worker_main, &workers[t]) == 0;
    }
    fn(ctx, &work);
    for (int64_t t = 1; t < threads; t++)
        if (started[t])
            pthread_join(workers[t].thread, NULL);
}
