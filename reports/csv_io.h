/* The one place linbench touches CSV text: records are quoted by libcsv on the way out and
 * split by libcsv's parser on the way in, so every file linbench writes or reads (raw.csv, the
 * grids, meta.csv, gnuplot data, the paper's table) follows the same rules. */
#ifndef LB_CSV_IO_H
#define LB_CSV_IO_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdio.h>

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
/* The same for a whole file. LB_ERR_IO when it cannot be read. */
int lb_csv_read_file(const char *path, int complete_only, LbCsvTable *t);
void lb_csv_table_free(LbCsvTable *t);

/* Shortest of %.15g, %.16g, %.17g that reads back to exactly `v` (so "0.1", not
 * "0.10000000000000001"). */
void lb_csv_format_double(double v, char *buf, size_t size);

/* Field parsers for what linbench wrote: the whole field, no trailing characters. 0 or -1. */
int lb_csv_parse_int64(const char *s, long long *out);
int lb_csv_parse_double(const char *s, double *out);

#endif
