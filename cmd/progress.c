/* Sweep progress: see progress.h. The estimate of time left is the mean time of the finished
 * cells times the cells left: crude, and said to be an estimate. */
#include "cmd/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void duration(char *buf, size_t size, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%lds", t);
}

/* "standard  n=512", "linformer n=512 k=128": the model's name padded so n lines up. */
static void cell_name(char *buf, size_t size, LbModelKind model, int64_t n, int64_t k)
{
    char name[64];
    snprintf(name, sizeof name, "%-9s", lb_model_name(model));
    lb_model_cell_name(name, model, n, k, buf, size);
}

void lb_progress_init(LbProgress *p, int quiet)
{
    *p = (LbProgress){quiet ? 0 : isatty(STDERR_FILENO) ? 2 : 1, 0, 0, now_seconds()};
}

static void times(const LbProgress *p, char *elapsed, char *left, size_t size)
{
    double e = now_seconds() - p->start;
    duration(elapsed, size, e);
    if (p->done == 0)
        snprintf(left, size, "?");
    else
        duration(left, size, e / p->done * (p->total - p->done));
}

static void begin(LbProgress *p, const LbSweepEvent *e)
{
    if (p->mode != 2)
        return;
    char name[96], elapsed[32], left[32];
    cell_name(name, sizeof name, e->cfg->kind, e->cfg->n, e->cfg->k);
    times(p, elapsed, left, sizeof elapsed);
    fprintf(stderr, "\r\033[K[%d/%d] %s  batch %lld  elapsed %s  ~%s left", e->index, p->total, name,
            (long long)e->planned_batch, elapsed, left);
    fflush(stderr);
}

static void end(LbProgress *p, const LbSweepEvent *e)
{
    const LbCellResult *r = e->result;
    char name[96], elapsed[32], left[32], what[sizeof r->error + 16];
    cell_name(name, sizeof name, r->model, r->n, r->k);
    p->done++;
    if (r->status == LB_CELL_ERROR) { /* said even with --quiet */
        char plain[96];
        lb_model_cell_name(lb_model_name(r->model), r->model, r->n, r->k, plain, sizeof plain);
        fprintf(stderr, "%slinbench: %s failed: %s\n", p->mode == 2 ? "\r\033[K" : "", plain, r->error);
    }
    if (p->mode == 0)
        return;
    times(p, elapsed, left, sizeof elapsed);
    if (r->status == LB_CELL_OK)
        snprintf(what, sizeof what, "batch %lld, %.4g ms/seq (median of %d)", (long long)r->batch, r->ms_per_seq,
                 r->passes);
    else if (r->status == LB_CELL_OOM)
        snprintf(what, sizeof what, "OOM (batch 1 does not fit)");
    else
        snprintf(what, sizeof what, "error: %s", r->error);
    fprintf(stderr, "%s[%d/%d] %s: %s  elapsed %s  ~%s left\n", p->mode == 2 ? "\r\033[K" : "", e->index, p->total,
            name, what, elapsed, left);
    fflush(stderr);
}

void lb_progress_event(void *ctx, const LbSweepEvent *e)
{
    LbProgress *p = ctx;
    switch (e->kind) {
    case LB_SWEEP_START:
        p->total = e->total;
        p->done = 0;
        p->start = now_seconds();
        break;
    case LB_SWEEP_BEGIN: begin(p, e); break;
    case LB_SWEEP_END: end(p, e); break;
    case LB_SWEEP_FINISH:
        if (p->mode == 2) {
            fprintf(stderr, "\r\033[K");
            fflush(stderr);
        }
        break;
    }
}
