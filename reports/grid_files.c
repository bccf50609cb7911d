/* Table 3's grid files: written atomically, read back (see grid.h). */
#include "reports/grid.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

static const char *const grid_file[3] = {"time_speedup.csv", "memory_speedup.csv", LB_ENERGY_SPEEDUP_FILE};
static const char *const grid_word[3] = {"time", "memory", "energy"};

static LbGridCell *grid_cells(const LbGrid *g, int q)
{
    return q == 0 ? g->time : q == 1 ? g->memory : g->energy;
}

int lb_grid_write_csv(FILE *f, const LbGrid *g, int q)
{
    const size_t lead = q < 0, nf = g->cols + 1 + lead;
    char(*buf)[64] = malloc(nf * sizeof *buf);
    const char **fields = malloc(nf * sizeof *fields);
    int rc = buf && fields ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory writing a grid");
    for (size_t i = 0; rc == LB_OK && i < nf; i++)
        fields[i] = buf[i];
    if (rc == LB_OK) {
        snprintf(buf[0], sizeof buf[0], "grid");
        snprintf(buf[lead], sizeof buf[0], "n");
        for (size_t j = 0; j < g->cols; j++)
            snprintf(buf[lead + 1 + j], sizeof buf[0], "k=%lld", (long long)g->k[j]);
        rc = lb_csv_write_record(f, fields, nf);
    }
    /* q < 0: every grid, each row led by its name; energy where some cell has it */
    for (int x = q < 0 ? 0 : q; rc == LB_OK && x <= (q >= 0 ? q : lb_grid_has_energy(g) ? 2 : 1); x++)
        for (size_t i = 0; rc == LB_OK && i < g->rows; i++) {
            snprintf(buf[0], sizeof buf[0], "%s", grid_word[x]);
            snprintf(buf[lead], sizeof buf[0], "%lld", (long long)g->n[i]);
            for (size_t j = 0; j < g->cols; j++)
                lb_grid_cell_csv(&grid_cells(g, x)[i * g->cols + j], buf[lead + 1 + j], sizeof buf[0]);
            rc = lb_csv_write_record(f, fields, nf);
        }
    free(buf);
    free(fields);
    return rc;
}

/* One grid of lb_grids_write's: which grid, of which LbGrid. */
typedef struct GridFile {
    const LbGrid *g;
    int q;
} GridFile;

static int write_grid(FILE *f, const void *ctx)
{
    const GridFile *gf = ctx;
    return lb_grid_write_csv(f, gf->g, gf->q);
}

static int write_grid_file(const char *dir, const LbGrid *g, int q)
{
    const GridFile gf = {g, q};
    return lb_atomic_write(dir, grid_file[q], write_grid, &gf);
}

/* time_speedup.csv last: a reader (lb_grids_read) that finds it finds the other two, even in a
 * directory whose first write a kill -9 cut between two renames. */
int lb_grids_write(const char *dir, const LbGrid *g)
{
    LB_TRY(write_grid_file(dir, g, 1));
    LB_TRY(write_grid_file(dir, g, 2));
    return write_grid_file(dir, g, 0);
}

/* One grid file's table into g's grid q: the time grid (q 0) shapes g, the others must match it.
 * Every energy cell starts NA (EMPTY where time is): the paper and older sweeps have none. */
static int parse_grid(const LbCsvTable *t, const char *what, LbGrid *g, int q)
{
    if (t->rows == 0 || t->row[0].count < 1 || strcmp(t->row[0].fields[0], "n") != 0)
        return LB_FAIL(LB_ERR_FORMAT, "%s: header should be n,k=...,k=...", what);
    const size_t nk = t->row[0].count - 1, nn = t->rows - 1;
    int64_t *n = malloc((nn + 1) * sizeof *n), *k = malloc((nk + 1) * sizeof *k);
    int rc = n && k ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", what);
    long long v;
    for (size_t j = 0; rc == LB_OK && j < nk; j++) {
        const char *h = t->row[0].fields[j + 1];
        if (strncmp(h, "k=", 2) != 0 || lb_csv_parse_int64(h + 2, &v) || v < 1)
            rc = LB_FAIL(LB_ERR_FORMAT, "%s: column %zu is \"%s\": should be k=<positive integer>", what, j + 2, h);
        else
            k[j] = v;
    }
    for (size_t i = 0; rc == LB_OK && i < nn; i++) {
        const LbCsvRow *r = &t->row[i + 1];
        if (r->count != nk + 1)
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: %zu fields: should be %zu", what, t->line[i + 1], r->count, nk + 1);
        else if (lb_csv_parse_int64(r->fields[0], &v) || v < 1)
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: n \"%s\": should be a positive integer", what, t->line[i + 1],
                         r->fields[0]);
        else
            n[i] = v;
    }
    if (rc == LB_OK && q == 0)
        rc = lb_grid_alloc_pair(g, LB_TABLE3_MODEL, LB_TABLE3_BASELINE, n, nn, k, nk);
    else if (rc == LB_OK && (nn != g->rows || nk != g->cols || memcmp(n, g->n, nn * sizeof *n) != 0 ||
                             memcmp(k, g->k, nk * sizeof *k) != 0))
        rc = LB_FAIL(LB_ERR_FORMAT, "%s: n or k differ from the time grid's", what);
    for (size_t i = 0; rc == LB_OK && i < nn; i++)
        for (size_t j = 0; rc == LB_OK && j < nk; j++) {
            const char *s = t->row[i + 1].fields[j + 1];
            if (lb_grid_cell_parse(s, &grid_cells(g, q)[i * nk + j]))
                rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: \"%s\": should be a number, empty, NA, OOM or ERR", what,
                             t->line[i + 1], s);
            else if (q == 0)
                g->energy[i * nk + j].kind = g->time[i * nk + j].kind == LB_GRID_EMPTY ? LB_GRID_EMPTY : LB_GRID_MISSING;
        }
    free(n);
    free(k);
    return rc;
}

int lb_grids_parse(const char *time_csv, size_t time_len, const char *memory_csv, size_t memory_len,
                   const char *what, LbGrid *g)
{
    memset(g, 0, sizeof *g);
    const char *text[2] = {time_csv, memory_csv};
    const size_t len[2] = {time_len, memory_len};
    int rc = LB_OK;
    for (int q = 0; q < 2 && rc == LB_OK; q++) {
        LbCsvTable t;
        if ((rc = lb_csv_parse_text(text[q], len[q], 0, what, &t)) == LB_OK)
            rc = parse_grid(&t, what, g, q);
        lb_csv_table_free(&t);
    }
    if (rc != LB_OK)
        lb_grid_free(g);
    return rc;
}

int lb_grids_read(const char *dir, LbGrid *g)
{
    memset(g, 0, sizeof *g);
    int rc = LB_OK;
    for (int q = 0; q < 3 && rc == LB_OK; q++) {
        char *path = lb_path_join(dir, grid_file[q]);
        struct stat st;
        LbCsvTable t;
        if (!path)
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory");
        else if (q == 2 && stat(path, &st) != 0)
            ; /* energy_speedup.csv where the sweep wrote one (older sweeps did not) */
        else if ((rc = lb_csv_read_file(path, 0, &t)) == LB_OK) {
            rc = parse_grid(&t, path, g, q);
            lb_csv_table_free(&t);
        }
        free(path);
    }
    if (rc != LB_OK)
        lb_grid_free(g);
    return rc;
}
