/* Internal to attn/cpu/: the items of [0, count) handed out in chunks from a shared counter (a
 * thread the OS sets aside holds nobody up); an item's result does not depend on its thread, so
 * no result depends on the thread count or scheduling. */
#ifndef LB_CPU_PARALLEL_H
#define LB_CPU_PARALLEL_H

#include <stdint.h>

#include <stddef.h>

/* Items [begin, end) with the calling worker's scratch of the doubles asked for; NULL where none
 * was asked or the host had none to give. */
typedef void (*LbCpuRangeFn)(void *ctx, int64_t begin, int64_t end, double *scratch);

/* Run fn over [0, count) on up to lb_cpu_set_threads's workers (the caller is one, at most one
 * per item), each with its own scratch of `scratch` doubles; in the calling thread alone when
 * count * cost_per_item (roughly, multiply-adds) is too small to pay for starting threads. A
 * thread that cannot be started leaves its share to the others: slower, same result. */
void lb_cpu_parallel_for(int64_t count, double cost_per_item, size_t scratch, LbCpuRangeFn fn, void *ctx);

#endif
