/* The one place linbench touches CSV text: records are quoted by libcsv on the way out and
 * split by libcsv's parser on the way in, so every file linbench writes or reads (raw.csv, the
 * grids, meta.csv, gnuplot data, the paper's table) follows the same rules; and the codec of the
 * files of C records (raw.csv, breakdown.csv): one table of columns, one writer, one reader. */
#ifndef LB_CSV_IO_H
#define LB_CSV_IO_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/config.h"

typedef struct LbCsvRow {
    size_t count;
    char **fields; /* NUL-terminated copies */
} LbCsvRow;

typedef struct LbCsvTable {
    size_t rows, cap;
    LbCsvRow *row;
    size_t *line; /* the line each row started on (1-based), for messages */
    size_t cut_line; /* complete_only: the line a last record without its newline started on,
                      * left out (a reader may say so); 0 when there was none */
} LbCsvTable;

/* One record and its newline. Fields that need quoting (comma, quote, CR, LF, or leading or
 * trailing blank) go through libcsv's csv_fwrite; the others are written as they are, so plain
 * headers read `model,n,k`. NULL fields are empty. LB_OK or LB_ERR_IO. */
int lb_csv_write_record(FILE *f, const char *const *fields, size_t count);

/* Parse CSV text with libcsv (strict quoting). With complete_only, a last record that is not
 * ended by a newline is dropped (what a kill -9 leaves mid-write); otherwise it counts. Blank
 * lines are skipped. LB_OK, LB_ERR_NOMEM, or LB_ERR_FORMAT naming `what` and the line. */
int lb_csv_parse_text(const char *text, size_t len, int complete_only, const char *what,
                      LbCsvTable *t);
/* The same for a whole file. LB_ERR_IO when it cannot be read, LB_ERR_FORMAT when it is not a
 * regular file (a FIFO would hang the read, a device never end it). */
int lb_csv_read_file(const char *path, int complete_only, LbCsvTable *t);
/* A whole file into *text (malloc'd, *len bytes, not NUL-terminated). LB_ERR_IO, LB_ERR_FORMAT (not a
 * regular file) or LB_ERR_NOMEM. */
int lb_csv_slurp(const char *path, char **text, size_t *len);
/* The same from an open file, read from its start whatever its offset (`path` names it in errors):
 * a writer checks the very file it will append to, not whatever its path names by then. */
int lb_csv_slurp_fd(int fd, const char *path, char **text, size_t *len);
void lb_csv_table_free(LbCsvTable *t);

/* Shortest of %.15g, %.16g, %.17g that reads back to exactly `v` (so "0.1", not
 * "0.10000000000000001"). */
void lb_csv_format_double(double v, char *buf, size_t size);

/* Field parsers for what linbench wrote: the whole field, no trailing characters. 0 or -1. */
int lb_csv_parse_int64(const char *s, long long *out);
int lb_csv_parse_double(const char *s, double *out);

/* --- files of records, described by a table of columns -------------------------------------- */

typedef enum LbColKind {
    LB_COL_MODEL,   /* LbModelKind, by name */
    LB_COL_I64,     /* int64_t in [min, INT64_MAX] */
    LB_COL_INT,     /* int in [min, max] */
    LB_COL_REAL,    /* double, shortest exact text */
    LB_COL_TEXT,    /* char[size] */
    LB_COL_SHARING, /* LbSharing */
    LB_COL_ORDER,   /* LbOrder */
    LB_COL_DTYPE,   /* LbDtype */
    /* raw.csv's own, in an LbCellResult (attn/measure/measure.h): */
    LB_COL_EVENTS,  /* clock_events; clock_events_known says whether read */
    LB_COL_ENERGY,  /* power_w and energy_j_per_seq: both or neither, on an ok row; NaN when empty */
    LB_COL_STATUS,  /* status and error */
} LbColKind;

enum {
    LB_COL_ONLY_K = 1,    /* empty for a model without a k axis (read back as 0) */
    LB_COL_ONLY_OK = 2,   /* empty unless the status column is ok; read back as 0 there */
    LB_COL_NEG_EMPTY = 4, /* an int's -1 (unknown) written empty; read back as -1 when empty */
    LB_COL_NAN_EMPTY = 8, /* a double's NaN written empty; read back as NaN when empty */
    LB_COL_NONNEG = 16,   /* a double refused below 0 */
    LB_COL_WHOLE = 32,    /* a text refused when empty or longer than its field */
    LB_COL_CHECKED = 64,  /* once read, refused where the file's check says so */
    LB_COL_FINITE = 128,  /* a double refused when NaN or infinite (strtod reads "nan", "inf") */
};

typedef struct LbColumn {
    const char *name;
    size_t offset; /* of its field in the record */
    LbColKind kind;
    unsigned flags;
    int since;     /* the file's layout that added it (1 the first) */
    int64_t min, max;
    size_t size;   /* LB_COL_TEXT's field */
    const char *should; /* what a refused field should be (NULL: said by its kind) */
} LbColumn;

#define LB_RECORD_COLUMNS_MAX 32

/* A model column of other names than the model table's (bench/peer's): the model whose work row
 * `row` (0 the first) did, 0; or -1 with what it should hold in `should`. */
typedef int (*LbModelNameFn)(const char *name, size_t row, void *ctx, LbModelKind *model, char *should,
                             size_t size);

typedef struct LbRecordFile {
    const LbColumn *col; /* col[0] the model, whose k axis the others' LB_COL_ONLY_K follows */
    int count;     /* at most LB_RECORD_COLUMNS_MAX */
    size_t size;   /* of a record */
    const char *no_k; /* what the k of a model without a k axis should be; a %s there is its name */
    /* An LB_COL_CHECKED column's field, once read into rec (the columns before it too): NULL, or
     * what it should be. */
    const char *(*check)(const void *rec, const char *field);
} LbRecordFile;

/* The layout (1 to `latest`) whose columns the header row names, or -1. */
int lb_record_layout(const LbRecordFile *f, int latest, const LbCsvRow *header);
/* One record in `layout`'s columns (rec NULL: the header row). LB_OK, LB_ERR_IO or LB_ERR_INVALID. */
int lb_record_write(FILE *out, const LbRecordFile *f, int layout, const void *rec);
/* Rows 1 on of t (row 0 its header, of `layout`) into a malloc'd array of t->rows - 1 records
 * (NULL when none), the model column by name_fn (NULL: the model table). LB_ERR_FORMAT naming
 * path, line and column, or LB_ERR_NOMEM. */
int lb_record_read_rows(const LbRecordFile *f, int layout, const char *path, const LbCsvTable *t,
                        LbModelNameFn name_fn, void *ctx, void **recs);

#endif
