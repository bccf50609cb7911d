/* breakdown.csv: where each measured cell's pass spends its time (attn/measure/breakdown.h), a
 * row per operation role, then `overhead` (pass - sum) and `pass`, against the calibrated limits
 * (attn/measure/calibrate.h; METHOD.md, "Breakdown"). Its columns are a table in breakdown_csv.c. */
#ifndef LB_REPORTS_BREAKDOWN_H
#define LB_REPORTS_BREAKDOWN_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/measure/breakdown.h"
#include "attn/measure/calibrate.h"
#include "attn/config.h"

#define LB_BREAKDOWN_FILE "breakdown.csv"
#define LB_BREAKDOWN_COLUMNS 13

typedef struct LbBreakdownRecord {
    LbModelKind model;
    int64_t n, k;   /* k 0 for a model without a k axis */
    int64_t batch;
    char op[24];    /* a role's name, "overhead" or "pass" */
    int64_t calls;
    double ms, share, flops, bytes;
    double achieved;         /* NaN when empty */
    char achieved_unit[8];   /* "TFLOP/s", "GB/s" or "" */
    double percent_of_limit; /* NaN when empty */
} LbBreakdownRecord;

/* One cell's records: its rows in role order, then overhead and pass; cal NULL: no percentages.
 * *out malloc'd. */
int lb_breakdown_records(LbModelKind model, int64_t n, int64_t k, const LbBreakdown *b, const LbCalibration *cal,
                         LbBreakdownRecord **out, size_t *count);

/* The records of one cell as an aligned text table on out (what `run --breakdown` prints): op,
 * calls, ms, share %, achieved with its unit, % of limit ("-" where a field is empty). */
void lb_breakdown_print(FILE *out, const LbBreakdownRecord *recs, size_t count);

/* DIR/breakdown.csv with exactly these records, written atomically (reports/atomic_file.h). */
int lb_breakdown_write(const char *dir, const LbBreakdownRecord *recs, size_t count);

/* Read DIR/breakdown.csv. A missing file is LB_ERR_IO, or with if_any (a sweep without
 * --breakdown has none) LB_OK with *out NULL, *count 0; a file with another header, a short row or
 * a field that does not parse, LB_ERR_FORMAT naming the file, line and column. *out malloc'd. */
int lb_breakdown_read(const char *dir, int if_any, LbBreakdownRecord **out, size_t *count);

/* Append n records to the malloc'd *recs of *count; out of memory: LB_ERR_NOMEM with `nomem` as
 * its message, *recs unchanged. */
int lb_breakdown_append(LbBreakdownRecord **recs, size_t *count, const LbBreakdownRecord *more, size_t n,
                        const char *nomem);

/* Add one cell's records to DIR/breakdown.csv (created when missing), replacing any rows of the
 * same (model, n, k), and rewrite it atomically. */
int lb_breakdown_add(const char *dir, const LbBreakdownRecord *recs, size_t count);

/* lb_breakdown_cell at `batch` and its records (what `run --breakdown` prints). *out malloc'd. */
int lb_breakdown_measure(LbBackend *be, const LbModelConfig *cfg, int64_t batch, uint64_t seed,
                         const LbCalibration *cal, LbBreakdownRecord **out, size_t *count);

#endif
