/* The sweep loop: see sweep.h. Order of cells: for each n ascending, the standard model, then
 * the Linformer for each k < n ascending. */
#include "cmd/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/plan.h"
#include "attn/status.h"
#include "cmd/commands.h"
#include "cmd/outdir.h"
#include "cmd/progress.h"
#include "lb_config.h"
#include "lb_revision.h"
#include "reports/meta.h"
#include "reports/raw.h"

static void list_text(char *buf, size_t size, const int64_t *v, size_t count)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "", (long long)v[i]);
}

static void now_text(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

/* meta.csv: what ran, where, with what; rewritten at the end with the sweep's outcome. */
static int write_meta(const LbSweep *s, LbBackend *be, const char *start, const char *status)
{
    const LbModelConfig *m = &s->opt.model;
    LbDeviceInfo d;
    memset(&d, 0, sizeof d);
    d.cc_major = d.cc_minor = d.sm_count = -1;
    d.driver_version = d.runtime_version = d.cublas_version = -1;
    d.sm_clock_mhz = d.sm_clock_max_mhz = d.mem_clock_mhz = -1;
    d.total_bytes = d.free_bytes = -1;
    if (be->ops->describe(be, &d) != LB_OK)
        snprintf(d.name, sizeof d.name, "unknown");
    char nlist[1024], klist[1024], end[64] = "";
    list_text(nlist, sizeof nlist, s->n, s->nn);
    list_text(klist, sizeof klist, s->k, s->nk);
    if (strcmp(status, "running") != 0)
        now_text(end, sizeof end);

    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    int rc = LB_OK;
#define SET(key, ...)                                          \
    do {                                                       \
        if (rc == LB_OK)                                       \
            rc = lb_meta_set(&meta, key, __VA_ARGS__);         \
    } while (0)
    SET("linbench_version", "%s", LB_VERSION);
    SET("git_revision", "%s", LB_GIT_REVISION);
    SET("command_line", "%s", s->command_line);
    SET("start_time", "%s", start);
    SET("end_time", "%s", end);
    SET("status", "%s", status);
    SET("device", "%s", be->ops->name);
    SET("device_name", "%s", d.name);
    if (d.cc_major >= 0)
        SET("compute_capability", "%d.%d", d.cc_major, d.cc_minor);
    else
        SET("compute_capability", "%s", "");
    SET("sm_count", "%d", d.sm_count);
    SET("memory_total_bytes", "%lld", (long long)d.total_bytes);
    SET("memory_budget_bytes", "%llu", (unsigned long long)s->budget);
    if (s->opt.mem_limit)
        SET("mem_limit", "%llu", (unsigned long long)s->opt.mem_limit);
    else
        SET("mem_limit", "%s", "");
    SET("driver_version", "%d", d.driver_version);
    SET("runtime_version", "%d", d.runtime_version);
    SET("cublas_version", "%d", d.cublas_version);
    SET("sm_clock_mhz", "%d", d.sm_clock_mhz);
    SET("sm_clock_max_mhz", "%d", d.sm_clock_max_mhz);
    SET("mem_clock_mhz", "%d", d.mem_clock_mhz);
    SET("dtype", "%s", lb_dtype_name(m->dtype));
    SET("storage_dtype", "%s", lb_dtype_name(be->storage));
    SET("tf32", "%d", s->opt.tf32);
    SET("layers", "%d", m->layers);
    SET("d_model", "%d", m->d_model);
    SET("heads", "%d", m->heads);
    SET("ffn", "%d", m->ffn);
    SET("vocab", "%d", m->vocab);
    SET("sharing", "%s", lb_sharing_name(m->sharing));
    SET("order", "%s", lb_order_name(m->order));
    SET("seed", "%llu", (unsigned long long)s->opt.seed);
    SET("n_list", "%s", nlist);
    SET("k_list", "%s", klist);
    SET("min_passes", "%d", s->opt.timing.min_passes);
    SET("cell_time_s", "%g", s->opt.timing.cap_seconds);
    SET("max_batch", "%lld", (long long)s->opt.timing.max_batch);
#undef SET
    char path[4096];
    lb_outdir_path(path, sizeof path, s->dir, "meta.csv");
    if (rc == LB_OK)
        rc = lb_meta_write(path, &meta);
    lb_meta_free(&meta);
    return rc;
}

/* Whether raw rows already hold a finished (ok or OOM) measurement of this cell. */
static int already_measured(const LbCellResult *rows, size_t count, LbModelKind model, int64_t n, int64_t k)
{
    for (size_t i = 0; i < count; i++) {
        const LbCellResult *r = &rows[i];
        if (r->model == model && r->n == n && (model == LB_MODEL_STANDARD || r->k == k) &&
            r->status != LB_CELL_ERROR)
            return 1;
    }
    return 0;
}

static int count_cells(const LbSweep *s)
{
    int total = 0;
    for (size_t i = 0; i < s->nn; i++) {
        total++;
        for (size_t j = 0; j < s->nk; j++)
            total += s->k[j] < s->n[i];
    }
    return total;
}

/* Grids from every row in raw.csv (earlier runs' too, when resuming), then the summary. */
static int write_grids(const LbSweep *s, int print)
{
    char path[4096];
    lb_outdir_path(path, sizeof path, s->dir, "raw.csv");
    LbCellResult *rows = NULL;
    size_t count = 0;
    int rc = lb_raw_read(path, &rows, &count);
    if (rc != LB_OK)
        return rc;
    LbGrid g;
    rc = lb_grid_from_raw(rows, count, s->n, s->nn, s->k, s->nk, &g);
    free(rows);
    if (rc != LB_OK)
        return rc;
    rc = lb_grids_write(s->dir, &g);
    if (rc == LB_OK && print) {
        lb_grid_print(stdout, &g, s->format);
        fflush(stdout);
    }
    lb_grid_free(&g);
    return rc;
}

int lb_sweep_run(const LbSweep *s, LbBackend *be, volatile sig_atomic_t *stop)
{
    char start[64], path[4096];
    if (s->resumed_start_time)
        snprintf(start, sizeof start, "%s", s->resumed_start_time);
    else
        now_text(start, sizeof start);

    LbCellResult *done = NULL;
    size_t done_count = 0;
    lb_outdir_path(path, sizeof path, s->dir, "raw.csv");
    if (s->resume && lb_raw_read(path, &done, &done_count) != LB_OK)
        return lb_runtime_error(LB_ERR_IO);

    int rc = write_meta(s, be, start, "running");
    LbRawWriter *raw = NULL;
    if (rc == LB_OK)
        rc = lb_raw_open(path, s->resume, &raw);
    if (rc != LB_OK) {
        free(done);
        return lb_runtime_error(rc);
    }

    LbProgress progress;
    lb_progress_start(&progress, count_cells(s), s->quiet);
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    int index = 0, failed = 0, fatal = 0, interrupted = 0;
    for (size_t i = 0; i < s->nn && !fatal && !interrupted; i++) {
        for (ptrdiff_t j = -1; j < (ptrdiff_t)s->nk && !fatal && !interrupted; j++) {
            LbModelConfig cfg = s->opt.model;
            cfg.n = s->n[i];
            if (j < 0) {
                cfg.kind = LB_MODEL_STANDARD;
                cfg.k = 0;
            } else {
                if (s->k[j] >= cfg.n)
                    continue;
                cfg.kind = LB_MODEL_LINFORMER;
                cfg.k = s->k[j];
            }
            index++;
            if (already_measured(done, done_count, cfg.kind, cfg.n, cfg.k)) {
                progress.total--;
                index--;
                continue;
            }
            lb_progress_begin(&progress, index, &cfg,
                              lb_plan_largest_batch(&cfg, &pp, s->budget, s->opt.timing.max_batch));
            LbCellResult r;
            int mrc = lb_measure_cell(be, &cfg, s->budget, &s->opt.timing, s->opt.seed, stop, &r);
            if (mrc == LB_ERR_INTERRUPTED) {
                interrupted = 1; /* the cell in progress is lost, the finished ones are on disk */
                break;
            }
            if (mrc != LB_OK) {
                failed = 1;
                fatal = mrc == LB_ERR_DEVICE; /* a CUDA error may leave the context unusable */
                char k_text[32] = "";
                if (cfg.kind == LB_MODEL_LINFORMER)
                    snprintf(k_text, sizeof k_text, " k=%lld", (long long)cfg.k);
                fprintf(stderr, "%slinbench: %s n=%lld%s failed: %s\n", progress.mode == 2 ? "\r\033[K" : "",
                        lb_model_name(cfg.kind), (long long)cfg.n, k_text, r.error);
            }
            int wrc = lb_raw_append(raw, &r);
            if (wrc != LB_OK) {
                lb_raw_close(raw);
                free(done);
                return lb_runtime_error(wrc);
            }
            lb_progress_end(&progress, index, &r);
        }
    }
    lb_progress_finish(&progress);
    lb_raw_close(raw);
    free(done);
    if (*stop)
        interrupted = 1;

    rc = write_grids(s, 1);
    if (rc == LB_OK)
        rc = write_meta(s, be, start, interrupted ? "interrupted" : fatal ? "failed" : failed ? "finished with errors" : "complete");
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    if (interrupted) {
        fprintf(stderr, "linbench: interrupted; finished cells are in %s (continue with: linbench sweep --resume %s)\n",
                s->dir, s->dir);
        return LB_EXIT_INTERRUPTED;
    }
    if (!s->quiet)
        fprintf(stderr, "linbench: results in %s\n", s->dir);
    return failed ? LB_EXIT_FAILURE : LB_EXIT_OK;
}
