/* What the reports tests share: rows, sweep directories made from them (raw.csv through
 * lb_raw_append, meta.csv through lb_meta_write, as linbench sweep writes them), a sweep of
 * every model, a meta.csv key changed in place, text written to a file, and a check of what a
 * run of the binary printed. */
#ifndef LB_TESTS_FIXTURE_H
#define LB_TESTS_FIXTURE_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/measure/measure.h"
#include "attn/base/status.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "reports/settings.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

/* text written to path, fopen's mode "w" (replace) or "a" (append). */
static inline void fx_write(const char *path, const char *mode, const char *text)
{
    FILE *f = fopen(path, mode);
    lb_check(f && fputs(text, f) >= 0, "cannot write %s", path);
    if (f)
        fclose(f);
}

/* How many names in dir hold `part` (NULL: how many do not start with a dot). */
static inline int fx_count_files(const char *dir, const char *part)
{
    int count = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        count += part ? strstr(e->d_name, part) != NULL : e->d_name[0] != '.';
    if (d)
        closedir(d);
    return count;
}

/* fx_says(r, what, word, ...): r (freed here) exited 0 with every word in its stdout, none of the
 * words that start with "!", and its stdout starting with the words that start with "^";
 * fx_says_quiet also with nothing on stderr. */
#define fx_says(r, ...) fx_says_at(__FILE__, __LINE__, 0, r, __VA_ARGS__, (const char *)NULL)
#define fx_says_quiet(r, ...) fx_says_at(__FILE__, __LINE__, 1, r, __VA_ARGS__, (const char *)NULL)
static inline int fx_says_at(const char *file, int line, int quiet, LbRun r, const char *what, ...)
{
    int ok = r.code == 0 && (!quiet || r.err[0] == '\0');
    va_list ap;
    va_start(ap, what);
    for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *)) {
        const char *word = w + (w[0] == '!' || w[0] == '^');
        const int has = w[0] == '^' ? strncmp(r.out, word, strlen(word)) == 0 : strstr(r.out, word) != NULL;
        if (has == (w[0] == '!'))
            ok = lb_check_at(0, file, line, "%s: should%s %s \"%s\"", what, w[0] == '!' ? " not" : "",
                             w[0] == '^' ? "start with" : "say", word);
    }
    va_end(ap);
    lb_check_at(ok, file, line, "%s: exit %d%s:\n%s%s", what, r.code, quiet ? ", nothing on stderr" : "", r.out, r.err);
    lb_run_free(&r);
    return ok;
}

static inline LbCellResult fx_row(LbModelKind model, int64_t n, int64_t k, int64_t batch,
                                  double ms_per_seq, LbCellStatus status)
{
    LbCellResult r;
    memset(&r, 0, sizeof r);
    r.model = model;
    r.n = n;
    r.k = lb_model_has_k(model) ? k : 0;
    r.dtype = LB_DTYPE_FP16;
    r.sm_clock_start_mhz = r.sm_clock_end_mhz = -1;
    r.status = status;
    if (status == LB_CELL_OK) {
        r.batch = batch;
        r.ms_per_seq = ms_per_seq;
        r.median_ms = r.min_ms = r.max_ms = ms_per_seq * (double)batch;
        r.tokens_per_s = (double)(batch * n) / (r.median_ms / 1e3);
        r.tflop_per_s = 1.0;
        r.passes = 5;
        r.planned_bytes = r.peak_bytes = 1 << 20;
    }
    snprintf(r.error, sizeof r.error, "%s",
             status == LB_CELL_OK ? "ok" : status == LB_CELL_OOM ? "OOM" : "cuBLAS failed, code 13");
    return r;
}

#define FX_STD(n, b, ms) fx_row(LB_MODEL_STANDARD, n, 0, b, ms, LB_CELL_OK)
#define FX_LIN(n, k, b, ms) fx_row(LB_MODEL_LINFORMER, n, k, b, ms, LB_CELL_OK)

/* dir (created) with raw.csv holding rows and meta.csv describing a run. 0 on success. */
static inline int fx_sweep_dir(const char *dir, const LbCellResult *rows, size_t count,
                               const char *n_list, const char *k_list, const char *device_name)
{
    mkdir(dir, 0755);
    char path[4400];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    LbRawWriter *w;
    if (lb_raw_open(path, 0, &w) != LB_OK)
        return -1;
    for (size_t i = 0; i < count; i++)
        if (lb_raw_append(w, &rows[i]) != LB_OK)
            return -1;
    lb_raw_close(w);
    LbMeta m = {0};
    /* every recorded setting, as the readers require (lb_settings_meta_check); the run's own below */
    LbRunSettings defaults;
    if (lb_run_settings_init(&defaults) != LB_OK)
        return -1;
    for (int id = 0; id < LB_SET_RECORDED; id++) {
        char *text = lb_setting_text(&defaults, (LbSettingId)id);
        lb_meta_set(&m, lb_settings[id].key, "%s", text ? text : "");
        free(text);
    }
    lb_run_settings_free(&defaults);
    static const char *const run[][2] = {
        {"linbench_version", "0.1.0"}, {"status", "complete"}, {"device", "cuda"}, {"device_name", NULL},
        {"memory_budget_bytes", "17179869184"}, {"mem_limit", "17179869184"}, {"dtype", "fp16"},
        {"storage_dtype", "fp16"}, {"layers", "12"}, {"d_model", "768"}, {"heads", "12"}, {"ffn", "3072"},
        {"sharing", "layerwise"}, {"order", "early"}};
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++)
        lb_meta_set(&m, run[i][0], "%s", run[i][1] ? run[i][1] : device_name);
    /* the models of the rows and the default pair, in the table's order, so that no row reads as
     * foreign */
    int seen[LB_MODEL_COUNT] = {0};
    seen[LB_MODEL_STANDARD] = seen[LB_MODEL_LINFORMER] = 1;
    for (size_t i = 0; i < count; i++)
        seen[rows[i].model] = 1;
    char models[512] = "";
    for (int i = 0; i < LB_MODEL_COUNT; i++)
        if (seen[i])
            snprintf(models + strlen(models), sizeof models - strlen(models), "%s%s", models[0] ? "," : "",
                     lb_model_name((LbModelKind)i));
    lb_meta_set(&m, "models", "%s", models);
    lb_meta_set(&m, "n_list", "%s", n_list);
    lb_meta_set(&m, "k_list", "%s", k_list);
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    int rc = lb_meta_write(path, &m);
    lb_meta_free(&m);
    return rc == LB_OK ? 0 : -1;
}

/* Read dir/meta.csv, set key to value, write it back. */
static inline void fx_set_meta(const char *dir, const char *key, const char *value)
{
    char path[4200];
    if (snprintf(path, sizeof path, "%s/meta.csv", dir) >= (int)sizeof path)
        return;
    LbMeta m;
    memset(&m, 0, sizeof m);
    lb_check(lb_meta_read(path, &m) == LB_OK && lb_meta_set(&m, key, "%s", value) == LB_OK &&
                 lb_meta_write(path, &m) == LB_OK,
             "%s: %s set to %s", path, key, value);
    lb_meta_free(&m);
}

/* Every model of the table at n = 256, 512, 1024 and, where it has a k axis, k = 32 .. 256 (a
 * Linformer cell only where k < n): batch 8 + 7m + i and ms 1 + m + 0.1j + 0.5i at the i-th n and
 * j-th k, so every ratio is a number; meta.csv's models lists them all. Returns the row count. */
#define FX_ALL_MAX (3 * 4 * LB_MODEL_COUNT)
static inline size_t fx_all_models_dir(const char *dir, LbCellResult rows[FX_ALL_MAX])
{
    static const int64_t ns[3] = {256, 512, 1024}, ks[4] = {32, 64, 128, 256};
    size_t count = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < (lb_model_has_k((LbModelKind)m) ? 4 : 1); j++)
                if (m != LB_MODEL_LINFORMER || ks[j] < ns[i])
                    rows[count++] = fx_row((LbModelKind)m, ns[i], ks[j], 8 + 7 * m + i, 1.0 + m + 0.1 * j + 0.5 * i,
                                           LB_CELL_OK);
    lb_check(fx_sweep_dir(dir, rows, count, "256,512,1024", "32,64,128,256", "Tesla V100-SXM2-16GB") == 0,
             "made a sweep of every model");
    return count;
}

#endif
