/* CSV records in and out through libcsv (see csv_io.h). */
#include "reports/csv_io.h"

#include <csv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"

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

int lb_csv_read_file(const char *path, int complete_only, LbCsvTable *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return LB_FAIL(LB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = LB_OK;
    for (;;) {
        if (cap - len < 65536) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nt = realloc(text, ncap);
            if (!nt) {
                rc = LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", path);
                goto out;
            }
            text = nt;
            cap = ncap;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                rc = LB_FAIL(LB_ERR_IO, "cannot read %s: %s", path, strerror(errno));
                goto out;
            }
            break;
        }
    }
    rc = lb_csv_parse_text(text, len, complete_only, path, t);
out:
    free(text);
    fclose(f);
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
