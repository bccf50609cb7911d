/* The sweep: every cell of the n x k grid measured in turn, each row of raw.csv written as its
 * cell ends, the grids and the summary at the end (METHOD.md). Resumable: cells already in
 * raw.csv are not measured again. */
#ifndef LB_SWEEP_H
#define LB_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/options.h"
#include "reports/grid.h"

typedef struct LbSweep {
    LbOptions opt;
    int64_t *n, *k; /* the grid's axes, ascending */
    size_t nn, nk;
    const char *dir;
    int resume;
    int quiet;
    LbFormat format;
    const char *command_line;
    uint64_t budget;      /* bytes */
    const char *resumed_start_time; /* from meta.csv when resuming */
} LbSweep;

/* Run the sweep on an open backend into s->dir (which exists). Returns the exit code:
 * 0, 1 (a cell failed or a file could not be written), 130 (interrupted). `stop` becomes non-zero
 * on Ctrl-C. */
int lb_sweep_run(const LbSweep *s, LbBackend *be, volatile sig_atomic_t *stop);

#endif
