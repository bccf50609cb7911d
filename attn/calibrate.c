/* This device's own limits: see calibrate.h. The product goes through ops->linear because that is
 * the path of the products that dominate a forward pass (Q/K/V, output, FFN: cuBLASLt with the
 * arena's workspace on the GPU); the copy through ops->copy. Both are timed with the backend's
 * own timer (CUDA events on the GPU), one call per repetition. */
#include "attn/calibrate.h"

#include <string.h>

#include "attn/measure.h"
#include "attn/sizes.h"
#include "attn/status.h"

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
    LbCalibrateOptions o;
    o.reps = 5;
    o.target_ms = 25.0;
    o.max_dim = 8192;
    o.max_copy = (size_t)256 << 20;
    o.max_bytes = (size_t)1 << 30;
    return o;
}

/* Up to 4 blocks of device memory, given back together. */
typedef struct Blocks {
    LbBackend *be;
    void *p[4];
    int count;
} Blocks;

static int blocks_alloc(Blocks *b, size_t bytes, void **out)
{
    LB_TRY(b->be->ops->mem_alloc(b->be, bytes, out));
    b->p[b->count++] = *out;
    return LB_OK;
}

static void blocks_free(Blocks *b)
{
    for (int i = b->count - 1; i >= 0; i--)
        b->be->ops->mem_free(b->be, b->p[i]);
    b->count = 0;
}

/* Bytes a product of `dim` takes: x, w, y and the backend's workspace. */
static size_t product_bytes(const LbBackend *be, int64_t dim)
{
    return 3 * (size_t)(dim * dim) * be->elem_bytes + be->workspace_bytes;
}

/* Median ms of `reps` timed calls of y (dim, dim) = x w^T, after one untimed (the GPU library
 * picks and caches its algorithm on the first). */
static int time_product(LbBackend *be, int64_t dim, int reps, double *median)
{
    const LbOps *o = be->ops;
    const int64_t count = dim * dim;
    Blocks b = {be, {NULL}, 0};
    void *x, *w, *y, *ws = NULL;
    double t[LB_CAL_MAX_REPS], lo, hi;
    int rc;
    if ((rc = blocks_alloc(&b, (size_t)count * be->elem_bytes, &x)) != LB_OK ||
        (rc = blocks_alloc(&b, (size_t)count * be->elem_bytes, &w)) != LB_OK ||
        (rc = blocks_alloc(&b, (size_t)count * be->elem_bytes, &y)) != LB_OK)
        goto done;
    if (be->workspace_bytes && o->set_workspace) {
        /* The arena's workspace as a forward pass has it; freeing the block drops it again. */
        if ((rc = blocks_alloc(&b, be->workspace_bytes, &ws)) != LB_OK ||
            (rc = o->set_workspace(be, ws, be->workspace_bytes)) != LB_OK)
            goto done;
    }
    if ((rc = o->fill_uniform(be, x, count, LB_CAL_SEED, -1.0f, 1.0f)) != LB_OK ||
        (rc = o->fill_uniform(be, w, count, LB_CAL_SEED + 1, -1.0f, 1.0f)) != LB_OK ||
        (rc = o->linear(be, x, w, NULL, y, dim, dim, dim, 0)) != LB_OK || (rc = o->sync(be)) != LB_OK)
        goto done;
    for (int i = 0; i < reps; i++)
        if ((rc = o->timer_start(be)) != LB_OK || (rc = o->linear(be, x, w, NULL, y, dim, dim, dim, 0)) != LB_OK ||
            (rc = o->timer_stop(be, &t[i])) != LB_OK)
            goto done;
    lb_stats_summary(t, reps, median, &lo, &hi);
done:
    blocks_free(&b);
    return rc;
}

/* Median ms of `reps` timed copies of `bytes`, after one untimed. */
static int time_copy(LbBackend *be, size_t bytes, int reps, double *median)
{
    const LbOps *o = be->ops;
    const int64_t count = (int64_t)(bytes / be->elem_bytes);
    Blocks b = {be, {NULL}, 0};
    void *src, *dst;
    double t[LB_CAL_MAX_REPS], lo, hi;
    int rc;
    if ((rc = blocks_alloc(&b, bytes, &src)) != LB_OK || (rc = blocks_alloc(&b, bytes, &dst)) != LB_OK)
        goto done;
    /* Both written first: the CPU's untouched pages would read as the zero page. */
    if ((rc = o->fill_uniform(be, src, count, LB_CAL_SEED + 2, -1.0f, 1.0f)) != LB_OK ||
        (rc = o->fill_uniform(be, dst, count, LB_CAL_SEED + 3, -1.0f, 1.0f)) != LB_OK ||
        (rc = o->copy(be, dst, src, bytes)) != LB_OK || (rc = o->sync(be)) != LB_OK)
        goto done;
    for (int i = 0; i < reps; i++)
        if ((rc = o->timer_start(be)) != LB_OK || (rc = o->copy(be, dst, src, bytes)) != LB_OK ||
            (rc = o->timer_stop(be, &t[i])) != LB_OK)
            goto done;
    lb_stats_summary(t, reps, median, &lo, &hi);
done:
    blocks_free(&b);
    return rc;
}

/* The product's size: from the largest start the memory allowed holds, doubling until one
 * repetition takes target_ms or the next size is not allowed; where the device has less memory
 * than allowed, halving until one runs and growing no more. *limited: memory, not the target or
 * the cap, chose the size. */
static int pick_product(LbBackend *be, const LbCalibrateOptions *opt, int64_t *out, int *limited)
{
    int64_t dim = LB_CAL_START_DIM;
    while (dim > LB_CAL_FLOOR_DIM && (dim > opt->max_dim || product_bytes(be, dim) > opt->max_bytes)) {
        dim /= 2;
        *limited |= product_bytes(be, dim * 2) > opt->max_bytes;
    }
    if (product_bytes(be, dim) > opt->max_bytes) {
        char need[32], have[32], ws[32];
        lb_format_size(product_bytes(be, dim), need, sizeof need);
        lb_format_size(opt->max_bytes, have, sizeof have);
        lb_format_size(be->workspace_bytes, ws, sizeof ws);
        if (be->workspace_bytes)
            return LB_FAIL(LB_ERR_NOMEM, "the memory budget of %s is less than the smallest calibration product takes (%s, of which %s is the library workspace every cell takes too)",
                           have, need, ws);
        return LB_FAIL(LB_ERR_NOMEM, "the memory budget of %s is less than the smallest calibration product takes (%s)",
                       have, need);
    }
    int64_t ran = 0; /* the size that ran last */
    int short_of_memory = 0;
    for (;;) {
        double ms = 0;
        const int rc = time_product(be, dim, 1, &ms);
        if (rc == LB_ERR_NOMEM) {
            *limited = 1;
            if (ran)
                break;
            if (dim == LB_CAL_FLOOR_DIM)
                return LB_FAIL(LB_ERR_NOMEM, "the device could not give the smallest calibration product (%lld x %lld) its memory",
                               (long long)dim, (long long)dim);
            dim /= 2;
            short_of_memory = 1;
            continue;
        }
        LB_TRY(rc);
        ran = dim;
        if (ms >= opt->target_ms || 2 * dim > opt->max_dim)
            break;
        if (short_of_memory || product_bytes(be, 2 * dim) > opt->max_bytes) {
            *limited = 1;
            break;
        }
        dim *= 2;
    }
    *out = ran;
    return LB_OK;
}

/* The copy's size, by the same rule: a copy of `bytes` takes 2 x bytes. */
static int pick_copy(LbBackend *be, const LbCalibrateOptions *opt, size_t *out, int *limited)
{
    size_t bytes = LB_CAL_START_COPY;
    while (bytes > LB_CAL_FLOOR_COPY && (bytes > opt->max_copy || 2 * bytes > opt->max_bytes)) {
        bytes /= 2;
        *limited |= 4 * bytes > opt->max_bytes;
    }
    if (2 * bytes > opt->max_bytes) {
        char need[32], have[32];
        lb_format_size(2 * bytes, need, sizeof need);
        lb_format_size(opt->max_bytes, have, sizeof have);
        return LB_FAIL(LB_ERR_NOMEM, "the memory budget of %s is less than the smallest calibration copy takes (%s)",
                       have, need);
    }
    size_t ran = 0;
    int short_of_memory = 0;
    for (;;) {
        double ms = 0;
        const int rc = time_copy(be, bytes, 1, &ms);
        if (rc == LB_ERR_NOMEM) {
            *limited = 1;
            if (ran)
                break;
            if (bytes == LB_CAL_FLOOR_COPY)
                return LB_FAIL(LB_ERR_NOMEM, "the device could not give the smallest calibration copy (%zu bytes) its memory",
                               bytes);
            bytes /= 2;
            short_of_memory = 1;
            continue;
        }
        LB_TRY(rc);
        ran = bytes;
        if (ms >= opt->target_ms || 2 * bytes > opt->max_copy)
            break;
        if (short_of_memory || 4 * bytes > opt->max_bytes) {
            *limited = 1;
            break;
        }
        bytes *= 2;
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
    int64_t dim = 0;
    LB_TRY(pick_product(be, opt, &dim, &out->limited_by_memory));
    LB_TRY(time_product(be, dim, opt->reps, &out->product_ms));
    out->dim = dim;
    if (out->product_ms > 0)
        out->tflop_per_s = 2.0 * (double)dim * (double)dim * (double)dim / (out->product_ms * 1e-3) / 1e12;
    size_t bytes = 0;
    LB_TRY(pick_copy(be, opt, &bytes, &out->limited_by_memory));
    LB_TRY(time_copy(be, bytes, opt->reps, &out->copy_ms));
    out->copy_bytes = (int64_t)bytes;
    if (out->copy_ms > 0)
        out->copy_gb_per_s = 2.0 * (double)bytes / (out->copy_ms * 1e-3) / 1e9;
    out->reps = opt->reps;
    if (!(out->tflop_per_s > 0) || !(out->copy_gb_per_s > 0))
        return LB_FAIL(LB_ERR_DEVICE, "calibration: a timer read 0 ms (product %g ms, copy %g ms)", out->product_ms,
                       out->copy_ms);
    return LB_OK;
}
