/* Internal to attn/cpu/: the items of [0, count) handed out in chunks from a shared counter (a
 * thread the OS sets aside holds nobody up); an item's result does not depend on its thread, so
 * no result depends on the thread count or scheduling. */
#ifndef LB_CPU_PARALLEL_H
#define LB_CPU_PARALLEL_H

#include <stdint.h>

typedef struct LbCpuWork LbCpuWork;

/* The next chunk [*begin, *end) for the calling worker; 0 when every item has been handed out. */
int lb_cpu_work_next(LbCpuWork *w, int64_t *begin, int64_t *end);

/* One worker: set up its scratch, then take chunks with lb_cpu_work_next until none is left. */
typedef void (*LbCpuWorkerFn)(void *ctx, LbCpuWork *w);

/* Run fn on up to lb_cpu_set_threads's workers (the caller is one, at most one per item) over
 * [0, count); in the calling thread alone when count * cost_per_item (roughly, multiply-adds)
 * is too small to pay for starting threads. A thread that cannot be started leaves its share to
 * the others: slower, same result. */
void lb_cpu_parallel_for(int64_t count, double cost_per_item, LbCpuWorkerFn fn, void *ctx);

#endif
