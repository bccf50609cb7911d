/* Checks on a sweep's directory shared by the CLI tests, everything read through libcsv; the
 * header brings the harness (tests/lib/check.h, spawn.h) and the readers (reports/raw.h, meta.h,
 * grid.h) with it. */
#ifndef LB_TESTS_SWEEP_CHECK_H
#define LB_TESTS_SWEEP_CHECK_H

#include <dirent.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

/* Data rows of dir/raw.csv (newlines less the header), 0 when there is none. */
static inline int sc_rows(const char *dir)
{
    char *s = lb_slurp_in(dir, "raw.csv");
    int n = s && lb_lines(s) > 0 ? lb_lines(s) - 1 : 0;
    free(s);
    return n;
}

/* Start argv (a sweep into dir), stop it with `sig` once dir/raw.csv has `after` rows, and again
 * gap_us later unless gap_us < 0; how it ended (one that finished before is reported as it ended). */
static inline LbRun sc_stop_after(char *const argv[], const char *dir, int sig, int after, long gap_us)
{
    pid_t pid = lb_start(argv);
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 30000 && sc_rows(dir) < after; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            LbRun r = {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), strdup(""), strdup("")};
            return r;
        }
        nanosleep(&pause, NULL);
    }
    kill(pid, sig);
    if (gap_us >= 0) {
        usleep((useconds_t)gap_us);
        kill(pid, sig);
    }
    return lb_wait(pid);
}

/* sc_expect(r, code, lines, what, word, ...): one check that run r (freed here) exited `code` with
 * every word on stderr and, where lines >= 0, that many lines there; sc_says: with every word on
 * stdout. sc_run_expect and sc_run_says: the same of running argv. Returns whether it held. */
#define sc_expect(r, code, lines, ...) sc_expect_at(__FILE__, __LINE__, r, code, lines, 0, __VA_ARGS__, (const char *)NULL)
#define sc_says(r, code, ...) sc_expect_at(__FILE__, __LINE__, r, code, -1, 1, __VA_ARGS__, (const char *)NULL)
#define sc_run_expect(argv, code, lines, ...) sc_expect(lb_run(argv), code, lines, lb_argv_text(argv), __VA_ARGS__)
#define sc_run_says(argv, code, ...) sc_says(lb_run(argv), code, lb_argv_text(argv), __VA_ARGS__)
static inline int sc_expect_at(const char *file, int line, LbRun r, int code, int lines, int on_stdout, const char *what,
                               ...)
{
    const char *text = on_stdout ? r.out : r.err;
    int ok = r.code == code && (lines < 0 || lb_lines(r.err) == lines);
    char words[256] = "";
    va_list ap;
    va_start(ap, what);
    for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *)) {
        ok &= strstr(text, w) != NULL;
        snprintf(words + strlen(words), sizeof words - strlen(words), " \"%s\"", w);
    }
    va_end(ap);
    lb_check_at(ok, file, line, "%s: exit %d, should be %d with %d line(s) of stderr (-1: any), %s naming%s: %s%s", what,
                r.code, code, lines, on_stdout ? "stdout" : "stderr", words, r.out, r.err);
    lb_run_free(&r);
    return ok;
}

/* dir/raw.csv's rows through libcsv (*rows malloc'd): lb_raw_read's status. */
static inline int sc_read_rows(const char *dir, LbCellResult **rows, size_t *count)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    *rows = NULL;
    *count = 0;
    return lb_raw_read(path, rows, count);
}

/* The row of cell (m, n, k) in rows (k counts only where the model has a k axis), or NULL. */
static inline const LbCellResult *sc_find(const LbCellResult *rows, size_t count, LbModelKind m, int64_t n, int64_t k)
{
    for (size_t i = 0; i < count; i++)
        if (rows[i].model == m && rows[i].n == n && (!lb_model_has_k(m) || rows[i].k == k))
            return &rows[i];
    return NULL;
}

/* dir/raw.csv holds `cells` rows, each ok, each cell once. */
static inline int sc_each_once(const char *dir, size_t cells, const char *what)
{
    LbCellResult *rows = NULL;
    size_t count = 0;
    if (!lb_check(sc_read_rows(dir, &rows, &count) == 0, "%s: raw.csv reads back", what))
        return 0;
    int ok = lb_check(count == cells, "%s: %zu rows (got %zu)", what, cells, count);
    for (size_t i = 0; i < count; i++) {
        ok &= lb_check(rows[i].status == LB_CELL_OK, "%s: row %zu ok", what, i);
        for (size_t j = 0; j < i; j++)
            ok &= lb_check(!(rows[i].model == rows[j].model && rows[i].n == rows[j].n && rows[i].k == rows[j].k),
                           "%s: cell %s n=%lld k=%lld measured once", what, lb_model_name(rows[i].model),
                           (long long)rows[i].n, (long long)rows[i].k);
    }
    free(rows);
    return ok;
}

/* The value of `key` in dir/meta.csv, malloc'd, or NULL. */
static inline char *sc_meta(const char *dir, const char *key)
{
    char path[4400];
    LbMeta m = {0};
    if (snprintf(path, sizeof path, "%s/meta.csv", dir) >= (int)sizeof path || lb_meta_read(path, &m) != 0)
        return NULL;
    const char *v = lb_meta_get(&m, key);
    char *copy = v ? strdup(v) : NULL;
    lb_meta_free(&m);
    return copy;
}

/* The number dir/meta.csv's `key` holds, NaN when it holds none or more than a number. */
static inline double sc_meta_number(const char *dir, const char *key)
{
    char *v = sc_meta(dir, key), *end = NULL;
    const double x = v && v[0] ? strtod(v, &end) : NAN;
    const int whole = v && end && *end == '\0';
    free(v);
    return whole ? x : NAN;
}

/* sc_check_meta(dir, key, want, what): one check that dir/meta.csv's `key` is `want`;
 * sc_check_meta_has: that it contains `want`. */
#define sc_check_meta(dir, key, want, what) sc_check_meta_at(__FILE__, __LINE__, 1, dir, key, want, what)
#define sc_check_meta_has(dir, key, want, what) sc_check_meta_at(__FILE__, __LINE__, 0, dir, key, want, what)
static inline int sc_check_meta_at(const char *file, int line, int whole, const char *dir, const char *key,
                                   const char *want, const char *what)
{
    char *v = sc_meta(dir, key);
    const int ok = lb_check_at(v && (whole ? strcmp(v, want) == 0 : strstr(v, want) != NULL), file, line,
                               "%s: meta.csv's %s is \"%s\": should %s \"%s\"", what, key, v ? v : "(none)",
                               whole ? "be" : "contain", want);
    free(v);
    return ok;
}

/* Every result file in dir that exists parses (raw.csv's partial last line, which a resume
 * drops, aside), and no NAME.tmp.* file of a half-done write is left when `no_tmp`. */
static inline int sc_files_parse(const char *dir, int no_tmp, const char *what)
{
    int ok = 1;
    if (lb_exists_in(dir, "meta.csv")) {
        char *n_list = sc_meta(dir, "n_list"), *status = sc_meta(dir, "status");
        ok &= lb_check(n_list && status, "%s: meta.csv parses and is whole", what);
        free(n_list);
        free(status);
    }
    char *raw = lb_slurp_in(dir, "raw.csv");
    if (raw && strchr(raw, '\n')) { /* its header whole */
        LbCellResult *rows = NULL;
        size_t count = 0;
        ok &= lb_check(sc_read_rows(dir, &rows, &count) == 0, "%s: raw.csv parses", what);
        free(rows);
    }
    free(raw);
    if (lb_exists_in(dir, "time_speedup.csv")) {
        LbGrid g;
        int rc = lb_grids_read(dir, &g);
        ok &= lb_check(rc == 0, "%s: the grids parse: %s", what, rc == 0 ? "" : lb_error_message());
        if (rc == 0)
            lb_grid_free(&g);
    }
    if (no_tmp) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            ok &= lb_check(strstr(e->d_name, ".tmp.") == NULL, "%s: no temporary file left (%s)", what, e->d_name);
        if (d)
            closedir(d);
    }
    return ok;
}

/* dir's cells equal want's (model, n, k), each once, all ok; with `measured`, each with want's
 * status, batch, planned and peak bytes too (not times: they differ between runs). */
#define sc_same_cells(dir, want, what) sc_same_rows(dir, want, 0, what)
static inline int sc_same_rows(const char *dir, const char *want, int measured, const char *what)
{
    LbCellResult *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int ok = lb_check(sc_read_rows(dir, &a, &na) == 0 && sc_read_rows(want, &b, &nb) == 0, "%s: both raw.csv read", what);
    ok = ok && lb_check(na == nb && na > 0, "%s: %zu cells, as %s's %zu", what, na, want, nb);
    for (size_t i = 0; ok && i < na; i++) {
        int found = 0, twice = 0;
        const LbCellResult *w = NULL;
        for (size_t j = 0; j < nb; j++)
            if (a[i].model == b[j].model && a[i].n == b[j].n && a[i].k == b[j].k) {
                found++;
                w = &b[j];
            }
        for (size_t j = 0; j < na; j++)
            twice += j != i && a[i].model == a[j].model && a[i].n == a[j].n && a[i].k == a[j].k;
        const int same = !measured || (w && a[i].status == w->status && a[i].batch == w->batch &&
                                       a[i].planned_bytes == w->planned_bytes && a[i].peak_bytes == w->peak_bytes);
        ok &= lb_check(found == 1 && !twice && a[i].status == LB_CELL_OK && same,
                       "%s: %s n=%lld k=%lld once, ok, in %s%s (batch %lld, planned %lld, peak %lld; there %lld %lld %lld)",
                       what, lb_model_name(a[i].model), (long long)a[i].n, (long long)a[i].k, want,
                       measured ? " with the same batch and bytes" : "", (long long)a[i].batch,
                       (long long)a[i].planned_bytes, (long long)a[i].peak_bytes, w ? (long long)w->batch : -1LL,
                       w ? (long long)w->planned_bytes : -1LL, w ? (long long)w->peak_bytes : -1LL);
    }
    free(a);
    free(b);
    return ok;
}

/* dir/meta.csv's `keys` (NULL-ended; NULL: the settings a resume keeps) equal want's. */
static inline int sc_same_settings(const char *dir, const char *want, const char *const *keys, const char *what)
{
    static const char *const resumed[] = {"device", "mem_limit", "memory_budget_bytes", "dtype", "storage_dtype", "tf32",
                                          "layers", "d_model", "heads", "ffn", "vocab", "sharing", "order", "seed",
                                          "n_list", "k_list", "cell_time_s", "max_batch", "min_passes", NULL};
    int ok = 1;
    for (keys = keys ? keys : resumed; *keys; keys++) {
        char *a = sc_meta(dir, *keys), *b = sc_meta(want, *keys);
        ok &= lb_check(a && b && strcmp(a, b) == 0, "%s: meta.csv %s \"%s\", as %s's \"%s\"", what, *keys,
                       a ? a : "(none)", want, b ? b : "(none)");
        free(a);
        free(b);
    }
    return ok;
}

#endif
