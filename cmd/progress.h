/* Sweep progress on stderr: a live status line when stderr is a terminal, one plain line per
 * finished cell when it is not, nothing with --quiet. */
#ifndef LB_PROGRESS_H
#define LB_PROGRESS_H

#include "attn/measure.h"

typedef struct LbProgress {
    int mode; /* 0 quiet, 1 plain lines, 2 terminal */
    int total, done;
    double start;      /* monotonic seconds */
    double work_done;  /* seconds spent on finished cells, for the estimate */
} LbProgress;

void lb_progress_start(LbProgress *p, int total_cells, int quiet);
/* A cell begins: index is 1-based; batch is the plan's guess (0 if OOM). */
void lb_progress_begin(LbProgress *p, int index, const LbModelConfig *cfg, int64_t batch);
void lb_progress_end(LbProgress *p, int index, const LbCellResult *r);
void lb_progress_finish(LbProgress *p);
double lb_now_seconds(void);

#endif
