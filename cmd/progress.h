/* Sweep progress on stderr, fed by the sweep engine's callback: a live status line when stderr is
 * a terminal, one plain line per finished cell when it is not, nothing with --quiet; a failed
 * cell's message whatever the mode. */
#ifndef LB_PROGRESS_H
#define LB_PROGRESS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS) || defined(LB_LAYER_SWEEP)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include "attn/measure/measure.h"
#include "cmd/sweep/engine.h"

typedef struct LbProgress {
    int mode; /* 0 quiet, 1 plain lines, 2 terminal */
    int total, done;
    double start;      /* monotonic seconds */
} LbProgress;

void lb_progress_init(LbProgress *p, int quiet);
/* The engine's LbSweepProgress: ctx is an LbProgress. */
void lb_progress_event(void *ctx, const LbSweepEvent *e);

#endif
