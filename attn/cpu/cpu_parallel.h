/* Internal to attn/cpu/: the one way the reference splits work over threads. Each item of
 * [0, count) is handled by exactly one thread and items are split in fixed contiguous chunks, so
 * a result never depends on the thread count or on scheduling. */
#ifndef LB_CPU_PARALLEL_H
#define LB_CPU_PARALLEL_H

#include <stdint.h>

/* Handle items [begin, end). */
typedef void (*LbCpuRangeFn)(void *ctx, int64_t begin, int64_t end);

/* Run fn over [0, count) in contiguous chunks, one per thread (lb_cpu_threads(), at most one per
 * item); in the calling thread alone when count * cost_per_item (roughly, multiply-adds) is too
 * small to pay for starting threads. A thread that cannot be started has its chunk run by the
 * caller: slower, same result. */
void lb_cpu_parallel_for(int64_t count, double cost_per_item, LbCpuRangeFn fn, void *ctx);

#endif
