/* meta.csv: what a sweep ran on and with (METHOD.md, "Files a sweep writes"): header
 * `key,value`, one row per key in the order the keys were first set, written to a temporary
 * name and renamed into place.
 *
 * The sweep engine (reports/sweep_engine.c) writes them: linbench_version, git_revision,
 * command_line, start_time, end_time, status; what the device is (device_name,
 * compute_capability, sm_count, memory_total_bytes, memory_budget_bytes, memory_headroom_bytes,
 * driver_version, runtime_version, cublas_version, sm_clock_mhz, sm_clock_max_mhz,
 * mem_clock_mhz, storage_dtype); every run setting under its key in the settings table
 * (reports/settings.h: n_list, k_list, models, shard, layers ... seed), which is how compare,
 * plot and merge should read them; min_passes; the quick check (check, check_max_rel_error,
 * check_seed); and resume_N_time / resume_N_command for each resume.
 */
#ifndef LB_META_H
#define LB_META_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbMeta {
    size_t count, cap;
    char **keys;
    char **values;
} LbMeta; /* zero-initialise before the first lb_meta_set */

/* meta.csv's `source`: whether the result was measured (a sweep, a merge of sweeps) or predicted
 * from the roofline (linbench predict, reports/predict.h). A meta.csv without it was measured. */
#define LB_META_SOURCE "source"
#define LB_SOURCE_MEASURED "measured"
#define LB_SOURCE_PREDICTED "predicted"

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
/* Whether m's source is predicted. */
int lb_meta_is_predicted(const LbMeta *m);

#ifdef __cplusplus
}
#endif

#endif
