/* Putting a sharded sweep's parts together: see merge.h. */
#include "reports/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/status.h"
#include "reports/meta.h"

int lb_merge_check_settings(const LbSweepDir *parts, size_t count, const char *const *keys,
                            size_t nkeys, char *why, size_t size)
{
    for (size_t i = 0; i <= nkeys; i++) {
        const char *key = i < nkeys ? keys[i] : "device_name";
        const char *first = lb_meta_get(&parts[0].meta, key);
        for (size_t p = 1; p < count; p++) {
            const char *v = lb_meta_get(&parts[p].meta, key);
            if (strcmp(first ? first : "", v ? v : "") != 0) {
                snprintf(why, size, "%s differs: \"%s\" in %s and \"%s\" in %s", key, first ? first : "",
                         parts[0].dir, v ? v : "", parts[p].dir);
                return -1;
            }
        }
    }
    return 0;
}

/* A cell is (model, n), and k where the model has a k axis. */
static int same_cell(const LbCellResult *a, const LbCellResult *b)
{
    return a->model == b->model && a->n == b->n && (!lb_model_has_k(a->model) || a->k == b->k);
}

/* Every field raw.csv holds. */
static int same_row(const LbCellResult *a, const LbCellResult *b)
{
    return same_cell(a, b) && a->sharing == b->sharing && a->order == b->order && a->dtype == b->dtype &&
           a->batch == b->batch && a->planned_bytes == b->planned_bytes && a->peak_bytes == b->peak_bytes &&
           a->median_ms == b->median_ms && a->min_ms == b->min_ms && a->max_ms == b->max_ms &&
           a->ms_per_seq == b->ms_per_seq && a->tokens_per_s == b->tokens_per_s &&
           a->tflop_per_s == b->tflop_per_s && a->passes == b->passes &&
           a->sm_clock_start_mhz == b->sm_clock_start_mhz && a->sm_clock_end_mhz == b->sm_clock_end_mhz &&
           a->clock_events_known == b->clock_events_known && a->clock_events == b->clock_events &&
           a->slowdown == b->slowdown && a->status == b->status && strcmp(a->error, b->error) == 0;
}

static int sweep_order(const void *x, const void *y)
{
    const LbCellResult *a = x, *b = y;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    if (a->model != b->model)
        return a->model < b->model ? -1 : 1;
    int64_t ka = lb_model_has_k(a->model) ? a->k : 0, kb = lb_model_has_k(b->model) ? b->k : 0;
    return (ka > kb) - (ka < kb);
}

static void cell_name(const LbCellResult *r, char *buf, size_t size)
{
    if (lb_model_has_k(r->model))
        snprintf(buf, size, "%s n=%lld k=%lld", lb_model_name(r->model), (long long)r->n, (long long)r->k);
    else
        snprintf(buf, size, "%s n=%lld", lb_model_name(r->model), (long long)r->n);
}

int lb_merge_rows(const LbSweepDir *parts, size_t count, LbCellResult **rows, size_t *nrows,
                  char *why, size_t size)
{
    size_t cap = 0;
    for (size_t p = 0; p < count; p++)
        cap += parts[p].count;
    LbCellResult *out = malloc((cap ? cap : 1) * sizeof *out);
    size_t *from = malloc((cap ? cap : 1) * sizeof *from); /* the part each kept row came from */
    if (!out || !from) {
        free(out);
        free(from);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory merging rows");
    }
    size_t n = 0;
    for (size_t p = 0; p < count; p++) {
        size_t part_start = n;
        for (size_t i = 0; i < parts[p].count; i++) {
            const LbCellResult *r = &parts[p].rows[i];
            size_t j = 0;
            while (j < n && !same_cell(&out[j], r))
                j++;
            if (j == n) {
                out[n] = *r;
                from[n++] = p;
            } else if (j >= part_start) {
                out[j] = *r; /* a later row of the same part: the last one counts, as in the grids */
            } else if (!same_row(&out[j], r)) {
                char cell[96];
                cell_name(r, cell, sizeof cell);
                snprintf(why, size, "cell %s is in %s and in %s with different values", cell, parts[from[j]].dir,
                         parts[p].dir);
                free(out);
                free(from);
                return -1;
            }
        }
    }
    free(from);
    qsort(out, n, sizeof *out, sweep_order);
    *rows = out;
    *nrows = n;
    return 0;
}

size_t lb_merge_missing(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn,
                        const int64_t *k, size_t nk, const int measured[LB_MODEL_COUNT], char *buf,
                        size_t size)
{
    size_t missing = 0, used = 0;
    if (size)
        buf[0] = '\0';
    static const int64_t no_k = 0;
    for (size_t i = 0; i < nn; i++) {
        for (int m = 0; m < LB_MODEL_COUNT; m++) {
            if (!measured[m])
                continue;
            int has_k = lb_model_has_k((LbModelKind)m);
            const int64_t *ks = has_k ? k : &no_k;
            size_t nks = has_k ? nk : 1;
            for (size_t j = 0; j < nks; j++) {
                LbCellResult want;
                memset(&want, 0, sizeof want);
                want.model = (LbModelKind)m;
                want.n = n[i];
                want.k = ks[j];
                if (!lb_model_cell_exists(want.model, want.n, want.k))
                    continue;
                size_t r = 0;
                while (r < count && !same_cell(&rows[r], &want))
                    r++;
                if (r < count)
                    continue;
                char cell[96];
                cell_name(&want, cell, sizeof cell);
                int len = snprintf(buf + used, size > used ? size - used : 0, "%s%s", missing ? ", " : "", cell);
                if (len > 0 && used + (size_t)len + 4 < size)
                    used += (size_t)len;
                else if (size > used + 4) {
                    snprintf(buf + used, size - used, "...");
                    used = size;
                }
                missing++;
            }
        }
    }
    return missing;
}
