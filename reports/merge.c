/* Putting a sharded sweep's parts together: see merge.h. */
#include "reports/merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/breakdown_csv.h"
#include "reports/raw.h"
#include "reports/settings.h"
#include "reports/speedups.h"

/* Every recorded setting but the shard, linbench_version (a merge of two codes' cells would say
 * of neither) and device_name hold one value in every part: 0, or -1 with why naming the key. */
static int check_settings(const LbSweepDir *parts, size_t count, char *why, size_t size)
{
    for (int i = 0; i <= LB_SET_RECORDED + 1; i++) {
        if (i == LB_SET_SHARD)
            continue;
        const char *key = i < LB_SET_RECORDED ? lb_settings[i].key : i == LB_SET_RECORDED ? "linbench_version" : "device_name";
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

int lb_sweep_cells(unsigned models, const int64_t *n, size_t nn, const int64_t *k, size_t nk, LbSweepCell **cells,
                   size_t *count)
{
    *count = 0;
    *cells = malloc((nn * LB_MODEL_COUNT * (nk + 1) + 1) * sizeof **cells); /* at most */
    if (!*cells)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory listing the sweep's cells");
    for (size_t i = 0; i < nn; i++)
        for (int m = 0; m < LB_MODEL_COUNT; m++) {
            const LbModelKind kind = (LbModelKind)m;
            for (size_t j = 0; models >> m & 1 && j < (lb_model_has_k(kind) ? nk : 1); j++) {
                const int64_t kj = lb_model_has_k(kind) ? k[j] : 0;
                if (lb_model_cell_exists(kind, n[i], kj))
                    (*cells)[(*count)++] = (LbSweepCell){kind, n[i], kj};
            }
        }
    return LB_OK;
}

int lb_sweep_cell_is(const LbSweepCell *c, const LbCellResult *r)
{
    return r->model == c->model && r->n == c->n && (!lb_model_has_k(c->model) || r->k == c->k);
}

/* A cell is (model, n), and k where the model has a k axis. */
static int same_cell(const LbCellResult *a, const LbCellResult *b)
{
    const LbSweepCell c = {a->model, a->n, a->k};
    return lb_sweep_cell_is(&c, b);
}

/* Equal, or both NaN (a value the row does not have, such as a training step's TFLOP/s). */
static int same_value(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* Every field raw.csv holds. */
static int same_row(const LbCellResult *a, const LbCellResult *b)
{
    return same_cell(a, b) && a->sharing == b->sharing && a->order == b->order && a->dtype == b->dtype &&
           a->batch == b->batch && a->planned_bytes == b->planned_bytes && a->peak_bytes == b->peak_bytes &&
           same_value(a->median_ms, b->median_ms) && same_value(a->min_ms, b->min_ms) && same_value(a->max_ms, b->max_ms) &&
           same_value(a->ms_per_seq, b->ms_per_seq) && same_value(a->tokens_per_s, b->tokens_per_s) &&
           same_value(a->tflop_per_s, b->tflop_per_s) && a->passes == b->passes &&
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
                lb_model_cell_name(lb_model_name(r->model), r->model, r->n, r->k, cell, sizeof cell);
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

int lb_merge_missing(const LbCellResult *rows, size_t count, const int64_t *n, size_t nn, const int64_t *k, size_t nk,
                     const int measured[LB_MODEL_COUNT], size_t *how_many, char *buf, size_t size)
{
    unsigned models = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        models |= (measured[m] ? 1u : 0u) << m;
    LbSweepCell *cells = NULL;
    size_t ncells = 0, used = 0;
    *how_many = 0;
    if (size)
        buf[0] = '\0';
    LB_TRY(lb_sweep_cells(models, n, nn, k, nk, &cells, &ncells));
    for (size_t c = 0; c < ncells; c++) {
        size_t r = 0;
        while (r < count && !lb_sweep_cell_is(&cells[c], &rows[r]))
            r++;
        if (r < count)
            continue;
        char cell[96];
        lb_model_cell_name(lb_model_name(cells[c].model), cells[c].model, cells[c].n, cells[c].k, cell, sizeof cell);
        const size_t len = strlen(cell) + (*how_many ? 2 : 0);
        if (used + len + 4 < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", *how_many ? ", " : "", cell);
        else if (used < size) {
            snprintf(buf + used, size - used, "...");
            used = size;
        }
        (*how_many)++;
    }
    free(cells);
    return LB_OK;
}

void lb_merge_free(LbMerge *m)
{
    for (size_t p = 0; m->parts && p < m->count; p++)
        lb_sweep_dir_free(&m->parts[p]);
    free(m->parts);
    free(m->rows);
    memset(m, 0, sizeof *m);
}

int lb_merge_load(LbMerge *m, char *const *dirs, size_t count)
{
    memset(m, 0, sizeof *m);
    struct stat *ids = calloc(count, sizeof *ids); /* each part's device and inode */
    m->parts = calloc(count, sizeof *m->parts);
    char why[1024];
    int rc = ids && m->parts ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    for (; rc == LB_OK && m->count < count; m->count++) {
        const char *dir = dirs[m->count];
        if (lb_sweep_dir_check(dir, why, sizeof why)) {
            rc = LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for merge: %s: should be a directory written by linbench sweep", dir, why);
            break;
        }
        /* by inode, not by spelling: "runs/a" and "./runs/a/" are one part, whose rows would
         * pass the check below, agreeing with themselves */
        stat(dir, &ids[m->count]);
        for (size_t p = 0; p < m->count && rc == LB_OK; p++)
            if (ids[p].st_dev == ids[m->count].st_dev && ids[p].st_ino == ids[m->count].st_ino)
                rc = LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for merge: it is the directory of part %zu (\"%s\"): should be each part once",
                             dir, p + 1, dirs[p]);
        if (rc != LB_OK)
            break;
        lb_error_clear();
        if ((rc = lb_sweep_dir_load(dir, &m->parts[m->count])) == LB_ERR_FORMAT) {
            snprintf(why, sizeof why, "%s", lb_error_message());
            rc = LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for merge: %s", dir, why);
        }
    }
    free(ids);
    if (rc != LB_OK)
        return rc;
    if (check_settings(m->parts, count, why, sizeof why) != 0)
        return LB_FAIL(LB_ERR_FORMAT, "cannot merge: %s: should be parts of one sweep", why);
    rc = lb_merge_rows(m->parts, count, &m->rows, &m->nrows, why, sizeof why);
    if (rc == -1)
        return LB_FAIL(LB_ERR_FORMAT, "cannot merge: %s: should be measured once, or the same in both", why);
    if (rc != LB_OK)
        return rc;
    /* the parts agree on every setting, the model list included: the first part's stands for all */
    const LbSweepDir *first = &m->parts[0];
    if (lb_models_measured(&first->meta, m->rows, m->nrows, m->measured) != 0)
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for merge: meta.csv's models \"%s\" names a model this linbench does not know",
                       first->dir, lb_sweep_meta(first, lb_settings[LB_SET_MODELS].key, ""));
    LB_TRY(lb_merge_missing(m->rows, m->nrows, first->grid.n, first->grid.rows, first->grid.k, first->grid.cols,
                            m->measured, &m->nmissing, m->missing, sizeof m->missing));
    for (size_t p = 0; p < count && !m->unfinished; p++)
        if (strcmp(lb_sweep_meta(&m->parts[p], "status", ""), "complete") != 0)
            m->unfinished = &m->parts[p];
    return LB_OK;
}

/* A part's own key, not a setting the merge carries over. */
static int own_key(const char *key)
{
    static const char *const own[] = {"shard", "status", "command_line", "start_time", "end_time", "matmul_tuning"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(key, own[i]) == 0)
            return 1;
    return strncmp(key, "resume_", 7) == 0 || strncmp(key, "part", 4) == 0;
}

int lb_merge_meta(const LbMerge *m, const char *command, const char *status, int first_wins, LbMeta *meta)
{
    int rc = lb_meta_set(meta, "command_line", "%s", command);
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "status", "%s", status);
    const LbMeta *first = &m->parts[0].meta;
    for (size_t i = 0; i < first->count && rc == LB_OK; i++) {
        const char *key = first->keys[i];
        int common = !own_key(key);
        for (size_t p = 1; p < m->count && common && !first_wins; p++) {
            const char *v = lb_meta_get(&m->parts[p].meta, key);
            common = v && strcmp(v, first->values[i]) == 0;
        }
        if (common)
            rc = lb_meta_set(meta, key, "%s", first->values[i]);
    }
    /* what linear's tuning chose: each part's own where they differ */
    char tuning[2048] = "";
    size_t used = 0;
    const char *t0 = lb_sweep_meta(&m->parts[0], "matmul_tuning", "");
    int same = 1;
    for (size_t p = 1; p < m->count; p++)
        same &= strcmp(lb_sweep_meta(&m->parts[p], "matmul_tuning", ""), t0) == 0;
    for (size_t p = 0; p < m->count && !same && used < sizeof tuning; p++) {
        const int n = snprintf(tuning + used, sizeof tuning - used, "%spart %zu: %s", p ? "; " : "", p + 1,
                               lb_sweep_meta(&m->parts[p], "matmul_tuning", "(none)"));
        used += n > 0 ? (size_t)n : 0;
    }
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "matmul_tuning", "%s", same ? t0 : tuning);
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "parts", "%zu", m->count);
    for (size_t p = 0; p < m->count && rc == LB_OK; p++) {
        char key[32];
        snprintf(key, sizeof key, "part_%zu", p + 1);
        rc = lb_meta_set(meta, key, "%s", m->parts[p].dir);
    }
    return rc;
}

/* Drop from part[0..*n) the records of cells that recs[0..nrecs) already holds: a cell in two parts
 * (allowed where both measured it alike) keeps one breakdown, the first part's, as it keeps one row. */
static void drop_merged_cells(const LbBreakdownRecord *recs, size_t nrecs, LbBreakdownRecord *part, size_t *n)
{
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        size_t j = 0;
        while (j < nrecs && !(recs[j].model == part[i].model && recs[j].n == part[i].n && recs[j].k == part[i].k))
            j++;
        if (j == nrecs)
            part[kept++] = part[i];
    }
    *n = kept;
}

int lb_merge_write(const LbMerge *m, const char *out, const LbMeta *meta, LbGrid *grid)
{
    const LbSweepDir *first = &m->parts[0];
    LbBreakdownRecord *recs = NULL;
    size_t nrecs = 0;
    LbRawWriter *w = NULL;
    char *path = lb_path_join(out, "raw.csv");
    int rc = path ? lb_raw_open(path, 0, &w) : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < m->nrows && rc == LB_OK; i++)
        rc = lb_raw_append(w, &m->rows[i]);
    lb_raw_close(w);
    LbGrid g;
    memset(&g, 0, sizeof g);
    if (rc == LB_OK)
        rc = lb_tables_write(out, m->rows, m->nrows, first->grid.n, first->grid.rows, first->grid.k, first->grid.cols,
                             m->measured, &g);
    for (size_t p = 0; p < m->count && rc == LB_OK; p++) {
        LbBreakdownRecord *part = NULL;
        size_t n = 0;
        rc = lb_breakdown_read(m->parts[p].dir, 1, &part, &n);
        if (rc == LB_OK)
            drop_merged_cells(recs, nrecs, part, &n);
        if (rc == LB_OK)
            rc = lb_breakdown_append(&recs, &nrecs, part, n, "out of memory merging breakdown.csv");
        free(part);
    }
    if (rc == LB_OK && nrecs)
        rc = lb_breakdown_write(out, recs, nrecs);
    free(recs);
    free(path);
    path = lb_path_join(out, "meta.csv");
    if (rc == LB_OK)
        rc = path ? lb_meta_write(path, meta) : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    free(path);
    if (rc == LB_OK && grid)
        *grid = g;
    else
        lb_grid_free(&g);
    return rc;
}
