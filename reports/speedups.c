/* speedups.csv built from raw rows through the grids' own ratio rule (see speedups.h). */
#include "reports/speedups.h"

#include <stdlib.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"
#include "reports/settings.h"

static const char *const columns[LB_SPEEDUPS_COLUMNS] = {
    "model", "baseline", "n", "k", "time_speedup", "memory_speedup", "energy_speedup",
};

/* Baselines in rank order (LbModelDesc.baseline): standard, the paper's; chunked, which asks
 * whether Linformer's memory advantage survives exact attention that never holds the n x n
 * scores; flash, the same of its time as people run it today. */
size_t lb_speedup_pairs(const int measured[LB_MODEL_COUNT], LbSpeedupPair *pairs)
{
    size_t count = 0;
    for (int rank = 1; rank <= LB_MODEL_COUNT; rank++)
        for (int b = 0; b < LB_MODEL_COUNT; b++) {
            if (lb_model_baseline((LbModelKind)b) != rank || !measured[b])
                continue;
            for (int m = 0; m < LB_MODEL_COUNT; m++) {
                /* a baseline against one ranked after it is the inverse of a pair already listed
                 * (standard against flash is flash against standard, upside down) */
                const int r = lb_model_baseline((LbModelKind)m);
                if (measured[m] && m != b && !(r > 0 && r < rank))
                    pairs[count++] = (LbSpeedupPair){(LbModelKind)m, (LbModelKind)b};
            }
        }
    return count;
}

/* One name of meta.csv's models list: marked in measured (int[LB_MODEL_COUNT]); an empty item is
 * skipped, an unknown name stops the walk. */
static int mark_model(const char *item, size_t len, void *measured)
{
    char name[64];
    LbModelKind m;
    if (len == 0)
        return 0;
    if (len >= sizeof name)
        return -1;
    memcpy(name, item, len);
    name[len] = '\0';
    if (lb_model_parse(name, &m) != 0)
        return -1;
    ((int *)measured)[m] = 1;
    return 0;
}

int lb_models_measured(const LbMeta *meta, const LbCellResult *rows, size_t count,
                       int measured[LB_MODEL_COUNT])
{
    lb_models_with_rows(rows, count, measured);
    const char *list = meta ? lb_settings_meta_value(meta, LB_SET_MODELS) : NULL;
    if (!list || !*list) {
        measured[LB_TABLE3_BASELINE] = measured[LB_TABLE3_MODEL] = 1; /* before --models: Table 3's pair */
        return 0;
    }
    return lb_list_each(list, mark_model, measured);
}

/* One row per cell of the pair's grid that the model has. */
static int write_pair(FILE *f, const LbGrid *g)
{
    for (size_t c = 0; c < g->rows * g->cols; c++) {
        if (g->time[c].kind == LB_GRID_EMPTY)
            continue;
        char v[LB_SPEEDUPS_COLUMNS][48] = {""};
        const char *row[LB_SPEEDUPS_COLUMNS] = {lb_model_name(g->model), lb_model_name(g->baseline), v[2], v[3],
                                                v[4], v[5], v[6]};
        snprintf(v[2], sizeof v[2], "%lld", (long long)g->n[c / g->cols]);
        if (lb_model_has_k(g->model))
            snprintf(v[3], sizeof v[3], "%lld", (long long)g->k[c % g->cols]);
        const LbGridCell *cell[3] = {&g->time[c], &g->memory[c], &g->energy[c]};
        for (int x = 0; x < 3; x++) {
            if (cell[x]->kind == LB_GRID_VALUE)
                lb_csv_format_double(cell[x]->value, v[4 + x], sizeof v[0]);
            else
                lb_grid_cell_csv(cell[x], v[4 + x], sizeof v[0]);
        }
        LB_TRY(lb_csv_write_record(f, row, LB_SPEEDUPS_COLUMNS));
    }
    return LB_OK;
}

/* lb_speedups_write's arguments. */
typedef struct Sweep {
    const LbCellResult *rows;
    size_t count;
    const int64_t *n;
    size_t nn;
    const int64_t *k;
    size_t nk;
    const int *measured;
} Sweep;

static int write_rows(FILE *f, const void *ctx)
{
    const Sweep *s = ctx;
    const int *measured = s->measured;
    int from_rows[LB_MODEL_COUNT];
    if (!measured) {
        lb_models_with_rows(s->rows, s->count, from_rows);
        measured = from_rows;
    }
    LB_TRY(lb_csv_write_record(f, columns, LB_SPEEDUPS_COLUMNS));
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    size_t np = lb_speedup_pairs(measured, pairs);
    for (size_t p = 0; p < np; p++) {
        LbGrid g;
        LB_TRY(lb_grid_pair_from_raw(s->rows, s->count, pairs[p].model, pairs[p].baseline, s->n, s->nn, s->k, s->nk,
                                     &g));
        int rc = write_pair(f, &g);
        lb_grid_free(&g);
        LB_TRY(rc);
    }
    return LB_OK;
}

int lb_speedups_write(const char *dir, const LbCellResult *rows, size_t count, const int64_t *n,
                      size_t nn, const int64_t *k, size_t nk, const int *measured)
{
    const Sweep s = {rows, count, n, nn, k, nk, measured};
    return lb_atomic_write(dir, LB_SPEEDUPS_FILE, write_rows, &s);
}

int lb_tables_write(const char *dir, const LbCellResult *rows, size_t count, const int64_t *n, size_t nn,
                    const int64_t *k, size_t nk, const int *measured, LbGrid *out)
{
    LbGrid g;
    LB_TRY(lb_speedups_write(dir, rows, count, n, nn, k, nk, measured));
    LB_TRY(lb_grid_from_raw(rows, count, n, nn, k, nk, &g));
    const int rc = lb_grids_write(dir, &g);
    if (rc == LB_OK && out)
        *out = g;
    else
        lb_grid_free(&g);
    return rc;
}
