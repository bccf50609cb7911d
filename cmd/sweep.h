/* The sweep: every cell of the n x k grid measured in turn, each row of raw.csv written as its
 * cell ends, the grids and the summary at the end (METHOD.md). Resumable: cells already in
 * raw.csv are not measured again. */
#ifndef LB_SWEEP_H
#define LB_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/check.h"
#include "cmd/options.h"
#include "reports/grid.h"
#include "reports/meta.h"

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
    const LbMeta *previous; /* meta.csv of the run being resumed (NULL otherwise): its command
                             * line, start time and earlier resumes are kept */
    LbCheckResult check;    /* the quick check before the first cell (check.ran 0: --no-check) */
    int shard_index, shard_count; /* --shard I/N (cmd/shard.h); shard_count 0: every cell */
} LbSweep;

/* The settings a sweep records in meta.csv and --resume takes back: key in meta.csv, the flag
 * that sets it, its shared-option code (0 for --n and --k) and LB_GIVEN_ bit. One table, so
 * what is written, what is read back and what is compared cannot drift apart. `shard` ("I/N",
 * empty when unsharded) is the one setting the parts of a `linbench merge` may differ in. */
typedef struct LbSweepSetting {
    const char *key;
    const char *flag;
    int code;
    unsigned given;
} LbSweepSetting;

extern const LbSweepSetting lb_sweep_settings[];
extern const size_t lb_sweep_setting_count;

/* A setting's value as meta.csv holds it (malloc'd; NULL when out of memory): the n and k lists
 * as comma lists, an unset --mem-limit or --max-batch as "". */
char *lb_sweep_setting_text(const LbSweep *s, const char *key);

/* Run the sweep on an open backend into s->dir (which exists). Returns the exit code:
 * 0, 1 (a cell failed or a file could not be written), 130 (interrupted). `stop` becomes non-zero
 * on Ctrl-C. */
int lb_sweep_run(const LbSweep *s, LbBackend *be, volatile sig_atomic_t *stop);

#endif
