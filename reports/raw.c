/* raw.csv written row by row and read back (see raw.h for the format). */
#include "reports/raw.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/clock_events.h"
#include "attn/paths.h"
#include "attn/status.h"
#include "reports/csv_io.h"

const char *const lb_raw_columns[LB_RAW_COLUMNS] = {
    "model",      "n",          "k",         "sharing",     "order",
    "dtype",      "batch",      "planned_bytes", "peak_bytes", "median_ms",
    "min_ms",     "max_ms",     "ms_per_seq", "tokens_per_s", "tflop_per_s",
    "passes",     "sm_clock_start_mhz", "sm_clock_end_mhz", "clock_events", "slowdown",
    "power_w",    "energy_j_per_seq", "device_uuid", "host", "status",
};

enum {
    COL_MODEL, COL_N, COL_K, COL_SHARING, COL_ORDER, COL_DTYPE, COL_BATCH, COL_PLANNED, COL_PEAK,
    COL_MEDIAN, COL_MIN, COL_MAX, COL_PER_SEQ, COL_TOKENS, COL_TFLOPS, COL_PASSES, COL_CLK0,
    COL_CLK1, COL_EVENTS, COL_SLOWDOWN, COL_POWER, COL_ENERGY, COL_UUID, COL_HOST, COL_STATUS
};

/* The layouts raw.csv has had, newest first: each is this version's columns less some. A file
 * keeps the layout its header has: a resume appends rows in it, so the file stays one table, and
 * the columns it lacks read back as unknown (empty origin, NaN energy). */
#define BIT(c) (1u << (c))
static const unsigned layouts_left_out[] = {
    0,                                                        /* this version's */
    BIT(COL_POWER) | BIT(COL_ENERGY),                         /* before the energy columns */
    BIT(COL_POWER) | BIT(COL_ENERGY) | BIT(COL_UUID) | BIT(COL_HOST), /* before device_uuid, host */
};
#define LAYOUTS (sizeof layouts_left_out / sizeof layouts_left_out[0])
#undef BIT

static int left_out(int layout, int c) { return (layouts_left_out[layout] >> c) & 1u; }

static size_t layout_width(int layout)
{
    size_t width = 0;
    for (int c = 0; c < LB_RAW_COLUMNS; c++)
        width += !left_out(layout, c);
    return width;
}

/* Which layout a header row is (an index of layouts_left_out), or -1 for none. */
static int header_layout(const LbCsvRow *row)
{
    for (int layout = 0; layout < (int)LAYOUTS; layout++) {
        if (row->count != layout_width(layout))
            continue;
        size_t at = 0;
        int same = 1;
        for (int c = 0; c < LB_RAW_COLUMNS && same; c++)
            if (!left_out(layout, c))
                same = strcmp(row->fields[at++], lb_raw_columns[c]) == 0;
        if (same)
            return layout;
    }
    return -1;
}

/* Rows go out through a descriptor opened O_APPEND, one write() each: the worker processes of a
 * several-GPU sweep append to one raw.csv at once, and a row written in one write() to a file
 * opened O_APPEND never interleaves with another's. */
struct LbRawWriter {
    int fd;
    char *path;
    int layout; /* the file's header's (header_layout): rows are written in it */
};

/* One record through libcsv into memory, then one write(). */
static int write_record(LbRawWriter *w, const char *const *fields, size_t count)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory writing %s", w->path);
    int rc = lb_csv_write_record(m, fields, count);
    if (fclose(m) != 0 || rc != LB_OK) {
        free(buf);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory writing %s", w->path);
    }
    /* A short write (a full disk, a file-size limit) is followed by one for the rest, which either
     * ends the row or fails with the errno that says which it was (ENOSPC, EFBIG); what stays is
     * a partial line that lb_raw_open drops on resume. */
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

static int write_header(LbRawWriter *w) { return write_record(w, lb_raw_columns, LB_RAW_COLUMNS); }

int lb_raw_layout_has_energy(const LbRawWriter *w) { return !left_out(w->layout, COL_ENERGY); }

/* Cut the file after its last newline: what a kill -9 in the middle of a row leaves behind is
 * not a row. Rows never hold a newline (raw_append replaces them in messages), so the last
 * newline ends the last complete row. Sets *size to the new size. */
static int drop_partial_line(int fd, const char *path, long long *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return LB_FAIL(LB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    const off_t end = st.st_size;
    off_t keep = 0;
    char buf[4096];
    for (off_t pos = end; pos > 0;) {
        size_t chunk = pos > (off_t)sizeof buf ? sizeof buf : (size_t)pos;
        pos -= (off_t)chunk;
        if (pread(fd, buf, chunk, pos) != (ssize_t)chunk)
            return LB_FAIL(LB_ERR_IO, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
        size_t i = chunk;
        while (i > 0 && buf[i - 1] != '\n')
            i--;
        if (i > 0) {
            keep = pos + (off_t)i;
            break;
        }
    }
    if (keep != end && ftruncate(fd, keep) != 0)
        return LB_FAIL(LB_ERR_IO, "cannot drop the partial last row of %s: %s", path,
                       strerror(errno));
    *size = (long long)keep;
    return LB_OK;
}

/* The header's layout (header_layout), or LB_ERR_FORMAT. */
static int check_header(const char *path, int *layout)
{
    LbCsvTable t;
    int rc = lb_csv_read_file(path, 1, &t);
    if (rc != LB_OK)
        return rc;
    const int kind = t.rows > 0 ? header_layout(&t.row[0]) : -1;
    lb_csv_table_free(&t);
    if (kind < 0)
        return LB_FAIL(LB_ERR_FORMAT,
                       "%s does not start with linbench's raw.csv header (model,n,k,...,status): not a sweep's raw.csv, or written by another version",
                       path);
    *layout = kind;
    return LB_OK;
}

static int raw_open(const char *path, int append, int shared, LbRawWriter **out)
{
    *out = NULL;
    LbRawWriter *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory opening %s", path);
    }
    int rc = LB_OK, layout = 0;
    long long size = 0;
    struct stat st;
    /* Opened before anything is read or cut, so that what is checked is what gets written. */
    w->fd = lb_open_plain(path, O_RDWR | O_APPEND | (shared ? 0 : O_CREAT) | (append || shared ? 0 : O_TRUNC), 0666);
    if (w->fd < 0) {
        rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, lb_open_plain_strerror(errno));
        goto fail;
    }
    if (shared) { /* prepared by lb_raw_open: header checked, no partial line */
        if (fstat(w->fd, &st) != 0) {
            rc = LB_FAIL(LB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
            goto fail;
        }
        size = (long long)st.st_size;
        if ((rc = check_header(path, &layout)) != LB_OK)
            goto fail;
    } else if (append) {
        rc = drop_partial_line(w->fd, path, &size);
        if (rc == LB_OK && size > 0)
            rc = check_header(path, &layout);
        if (rc != LB_OK)
            goto fail;
    }
    w->layout = layout;
    if (size == 0 && !shared) {
        rc = write_header(w);
        if (rc != LB_OK)
            goto fail;
    }
    *out = w;
    return LB_OK;
fail:
    lb_raw_close(w);
    return rc;
}

int lb_raw_open(const char *path, int append, LbRawWriter **out) { return raw_open(path, append, 0, out); }

int lb_raw_open_shared(const char *path, LbRawWriter **out) { return raw_open(path, 1, 1, out); }

void lb_raw_close(LbRawWriter *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w);
}

static void fmt_i64(char *buf, size_t size, long long v) { snprintf(buf, size, "%lld", v); }

/* The status column: "ok", "OOM" or the message, kept on one line and never mistaken for the
 * other two. */
static void status_text(const LbCellResult *r, char *buf, size_t size)
{
    if (r->status == LB_CELL_OK) {
        snprintf(buf, size, "ok");
        return;
    }
    if (r->status == LB_CELL_OOM) {
        snprintf(buf, size, "OOM");
        return;
    }
    const char *msg = r->error;
    if (msg[0] == '\0' || strcmp(msg, "ok") == 0 || strcmp(msg, "OOM") == 0)
        snprintf(buf, size, "error: %s", msg[0] ? msg : "unknown");
    else
        snprintf(buf, size, "%s", msg);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

int lb_raw_append(LbRawWriter *w, const LbCellResult *r)
{
    char f[LB_RAW_COLUMNS][256];
    const char *fields[LB_RAW_COLUMNS];
    int has_k = lb_model_has_k(r->model);
    int ok = r->status == LB_CELL_OK;
    for (int i = 0; i < LB_RAW_COLUMNS; i++) {
        f[i][0] = '\0';
        fields[i] = f[i];
    }
    snprintf(f[COL_MODEL], sizeof f[0], "%s", lb_model_name(r->model));
    fmt_i64(f[COL_N], sizeof f[0], (long long)r->n);
    if (has_k) {
        fmt_i64(f[COL_K], sizeof f[0], (long long)r->k);
        snprintf(f[COL_SHARING], sizeof f[0], "%s", lb_sharing_name(r->sharing));
        snprintf(f[COL_ORDER], sizeof f[0], "%s", lb_order_name(r->order));
    }
    snprintf(f[COL_DTYPE], sizeof f[0], "%s", lb_dtype_name(r->dtype));
    fmt_i64(f[COL_BATCH], sizeof f[0], (long long)r->batch);
    fmt_i64(f[COL_PLANNED], sizeof f[0], (long long)r->planned_bytes);
    fmt_i64(f[COL_PEAK], sizeof f[0], (long long)r->peak_bytes);
    if (ok) {
        lb_csv_format_double(r->median_ms, f[COL_MEDIAN], sizeof f[0]);
        lb_csv_format_double(r->min_ms, f[COL_MIN], sizeof f[0]);
        lb_csv_format_double(r->max_ms, f[COL_MAX], sizeof f[0]);
        lb_csv_format_double(r->ms_per_seq, f[COL_PER_SEQ], sizeof f[0]);
        lb_csv_format_double(r->tokens_per_s, f[COL_TOKENS], sizeof f[0]);
        lb_csv_format_double(r->tflop_per_s, f[COL_TFLOPS], sizeof f[0]);
        fmt_i64(f[COL_PASSES], sizeof f[0], r->passes);
    }
    if (r->sm_clock_start_mhz >= 0)
        fmt_i64(f[COL_CLK0], sizeof f[0], r->sm_clock_start_mhz);
    if (r->sm_clock_end_mhz >= 0)
        fmt_i64(f[COL_CLK1], sizeof f[0], r->sm_clock_end_mhz);
    if (r->clock_events_known && lb_clock_events_text(r->clock_events, f[COL_EVENTS], sizeof f[0]) != 0)
        return LB_FAIL(LB_ERR_INVALID, "clock-event reasons 0x%llx do not fit a raw.csv field",
                       (unsigned long long)r->clock_events);
    fmt_i64(f[COL_SLOWDOWN], sizeof f[0], r->slowdown ? 1 : 0);
    /* energy: empty where unknown (meta.csv's energy_note says why: NaN, or the zero of a row
     * built without it); a number only on an ok row */
    if (ok && r->power_w > 0 && r->energy_j_per_seq > 0 && isfinite(r->power_w) && isfinite(r->energy_j_per_seq)) {
        lb_csv_format_double(r->power_w, f[COL_POWER], sizeof f[0]);
        lb_csv_format_double(r->energy_j_per_seq, f[COL_ENERGY], sizeof f[0]);
    }
    fields[COL_UUID] = r->device_uuid;
    fields[COL_HOST] = r->host;
    char status[sizeof r->error + 16]; /* "error: " + the whole message */
    status_text(r, status, sizeof status);
    fields[COL_STATUS] = status;
    /* in the file's layout: a resumed file from before some columns stays one table */
    const char *kept[LB_RAW_COLUMNS];
    size_t at = 0;
    for (int c = 0; c < LB_RAW_COLUMNS; c++)
        if (!left_out(w->layout, c))
            kept[at++] = fields[c];
    return write_record(w, kept, at);
}

/* --- reading ---------------------------------------------------------------------------------- */

#define BAD(col, what)                                                                            \
    LB_FAIL(LB_ERR_FORMAT, "%s line %zu: invalid %s \"%s\": should be %s", path, line,           \
            lb_raw_columns[col], fs[col], what)

/* "standard, linformer, ... or NAME": every name the model table knows, for messages. */
static void model_names(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const char *sep = m == 0 ? "" : m + 1 == LB_MODEL_COUNT ? " or " : ", ";
        int len = snprintf(buf + used, size - used, "%s%s", sep, lb_model_name((LbModelKind)m));
        if (len < 0 || (size_t)len >= size - used)
            return;
        used += (size_t)len;
    }
}

/* The model column read by the model table: linbench's own rows. */
static int table_model(const char *name, size_t row, void *ctx, LbModelKind *model, char *should, size_t size)
{
    (void)row;
    (void)ctx;
    if (lb_model_parse(name, model) == 0)
        return 0;
    model_names(should, size);
    return -1;
}

static int parse_row(const char *path, size_t line, char **fs, LbRawModelName name_fn, void *ctx, size_t index,
                     LbCellResult *r)
{
    long long v;
    memset(r, 0, sizeof *r);
    char should[256];
    if (name_fn(fs[COL_MODEL], index, ctx, &r->model, should, sizeof should))
        return BAD(COL_MODEL, should);
    if (lb_csv_parse_int64(fs[COL_N], &v) || v < 1)
        return BAD(COL_N, "a positive integer");
    r->n = v;
    /* k, sharing and order belong to a model with a k axis; the others leave them empty. */
    if (lb_model_has_k(r->model)) {
        if (lb_csv_parse_int64(fs[COL_K], &v) || v < 1)
            return BAD(COL_K, "a positive integer for a model with a k axis");
        r->k = v;
        if (lb_sharing_parse(fs[COL_SHARING], &r->sharing))
            return BAD(COL_SHARING, "layerwise, kv, headwise or none");
        if (lb_order_parse(fs[COL_ORDER], &r->order))
            return BAD(COL_ORDER, "early or late");
    } else if (fs[COL_K][0] || fs[COL_SHARING][0] || fs[COL_ORDER][0]) {
        int col = fs[COL_K][0] ? COL_K : fs[COL_SHARING][0] ? COL_SHARING : COL_ORDER;
        char what[96];
        snprintf(what, sizeof what, "empty for a %s row (no k axis)", lb_model_name(r->model));
        return BAD(col, what);
    }
    if (lb_dtype_parse(fs[COL_DTYPE], &r->dtype))
        return BAD(COL_DTYPE, "fp16, bf16 or fp32");
    if (lb_csv_parse_int64(fs[COL_BATCH], &v) || v < 0)
        return BAD(COL_BATCH, "a non-negative integer");
    r->batch = v;
    if (lb_csv_parse_int64(fs[COL_PLANNED], &v) || v < 0)
        return BAD(COL_PLANNED, "a non-negative integer");
    r->planned_bytes = v;
    if (lb_csv_parse_int64(fs[COL_PEAK], &v) || v < 0)
        return BAD(COL_PEAK, "a non-negative integer");
    r->peak_bytes = v;

    const char *st = fs[COL_STATUS];
    if (strcmp(st, "ok") == 0) {
        r->status = LB_CELL_OK;
    } else if (strcmp(st, "OOM") == 0) {
        r->status = LB_CELL_OOM;
    } else if (st[0]) {
        r->status = LB_CELL_ERROR;
    } else {
        return BAD(COL_STATUS, "ok, OOM or an error message");
    }
    snprintf(r->error, sizeof r->error, "%s", st);

    double *reals[] = {&r->median_ms, &r->min_ms, &r->max_ms, &r->ms_per_seq, &r->tokens_per_s,
                       &r->tflop_per_s};
    for (int c = COL_MEDIAN; c <= COL_TFLOPS; c++) {
        if (fs[c][0] == '\0' && r->status != LB_CELL_OK)
            continue;
        if (lb_csv_parse_double(fs[c], reals[c - COL_MEDIAN]))
            return BAD(c, r->status == LB_CELL_OK ? "a number on an ok row" : "a number or empty");
    }
    if (fs[COL_PASSES][0] || r->status == LB_CELL_OK) {
        if (lb_csv_parse_int64(fs[COL_PASSES], &v) || v < 0 || v > INT32_MAX)
            return BAD(COL_PASSES, "a non-negative integer");
        r->passes = (int)v;
    }
    int *clk[] = {&r->sm_clock_start_mhz, &r->sm_clock_end_mhz};
    for (int c = COL_CLK0; c <= COL_CLK1; c++) {
        *clk[c - COL_CLK0] = -1;
        if (fs[c][0] == '\0')
            continue;
        if (lb_csv_parse_int64(fs[c], &v) || v < 0 || v > INT32_MAX)
            return BAD(c, "a clock in MHz or empty");
        *clk[c - COL_CLK0] = (int)v;
    }
    r->clock_events_known = fs[COL_EVENTS][0] != '\0';
    if (r->clock_events_known && lb_clock_events_parse(fs[COL_EVENTS], &r->clock_events) != 0)
        return BAD(COL_EVENTS, "clock-event reasons such as sw_power_cap+hw_thermal, none, or empty");
    if (lb_csv_parse_int64(fs[COL_SLOWDOWN], &v) || (v != 0 && v != 1))
        return BAD(COL_SLOWDOWN, "0 or 1");
    r->slowdown = (int)v;
    /* both energy columns, or neither (unknown); a number only on an ok row */
    r->power_w = r->energy_j_per_seq = NAN;
    if (fs[COL_POWER][0] || fs[COL_ENERGY][0]) {
        if (r->status != LB_CELL_OK)
            return BAD(fs[COL_POWER][0] ? COL_POWER : COL_ENERGY, "empty on a row that is not ok");
        if (lb_csv_parse_double(fs[COL_POWER], &r->power_w) || !(r->power_w > 0) || !isfinite(r->power_w))
            return BAD(COL_POWER, "a positive number, or empty with energy_j_per_seq");
        if (lb_csv_parse_double(fs[COL_ENERGY], &r->energy_j_per_seq) || !(r->energy_j_per_seq > 0) ||
            !isfinite(r->energy_j_per_seq))
            return BAD(COL_ENERGY, "a positive number, or empty with power_w");
    }
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", fs[COL_UUID]);
    snprintf(r->host, sizeof r->host, "%s", fs[COL_HOST]);
    return LB_OK;
}

#undef BAD

/* Every reader of raw.csv: rows, and where asked each row's line and the line of a cut-off last
 * row (0 when the file ends in a newline). */
static int read_rows(const char *path, LbRawModelName name_fn, void *ctx, LbCellResult **rows, size_t **lines,
                     size_t *count, size_t *cut_line);

int lb_raw_read(const char *path, LbCellResult **rows, size_t *count)
{
    return read_rows(path, table_model, NULL, rows, NULL, count, NULL);
}

int lb_raw_read_lines(const char *path, LbCellResult **rows, size_t **lines, size_t *count)
{
    return read_rows(path, table_model, NULL, rows, lines, count, NULL);
}

int lb_raw_read_cut(const char *path, LbCellResult **rows, size_t *count, size_t *cut_line)
{
    return read_rows(path, table_model, NULL, rows, NULL, count, cut_line);
}

int lb_raw_read_named(const char *path, LbRawModelName name_fn, void *ctx, LbCellResult **rows, size_t *count,
                      size_t *cut_line)
{
    return read_rows(path, name_fn, ctx, rows, NULL, count, cut_line);
}

static int read_rows(const char *path, LbRawModelName name_fn, void *ctx, LbCellResult **rows, size_t **lines,
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
    const int kind = header_layout(&t.row[0]);
    if (kind < 0) {
        rc = LB_FAIL(LB_ERR_FORMAT,
                     "%s does not start with linbench's raw.csv header (model,n,k,...,status): not a sweep's raw.csv, or written by another version",
                     path);
        goto out;
    }
    const size_t width = layout_width(kind);
    LbCellResult *r = t.rows > 1 ? calloc(t.rows - 1, sizeof *r) : NULL;
    if (t.rows > 1 && !r) {
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
        goto out;
    }
    for (size_t i = 1; i < t.rows; i++) {
        if (t.row[i].count != width) {
            rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: %zu fields: should be %zu", path, t.line[i],
                         t.row[i].count, width);
            free(r);
            goto out;
        }
        /* every column in this version's places; one the file's layout lacks reads empty */
        char *fs[LB_RAW_COLUMNS], empty[1] = "";
        for (size_t c = 0, at = 0; c < LB_RAW_COLUMNS; c++)
            fs[c] = left_out(kind, (int)c) ? empty : t.row[i].fields[at++];
        rc = parse_row(path, t.line[i], fs, name_fn, ctx, i - 1, &r[i - 1]);
        if (rc != LB_OK) {
            free(r);
            goto out;
        }
    }
    if (lines && t.rows > 1) {
        if (!(*lines = malloc((t.rows - 1) * sizeof **lines))) {
            free(r);
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
            goto out;
        }
        for (size_t i = 1; i < t.rows; i++)
            (*lines)[i - 1] = t.line[i];
    }
    *rows = r;
    *count = t.rows - 1;
out:
    lb_csv_table_free(&t);
    return rc;
}
