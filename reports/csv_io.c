/* CSV records in and out through libcsv (see csv_io.h). */
#include "reports/csv_io.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/base/status.h"
#include "attn/measure/clock_events.h"
#include "attn/measure/measure.h"
#include "reports/settings.h"

static int needs_quotes(const char *s)
{
    size_t len = strlen(s);
    if (len == 0)
        return 0;
    /* libcsv trims unquoted blanks at either end of a field, so they must be quoted to survive. */
    if (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t')
        return 1;
    return strpbrk(s, ",\"\r\n") != NULL;
}

int lb_csv_write_record(FILE *f, const char *const *fields, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const char *s = fields[i] ? fields[i] : "";
        if (i > 0 && fputc(',', f) == EOF)
            goto fail;
        if (needs_quotes(s)) {
            if (csv_fwrite(f, s, strlen(s)) != 0)
                goto fail;
        } else if (fputs(s, f) == EOF) {
            goto fail;
        }
    }
    if (fputc('\n', f) == EOF)
        goto fail;
    return LB_OK;
fail:
    return LB_FAIL(LB_ERR_IO, "cannot write a CSV record: %s", strerror(errno));
}

/* What the libcsv callbacks build: rows of fields, the current row pending until its end. */
typedef struct CsvBuild {
    LbCsvTable *t;
    LbCsvRow cur;
    size_t cur_cap;
    size_t line;       /* current line number, counted from the text */
    size_t cur_line;   /* the line the pending row started on */
    int nomem;
    int finishing;     /* inside csv_fini: the record had no newline */
    int complete_only;
} CsvBuild;

static void row_free(LbCsvRow *r)
{
    for (size_t i = 0; i < r->count; i++)
        free(r->fields[i]);
    free(r->fields);
    r->fields = NULL;
    r->count = 0;
}

static void on_field(void *field, size_t len, void *data)
{
    CsvBuild *b = data;
    if (b->nomem || (b->finishing && b->complete_only))
        return;
    if (b->cur.count == b->cur_cap) {
        size_t cap = b->cur_cap ? 2 * b->cur_cap : 16;
        char **f = realloc(b->cur.fields, cap * sizeof *f);
        if (!f) {
            b->nomem = 1;
            return;
        }
        b->cur.fields = f;
        b->cur_cap = cap;
    }
    if (b->cur.count == 0)
        b->cur_line = b->line;
    char *copy = malloc(len + 1);
    if (!copy) {
        b->nomem = 1;
        return;
    }
    if (len)
        memcpy(copy, field, len);
    copy[len] = '\0';
    b->cur.fields[b->cur.count++] = copy;
}

/* A finished row joins the table; a row cut short (complete_only) or met out of memory is dropped. */
static void on_record(int c, void *data)
{
    CsvBuild *b = data;
    LbCsvTable *t = b->t;
    const int cut = b->finishing && b->complete_only;
    (void)c;
    if (cut)
        t->cut_line = b->cur.count ? b->cur_line : b->line;
    if (!cut && !b->nomem && t->rows == t->cap) {
        const size_t cap = t->cap ? 2 * t->cap : 64;
        LbCsvRow *r = realloc(t->row, cap * sizeof *r);
        size_t *l = r ? realloc(t->line, cap * sizeof *l) : NULL;
        t->row = r ? r : t->row;
        t->line = l ? l : t->line;
        t->cap = l ? cap : t->cap;
        b->nomem = !l;
    }
    if (cut || b->nomem) {
        row_free(&b->cur);
    } else {
        t->line[t->rows] = b->cur_line;
        t->row[t->rows++] = b->cur;
        b->cur.fields = NULL;
        b->cur.count = 0;
    }
    b->cur_cap = 0;
}

/* Feed the text one line at a time so that on_field knows which line a record starts on. */
static size_t feed(struct csv_parser *p, CsvBuild *b, const char *s, size_t len)
{
    size_t done = 0;
    while (done < len) {
        const char *nl = memchr(s + done, '\n', len - done);
        size_t piece = nl ? (size_t)(nl - (s + done)) + 1 : len - done;
        size_t got = csv_parse(p, s + done, piece, on_field, on_record, b);
        if (got != piece)
            return done + got;
        done += piece;
        if (nl)
            b->line++;
    }
    return done;
}

int lb_csv_parse_text(const char *text, size_t len, int complete_only, const char *what,
                      LbCsvTable *t)
{
    memset(t, 0, sizeof *t);
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0)
        return LB_FAIL(LB_ERR_NOMEM, "cannot initialise the CSV parser");
    CsvBuild b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.line = 1;
    b.complete_only = complete_only;
    int rc = LB_OK;
    size_t got = feed(&p, &b, text, len);
    if (got != len) {
        rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: not valid CSV (%s)", what, b.line,
                     csv_strerror(csv_error(&p)));
        goto out;
    }
    b.finishing = 1;
    if (csv_fini(&p, on_field, on_record, &b) != 0 && !complete_only) {
        rc = LB_FAIL(LB_ERR_FORMAT, "%s line %zu: not valid CSV (%s)", what, b.line,
                     csv_strerror(csv_error(&p)));
        goto out;
    }
    if (b.nomem)
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", what);
out:
    row_free(&b.cur);
    csv_free(&p);
    if (rc != LB_OK)
        lb_csv_table_free(t);
    return rc;
}

int lb_csv_slurp_fd(int fd, const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    size_t cap = 0;
    int rc = LB_OK;
    for (;;) {
        if (cap - *len < 65536) {
            char *grown = realloc(*text, cap ? 2 * cap : 65536);
            if (!grown) {
                rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            *text = grown;
            cap = cap ? 2 * cap : 65536;
        }
        const ssize_t got = pread(fd, *text + *len, cap - *len, (off_t)*len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            rc = LB_FAIL(LB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        if (got <= 0)
            break;
        *len += (size_t)got;
    }
    if (rc != LB_OK) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

int lb_csv_slurp(const char *path, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    /* Only a regular file ends: a FIFO would hang the read, a device such as /dev/zero fill memory.
     * Looked at before the open too, since opening a device can act (a tty, a watchdog), a socket
     * does not open at all; O_NONBLOCK and O_NOCTTY for what is swapped in between. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return LB_FAIL(LB_ERR_FORMAT, "cannot read %s: not a regular file (a FIFO, a device or a directory)", path);
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return LB_FAIL(LB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return LB_FAIL(LB_ERR_FORMAT, "cannot read %s: not a regular file (a FIFO, a device or a directory)", path);
    }
    const int rc = lb_csv_slurp_fd(fd, path, text, len);
    close(fd);
    return rc;
}

int lb_csv_read_file(const char *path, int complete_only, LbCsvTable *t)
{
    memset(t, 0, sizeof *t);
    char *text;
    size_t len;
    LB_TRY(lb_csv_slurp(path, &text, &len));
    const int rc = lb_csv_parse_text(text, len, complete_only, path, t);
    free(text);
    return rc;
}

void lb_csv_table_free(LbCsvTable *t)
{
    for (size_t i = 0; i < t->rows; i++)
        row_free(&t->row[i]);
    free(t->row);
    free(t->line);
    memset(t, 0, sizeof *t);
}

void lb_csv_format_double(double v, char *buf, size_t size)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

int lb_csv_parse_int64(const char *s, long long *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int lb_csv_parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || (errno == ERANGE && v != 0))
        return -1;
    *out = v;
    return 0;
}

/* --- files of records -------------------------------------------------------------------------- */

int lb_record_layout(const LbRecordFile *f, int latest, const LbCsvRow *header)
{
    for (int layout = latest; layout >= 1; layout--) {
        size_t at = 0;
        int same = 1;
        for (int c = 0; c < f->count && same; c++)
            if (f->col[c].since <= layout)
                same = at < header->count && strcmp(header->fields[at++], f->col[c].name) == 0;
        if (same && at == header->count)
            return layout;
    }
    return -1;
}

/* raw.csv's status column: "ok", "OOM" or the message, kept on one line and never mistaken for
 * the other two. */
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

int lb_record_write(FILE *out, const LbRecordFile *f, int layout, const void *rec)
{
    char text[LB_RECORD_COLUMNS_MAX][256];
    char status[LB_ERROR_MAX + 16]; /* "error: " + the whole message */
    const char *fields[LB_RECORD_COLUMNS_MAX];
    const LbCellResult *r = rec; /* raw.csv's own kinds only */
    const int has_k = rec && lb_model_has_k(*(const LbModelKind *)((const char *)rec + f->col[0].offset));
    size_t at = 0;
    for (int c = 0; c < f->count; c++) {
        const LbColumn *col = &f->col[c];
        char *s = text[c];
        s[0] = '\0';
        if (col->since > layout)
            continue;
        fields[at++] = rec ? s : col->name;
        if (!rec || ((col->flags & LB_COL_ONLY_K) && !has_k) ||
            ((col->flags & LB_COL_ONLY_OK) && r->status != LB_CELL_OK))
            continue;
        const char *p = (const char *)rec + col->offset;
        switch (col->kind) {
        case LB_COL_MODEL: fields[at - 1] = lb_model_name(*(const LbModelKind *)p); break;
        case LB_COL_I64: snprintf(s, sizeof text[0], "%lld", (long long)*(const int64_t *)p); break;
        case LB_COL_INT:
            if (!(col->flags & LB_COL_NEG_EMPTY) || *(const int *)p >= 0)
                snprintf(s, sizeof text[0], "%d", *(const int *)p);
            break;
        case LB_COL_REAL:
            if (!(col->flags & LB_COL_NAN_EMPTY) || !isnan(*(const double *)p))
                lb_csv_format_double(*(const double *)p, s, sizeof text[0]);
            break;
        case LB_COL_ENERGY: /* only where both numbers are known */
            if (r->power_w > 0 && r->energy_j_per_seq > 0 && isfinite(r->power_w) && isfinite(r->energy_j_per_seq))
                lb_csv_format_double(*(const double *)p, s, sizeof text[0]);
            break;
        case LB_COL_SHARING: fields[at - 1] = lb_sharing_name(*(const LbSharing *)p); break;
        case LB_COL_ORDER: fields[at - 1] = lb_order_name(*(const LbOrder *)p); break;
        case LB_COL_DTYPE: fields[at - 1] = lb_dtype_name(*(const LbDtype *)p); break;
        case LB_COL_EVENTS:
            if (r->clock_events_known && lb_clock_events_text(r->clock_events, s, sizeof text[0]) != 0)
                return LB_FAIL(LB_ERR_INVALID, "clock-event reasons 0x%llx do not fit a raw.csv field",
                               (unsigned long long)r->clock_events);
            break;
        case LB_COL_TEXT: fields[at - 1] = p; break;
        case LB_COL_STATUS:
            status_text(r, status, sizeof status);
            fields[at - 1] = status;
            break;
        }
    }
    return lb_csv_write_record(out, fields, at);
}

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

/* One record from fs, every column in the table's places ("" for one the file's layout lacks): -1,
 * or the column refused with what it should be in should[size]. */
static int parse_record(const LbRecordFile *f, char **fs, LbModelNameFn name_fn, void *ctx, size_t index, void *rec,
                        char *should, size_t size)
{
    LbCellResult *r = rec; /* raw.csv's own kinds only */
    int ok = 1, energy_given = 0;
    memset(rec, 0, f->size);
    for (int c = 0; c < f->count; c++) {
        const char *s = fs[c];
        if (f->col[c].kind == LB_COL_STATUS) {
            r->status = strcmp(s, "ok") == 0 ? LB_CELL_OK : strcmp(s, "OOM") == 0 ? LB_CELL_OOM : LB_CELL_ERROR;
            ok = r->status == LB_CELL_OK;
        }
        energy_given |= f->col[c].kind == LB_COL_ENERGY && s[0];
    }
    LbModelKind model = LB_MODEL_STANDARD;
    for (int c = 0; c < f->count; c++) {
        const LbColumn *col = &f->col[c];
        void *p = (char *)rec + col->offset;
        const char *s = fs[c];
        long long v;
        snprintf(should, size, "%s", col->should ? col->should : "");
        if (col->flags & LB_COL_NEG_EMPTY)
            *(int *)p = -1;
        if (col->kind == LB_COL_ENERGY || (col->flags & LB_COL_NAN_EMPTY))
            *(double *)p = NAN;
        if ((col->flags & LB_COL_ONLY_K) && !lb_model_has_k(model)) {
            if (!s[0])
                continue;
            snprintf(should, size, f->no_k, lb_model_name(model));
            return c;
        }
        if (col->kind == LB_COL_ENERGY) { /* both or neither, and only on an ok row */
            if (!energy_given)
                continue;
            if (!ok && s[0]) {
                snprintf(should, size, "empty on a row that is not ok");
                return c;
            }
            if (!ok)
                continue;
        } else if (!s[0] && (((col->flags & LB_COL_ONLY_OK) && !ok) ||
                             (col->flags & (LB_COL_NEG_EMPTY | LB_COL_NAN_EMPTY)))) {
            continue;
        }
        switch (col->kind) {
        case LB_COL_MODEL:
            if ((name_fn ? name_fn : table_model)(s, index, ctx, p, should, size)) {
                if (col->should)
                    snprintf(should, size, "%s", col->should);
                return c;
            }
            model = *(LbModelKind *)p;
            break;
        case LB_COL_I64:
            if (lb_csv_parse_int64(s, &v) || v < col->min)
                return c;
            *(int64_t *)p = v;
            break;
        case LB_COL_INT:
            if (lb_csv_parse_int64(s, &v) || v < col->min || v > col->max)
                return c;
            *(int *)p = (int)v;
            break;
        case LB_COL_REAL:
            if (!col->should)
                snprintf(should, size, "a %snumber%s%s", (col->flags & LB_COL_FINITE) ? "finite " : "",
                         (col->flags & LB_COL_NONNEG) ? " >= 0" : "", ok ? " on an ok row" : " or empty");
            if (lb_csv_parse_double(s, p) || ((col->flags & LB_COL_NONNEG) && *(double *)p < 0) ||
                ((col->flags & LB_COL_FINITE) && !isfinite(*(double *)p)))
                return c;
            break;
        case LB_COL_ENERGY:
            if (lb_csv_parse_double(s, p) || !(*(double *)p > 0) || !isfinite(*(double *)p))
                return c;
            break;
        case LB_COL_SHARING:
            if (lb_sharing_parse(s, p))
                return c;
            break;
        case LB_COL_ORDER:
            if (lb_order_parse(s, p))
                return c;
            break;
        case LB_COL_DTYPE:
            if (lb_dtype_parse(s, p))
                return c;
            break;
        case LB_COL_EVENTS:
            r->clock_events_known = s[0] != '\0';
            if (r->clock_events_known && lb_clock_events_parse(s, &r->clock_events) != 0)
                return c;
            break;
        case LB_COL_TEXT:
            if ((col->flags & LB_COL_WHOLE) && (!s[0] || strlen(s) >= col->size))
                return c;
            snprintf(p, col->size, "%s", s);
            break;
        case LB_COL_STATUS:
            if (!s[0])
                return c;
            snprintf(r->error, sizeof r->error, "%s", s);
            break;
        }
        const char *why = (col->flags & LB_COL_CHECKED) ? f->check(rec, s) : NULL;
        if (why) {
            snprintf(should, size, "%s", why);
            return c;
        }
    }
    return -1;
}

int lb_record_read_rows(const LbRecordFile *f, int layout, const char *path, const LbCsvTable *t,
                        LbModelNameFn name_fn, void *ctx, void **recs)
{
    *recs = NULL;
    size_t width = 0;
    for (int c = 0; c < f->count; c++)
        width += f->col[c].since <= layout;
    char *out = t->rows > 1 ? calloc(t->rows - 1, f->size) : NULL;
    if (t->rows > 1 && !out)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
    for (size_t i = 1; i < t->rows; i++) {
        if (t->row[i].count != width) {
            free(out);
            return LB_FAIL(LB_ERR_FORMAT, "%s line %zu: %zu fields: should be %zu", path, t->line[i], t->row[i].count,
                           width);
        }
        char *fs[LB_RECORD_COLUMNS_MAX], empty[1] = "", should[256];
        for (size_t c = 0, at = 0; c < (size_t)f->count; c++)
            fs[c] = f->col[c].since > layout ? empty : t->row[i].fields[at++];
        const int bad = parse_record(f, fs, name_fn, ctx, i - 1, out + (i - 1) * f->size, should, sizeof should);
        if (bad >= 0) {
            free(out);
            return LB_FAIL(LB_ERR_FORMAT, "%s line %zu: invalid %s \"%s\": should be %s", path, t->line[i],
                           f->col[bad].name, fs[bad], should);
        }
    }
    *recs = out;
    return LB_OK;
}
