/* meta.csv: what a sweep ran on and with (METHOD.md, "Files a sweep writes"): header
 * `key,value`, one row per key in the order the keys were first set, written to a temporary
 * name and renamed into place.
 *
 * Keys the sweep writes (compare and plot read them): linbench_version, git_revision,
 * command_line, start_time, device (cpu|cuda), device_name, compute_capability, sm_count,
 * memory_total_bytes, memory_budget_bytes, mem_limit (the flag as given, or empty),
 * driver_version, runtime_version, cublas_version, sm_clock_mhz, dtype, storage_dtype, layers,
 * d_model, heads, ffn, vocab, sharing, order, seed, n_list, k_list. */
#ifndef LB_META_H
#define LB_META_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbMeta {
    size_t count, cap;
    char **keys;
    char **values;
} LbMeta; /* zero-initialise before the first lb_meta_set */

/* Add or replace. printf-style value. */
int lb_meta_set(LbMeta *m, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* NULL if absent. */
const char *lb_meta_get(const LbMeta *m, const char *key);
int lb_meta_write(const char *path, const LbMeta *m);
/* Replaces what m held. LB_ERR_IO when unreadable, LB_ERR_FORMAT when not key,value rows. */
int lb_meta_read(const char *path, LbMeta *m);
void lb_meta_free(LbMeta *m);

#ifdef __cplusplus
}
#endif

#endif
