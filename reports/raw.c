/* raw.csv written row by row and read back (see raw.h for the format). */
#include "reports/raw.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/csv_io.h"

/* Layouts: 1 the first, 2 added device_uuid and host, 3 the energy columns. A file keeps the
 * layout its header has (a resume appends rows in it); the columns it lacks read back empty. */
#define RAW_LAYOUT 3
#define AT(field) offsetof(LbCellResult, field)
#define SIZE(field) sizeof(((LbCellResult *)0)->field)
#define ONLY_K LB_COL_ONLY_K
#define ONLY_OK LB_COL_ONLY_OK
/* times and rates: what a hand-edited NaN, inf or negative would turn into an "infx" speedup or an
 * ERR cell that never failed, and into grids that do not read back */
#define TIMING (LB_COL_ONLY_OK | LB_COL_NONNEG | LB_COL_FINITE)

static const LbColumn columns[] = {
    {"model", AT(model), LB_COL_MODEL, 0, 1, 0, 0, 0, NULL},
    {"n", AT(n), LB_COL_I64, 0, 1, 1, 0, 0, "a positive integer"},
    {"k", AT(k), LB_COL_I64, ONLY_K, 1, 1, 0, 0, "a positive integer for a model with a k axis"},
    {"sharing", AT(sharing), LB_COL_SHARING, ONLY_K, 1, 0, 0, 0, "layerwise, kv, headwise or none"},
    {"order", AT(order), LB_COL_ORDER, ONLY_K, 1, 0, 0, 0, "early or late"},
    {"dtype", AT(dtype), LB_COL_DTYPE, 0, 1, 0, 0, 0, "fp16, bf16 or fp32"},
    {"batch", AT(batch), LB_COL_I64, 0, 1, 0, 0, 0, "a non-negative integer"},
    {"planned_bytes", AT(planned_bytes), LB_COL_I64, 0, 1, 0, 0, 0, "a non-negative integer"},
    {"peak_bytes", AT(peak_bytes), LB_COL_I64, 0, 1, 0, 0, 0, "a non-negative integer"},
    {"median_ms", AT(median_ms), LB_COL_REAL, TIMING, 1, 0, 0, 0, NULL},
    {"min_ms", AT(min_ms), LB_COL_REAL, TIMING, 1, 0, 0, 0, NULL},
    {"max_ms", AT(max_ms), LB_COL_REAL, TIMING, 1, 0, 0, 0, NULL},
    {"ms_per_seq", AT(ms_per_seq), LB_COL_REAL, TIMING, 1, 0, 0, 0, NULL},
    {"tokens_per_s", AT(tokens_per_s), LB_COL_REAL, TIMING, 1, 0, 0, 0, NULL},
    /* NaN where the step's FLOPs could not be counted (lb_measure_flops_per_seq), so not FINITE */
    {"tflop_per_s", AT(tflop_per_s), LB_COL_REAL, ONLY_OK | LB_COL_NONNEG, 1, 0, 0, 0, NULL},
    {"passes", AT(passes), LB_COL_INT, ONLY_OK, 1, 0, INT32_MAX, 0, "a non-negative integer"},
    {"sm_clock_start_mhz", AT(sm_clock_start_mhz), LB_COL_INT, LB_COL_NEG_EMPTY, 1, 0, INT32_MAX, 0, "a clock in MHz or empty"},
    {"sm_clock_end_mhz", AT(sm_clock_end_mhz), LB_COL_INT, LB_COL_NEG_EMPTY, 1, 0, INT32_MAX, 0, "a clock in MHz or empty"},
    {"clock_events", AT(clock_events), LB_COL_EVENTS, 0, 1, 0, 0, 0,
     "clock-event reasons such as sw_power_cap+hw_thermal, none, or empty"},
    {"slowdown", AT(slowdown), LB_COL_INT, 0, 1, 0, 1, 0, "0 or 1"},
    {"power_w", AT(power_w), LB_COL_ENERGY, ONLY_OK, 3, 0, 0, 0, "a positive number, or empty with energy_j_per_seq"},
    {"energy_j_per_seq", AT(energy_j_per_seq), LB_COL_ENERGY, ONLY_OK, 3, 0, 0, 0,
     "a positive number, or empty with power_w"},
    {"device_uuid", AT(device_uuid), LB_COL_TEXT, 0, 2, 0, 0, SIZE(device_uuid), NULL},
    {"host", AT(host), LB_COL_TEXT, 0, 2, 0, 0, SIZE(host), NULL},
    {"status", AT(status), LB_COL_STATUS, 0, 1, 0, 0, 0, "ok, OOM or an error message"},
};
#undef AT
#undef SIZE
#undef ONLY_K
#undef ONLY_OK
#undef TIMING

_Static_assert(sizeof columns / sizeof columns[0] == LB_RAW_COLUMNS && LB_RAW_COLUMNS <= LB_RECORD_COLUMNS_MAX,
               "LB_RAW_COLUMNS is the table's length");

static const LbRecordFile raw_file = {columns, LB_RAW_COLUMNS, sizeof(LbCellResult), "empty for a %s row (no k axis)",
                                      NULL};

/* Rows go out through a descriptor opened O_APPEND, one write() each, so that a kill leaves at
 * most one partial last line (dropped on resume). */
struct LbRawWriter {
    int fd;
    char *path;
    int layout; /* the file's header's: rows are written in it */
};

/* The header (r NULL) or a row through libcsv into memory, then one write(). */
static int write_record(LbRawWriter *w, const LbCellResult *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory writing %s", w->path);
    int rc = lb_record_write(m, &raw_file, w->layout, r);
    if (fclose(m) != 0 || rc != LB_OK) {
        free(buf);
        return rc == LB_ERR_INVALID ? rc : LB_FAIL(LB_ERR_NOMEM, "out of memory writing %s", w->path);
    }
    /* After a short write (a full disk, a file-size limit) the next write either ends the row or
     * fails with the errno that says why; a partial line is dropped by lb_raw_open on resume. */
    size_t done = 0;
    int err = 0;
    while (done < len) {
        ssize_t put = write(w->fd, buf + done, len - done);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0) {
            err = put < 0 ? errno : EIO;
            break;
        }
        done += (size_t)put;
    }
    free(buf);
    if (done != len)
        return LB_FAIL(LB_ERR_IO, "cannot write %s: %s", w->path, strerror(err));
    if (fsync(w->fd) != 0)
        return LB_FAIL(LB_ERR_IO, "cannot sync %s: %s", w->path, strerror(errno));
    return LB_OK;
}

int lb_raw_has_energy_columns(const char *path)
{
    LbCsvTable t;
    if (lb_csv_read_file(path, 1, &t) != LB_OK) {
        lb_error_clear();
        return 1;
    }
    const int layout = t.rows > 0 ? lb_record_layout(&raw_file, RAW_LAYOUT, &t.row[0]) : RAW_LAYOUT;
    lb_csv_table_free(&t);
    return layout < 0 || layout >= 3;
}

static int not_raw(const char *path)
{
    return LB_FAIL(LB_ERR_FORMAT,
                   "%s does not start with linbench's raw.csv header (model,n,k,...,status): not a sweep's raw.csv, or written by another version",
                   path);
}

/* A file to append to: cut after its last newline (rows never hold one, so what follows it is a
 * row a kill -9 cut short); its header's layout where it has one. *size: what is left. */
static int take_file(LbRawWriter *w, size_t *size)
{
    char *text;
    size_t len;
    LB_TRY(lb_csv_slurp_fd(w->fd, w->path, &text, &len));
    size_t keep = len;
    while (keep > 0 && text[keep - 1] != '\n')
        keep--;
    int rc = LB_OK;
    if (keep != len && ftruncate(w->fd, (off_t)keep) != 0)
        rc = LB_FAIL(LB_ERR_IO, "cannot drop the partial last row of %s: %s", w->path, strerror(errno));
    LbCsvTable t;
    if (rc == LB_OK && keep > 0 && (rc = lb_csv_parse_text(text, keep, 1, w->path, &t)) == LB_OK) {
        w->layout = t.rows > 0 ? lb_record_layout(&raw_file, RAW_LAYOUT, &t.row[0]) : -1;
        lb_csv_table_free(&t);
        if (w->layout < 0)
            rc = not_raw(w->path);
    }
    free(text);
    *size = keep;
    return rc;
}

int lb_raw_open(const char *path, int append, LbRawWriter **out)
{
    *out = NULL;
    LbRawWriter *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory opening %s", path);
    }
    int rc = LB_OK;
    size_t size = 0;
    w->layout = RAW_LAYOUT;
    /* Opened before anything is read or cut, so that what is checked is what gets written. */
    w->fd = lb_open_plain(path, O_RDWR | O_APPEND | O_CREAT | (append ? 0 : O_TRUNC), 0666);
    if (w->fd < 0)
        rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, lb_open_plain_strerror(errno));
    else if (append)
        rc = take_file(w, &size);
    if (rc == LB_OK && size == 0)
        rc = write_record(w, NULL);
    if (rc != LB_OK) {
        lb_raw_close(w);
        return rc;
    }
    *out = w;
    return LB_OK;
}


void lb_raw_close(LbRawWriter *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w);
}

int lb_raw_append(LbRawWriter *w, const LbCellResult *r) { return write_record(w, r); }

int lb_raw_read_named(const char *path, LbModelNameFn name_fn, void *ctx, LbCellResult **rows, size_t **lines,
                      size_t *count, size_t *cut_line)
{
    *rows = NULL;
    *count = 0;
    if (cut_line)
        *cut_line = 0;
    if (lines)
        *lines = NULL;
    LbCsvTable t;
    int rc = lb_csv_read_file(path, 1, &t);
    if (rc != LB_OK)
        return rc;
    if (cut_line)
        *cut_line = t.cut_line;
    if (t.rows == 0) /* empty, or only a header cut short: no rows yet */
        goto out;
    const int kind = lb_record_layout(&raw_file, RAW_LAYOUT, &t.row[0]);
    void *r = NULL;
    if (kind < 0)
        rc = not_raw(path);
    else
        rc = lb_record_read_rows(&raw_file, kind, path, &t, name_fn, ctx, &r);
    if (rc != LB_OK)
        goto out;
    if (lines && t.rows > 1) { /* the table's own, less the header's */
        memmove(t.line, t.line + 1, (t.rows - 1) * sizeof *t.line);
        *lines = t.line;
        t.line = NULL;
    }
    *rows = r;
    *count = t.rows - 1;
out:
    lb_csv_table_free(&t);
    return rc;
}

int lb_raw_read(const char *path, LbCellResult **rows, size_t *count)
{
    return lb_raw_read_named(path, NULL, NULL, rows, NULL, count, NULL);
}
