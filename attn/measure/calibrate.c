/* This device's own limits (calibrate.h), timed with the backend's own timer, one call per
 * repetition. */
#include "attn/measure/calibrate.h"

#include <stdio.h>
#include <string.h>

#include "attn/measure/measure.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"

/* The sizes start here where the memory allowed holds them, and go down to the floors where it
 * does not (a sweep's budget may be a few MiB): a small product measures a lower rate than the
 * device's best, which meta.csv's note says, but a sweep whose cells fit is never refused. */
#define LB_CAL_START_DIM 256
#define LB_CAL_START_COPY ((size_t)1 << 20)
#define LB_CAL_FLOOR_DIM 32
#define LB_CAL_FLOOR_COPY ((size_t)64 << 10)
#define LB_CAL_MAX_REPS 64
#define LB_CAL_SEED 0xca1b5eedULL

LbCalibrateOptions lb_calibrate_defaults(void)
{
    return (LbCalibrateOptions){
        .reps = 5, .target_ms = 25.0, .max_dim = 8192, .max_copy = (size_t)256 << 20, .max_bytes = (size_t)1 << 30};
}

/* The two measurements, by `copy`: a product of size `size` (y (size, size) = x w^T) or a copy of
 * `size` bytes. Bytes it takes: x, w, y and the backend's workspace; or source and destination. */
static size_t need_bytes(const LbBackend *be, int copy, int64_t size)
{
    return copy ? 2 * (size_t)size : 3 * (size_t)(size * size) * be->elem_bytes + be->workspace_bytes;
}

static int run_once(LbBackend *be, int copy, void *const *p, int64_t size)
{
    return copy ? be->ops->copy(be, p[1], p[0], (size_t)size)
                : be->ops->linear(be, p[0], p[1], NULL, p[2], size, size, size, 0);
}

/* Median ms of `reps` timed calls, after one untimed (the GPU library picks and caches its
 * algorithm on the first). Inputs are written first, destinations too: the CPU's untouched pages
 * would read as the zero page. */
static int time_op(LbBackend *be, int copy, int64_t size, int reps, double *median)
{
    const LbOps *o = be->ops;
    const int64_t count = copy ? size / (int64_t)be->elem_bytes : size * size;
    const size_t bytes = copy ? (size_t)size : (size_t)count * be->elem_bytes;
    void *p[4] = {NULL, NULL, NULL, NULL}; /* x, w, y or source, destination; then the workspace */
    int held = 0;                          /* p[0 .. held) allocated, given back in reverse */
    double t[LB_CAL_MAX_REPS], lo, hi;
    int rc = LB_OK;
    for (int i = 0; i < (copy ? 2 : 3) && rc == LB_OK; i++)
        if ((rc = o->mem_alloc(be, bytes, &p[i])) == LB_OK)
            held++;
    /* The arena's workspace as a forward pass has it; freeing the block drops it again. */
    if (rc == LB_OK && !copy && be->workspace_bytes && o->set_workspace &&
        (rc = o->mem_alloc(be, be->workspace_bytes, &p[3])) == LB_OK) {
        held = 4;
        rc = o->set_workspace(be, p[3], be->workspace_bytes);
    }
    for (int i = 0; i < 2 && rc == LB_OK; i++)
        rc = o->fill_uniform(be, p[i], count, LB_CAL_SEED + 2 * (uint64_t)copy + (uint64_t)i, -1.0f, 1.0f);
    if (rc == LB_OK && (rc = run_once(be, copy, p, size)) == LB_OK)
        rc = o->sync(be);
    for (int i = 0; i < reps && rc == LB_OK; i++)
        if ((rc = o->timer_start(be)) == LB_OK && (rc = run_once(be, copy, p, size)) == LB_OK)
            rc = o->timer_stop(be, &t[i]);
    if (rc == LB_OK)
        lb_stats_summary(t, reps, median, &lo, &hi);
    while (held > 0)
        o->mem_free(be, p[--held]);
    return rc;
}

/* A measurement's size: from the largest start the memory allowed holds, doubling until one
 * repetition takes target_ms or the next size is not allowed; where the device has less memory
 * than allowed, halving until one runs and growing no more. *limited: memory, not the target or
 * the cap, chose the size. */
static int pick_size(LbBackend *be, const LbCalibrateOptions *opt, int copy, int64_t *out, int *limited)
{
    const char *what = copy ? "copy" : "product";
    const int64_t floor = copy ? (int64_t)LB_CAL_FLOOR_COPY : LB_CAL_FLOOR_DIM;
    const int64_t cap = copy ? (int64_t)opt->max_copy : opt->max_dim;
    int64_t size = copy ? (int64_t)LB_CAL_START_COPY : LB_CAL_START_DIM;
    while (size > floor && (size > cap || need_bytes(be, copy, size) > opt->max_bytes)) {
        size /= 2;
        *limited |= need_bytes(be, copy, size * 2) > opt->max_bytes;
    }
    if (need_bytes(be, copy, size) > opt->max_bytes) {
        char need[32], have[32], ws[32], why[96] = "";
        lb_format_size(need_bytes(be, copy, size), need, sizeof need);
        lb_format_size(opt->max_bytes, have, sizeof have);
        lb_format_size(be->workspace_bytes, ws, sizeof ws);
        if (!copy && be->workspace_bytes)
            snprintf(why, sizeof why, ", of which %s is the library workspace every cell takes too", ws);
        return LB_FAIL(LB_ERR_NOMEM, "the memory budget of %s is less than the smallest calibration %s takes (%s%s)",
                       have, what, need, why);
    }
    int64_t ran = 0; /* the size that ran last */
    int short_of_memory = 0;
    for (;;) {
        double ms = 0;
        const int rc = time_op(be, copy, size, 1, &ms);
        if (rc == LB_ERR_NOMEM) {
            *limited = 1;
            if (ran)
                break;
            if (size == floor) {
                char shape[48];
                snprintf(shape, sizeof shape, "%lld x %lld", (long long)size, (long long)size);
                if (copy)
                    snprintf(shape, sizeof shape, "%lld bytes", (long long)size);
                return LB_FAIL(LB_ERR_NOMEM, "the device could not give the smallest calibration %s (%s) its memory",
                               what, shape);
            }
            size /= 2;
            short_of_memory = 1;
            continue;
        }
        LB_TRY(rc);
        ran = size;
        if (ms >= opt->target_ms || 2 * size > cap)
            break;
        if (short_of_memory || need_bytes(be, copy, 2 * size) > opt->max_bytes) {
            *limited = 1;
            break;
        }
        size *= 2;
    }
    *out = ran;
    return LB_OK;
}

int lb_calibrate(LbBackend *be, const LbCalibrateOptions *opt, LbCalibration *out)
{
    memset(out, 0, sizeof *out);
    if (!be->ops->copy || !be->ops->linear)
        return LB_FAIL(LB_ERR_UNSUPPORTED, "calibration: the %s backend has no copy or linear op", be->ops->name);
    if (opt->reps < 1 || opt->reps > LB_CAL_MAX_REPS || !(opt->target_ms > 0) || opt->max_dim < LB_CAL_FLOOR_DIM ||
        opt->max_copy < LB_CAL_FLOOR_COPY)
        return LB_FAIL(LB_ERR_INVALID, "calibration: reps must be 1 to %d, the target positive, the caps at least a product of %d and a copy of %zu KiB",
                       LB_CAL_MAX_REPS, LB_CAL_FLOOR_DIM, LB_CAL_FLOOR_COPY >> 10);
    int64_t dim = 0, bytes = 0;
    LB_TRY(pick_size(be, opt, 0, &dim, &out->limited_by_memory));
    LB_TRY(time_op(be, 0, dim, opt->reps, &out->product_ms));
    out->dim = dim;
    if (out->product_ms > 0)
        out->tflop_per_s = 2.0 * (double)dim * (double)dim * (double)dim / (out->product_ms * 1e-3) / 1e12;
    LB_TRY(pick_size(be, opt, 1, &bytes, &out->limited_by_memory));
    LB_TRY(time_op(be, 1, bytes, opt->reps, &out->copy_ms));
    out->copy_bytes = bytes;
    if (out->copy_ms > 0)
        out->copy_gb_per_s = 2.0 * (double)bytes / (out->copy_ms * 1e-3) / 1e9;
    out->reps = opt->reps;
    if (!(out->tflop_per_s > 0) || !(out->copy_gb_per_s > 0))
        return LB_FAIL(LB_ERR_DEVICE, "calibration: a timer read 0 ms (product %g ms, copy %g ms)", out->product_ms,
                       out->copy_ms);
    return LB_OK;
}
