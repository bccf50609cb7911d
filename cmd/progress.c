/* Sweep progress: see progress.h. The estimate of time left is the mean time of the finished
 * cells times the cells left: crude, and said to be an estimate. */
#include "cmd/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double lb_now_seconds(void)
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

static void cell_name(char *buf, size_t size, const LbModelConfig *c)
{
    if (c->kind == LB_MODEL_STANDARD)
        snprintf(buf, size, "standard  n=%lld", (long long)c->n);
    else
        snprintf(buf, size, "linformer n=%lld k=%lld", (long long)c->n, (long long)c->k);
}

void lb_progress_start(LbProgress *p, int total, int quiet)
{
    p->mode = quiet ? 0 : isatty(STDERR_FILENO) ? 2 : 1;
    p->total = total;
    p->done = 0;
    p->start = lb_now_seconds();
    p->work_done = 0;
}

static void times(const LbProgress *p, char *elapsed, char *left, size_t size)
{
    double e = lb_now_seconds() - p->start;
    duration(elapsed, size, e);
    if (p->done == 0)
        snprintf(left, size, "?");
    else
        duration(left, size, e / p->done * (p->total - p->done));
}

void lb_progress_begin(LbProgress *p, int index, const LbModelConfig *cfg, int64_t batch)
{
    if (p->mode != 2)
        return;
    char name[64], elapsed[32], left[32];
    cell_name(name, sizeof name, cfg);
    times(p, elapsed, left, sizeof elapsed);
    fprintf(stderr, "\r\033[K[%d/%d] %s  batch %lld  elapsed %s  ~%s left", index, p->total, name,
            (long long)batch, elapsed, left);
    fflush(stderr);
}

void lb_progress_end(LbProgress *p, int index, const LbCellResult *r)
{
    p->done++;
    if (p->mode == 0)
        return;
    LbModelConfig c;
    c.kind = r->model;
    c.n = r->n;
    c.k = r->k;
    char name[64], elapsed[32], left[32], what[sizeof r->error + 16];
    cell_name(name, sizeof name, &c);
    times(p, elapsed, left, sizeof elapsed);
    if (r->status == LB_CELL_OK)
        snprintf(what, sizeof what, "batch %lld, %.4g ms/seq (median of %d)", (long long)r->batch,
                 r->ms_per_seq, r->passes);
    else if (r->status == LB_CELL_OOM)
        snprintf(what, sizeof what, "OOM (batch 1 does not fit)");
    else
        snprintf(what, sizeof what, "error: %s", r->error);
    fprintf(stderr, "%s[%d/%d] %s: %s  elapsed %s  ~%s left\n", p->mode == 2 ? "\r\033[K" : "", index,
            p->total, name, what, elapsed, left);
    fflush(stderr);
}

void lb_progress_finish(LbProgress *p)
{
    if (p->mode == 2) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}
