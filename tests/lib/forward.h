/* One pass of a model on a backend, its output read back, for the tests that compare two models'
 * outputs or gradients (tests/model, tests/gpu): the arena sized by the plan, as a measured cell's;
 * and the per-operation breakdown of a pass, checked as every backend's must be. */
#ifndef LB_TESTS_LIB_FORWARD_H
#define LB_TESTS_LIB_FORWARD_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention_impl.h"
#include "attn/forward.h"
#include "attn/measure/breakdown.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/train.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

/* The CPU reference backend storing `dtype` with 1 GiB, or NULL after a failed check. */
static inline LbBackend *lb_test_cpu_backend(LbDtype dtype)
{
    LbBackend *be = NULL;
    lb_check(lb_cpu_backend_open(dtype, (size_t)1 << 30, &be) == LB_OK, "CPU backend %s: %s", lb_dtype_name(dtype),
             lb_error_message());
    return be;
}

/* cfg's pass (a forward, or the training step where cfg->pass says so) of B sequences from seed on
 * be, as a measured cell's (attn/train.h's LbOnePass) in an arena the plan sized; `prepare`, when
 * not NULL, changes the built model (0 on success) and the pass runs again. LB_OK or the failing
 * status (the message is lb_error_message's); release t with lb_test_pass_close whatever it returns. */
typedef struct LbTestPass {
    LbPlan plan;
    LbArena a;
    LbOnePass p;
} LbTestPass;

static inline int lb_test_pass_open(LbTestPass *t, LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed,
                                    int (*prepare)(LbModel *m))
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    memset(t, 0, sizeof *t);
    int rc = lb_plan_compute(cfg, &pp, B, &t->plan);
    if (rc == LB_OK)
        rc = lb_arena_open(&t->a, be, t->plan.total);
    if (rc == LB_OK)
        rc = lb_one_pass_setup(&t->p, cfg, be, &t->a, B, seed);
    if (rc == LB_OK && prepare)
        rc = prepare(&t->p.model) == 0 ? lb_one_pass_run(&t->p) : LB_FAIL(LB_ERR_INVALID, "preparing the model");
    return rc;
}

static inline void lb_test_pass_close(LbTestPass *t)
{
    lb_one_pass_release(&t->p);
    lb_arena_close(&t->a);
}

/* The LbPass an attention block of m runs in at batch B, as lb_forward's (no observer, no gradients). */
static inline LbPass lb_test_attention_pass(const LbModel *m, LbArena *a, int64_t B)
{
    const LbModelConfig *c = &m->cfg;
    LbPass p = {m, a, m->be, m->be->ops, B, c->n, c->k, c->d_model, c->heads, lb_config_head_dim(c), c->ffn,
                NULL, NULL, NULL, 0};
    return p;
}

/* Whether the last pass's arena high-water mark was the plan's total. */
static int lb_test_forward_plan_ok;

/* cfg's output (B, n, d) on be from seed (lb_test_pass_open's pass), in a malloc'd array; NULL on
 * any failure. */
static inline float *lb_test_forward_with(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed,
                                          int (*prepare)(LbModel *m))
{
    const int64_t count = B * cfg->n * cfg->d_model;
    float *out = (float *)malloc((size_t)count * sizeof *out);
    LbTestPass t;
    int rc = lb_test_pass_open(&t, be, cfg, B, seed, prepare);
    if (rc == LB_OK && out)
        rc = be->ops->download(be, out, t.p.in.x, count);
    lb_test_forward_plan_ok = t.a.high_water == t.plan.total;
    lb_test_pass_close(&t);
    if (rc != LB_OK) {
        free(out);
        return NULL;
    }
    return out;
}

static inline float *lb_test_forward(LbBackend *be, const LbModelConfig *cfg, int64_t B, uint64_t seed)
{
    return lb_test_forward_with(be, cfg, B, seed, NULL);
}

/* ||out - ref|| / ||ref|| in double; infinity where out holds a NaN or an infinity. */
static inline double lb_test_rel_error(const float *out, const float *ref, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        if (!isfinite(out[i]))
            return INFINITY;
        const double e = (double)out[i] - (double)ref[i];
        num += e * e;
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / den);
}

/* b's row of role r, or NULL. */
static inline const LbBreakdownRow *lb_test_role_row(const LbBreakdown *b, LbOpRole r)
{
    for (int i = 0; i < b->count; i++)
        if (b->rows[i].role == r)
            return &b->rows[i];
    return NULL;
}

/* cfg's breakdown of B sequences on be into *b, printed and checked: exactly the roles the model
 * shows (lb_test_roles), none unlabelled, the roles summing to the pass within the stated
 * overhead, the products' FLOPs exactly the model's count. Whether it ran (a failed check if not). */
static inline int lb_test_breakdown(LbBackend *be, const LbModelConfig *c, int64_t B, uint64_t seed, const char *name,
                                    LbBreakdown *b)
{
    int rc = lb_breakdown_cell(be, c, B, seed, b);
    /* a host preempted between two ops (a loaded machine; the emulator's clock is the host's)
     * widens one pass's gap; a gap the code makes persists over three tracings */
    for (int again = 0; rc == LB_OK && !lb_breakdown_within_overhead(b) && again < 2; again++)
        rc = lb_breakdown_cell(be, c, B, seed, b);
    if (!lb_check(rc == LB_OK, "%s: breakdown: %s", name, lb_error_message()))
        return 0;
    printf("%s: pass %.3f ms, roles %.3f ms, %lld events\n", name, b->pass_ms, b->ops_ms, (long long)b->events);
    for (int i = 0; i < b->count; i++)
        printf("  %-10s %4lld calls %8.3f ms %5.1f%% %12.0f FLOPs %12.0f bytes\n", lb_op_role_name(b->rows[i].role),
               (long long)b->rows[i].calls, b->rows[i].ms, 100 * b->rows[i].share, b->rows[i].flops, b->rows[i].bytes);
    /* a model added to the table must be listed in lb_test_roles, and label every call */
    LbOpRole want[LB_ROLE_COUNT];
    const int nw = lb_test_roles(c->kind, want);
    lb_check(nw > 0 && b->count == nw, "%s: %d roles, want exactly %d", name, b->count, nw);
    for (int i = 0; i < nw; i++)
        lb_check(lb_test_role_row(b, want[i]) != NULL, "%s: no %s row", name, lb_op_role_name(want[i]));
    lb_check(!lb_test_role_row(b, LB_ROLE_UNLABELLED), "%s: calls left unlabelled", name);
    lb_check(b->pass_ms > 0 && lb_breakdown_within_overhead(b),
             "%s: the roles sum to %.4f ms of a %.4f ms pass: outside %g of it + %g ms", name, b->ops_ms, b->pass_ms,
             LB_BREAKDOWN_OVERHEAD, LB_BREAKDOWN_SLACK_MS);
    const double want_flops = lb_config_flops_per_seq(c) * (double)B;
    lb_check(fabs(b->flops - want_flops) <= 1e-12 * want_flops, "%s: FLOPs %.17g, the model counts %.17g", name,
             b->flops, want_flops);
    return 1;
}

#endif
