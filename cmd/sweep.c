/* The sweep loop: see sweep.h. Order of cells: for each n ascending, the standard model, then
 * the Linformer for each k < n ascending. */
#include "cmd/sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "attn/plan.h"
#include "attn/status.h"
#include "cmd/commands.h"
#include "cmd/outdir.h"
#include "cmd/progress.h"
#include "cmd/shard.h"
#include "lb_config.h"
#include "lb_revision.h"
#include "reports/meta.h"
#include "reports/raw.h"

/* "a,b,c", malloc'd: as long as the list is, never cut (a 1 KB buffer once dropped a third of
 * a 399-value --n). */
static char *list_text(const int64_t *v, size_t count)
{
    char *buf = malloc(count * 21 + 1), *p = buf;
    if (!buf)
        return NULL;
    *p = '\0';
    for (size_t i = 0; i < count; i++)
        p += sprintf(p, "%s%lld", i ? "," : "", (long long)v[i]);
    return buf;
}

static void now_text(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

const LbSweepSetting lb_sweep_settings[] = {
    {"device", "device", LB_OPT_DEVICE, LB_GIVEN_DEVICE},
    {"mem_limit", "mem-limit", LB_OPT_MEM_LIMIT, LB_GIVEN_MEM_LIMIT},
    {"dtype", "dtype", LB_OPT_DTYPE, LB_GIVEN_DTYPE},
    {"tf32", "tf32", LB_OPT_TF32, LB_GIVEN_TF32},
    {"layers", "layers", LB_OPT_LAYERS, LB_GIVEN_LAYERS},
    {"d_model", "d-model", LB_OPT_DMODEL, LB_GIVEN_DMODEL},
    {"heads", "heads", LB_OPT_HEADS, LB_GIVEN_HEADS},
    {"ffn", "ffn", LB_OPT_FFN, LB_GIVEN_FFN},
    {"vocab", "vocab", LB_OPT_VOCAB, LB_GIVEN_VOCAB},
    {"sharing", "sharing", LB_OPT_SHARING, LB_GIVEN_SHARING},
    {"order", "order", LB_OPT_ORDER, LB_GIVEN_ORDER},
    {"seed", "seed", LB_OPT_SEED, LB_GIVEN_SEED},
    {"n_list", "n", 0, LB_GIVEN_N},
    {"k_list", "k", 0, LB_GIVEN_K},
    {"cell_time_s", "cell-time", LB_OPT_CELL_TIME, LB_GIVEN_CELL_TIME},
    {"max_batch", "max-batch", LB_OPT_MAX_BATCH, LB_GIVEN_MAX_BATCH},
    {"headroom", "headroom", LB_OPT_HEADROOM, LB_GIVEN_HEADROOM},
    {"shard", "shard", 0, LB_GIVEN_SHARD},
};
const size_t lb_sweep_setting_count = sizeof lb_sweep_settings / sizeof lb_sweep_settings[0];

static char *text(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *text(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *buf = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!buf)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return buf;
}

char *lb_sweep_setting_text(const LbSweep *s, const char *key)
{
    const LbOptions *o = &s->opt;
    const LbModelConfig *m = &o->model;
    if (strcmp(key, "device") == 0) return text("%s", o->device == LB_DEVICE_CPU ? "cpu" : "cuda");
    if (strcmp(key, "mem_limit") == 0)
        return o->mem_limit ? text("%llu", (unsigned long long)o->mem_limit) : text("%s", "");
    if (strcmp(key, "headroom") == 0) /* empty: the default, the larger of 256M and 1% */
        return o->headroom != LB_HEADROOM_AUTO ? text("%llu", (unsigned long long)o->headroom) : text("%s", "");
    if (strcmp(key, "dtype") == 0) return text("%s", lb_dtype_name(m->dtype));
    if (strcmp(key, "tf32") == 0) return text("%d", o->tf32);
    if (strcmp(key, "layers") == 0) return text("%d", m->layers);
    if (strcmp(key, "d_model") == 0) return text("%d", m->d_model);
    if (strcmp(key, "heads") == 0) return text("%d", m->heads);
    if (strcmp(key, "ffn") == 0) return text("%d", m->ffn);
    if (strcmp(key, "vocab") == 0) return text("%d", m->vocab);
    if (strcmp(key, "sharing") == 0) return text("%s", lb_sharing_name(m->sharing));
    if (strcmp(key, "order") == 0) return text("%s", lb_order_name(m->order));
    if (strcmp(key, "seed") == 0) return text("%llu", (unsigned long long)o->seed);
    if (strcmp(key, "shard") == 0)
        return s->shard_count ? text("%d/%d", s->shard_index, s->shard_count) : text("%s", "");
    if (strcmp(key, "n_list") == 0) return list_text(s->n, s->nn);
    if (strcmp(key, "k_list") == 0) return list_text(s->k, s->nk);
    if (strcmp(key, "cell_time_s") == 0) return text("%g", o->timing.cap_seconds);
    if (strcmp(key, "max_batch") == 0)
        return o->timing.max_batch ? text("%lld", (long long)o->timing.max_batch) : text("%s", "");
    return text("%s", "");
}

/* meta.csv: what ran, where, with what; rewritten at the end with the sweep's outcome. A value
 * that cannot be known (no NVML on this device, a CPU's compute capability) is an empty field,
 * never a number such as -1 that a spreadsheet would average. A resumed sweep keeps the first
 * run's command line and start time and appends its own time and command. */
static int write_meta(const LbSweep *s, LbBackend *be, const char *start, const char *now,
                      const char *status)
{
    LbDeviceInfo d;
    memset(&d, 0, sizeof d);
    d.cc_major = d.cc_minor = d.sm_count = -1;
    d.driver_version = d.runtime_version = d.cublas_version = -1;
    d.sm_clock_mhz = d.sm_clock_max_mhz = d.mem_clock_mhz = -1;
    d.total_bytes = d.free_bytes = -1;
    if (be->ops->describe(be, &d) != LB_OK)
        snprintf(d.name, sizeof d.name, "unknown");
    char end[64] = "";
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
#define SET_KNOWN(key, v) /* an int that is -1 when unknown */ \
    do {                                                       \
        if ((v) >= 0)                                          \
            SET(key, "%lld", (long long)(v));                  \
        else                                                   \
            SET(key, "%s", "");                                \
    } while (0)
#define SET_SETTING(key)                                       \
    do {                                                       \
        char *v_ = lb_sweep_setting_text(s, key);              \
        if (!v_ && rc == LB_OK)                                \
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory writing meta.csv"); \
        SET(key, "%s", v_ ? v_ : "");                          \
        free(v_);                                              \
    } while (0)
    const char *first_command = s->previous ? lb_meta_get(s->previous, "command_line") : NULL;
    SET("linbench_version", "%s", LB_VERSION);
    SET("git_revision", "%s", LB_GIT_REVISION);
    SET("command_line", "%s", first_command ? first_command : s->command_line);
    SET("start_time", "%s", start);
    SET("end_time", "%s", end);
    SET("status", "%s", status);
    SET_SETTING("device");
    SET("device_name", "%s", d.name);
    if (d.cc_major >= 0)
        SET("compute_capability", "%d.%d", d.cc_major, d.cc_minor);
    else
        SET("compute_capability", "%s", "");
    SET_KNOWN("sm_count", d.sm_count);
    SET_KNOWN("memory_total_bytes", d.total_bytes);
    SET("memory_budget_bytes", "%llu", (unsigned long long)s->budget);
    if (s->opt.device == LB_DEVICE_CUDA && d.total_bytes > 0)
        SET("memory_headroom_bytes", "%llu", (unsigned long long)lb_options_headroom(&s->opt, (uint64_t)d.total_bytes));
    else
        SET("memory_headroom_bytes", "%s", "");
    SET_SETTING("mem_limit");
    SET_KNOWN("driver_version", d.driver_version);
    SET_KNOWN("runtime_version", d.runtime_version);
    SET_KNOWN("cublas_version", d.cublas_version);
    SET_KNOWN("sm_clock_mhz", d.sm_clock_mhz);
    SET_KNOWN("sm_clock_max_mhz", d.sm_clock_max_mhz);
    SET_KNOWN("mem_clock_mhz", d.mem_clock_mhz);
    SET_SETTING("dtype");
    SET("storage_dtype", "%s", lb_dtype_name(be->storage));
    for (size_t i = 0; i < lb_sweep_setting_count; i++)
        SET_SETTING(lb_sweep_settings[i].key); /* the rest, in the table's order */
    SET("min_passes", "%d", s->opt.timing.min_passes);
    /* this run's quick check of the backend (linbench check --quick); a resume records its own */
    SET("check", "%s", !s->check.ran ? "skipped" : s->check.failures ? "failed" : "passed");
    if (s->check.ran) {
        SET("check_max_rel_error", "%.3g", s->check.max_rel_error);
        SET("check_seed", "%llu", (unsigned long long)s->check.seed);
    } else {
        SET("check_max_rel_error", "%s", "");
        SET("check_seed", "%s", "");
    }
    /* resume_1_time, resume_1_command, resume_2_time ...: the earlier resumes, then this one */
    int resumes = 0;
    for (size_t i = 0; s->previous && i < s->previous->count; i++) {
        const char *key = s->previous->keys[i];
        if (strncmp(key, "resume_", 7) != 0)
            continue;
        SET(key, "%s", s->previous->values[i]);
        int index = atoi(key + 7);
        if (index > resumes)
            resumes = index;
    }
    if (s->previous) {
        char key[48];
        snprintf(key, sizeof key, "resume_%d_time", resumes + 1);
        SET(key, "%s", now);
        snprintf(key, sizeof key, "resume_%d_command", resumes + 1);
        SET(key, "%s", s->command_line);
    }
#undef SET_SETTING
#undef SET_KNOWN
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

/* The cells this sweep measures: all of them, or its shard's (mine[cell] in the sweep's order). */
static int count_cells(const int *mine, size_t cells)
{
    int total = 0;
    for (size_t i = 0; i < cells; i++)
        total += mine[i];
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
    char now[64], path[4096];
    const char *first_start = s->previous ? lb_meta_get(s->previous, "start_time") : NULL;
    now_text(now, sizeof now);
    const char *start = first_start ? first_start : now;

    LbCellResult *done = NULL;
    size_t done_count = 0;
    lb_outdir_path(path, sizeof path, s->dir, "raw.csv");
    struct stat st;
    /* A sweep killed between meta.csv and its first row has no raw.csv yet: nothing is done. */
    if (s->resume && stat(path, &st) == 0 && lb_raw_read(path, &done, &done_count) != LB_OK)
        return lb_runtime_error(LB_ERR_IO);

    int rc = write_meta(s, be, start, now, "running");
    LbRawWriter *raw = NULL;
    if (rc == LB_OK)
        rc = lb_raw_open(path, s->resume, &raw);
    if (rc != LB_OK) {
        free(done);
        return lb_runtime_error(rc);
    }

    /* which cells are this shard's: all of them when not sharded */
    int *shard_of = NULL;
    size_t cells = 0;
    if (lb_shard_assign(s->n, s->nn, s->k, s->nk, s->shard_count ? s->shard_count : 1, &shard_of, &cells) != 0) {
        lb_raw_close(raw);
        free(done);
        return lb_runtime_error(LB_FAIL(LB_ERR_NOMEM, "out of memory splitting the grid into shards"));
    }
    for (size_t c = 0; c < cells; c++)
        shard_of[c] = shard_of[c] == s->shard_index; /* now: 1 when this run measures cell c */

    LbProgress progress;
    lb_progress_start(&progress, count_cells(shard_of, cells), s->quiet);
    size_t cell = 0;
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
            if (!shard_of[cell++])
                continue; /* another shard's */
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
                free(shard_of);
                return lb_runtime_error(wrc);
            }
            lb_progress_end(&progress, index, &r);
        }
    }
    lb_progress_finish(&progress);
    lb_raw_close(raw);
    free(done);
    free(shard_of);
    if (*stop)
        interrupted = 1;

    rc = write_grids(s, 1);
    if (rc == LB_OK)
        rc = write_meta(s, be, start, now, interrupted ? "interrupted" : fatal ? "failed" : failed ? "finished with errors" : "complete");
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
