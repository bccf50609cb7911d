/* meta.csv: what a sweep ran on and with (METHOD.md, "Files a sweep writes"): header `key,value`,
 * one row per key in the order first set, written to a temporary name and renamed into place.
 * Run settings are under the settings table's keys (reports/settings.h). */
#ifndef LB_META_H
#define LB_META_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

typedef struct LbMeta {
    size_t count, cap;
    char **keys;
    char **values;
} LbMeta; /* zero-initialise before the first lb_meta_set */

/* meta.csv's `source`: whether the result was measured (a sweep, a merge of sweeps) or predicted
 * from the roofline (linbench predict, cmd/sweep/predict.h). A meta.csv without it was measured. */
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
/* Replaces what m held. LB_ERR_IO when unreadable, LB_ERR_FORMAT when not key,value rows or a key
 * is given twice. */
int lb_meta_read(const char *path, LbMeta *m);
void lb_meta_free(LbMeta *m);
/* Whether m's source is predicted. */
int lb_meta_is_predicted(const LbMeta *m);

#endif
