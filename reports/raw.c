/* raw.csv written row by row and read back (see raw.h for the format). */
#include "reports/raw.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/measure/clock_events.h"
#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/settings.h"

typedef enum {
    RAW_MODEL,   /* LbModelKind, by name (or by the reader's LbRawModelName) */
    RAW_I64,     /* int64_t in [min, INT64_MAX] */
    RAW_INT,     /* int in [min, max] */
    RAW_FLAG,    /* int, written 0 or 1 */
    RAW_REAL,    /* double, shortest exact text */
    RAW_ENERGY,  /* double: power_w and energy_j_per_seq, both or neither, NaN when empty */
    RAW_SHARING, /* LbSharing */
    RAW_ORDER,   /* LbOrder */
    RAW_DTYPE,   /* LbDtype */
    RAW_EVENTS,  /* uint64_t clock-event reasons; clock_events_known says whether read */
    RAW_TEXT,    /* char[size] */
    RAW_STATUS,  /* status and error */
} RawKind;

enum {
    ONLY_K = 1,    /* empty for a model without a k axis */
    ONLY_OK = 2,   /* empty unless status is ok; read back as 0 there */
    NEG_EMPTY = 4, /* -1 (unknown) written empty; read back as -1 when empty */
};

typedef struct RawColumn {
    const char *name;
    size_t offset; /* in LbCellResult */
    RawKind kind;
    unsigned flags;
    int since;      /* the raw.csv layout that added it (RAW_LAYOUT is this version's) */
    int64_t min, max;
    size_t size;    /* RAW_TEXT's buffer */
    const char *should;
} RawColumn;

/* Layouts: 1 the first, 2 added device_uuid and host, 3 the energy columns. A file keeps the
 * layout its header has (a resume appends rows in it); the columns it lacks read back empty. */
#define RAW_LAYOUT 3
#define AT(field) offsetof(LbCellResult, field)
#define SIZE(field) sizeof(((LbCellResult *)0)->field)

static const RawColumn columns[] = {
    {"model", AT(model), RAW_MODEL, 0, 1, 0, 0, 0, NULL},
    {"n", AT(n), RAW_I64, 0, 1, 1, 0, 0, "a positive integer"},
    {"k", AT(k), RAW_I64, ONLY_K, 1, 1, 0, 0, "a positive integer for a model with a k axis"},
    {"sharing", AT(sharing), RAW_SHARING, ONLY_K, 1, 0, 0, 0, "layerwise, kv, headwise or none"},
    {"order", AT(order), RAW_ORDER, ONLY_K, 1, 0, 0, 0, "early or late"},
    {"dtype", AT(dtype), RAW_DTYPE, 0, 1, 0, 0, 0, "fp16, bf16 or fp32"},
    {"batch", AT(batch), RAW_I64, 0, 1, 0, 0, 0, "a non-negative integer"},
    {"planned_bytes", AT(planned_bytes), RAW_I64, 0, 1, 0, 0, 0, "a non-negative integer"},
    {"peak_bytes", AT(peak_bytes), RAW_I64, 0, 1, 0, 0, 0, "a non-negative integer"},
    {"median_ms", AT(median_ms), RAW_REAL, ONLY_OK, 1, 0, 0, 0, NULL},
    {"min_ms", AT(min_ms), RAW_REAL, ONLY_OK, 1, 0, 0, 0, NULL},
    {"max_ms", AT(max_ms), RAW_REAL, ONLY_OK, 1, 0, 0, 0, NULL},
    {"ms_per_seq", AT(ms_per_seq), RAW_REAL, ONLY_OK, 1, 0, 0, 0, NULL},
    {"tokens_per_s", AT(tokens_per_s), RAW_REAL, ONLY_OK, 1, 0, 0, 0, NULL},
    {"tflop_per_s", AT(tflop_per_s), RAW_REAL, ONLY_OK, 1, 0, 0, 0, NULL},
    {"passes", AT(passes), RAW_INT, ONLY_OK, 1, 0, INT32_MAX, 0, "a non-negative integer"},
    {"sm_clock_start_mhz", AT(sm_clock_start_mhz), RAW_INT, NEG_EMPTY, 1, 0, INT32_MAX, 0, "a clock in MHz or empty"},
    {"sm_clock_end_mhz", AT(sm_clock_end_mhz), RAW_INT, NEG_EMPTY, 1, 0, INT32_MAX, 0, "a clock in MHz or empty"},
    {"clock_events", AT(clock_events), RAW_EVENTS, 0, 1, 0, 0, 0,
     "clock-event reasons such as sw_power_cap+hw_thermal, none, or empty"},
    {"slowdown", AT(slowdown), RAW_FLAG, 0, 1, 0, 1, 0, "0 or 1"},
    {"power_w", AT(power_w), RAW_ENERGY, ONLY_OK, 3, 0, 0, 0, "a positive number, or empty with energy_j_per_seq"},
    {"energy_j_per_seq", AT(energy_j_per_seq), RAW_ENERGY, ONLY_OK, 3, 0, 0, 0,
     "a positive number, or empty with power_w"},
    {"device_uuid", AT(device_uuid), RAW_TEXT, 0, 2, 0, 0, SIZE(device_uuid), NULL},
    {"host", AT(host), RAW_TEXT, 0, 2, 0, 0, SIZE(host), NULL},
    {"status", AT(status), RAW_STATUS, 0, 1, 0, 0, 0, "ok, OOM or an error message"},
};
#undef AT
#undef SIZE

_Static_assert(sizeof columns / sizeof columns[0] == LB_RAW_COLUMNS, "LB_RAW_COLUMNS is the table's length");

static int in_layout(int layout, int c) { return columns[c].since <= layout; }

static size_t layout_width(int layout)
{
    size_t width = 0;
    for (int c = 0; c < LB_RAW_COLUMNS; c++)
        width += in_layout(layout, c);
    return width;
}

/* Which layout a header row is, or -1 for none. */
static int header_layout(const LbCsvRow *row)
{
    for (int layout = RAW_LAYOUT; layout >= 1; layout--) {
        if (row->count != layout_width(layout))
            continue;
        size_t at = 0;
        int same = 1;
        for (int c = 0; c < LB_RAW_COLUMNS && same; c++)
            if (in_layout(layout, c))
                same = strcmp(row->fields[at++], columns[c].name) == 0;
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

static int write_header(LbRawWriter *w)
{
    const char *names[LB_RAW_COLUMNS];
    for (int c = 0; c < LB_RAW_COLUMNS; c++)
        names[c] = columns[c].name;
    return write_record(w, names, LB_RAW_COLUMNS);
}

int lb_raw_layout_has_energy(const LbRawWriter *w) { return w->layout >= 3; }

/* Cut the file after its last newline: rows never hold a newline, so what follows it is a row a
 * kill -9 cut short. Sets *size to the new size. */
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

static int not_raw(const char *path)
{
    return LB_FAIL(LB_ERR_FORMAT,
                   "%s does not start with linbench's raw.csv header (model,n,k,...,status): not a sweep's raw.csv, or written by another version",
                   path);
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
        return not_raw(path);
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
    int rc = LB_OK;
    long long size = 0;
    w->layout = RAW_LAYOUT;
    /* Opened before anything is read or cut, so that what is checked is what gets written. */
    w->fd = lb_open_plain(path, O_RDWR | O_APPEND | (shared ? 0 : O_CREAT) | (append || shared ? 0 : O_TRUNC), 0666);
    if (w->fd < 0)
        rc = LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, lb_open_plain_strerror(errno));
    else if (shared) /* prepared by lb_raw_open: header written, no partial line */
        rc = check_header(path, &w->layout);
    else if (append && (rc = drop_partial_line(w->fd, path, &size)) == LB_OK && size > 0)
        rc = check_header(path, &w->layout);
    if (rc == LB_OK && size == 0 && !shared)
        rc = write_header(w);
    if (rc != LB_OK) {
        lb_raw_close(w);
        return rc;
    }
    *out = w;
    return LB_OK;
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

/* The status column: "ok", "OOM" or the message, kept on one line and never mistaken for the
 * other two. */
static void status_text(const LbCellResult *r, char *buf, size_t size)
{
    const char *msg = r->error;
    if (r->status == LB_CELL_OK || r->status == LB_CELL_OOM)
        snprintf(buf, size, "%s", r->status == LB_CELL_OK ? "ok" : "OOM");
    else if (msg[0] == '\0' || strcmp(msg, "ok") == 0 || strcmp(msg, "OOM") == 0)
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
    char status[sizeof r->error + 16]; /* "error: " + the whole message */
    const char *kept[LB_RAW_COLUMNS];
    const int has_k = lb_model_has_k(r->model), ok = r->status == LB_CELL_OK;
    /* energy only on an ok row, and only where both numbers are known */
    const int energy = ok && r->power_w > 0 && r->energy_j_per_seq > 0 && isfinite(r->power_w) &&
                       isfinite(r->energy_j_per_seq);
    size_t at = 0;
    for (int c = 0; c < LB_RAW_COLUMNS; c++) {
        const RawColumn *col = &columns[c];
        const void *p = (const char *)r + col->offset;
        char *s = f[c];
        s[0] = '\0';
        if (!in_layout(w->layout, c))
            continue;
        kept[at++] = s;
        if (((col->flags & ONLY_K) && !has_k) || ((col->flags & ONLY_OK) && !ok))
            continue;
        switch (col->kind) {
        case RAW_MODEL: snprintf(s, sizeof f[0], "%s", lb_model_name(*(const LbModelKind *)p)); break;
        case RAW_I64: snprintf(s, sizeof f[0], "%lld", (long long)*(const int64_t *)p); break;
        case RAW_INT:
            if (!(col->flags & NEG_EMPTY) || *(const int *)p >= 0)
                snprintf(s, sizeof f[0], "%d", *(const int *)p);
            break;
        case RAW_FLAG: snprintf(s, sizeof f[0], "%d", *(const int *)p ? 1 : 0); break;
        case RAW_REAL: lb_csv_format_double(*(const double *)p, s, sizeof f[0]); break;
        case RAW_ENERGY:
            if (energy)
                lb_csv_format_double(*(const double *)p, s, sizeof f[0]);
            break;
        case RAW_SHARING: snprintf(s, sizeof f[0], "%s", lb_sharing_name(*(const LbSharing *)p)); break;
        case RAW_ORDER: snprintf(s, sizeof f[0], "%s", lb_order_name(*(const LbOrder *)p)); break;
        case RAW_DTYPE: snprintf(s, sizeof f[0], "%s", lb_dtype_name(*(const LbDtype *)p)); break;
        case RAW_EVENTS:
            if (r->clock_events_known && lb_clock_events_text(r->clock_events, s, sizeof f[0]) != 0)
                return LB_FAIL(LB_ERR_INVALID, "clock-event reasons 0x%llx do not fit a raw.csv field",
                               (unsigned long long)r->clock_events);
            break;
        case RAW_TEXT: kept[at - 1] = (const char *)p; break;
        case RAW_STATUS:
            status_text(r, status, sizeof status);
            kept[at - 1] = status;
            break;
        }
    }
    return write_record(w, kept, at);
}

/* --- reading ---------------------------------------------------------------------------------- */

#define BAD(col, what)                                                                            \
    LB_FAIL(LB_ERR_FORMAT, "%s line %zu: invalid %s \"%s\": should be %s", path, line,           \
            columns[col].name, fs[col], what)

/* The model column read by the model table: linbench's own rows. */
static int table_model(const char *name, size_t row, void *ctx, LbModelKind *model, char *should, size_t size)
{
    (void)row;
    (void)ctx;
    if (lb_model_parse(name, model) == 0)
        return 0;
    lb_settings_model_names(LB_ALL_MODELS, ", ", " or ", should, size);
    return -1;
}

/* fs: every column in this version's places, "" for one the file's layout lacks. */
static int parse_row(const char *path, size_t line, char **fs, LbRawModelName name_fn, void *ctx, size_t index,
                     LbCellResult *r)
{
    memset(r, 0, sizeof *r);
    const char *st = fs[LB_RAW_COLUMNS - 1];
    r->status = strcmp(st, "ok") == 0 ? LB_CELL_OK : strcmp(st, "OOM") == 0 ? LB_CELL_OOM : LB_CELL_ERROR;
    const int ok = r->status == LB_CELL_OK;
    int energy_given = 0;
    for (int c = 0; c < LB_RAW_COLUMNS; c++)
        energy_given |= columns[c].kind == RAW_ENERGY && fs[c][0];
    for (int c = 0; c < LB_RAW_COLUMNS; c++) {
        const RawColumn *col = &columns[c];
        void *p = (char *)r + col->offset;
        const char *s = fs[c];
        long long v;
        if (col->flags & NEG_EMPTY)
            *(int *)p = -1;
        if (col->kind == RAW_ENERGY)
            *(double *)p = NAN;
        if ((col->flags & ONLY_K) && !lb_model_has_k(r->model)) {
            if (!s[0])
                continue;
            char what[96];
            snprintf(what, sizeof what, "empty for a %s row (no k axis)", lb_model_name(r->model));
            return BAD(c, what);
        }
        if (col->kind == RAW_ENERGY) { /* both or neither, and only on an ok row */
            if (!energy_given)
                continue;
            if (!ok && s[0])
                return BAD(c, "empty on a row that is not ok");
            if (!ok)
                continue;
        } else if (!s[0] && (((col->flags & ONLY_OK) && !ok) || (col->flags & NEG_EMPTY))) {
            continue;
        }
        switch (col->kind) {
        case RAW_MODEL: {
            char should[256];
            if (name_fn(s, index, ctx, p, should, sizeof should))
                return BAD(c, should);
            break;
        }
        case RAW_I64:
            if (lb_csv_parse_int64(s, &v) || v < col->min)
                return BAD(c, col->should);
            *(int64_t *)p = v;
            break;
        case RAW_INT:
        case RAW_FLAG:
            if (lb_csv_parse_int64(s, &v) || v < col->min || v > col->max)
                return BAD(c, col->should);
            *(int *)p = (int)v;
            break;
        case RAW_REAL:
            if (lb_csv_parse_double(s, p))
                return BAD(c, ok ? "a number on an ok row" : "a number or empty");
            break;
        case RAW_ENERGY:
            if (lb_csv_parse_double(s, p) || !(*(double *)p > 0) || !isfinite(*(double *)p))
                return BAD(c, col->should);
            break;
        case RAW_SHARING:
            if (lb_sharing_parse(s, p))
                return BAD(c, col->should);
            break;
        case RAW_ORDER:
            if (lb_order_parse(s, p))
                return BAD(c, col->should);
            break;
        case RAW_DTYPE:
            if (lb_dtype_parse(s, p))
                return BAD(c, col->should);
            break;
        case RAW_EVENTS:
            r->clock_events_known = s[0] != '\0';
            if (r->clock_events_known && lb_clock_events_parse(s, &r->clock_events) != 0)
                return BAD(c, col->should);
            break;
        case RAW_TEXT: snprintf(p, col->size, "%s", s); break;
        case RAW_STATUS:
            if (!s[0])
                return BAD(c, col->should);
            snprintf(r->error, sizeof r->error, "%s", s);
            break;
        }
    }
    return LB_OK;
}

#undef BAD

/* Every reader of raw.csv: rows, and where asked each row's line and the line of a cut-off last
 * row (0 when the file ends in a newline). */
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
        rc = not_raw(path);
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
        char *fs[LB_RAW_COLUMNS], empty[1] = "";
        for (size_t c = 0, at = 0; c < LB_RAW_COLUMNS; c++)
            fs[c] = !in_layout(kind, (int)c) ? empty : t.row[i].fields[at++];
        rc = parse_row(path, t.line[i], fs, name_fn, ctx, i - 1, &r[i - 1]);
        if (rc != LB_OK) {
            free(r);
            goto out;
        }
    }
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
    return read_rows(path, table_model, NULL, rows, NULL, count, NULL);
}

int lb_raw_read_named(const char *path, LbRawModelName name_fn, void *ctx, LbCellResult **rows, size_t **lines,
                      size_t *count, size_t *cut_line)
{
    return read_rows(path, name_fn ? name_fn : table_model, ctx, rows, lines, count, cut_line);
}
