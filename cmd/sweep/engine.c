/* The sweep engine: see engine.h. */
#include "cmd/sweep/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attn/plan.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "lb_config.h"
#include "lb_revision.h"
#include "cmd/sweep/predict.h"
#include "reports/atomic_file.h"
#include "reports/breakdown_csv.h"
#include "reports/csv_io.h"
#include "reports/peer_dir.h"
#include "reports/raw.h"
#include "reports/speedups.h"

LbModelConfig lb_sweep_cell_config(const LbRunSettings *s, const LbSweepCell *c)
{
    LbModelConfig cfg = s->model;
    cfg.kind = c->model;
    cfg.n = c->n;
    cfg.k = c->k;
    return cfg;
}

/* A cell's cost for the split: the predictor's time for a verification pass and min_passes timed
 * ones at its largest batch; only the ratios count. A cell that fits nowhere costs nothing. */
static double cell_cost(const LbRunSettings *s, const LbPredictCard *card, uint64_t budget, const LbSweepCell *c)
{
    const LbPredictParams p = lb_predict_defaults();
    const LbModelConfig cfg = lb_sweep_cell_config(s, c);
    LbCellResult r;
    if (lb_predict_cell(&cfg, card, &p, budget, s->timing.max_batch, &r, NULL) != LB_OK) {
        lb_error_clear();
        return 0;
    }
    return r.status == LB_CELL_OK ? (1.0 + s->timing.min_passes) * r.median_ms : 0;
}

typedef struct {
    double cost;
    size_t index; /* in the sweep's order */
} CostedCell;

static int by_cost_desc(const void *a, const void *b)
{
    const CostedCell *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

int lb_sweep_shard_assign(const LbRunSettings *s, const LbSweepCell *cells, size_t count, int **shard_of)
{
    const int shards = s->shard_count > 0 ? s->shard_count : 1;
    CostedCell *c = malloc((count ? count : 1) * sizeof *c);
    int *out = malloc((count ? count : 1) * sizeof *out);
    double *load = calloc((size_t)shards, sizeof *load);
    LbPredictCard card;
    char why[160];
    const LbGpuSpec *h100 = lb_gpu_spec_find("h100-sxm"); /* one fixed card: the same split anywhere */
    const int priced = shards > 1 && h100 && lb_predict_card_from_spec(h100, s->model.dtype, s->tf32, &card, why, sizeof why) == 0;
    if (!c || !out || !load) {
        free(c);
        free(out);
        free(load);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory splitting the grid into shards");
    }
    LbRunSettings unlimited = *s; /* whatever --mem-limit says: the same split on any machine */
    unlimited.mem_limit = 0;
    const uint64_t budget = priced ? lb_predict_budget(&unlimited, &card) : 0;
    for (size_t i = 0; i < count; i++)
        c[i] = (CostedCell){priced ? cell_cost(s, &card, budget, &cells[i]) : 0, i};
    qsort(c, count, sizeof *c, by_cost_desc);
    for (size_t i = 0; i < count; i++) {
        int least = 0;
        for (int k = 1; k < shards; k++)
            if (load[k] < load[least])
                least = k;
        load[least] += c[i].cost;
        out[c[i].index] = least;
    }
    free(c);
    free(load);
    *shard_of = out;
    return LB_OK;
}

static int listed(const int64_t *list, size_t count, int64_t v)
{
    for (size_t i = 0; i < count; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

/* What of row r the settings do not hold, into why; 0 when it is one of cells (shard_of: each
 * cell's shard). */
static int foreign(const LbRunSettings *s, const LbSweepCell *cells, size_t ncells, const int *shard_of,
                   const LbCellResult *r, char *why, size_t size)
{
    const int has_k = lb_model_has_k(r->model);
    /* a row of one of its cells measured with another dtype, sharing or order (raw.csv's columns
     * that carry a setting besides model, n and k) is not the sweep's either */
    LbSettingId differs = LB_SET_COUNT;
    const char *held = NULL;
    if (r->dtype != s->model.dtype)
        differs = LB_SET_DTYPE, held = lb_dtype_name(r->dtype);
    else if (has_k && r->sharing != s->model.sharing)
        differs = LB_SET_SHARING, held = lb_sharing_name(r->sharing);
    else if (has_k && r->order != s->model.order)
        differs = LB_SET_ORDER, held = lb_order_name(r->order);
    if (differs != LB_SET_COUNT) {
        char *want = lb_setting_text(s, differs);
        snprintf(why, size, "%s %s is not meta.csv's %s (%s)", lb_settings[differs].flag, held,
                 lb_settings[differs].key, want ? want : "?");
        free(want);
        return 1;
    }
    for (size_t c = 0; c < ncells; c++) {
        if (!lb_sweep_cell_is(&cells[c], r))
            continue;
        if (shard_of[c] == s->shard_index)
            return 0;
        char cell[96];
        lb_model_cell_name(lb_model_name(r->model), r->model, r->n, r->k, cell, sizeof cell);
        snprintf(why, size, "%s is a cell of shard %d/%d, not of meta.csv's shard %d/%d", cell, shard_of[c],
                 s->shard_count, s->shard_index, s->shard_count);
        return 1;
    }
    LbSettingId id = LB_SET_COUNT;
    long long value = 0;
    if (!(s->models >> r->model & 1))
        id = LB_SET_MODELS;
    else if (!listed(s->n, s->nn, r->n))
        id = LB_SET_N, value = (long long)r->n;
    else if (has_k && !listed(s->k, s->nk, r->k))
        id = LB_SET_K, value = (long long)r->k;
    if (id == LB_SET_COUNT) { /* its n and k are the grid's, and the model has no cell there */
        snprintf(why, size, "%s has no cell at n %lld, k %lld", lb_model_name(r->model), (long long)r->n,
                 (long long)r->k);
        return 1;
    }
    char *list = lb_setting_text(s, id);
    if (id == LB_SET_MODELS)
        snprintf(why, size, "model %s is not in meta.csv's %s (%s)", lb_model_name(r->model), lb_settings[id].key,
                 list ? list : "?");
    else
        snprintf(why, size, "%s %lld is not in meta.csv's %s (%s)", lb_settings[id].flag, value, lb_settings[id].key,
                 list ? list : "?");
    free(list);
    return 1;
}

int lb_sweep_raw_foreign(const LbRunSettings *s, const char *raw_path, size_t *line, size_t *how_many, char *why,
                         size_t size)
{
    LbCellResult *rows = NULL;
    size_t *lines = NULL, count = 0, ncells = 0;
    LbSweepCell *cells = NULL;
    int *shard_of = NULL;
    *how_many = 0;
    *line = 0;
    int rc = lb_raw_read_named(raw_path, NULL, NULL, &rows, &lines, &count, NULL);
    if (rc == LB_OK)
        rc = lb_sweep_cells(s->models, s->n, s->nn, s->k, s->nk, &cells, &ncells);
    if (rc == LB_OK)
        rc = lb_sweep_shard_assign(s, cells, ncells, &shard_of);
    for (size_t i = 0; rc == LB_OK && i < count; i++) {
        char one[512];
        if (!foreign(s, cells, ncells, shard_of, &rows[i], one, sizeof one))
            continue;
        if ((*how_many)++ == 0) {
            *line = lines[i];
            snprintf(why, size, "%s", one);
        }
    }
    free(rows);
    free(lines);
    free(cells);
    free(shard_of);
    return rc;
}

/* --resume DIR: meta.csv and raw.csv readable, the run measured by this linbench version; its
 * budget into *budget, its settings taken where the user gave none. */
static int resume_read(const char *dir, LbRunSettings *s, LbMeta *meta, uint64_t *budget)
{
    char path[4096];
    struct stat st;
    LbCellResult *rows = NULL;
    size_t count = 0;
    lb_error_clear();
    int rc = lb_sweep_meta_read(dir, meta);
    lb_path_join_buf(path, sizeof path, dir, "raw.csv");
    /* rows that do not read would stop the sweep only once the backend is open and checked */
    if (rc == LB_OK && stat(path, &st) == 0)
        rc = lb_raw_read(path, &rows, &count);
    free(rows);
    /* nor would a breakdown.csv that does not read: after a cell's row, with meta.csv saying failed */
    LbBreakdownRecord *recs = NULL;
    if (rc == LB_OK)
        rc = lb_breakdown_read(dir, 1, &recs, &count);
    free(recs);
    if (rc == LB_ERR_FORMAT) {
        char why[LB_ERROR_MAX];
        snprintf(why, sizeof why, "%s", lb_error_message());
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: %s", dir, why);
    }
    if (rc != LB_OK)
        return rc;
    if (lb_meta_is_predicted(meta)) /* nothing in it was measured: a resume would mix the two */
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: it was written by linbench predict (meta.csv's %s is %s), not measured: should be a directory written by linbench sweep",
                       dir, LB_META_SOURCE, LB_SOURCE_PREDICTED);
    const char *version = lb_meta_get(meta, "linbench_version");
    if (!version || strcmp(version, LB_VERSION) != 0)
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: it was written by linbench %s and this is linbench %s: should be resumed with linbench %s",
                       dir, version && *version ? version : "(unknown version)", LB_VERSION,
                       version && *version ? version : "of that version");
    if ((rc = lb_run_settings_take(s, meta, dir)) != LB_OK)
        return rc;
    /* the budget the cells are planned in: as --mem-limit's range, and within meta.csv's own
     * mem_limit (a flag that differs is compared later, and named there), or a budget edited down
     * would write every missing cell as OOM */
    const char *b = lb_meta_get(meta, "memory_budget_bytes"), *limit = lb_settings_meta_value(meta, LB_SET_MEM_LIMIT);
    uint64_t most = 0;
    if (!limit || lb_parse_size(limit, &most) || most == 0)
        most = UINT64_MAX;
    const uint64_t least = (uint64_t)lb_settings[LB_SET_MEM_LIMIT].min;
    if (!b || lb_parse_size(b, budget) || *budget < least || *budget > most) {
        char low[32], high[32] = "";
        lb_format_size(least, low, sizeof low);
        if (most != UINT64_MAX)
            lb_format_size(most, high, sizeof high);
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: %s/meta.csv's memory_budget_bytes is \"%s\": should be a byte count of at least %s%s%s",
                       dir, dir, b ? b : "", low, most != UINT64_MAX ? " and at most its mem_limit, " : "", high);
    }
    if (!(s->given & (UINT64_C(1) << LB_SET_K)))
        s->cmd.k_text = lb_settings_meta_value(meta, LB_SET_K);
    return LB_OK;
}

int lb_sweep_settings_check(const char *resume, LbRunSettings *s, LbMeta *meta, uint64_t *budget, char *notes,
                            size_t size)
{
    notes[0] = '\0';
    int rc = resume ? resume_read(resume, s, meta, budget) : LB_OK;
    if (rc == LB_OK)
        rc = lb_run_settings_check_grid(s, notes, size);
    if (rc != LB_OK || !resume)
        return rc;
    if ((rc = lb_run_settings_compare(s, meta, resume)) != LB_OK)
        return rc;
    /* rows of other cells are refused, not dropped: only whoever put them there knows where they belong */
    char path[4096], why[512];
    lb_path_join_buf(path, sizeof path, resume, "raw.csv");
    size_t line = 0, count = 0;
    struct stat st;
    if (stat(path, &st) != 0 || lb_sweep_raw_foreign(s, path, &line, &count, why, sizeof why) != LB_OK || count == 0) {
        lb_error_clear();
        return LB_OK;
    }
    return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: %s line %zu: %s (%zu such row%s): should hold only rows of the sweep its meta.csv describes",
                   resume, path, line, why, count, count == 1 ? "" : "s");
}

const char *lb_sweep_outcome_name(LbSweepOutcome o)
{
    static const char *const names[] = {"complete", "finished with errors", "failed", "interrupted"};
    return o >= LB_SWEEP_COMPLETE && o <= LB_SWEEP_INTERRUPTED ? names[o] : "?";
}

void lb_sweep_now_text(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

/* Energy across raw.csv's rows (all runs', when resuming), for meta.csv's energy and energy_note. */
typedef struct EnergyTally {
    size_t ok, with_energy;
    int columns;
    char first_why[256]; /* the first reason this process saw for an ok cell without energy */
} EnergyTally;

/* meta.csv's energy (measured, partial, none; empty while running) and energy_note (METHOD.md,
 * "Energy"). */
static void energy_text(const LbSweepDevice *dev, const EnergyTally *t, const char **state, char *note,
                        size_t size)
{
    note[0] = '\0';
    *state = "";
    if (dev->energy_note[0])
        snprintf(note, size, "%s", dev->energy_note);
    if (!t)
        return;
    *state = t->ok > 0 && t->with_energy == t->ok ? "measured" : t->with_energy > 0 ? "partial" : "none";
    if (t->with_energy == t->ok || dev->energy_note[0])
        return;
    if (!t->columns)
        snprintf(note, size, "raw.csv was begun by a linbench without the energy columns; its rows, and a resume's, carry none");
    else
        snprintf(note, size, "%zu of %zu cells have no energy: %s", t->ok - t->with_energy, t->ok,
                 t->first_why[0] ? t->first_why
                                 : "the counter could not be read, or did not advance over their timed passes");
}

int lb_sweep_meta_history(const LbSweepJob *job, const char *now, const char *status, LbMeta *meta)
{
    const char *first_command = job->previous ? lb_meta_get(job->previous, "command_line") : NULL;
    const char *first_start = job->previous ? lb_meta_get(job->previous, "start_time") : NULL;
    char end[64] = "";
    if (strcmp(status, "running") != 0)
        lb_sweep_now_text(end, sizeof end);
    int rc = lb_meta_set(meta, "command_line", "%s", first_command ? first_command : job->command_line);
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "start_time", "%s", first_start ? first_start : now);
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "end_time", "%s", end);
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "status", "%s", status);
    /* the earlier resumes' keys, and this one's; a merged directory's parts: where its first
     * rows came from */
    int resumes = 0;
    for (size_t i = 0; job->previous && i < job->previous->count && rc == LB_OK; i++) {
        const char *key = job->previous->keys[i];
        const int part = strcmp(key, "parts") == 0 || (strncmp(key, "part_", 5) == 0 && key[5] >= '1' && key[5] <= '9');
        if (!part && strncmp(key, "resume_", 7) != 0)
            continue;
        rc = lb_meta_set(meta, key, "%s", job->previous->values[i]);
        if (!part && atoi(key + 7) > resumes)
            resumes = atoi(key + 7);
    }
    if (job->previous && rc == LB_OK) {
        char key[48];
        snprintf(key, sizeof key, "resume_%d_time", resumes + 1);
        rc = lb_meta_set(meta, key, "%s", now);
        snprintf(key, sizeof key, "resume_%d_command", resumes + 1);
        if (rc == LB_OK)
            rc = lb_meta_set(meta, key, "%s", job->command_line);
    }
    return rc;
}

/* meta.csv: what ran, where, with what. A value that cannot be known is an empty field, never a
 * -1 that a spreadsheet would average. */
static int write_meta(const LbSweepJob *job, const LbSweepDevice *dev, const char *now, const char *status,
                      const EnergyTally *energy, const LbMeta *extra)
{
    const LbRunSettings *s = job->settings;
    const LbDeviceInfo d = dev->info;

    LbMeta meta = {0};
    int rc = LB_OK;
#define SET(key, ...)                                          \
    do {                                                       \
        if (rc == LB_OK)                                       \
            rc = lb_meta_set(&meta, key, __VA_ARGS__);         \
    } while (0)
#define SET_IF(known, key, ...)                                \
    do {                                                       \
        if (known)                                             \
            SET(key, __VA_ARGS__);                             \
        else                                                   \
            SET(key, "%s", "");                                \
    } while (0)
#define SET_KNOWN(key, v) SET_IF((v) >= 0, key, "%lld", (long long)(v)) /* an int, -1 when unknown */
    SET(LB_META_TOOL, "%s", LB_TOOL_LINBENCH); /* what wrote the result: bench/peer writes "peer" */
    /* measured, or predicted (linbench predict, whose own keys follow): compare and plot label a
     * prediction, and a sweep never resumes one */
    SET(LB_META_SOURCE, "%s", LB_SOURCE_MEASURED);
    for (size_t i = 0; extra && i < extra->count; i++)
        SET(extra->keys[i], "%s", extra->values[i]);
    SET("linbench_version", "%s", LB_VERSION);
    SET("git_revision", "%s", LB_GIT_REVISION);
    if (rc == LB_OK)
        rc = lb_sweep_meta_history(job, now, status, &meta);
    SET("device_name", "%s", d.name);
    SET_IF(d.cc_major >= 0, "compute_capability", "%d.%d", d.cc_major, d.cc_minor);
    SET_KNOWN("sm_count", d.sm_count);
    SET_KNOWN("memory_total_bytes", d.total_bytes);
    SET("memory_budget_bytes", "%llu", (unsigned long long)job->budget);
    SET_IF(s->device == LB_DEVICE_CUDA && d.total_bytes > 0, "memory_headroom_bytes", "%llu",
           (unsigned long long)lb_run_settings_headroom(s, (uint64_t)d.total_bytes));
    SET_KNOWN("driver_version", d.driver_version);
    SET_KNOWN("runtime_version", d.runtime_version);
    SET_KNOWN("cublas_version", d.cublas_version);
    SET_KNOWN("sm_clock_mhz", d.sm_clock_mhz);
    SET_KNOWN("sm_clock_max_mhz", d.sm_clock_max_mhz);
    SET_KNOWN("mem_clock_mhz", d.mem_clock_mhz);
    SET("storage_dtype", "%s", lb_dtype_name(dev->storage));
    const char *energy_state;
    char energy_note[512];
    energy_text(dev, energy, &energy_state, energy_note, sizeof energy_note);
    SET("energy", "%s", energy_state);
    SET("energy_note", "%s", energy_note);
    SET("matmul_tuning", "%s", dev->matmul_tuning);
    /* sweep --gpus: how many GPUs measured in this run (the rows of raw.csv name each one) */
    SET("gpu_count", "%d", dev->gpu_count > 0 ? dev->gpu_count : 1);
    for (int id = 0; id < LB_SET_RECORDED; id++) { /* every setting, in the table's order */
        char *v = lb_setting_text(s, (LbSettingId)id);
        if (!v && rc == LB_OK)
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory writing meta.csv");
        SET(lb_settings[id].key, "%s", v ? v : "");
        free(v);
    }
    SET("min_passes", "%d", s->timing.min_passes);
    /* passed only where every run's backend was checked; the largest error of the runs that did */
    const char *earlier = job->previous ? lb_meta_get(job->previous, "check") : NULL;
    const int skipped = !job->check.ran || (earlier && strcmp(earlier, "skipped") == 0);
    SET("check", "%s", job->check.ran && job->check.failures ? "failed" : skipped ? "skipped" : "passed");
    double most = job->check.max_rel_error, b;
    const char *before = job->previous ? lb_meta_get(job->previous, "check_max_rel_error") : NULL;
    if (before && *before && lb_csv_parse_double(before, &b) == 0 && b > most)
        most = b;
    SET_IF(job->check.ran, "check_max_rel_error", "%.3g", most);
    SET_IF(job->check.ran, "check_seed", "%llu", (unsigned long long)job->check.seed);
    /* this run's calibration (attn/measure/calibrate.h); empty when it did not run */
    SET("calibration", "%s", job->calibration ? "measured" : "skipped");
    SET("calibration_note", "%s", job->calibration_note ? job->calibration_note : "");
    const LbCalibration *cal = job->calibration; /* read only where not NULL */
    SET_IF(cal, "calibration_tflop_per_s", "%.6g", cal->tflop_per_s);
    SET_IF(cal, "calibration_copy_gb_per_s", "%.6g", cal->copy_gb_per_s);
    SET_IF(cal, "calibration_product_dim", "%lld", (long long)cal->dim);
    SET_IF(cal, "calibration_copy_bytes", "%lld", (long long)cal->copy_bytes);
#undef SET_KNOWN
#undef SET_IF
#undef SET
    char *path = lb_path_join(job->dir, "meta.csv");
    if (!path && rc == LB_OK)
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory writing meta.csv");
    if (rc == LB_OK)
        rc = lb_meta_write(path, &meta);
    free(path);
    lb_meta_free(&meta);
    return rc;
}

/* Whether raw rows already hold a finished (ok or OOM) measurement of this cell. */
static int already_measured(const LbCellResult *rows, size_t count, const LbSweepCell *c)
{
    for (size_t i = 0; i < count; i++)
        if (lb_sweep_cell_is(c, &rows[i]) && rows[i].status != LB_CELL_ERROR)
            return 1;
    return 0;
}

/* speedups.csv and the two grids from every row in raw.csv (earlier runs' too, when resuming),
 * written; the grids kept in *out when out is not NULL. */
static int write_grids(const LbSweepJob *job, const char *raw_path, LbGrid *out, EnergyTally *energy)
{
    const LbRunSettings *s = job->settings;
    LbCellResult *rows = NULL;
    size_t count = 0;
    LB_TRY(lb_raw_read(raw_path, &rows, &count));
    energy->ok = energy->with_energy = 0;
    for (size_t i = 0; i < count; i++) {
        energy->ok += rows[i].status == LB_CELL_OK;
        energy->with_energy += rows[i].status == LB_CELL_OK && rows[i].energy_j_per_seq > 0;
    }
    energy->columns = lb_raw_has_energy_columns(raw_path);
    int measured[LB_MODEL_COUNT];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        measured[m] = (s->models >> m) & 1;
    const int rc = lb_tables_write(job->dir, rows, count, s->n, s->nn, s->k, s->nk, measured, out);
    free(rows);
    return rc;
}

void lb_sweep_device_describe(LbBackend *be, LbSweepDevice *dev)
{
    memset(dev, 0, sizeof *dev);
    LbDeviceInfo *d = &dev->info;
    d->cc_major = d->cc_minor = d->sm_count = -1;
    d->driver_version = d->runtime_version = d->cublas_version = -1;
    d->sm_clock_mhz = d->sm_clock_max_mhz = d->mem_clock_mhz = -1;
    d->total_bytes = d->free_bytes = -1;
    dev->gpu_count = 1;
    if (!be)
        return;
    if (be->ops->describe(be, d) != LB_OK)
        snprintf(d->name, sizeof d->name, "unknown");
    double joules;
    if (be->ops->energy_j(be, &joules) != LB_OK) {
        snprintf(dev->energy_note, sizeof dev->energy_note, "%s", lb_error_message());
        lb_error_clear();
    }
    dev->storage = be->storage;
}

/* What linear's algorithm tuning chose over the run's cells (no gain where the times are the
 * emulated device's host clock), or that it was off. */
static void device_tuning(LbBackend *be, LbSweepDevice *dev)
{
    char *t = dev->matmul_tuning;
    const size_t size = sizeof dev->matmul_tuning;
    LbMatmulTuning m;
    t[0] = '\0';
    if (!be->ops->matmul_tuning || be->ops->matmul_tuning(be, &m) != LB_OK) {
        lb_error_clear();
        return;
    }
    if (!be->autotune) {
        snprintf(t, size, "off: the heuristic's first algorithm for every shape");
        return;
    }
    const int len = snprintf(t, size, "%lld shapes timed, %lld kept the heuristic's first", (long long)m.shapes,
                             (long long)m.kept_first);
    if (m.host_clock)
        snprintf(t + len, size - (size_t)len, "; emulated device: host-clock times, no GPU figure");
    else if (m.gain > 1.0)
        snprintf(t + len, size - (size_t)len, "; largest gain %.2fx (%.4f ms to %.4f ms)", m.gain, m.first_ms, m.best_ms);
}

/* Where this process measures, for each row: the device's UUID and the host's name. */
static void set_origin(LbCellResult *r, const LbSweepDevice *dev)
{
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", dev->info.uuid);
    char host[sizeof r->host];
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    snprintf(r->host, sizeof r->host, "%s", host);
}

static void tell(const LbSweepJob *job, LbSweepEvent e)
{
    if (job->progress)
        job->progress(job->progress_ctx, &e);
}

/* A sweep that stops on an error of its own after meta.csv said running: meta.csv says failed where
 * it can still be written, so the directory claims no run that no process is doing. The error is
 * kept for the caller to print. */
static void say_failed(const LbSweepJob *job, const LbSweepDevice *dev, const char *now, const LbMeta *extra)
{
    char *why = strdup(lb_error_message());
    (void)write_meta(job, dev, now, lb_sweep_outcome_name(LB_SWEEP_FAILED), NULL, extra);
    if (why) {
        lb_error_set(__FILE__, __LINE__, "%s", why);
        free(why);
    }
}

/* The one cell loop: each cell of this run measured on `be`, or (be NULL) taken from `rows`, one per
 * cell of the grid in lb_sweep_cells' order; `given` (NULL: be's) describes the device, `extra`
 * adds meta.csv keys. */
static int run_cells(const LbSweepJob *job, LbBackend *be, const LbCellResult *rows, const LbSweepDevice *given,
                     const LbMeta *extra, const volatile sig_atomic_t *stop, LbSweepOutcome *outcome, LbGrid *grid)
{
    const LbRunSettings *s = job->settings;
    char now[64];
    lb_sweep_now_text(now, sizeof now);

    LbCellResult *done = NULL;
    size_t done_count = 0, ncells = 0, ntodo = 0;
    LbSweepCell *cells = NULL;
    size_t *todo = NULL; /* indices into cells of what this run measures */
    int *shard_of = NULL;
    LbRawWriter *raw = NULL;
    LbSweepDevice dev;
    if (given)
        dev = *given;
    else
        lb_sweep_device_describe(be, &dev);
    int started = 0, failed = 0, fatal = 0, interrupted = 0;
    int running = 0; /* meta.csv says running: this process must say how it ended */
    EnergyTally energy = {0};
    char *raw_path = lb_path_join(job->dir, "raw.csv");
    int rc = raw_path ? LB_OK : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    struct stat st;
    /* A sweep killed between meta.csv and its first row has no raw.csv yet: nothing is done. */
    if (rc == LB_OK && job->previous && stat(raw_path, &st) == 0)
        rc = lb_raw_read(raw_path, &done, &done_count);
    if (rc == LB_OK)
        rc = lb_sweep_cells(s->models, s->n, s->nn, s->k, s->nk, &cells, &ncells);
    if (rc == LB_OK) /* which cells are this shard's: all of them when not sharded */
        rc = lb_sweep_shard_assign(s, cells, ncells, &shard_of);
    if (rc == LB_OK && !(todo = malloc((ncells ? ncells : 1) * sizeof *todo)))
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory listing the sweep's cells");
    for (size_t c = 0; rc == LB_OK && c < ncells; c++)
        if (shard_of[c] == s->shard_index && !already_measured(done, done_count, &cells[c]))
            todo[ntodo++] = c;
    /* A resume opens raw.csv before meta.csv says running: a raw.csv it refuses leaves the directory
     * as it was. A new run writes meta.csv first, so that rows never lie in a directory without it. */
    if (rc == LB_OK && job->previous)
        rc = lb_raw_open(raw_path, 1, &raw);
    if (rc == LB_OK)
        rc = write_meta(job, &dev, now, "running", NULL, extra);
    running = rc == LB_OK;
    if (rc == LB_OK && !raw)
        rc = lb_raw_open(raw_path, 0, &raw);
    if (rc != LB_OK)
        goto out;

    started = 1;
    tell(job, (LbSweepEvent){LB_SWEEP_START, 0, (int)ntodo, NULL, 0, NULL});
    for (size_t t = 0; t < ntodo && !fatal; t++) {
        LbModelConfig cfg = lb_sweep_cell_config(s, &cells[todo[t]]);
        const int index = (int)t + 1;
        LbCellResult r;
        int mrc = LB_OK;
        if (rows) {
            r = rows[todo[t]];
        } else {
            const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
            tell(job, (LbSweepEvent){LB_SWEEP_BEGIN, index, (int)ntodo, &cfg,
                                     lb_plan_largest_batch(&cfg, &pp, job->budget, s->timing.max_batch), NULL});
            mrc = lb_measure_cell(be, &cfg, job->budget, &s->timing, s->seed, stop, &r);
            if (mrc == LB_ERR_INTERRUPTED) {
                interrupted = 1; /* the cell in progress is lost, the finished ones are on disk */
                break;
            }
            if (mrc != LB_OK) {
                failed = 1;
                fatal = mrc == LB_ERR_DEVICE; /* a CUDA error may leave the context unusable */
            }
            set_origin(&r, &dev);
        }
        if (r.status == LB_CELL_OK && !(r.energy_j_per_seq > 0) && !energy.first_why[0])
            snprintf(energy.first_why, sizeof energy.first_why, "%s", r.energy_why);
        rc = lb_raw_append(raw, &r);
        if (rc != LB_OK)
            goto out;
        tell(job, (LbSweepEvent){LB_SWEEP_END, index, (int)ntodo, &cfg, 0, &r});
        /* --breakdown: one more pass at the measured batch; failing, it ends the sweep as a failed write does */
        if (be && s->breakdown && mrc == LB_OK && r.status == LB_CELL_OK) {
            LbBreakdownRecord *recs = NULL;
            size_t nrecs = 0;
            rc = lb_breakdown_measure(be, &cfg, r.batch, s->seed, job->calibration, &recs, &nrecs);
            if (rc == LB_OK)
                rc = lb_breakdown_add(job->dir, recs, nrecs);
            free(recs);
            if (rc != LB_OK)
                goto out;
        }
    }
    tell(job, (LbSweepEvent){LB_SWEEP_FINISH, (int)ntodo, (int)ntodo, NULL, 0, NULL});
    started = 0;
    lb_raw_close(raw);
    raw = NULL;
    if (*stop)
        interrupted = 1;
    *outcome = interrupted ? LB_SWEEP_INTERRUPTED : fatal ? LB_SWEEP_FAILED : failed ? LB_SWEEP_CELL_ERRORS : LB_SWEEP_COMPLETE;
    if (be)
        device_tuning(be, &dev);
    /* the grids, then meta.csv with the final status; the grids kept only when both are written */
    rc = write_grids(job, raw_path, grid, &energy);
    if (rc == LB_OK)
        rc = write_meta(job, &dev, now, lb_sweep_outcome_name(*outcome), &energy, extra);
    if (rc != LB_OK && grid)
        lb_grid_free(grid);
    running = rc != LB_OK;
out:
    if (started)
        tell(job, (LbSweepEvent){LB_SWEEP_FINISH, 0, (int)ntodo, NULL, 0, NULL});
    if (raw)
        lb_raw_close(raw);
    if (running && rc != LB_OK)
        say_failed(job, &dev, now, extra);
    free(raw_path);
    free(done);
    free(cells);
    free(todo);
    free(shard_of);
    return rc;
}

int lb_sweep_write_meta(const LbSweepJob *job, const LbSweepDevice *dev, const char *status, const LbMeta *extra)
{
    char now[64];
    lb_sweep_now_text(now, sizeof now);
    return write_meta(job, dev, now, status, NULL, extra);
}

int lb_sweep_engine_run(const LbSweepJob *job, LbBackend *be, const volatile sig_atomic_t *stop,
                        LbSweepOutcome *outcome, LbGrid *grid)
{
    return run_cells(job, be, NULL, NULL, NULL, stop, outcome, grid);
}

int lb_sweep_write_rows(const LbSweepJob *job, const LbSweepDevice *dev, const LbCellResult *rows, const LbMeta *extra,
                        LbGrid *grid)
{
    static const volatile sig_atomic_t never = 0;
    LbSweepOutcome outcome;
    return run_cells(job, NULL, rows, dev, extra, &never, &outcome, grid);
}
