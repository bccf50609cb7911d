/* The cell queue of a sweep run by several worker processes (sweep --gpus, one worker per GPU):
 * DIR/queue.csv lists every cell of the sweep with its state, and each worker takes the next
 * pending cell, measures it, and marks it done. Each change is a read of the whole file, the
 * change, and an atomic rewrite (reports/atomic_file.c, through libcsv), all under an flock(2) on
 * DIR/.linbench.queue.lock that every call takes on its own descriptor, so workers forked from one
 * sweep exclude each other (the directory's lock, DIR/.linbench.lock, is the parent sweep's for
 * the whole run, and a lock a child inherits excludes nothing from its parent or siblings).
 *
 * A claim names its worker: pid, the process's start time (so a reused pid is not mistaken for
 * it) and GPU. A claim whose process has died (killed, crashed; a zombie counts as dead) goes
 * back to pending at the next take, by whichever worker comes; a claim of a living process is
 * never handed out again. Resuming opens the same file: done cells stay done. Only processes of
 * one host share a queue (pids mean nothing across hosts; flock on network file systems varies).
 *
 * queue.csv columns: model,n,k,state,pid,pid_start,gpu with state pending, claimed or done; pid,
 * pid_start and gpu are empty for pending and keep the measuring worker's for done.
 * Nothing here prints; errors come back as LB_ERR_* with a message (attn/status.h). */
#ifndef LB_CELL_QUEUE_H
#define LB_CELL_QUEUE_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LB_CELL_QUEUE_FILE "queue.csv"
#define LB_CELL_QUEUE_LOCK ".linbench.queue.lock"

/* A cell as the sweep names it (the same three fields as the sweep engine's cell). */
typedef struct LbQueueCell {
    LbModelKind model;
    int64_t n;
    int64_t k; /* 0 for a model without a k axis */
} LbQueueCell;

typedef enum LbQueueState {
    LB_QUEUE_PENDING = 0,
    LB_QUEUE_CLAIMED,
    LB_QUEUE_DONE
} LbQueueState;

typedef struct LbQueueEntry {
    LbQueueCell cell;
    LbQueueState state;
    long pid;             /* the claimant or measurer; 0 when pending */
    long long pid_start;  /* its start time (clock ticks since boot, /proc/PID/stat); 0 unknown */
    int gpu;              /* its GPU; -1 when pending or none */
} LbQueueEntry;

/* What lb_cell_queue_take found. */
typedef enum LbQueueTake {
    LB_QUEUE_GOT = 0, /* *cell is now claimed by this process */
    LB_QUEUE_BUSY,    /* nothing pending, but cells claimed by living workers: try again later
                       * (one of them may die and give its cell back) */
    LB_QUEUE_EMPTY    /* every cell done */
} LbQueueTake;

typedef struct LbCellQueue LbCellQueue;

/* Open DIR's queue for `cells` (every cell of the sweep, in the order workers should take them,
 * e.g. costliest first). A new queue lists them all pending; an existing one (a resume, or
 * another worker's open) must list exactly these cells, else LB_ERR_FORMAT naming the file.
 * Leftover temporary files of a queue write cut short are removed. The handle holds only
 * paths, so a child forked after the open may use it (every call works as the calling process).
 * LB_OK, LB_ERR_NOMEM, LB_ERR_IO or LB_ERR_FORMAT. */
int lb_cell_queue_open(const char *dir, const LbQueueCell *cells, size_t count, LbCellQueue **out);
void lb_cell_queue_close(LbCellQueue *q);

/* Is this cell measured already? (The caller's look at raw.csv: a worker killed after writing a
 * cell's row but before lb_cell_queue_done leaves a claim that comes back as pending.) */
typedef int (*LbQueueMeasured)(void *ctx, const LbQueueCell *cell);

/* Claim the first pending cell for this process and `gpu`, after giving back the claims of dead
 * processes. Pending cells for which measured() (may be NULL) says 1 are marked done on the way
 * and not returned. *result says what was found; *cell is set with LB_QUEUE_GOT. */
int lb_cell_queue_take(LbCellQueue *q, int gpu, LbQueueMeasured measured, void *ctx, LbQueueTake *result,
                       LbQueueCell *cell);
/* Mark a cell this process claimed as done. LB_ERR_INVALID when it is not claimed by this
 * process (a bug, or a claim taken over after this process was thought dead). */
int lb_cell_queue_done(LbCellQueue *q, const LbQueueCell *cell);
/* Give a claimed cell back (pending again): an interrupted worker that did not measure it. */
int lb_cell_queue_release(LbCellQueue *q, const LbQueueCell *cell);

/* Every entry, in the queue's order (malloc'd; free() it), read under the lock. */
int lb_cell_queue_read(LbCellQueue *q, LbQueueEntry **entries, size_t *count);

/* Whether the process pid, started at pid_start (0: not known), is alive: exists, is not a
 * zombie, and started then. */
int lb_cell_queue_alive(long pid, long long pid_start);
/* This process's start time as lb_cell_queue_alive compares it (0 where /proc has none). */
long long lb_cell_queue_self_start(void);

#ifdef __cplusplus
}
#endif

#endif
