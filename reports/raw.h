/* raw.csv: one row per measured cell (METHOD.md, "Files a sweep writes"), appended and synced as
 * soon as the cell ends so that a killed sweep loses at most the cell it was in, and read back
 * for resume, the grids, compare and plot.
 *
 * Columns, in this order:
 *   model,n,k,sharing,order,dtype,batch,planned_bytes,peak_bytes,median_ms,min_ms,max_ms,
 *   ms_per_seq,tokens_per_s,tflop_per_s,passes,sm_clock_start_mhz,sm_clock_end_mhz,
 *   clock_events,slowdown,power_w,energy_j_per_seq,device_uuid,host,status
 * - model: a name of the model table (lb_model_name);
 * - k, sharing and order are written for a model with a k axis (lb_model_has_k) and empty for
 *   the others (standard, chunked), and read back as 0 / the first enum value there;
 * - the timing columns (median_ms .. passes) are empty unless status is ok, and read back as 0;
 * - a clock of -1 (unreadable) is written empty and read back as -1;
 * - clock_events: NVML's clock-event reasons seen after any timed pass, as names joined by '+'
 *   ("sw_power_cap+hw_thermal", "none"), empty where they cannot be read; slowdown is 1 when one
 *   of them was thermal or a hardware slowdown (attn/clock_events.h);
 * - power_w and energy_j_per_seq (METHOD.md, "Energy"): the mean power over the timed passes and
 *   the energy of one sequence at it, both empty where the device has no energy counter or it
 *   did not advance (meta.csv's energy and energy_note say which cells have them, and why not),
 *   and on every row that is not ok; read back as NaN when empty;
 * - reals are written with the fewest of 15, 16 or 17 significant digits that read back to the
 *   same double, so a row survives the round trip exactly;
 * - device_uuid and host: where the cell was measured (the GPU's UUID as nvidia-smi prints it,
 *   empty for the CPU reference; the machine's host name), so the rows of a several-GPU sweep or
 *   of a merge say which GPU measured each. A file written before these two columns (19 + status)
 *   still reads, with both empty, and so does one written before the energy columns (23 columns,
 *   energy NaN): a resume appends rows in the file's own layout;
 * - status is `ok`, `OOM`, or the error message. */
#ifndef LB_RAW_H
#define LB_RAW_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>

#include "attn/measure.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LB_RAW_COLUMNS 25

/* The header row's names, in order. */
extern const char *const lb_raw_columns[LB_RAW_COLUMNS];

typedef struct LbRawWriter LbRawWriter;

/* Open raw.csv for appending rows. A new or empty file gets the header row first. append=0
 * truncates any existing file (the caller has checked --force); append=1 keeps existing rows
 * (resume) after dropping a trailing partial line left by a kill -9, and checks the header
 * matches (LB_ERR_FORMAT if not). */
int lb_raw_open(const char *path, int append, LbRawWriter **out);
/* Open a raw.csv that lb_raw_open has prepared, for one of several processes appending to it at
 * once (the workers of sweep --gpus): no header written, no partial line dropped (another
 * process may be writing), only the header checked. */
int lb_raw_open_shared(const char *path, LbRawWriter **out);
/* One row in one write() (O_APPEND: rows of several processes never interleave), then fsync so
 * a finished cell survives a crash. */
int lb_raw_append(LbRawWriter *w, const LbCellResult *r);
void lb_raw_close(LbRawWriter *w);
/* Whether the writer's file has the energy columns (a resumed raw.csv from before them has not:
 * its rows carry no energy, whatever was measured). */
int lb_raw_layout_has_energy(const LbRawWriter *w);

/* Read every complete row back (malloc'd array; free() it). A final line without its newline is
 * ignored. LB_ERR_IO when the file cannot be read, LB_ERR_FORMAT (naming the line and column)
 * when it is not what lb_raw_append writes. */
int lb_raw_read(const char *path, LbCellResult **rows, size_t *count);
/* lb_raw_read, and in *cut_line the number of that ignored final line (a sweep killed mid-row,
 * a copy cut off), 0 when the file ends in a newline, so that a reader can say a cell is gone. */
int lb_raw_read_cut(const char *path, LbCellResult **rows, size_t *count, size_t *cut_line);
/* lb_raw_read, and the file's line of each row (malloc'd, *count of them; NULL when none). */
int lb_raw_read_lines(const char *path, LbCellResult **rows, size_t **lines, size_t *count);

/* How a model column reads when it does not hold the model table's names (bench/peer's rows,
 * reports/peer_dir.h): the model of the table whose work row `row` (0 for the first after the
 * header) did, 0; or -1 with what the column should hold in `should`. */
typedef int (*LbRawModelName)(const char *name, size_t row, void *ctx, LbModelKind *model, char *should,
                              size_t size);
/* lb_raw_read_cut with the model column read by name_fn; every other column as lb_raw_read reads
 * it. cut_line may be NULL. */
int lb_raw_read_named(const char *path, LbRawModelName name_fn, void *ctx, LbCellResult **rows, size_t *count,
                      size_t *cut_line);

#ifdef __cplusplus
}
#endif

#endif
