/* raw.csv: one row per measured cell (METHOD.md, "Files a sweep writes"), appended and synced as
 * soon as the cell ends (a killed sweep loses at most the cell it was in), read back for resume,
 * the grids, compare and plot. The columns are one table in raw.c. A file from before
 * device_uuid/host or the energy columns still reads (those empty) and a resume appends rows in
 * its own layout. */
#ifndef LB_RAW_H
#define LB_RAW_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure/measure.h"
#include "reports/csv_io.h"

#define LB_RAW_COLUMNS 25 /* raw.c checks it against its table */

typedef struct LbRawWriter LbRawWriter;

/* Open raw.csv for appending rows; a new or empty file gets the header row first. append=0
 * truncates the file (the caller has checked --force); append=1 keeps its rows (resume) after
 * dropping a partial last line left by a kill -9, and checks the header (LB_ERR_FORMAT). */
int lb_raw_open(const char *path, int append, LbRawWriter **out);
/* One row in one write(), then fsync so a finished cell survives a crash. */
int lb_raw_append(LbRawWriter *w, const LbCellResult *r);
void lb_raw_close(LbRawWriter *w);
/* Whether the raw.csv at path has the energy columns (one from before them, resumed, keeps its
 * layout); 1 where it cannot be told. */
int lb_raw_has_energy_columns(const char *path);

/* Read every complete row back (malloc'd; free() it); a last line without its newline is ignored.
 * LB_ERR_IO, or LB_ERR_FORMAT naming the line and column. */
int lb_raw_read(const char *path, LbCellResult **rows, size_t *count);

/* lb_raw_read with the model column read by name_fn (NULL: by the model table; bench/peer's names:
 * reports/peer_dir.h); the file's line
 * of each row in *lines (unless NULL; malloc'd, NULL when none); and in *cut_line (unless NULL)
 * the line of that ignored final line (a sweep killed mid-row, a copy cut off), 0 when the file
 * ends in a newline, so that a reader can say a cell is gone. */
int lb_raw_read_named(const char *path, LbModelNameFn name_fn, void *ctx, LbCellResult **rows, size_t **lines,
                      size_t *count, size_t *cut_line);

#endif
