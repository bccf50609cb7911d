/* The memory plan (a dry run over a counting arena) against reality on the CPU backend: for
 * every variant of every model of the table and several batches, the planned bytes equal the
 * arena's high-water mark after a real forward pass; bytes grow with B; the largest batch fits
 * the budget and one more does not; and a measured cell reports peak == planned at the plan's
 * batch. */
#include <stdint.h>
#include <stdio.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/measure/measure.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

static void check_variant(LbBackend *be, const LbModelConfig *cfg)
{
    char name[64];
    lb_test_variant_name(cfg, name, sizeof name);
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    size_t previous = 0;
    for (int64_t B = 1; B <= 4; B++) {
        LbPlan plan;
        if (!lb_check(lb_plan_compute(cfg, &pp, B, &plan) == LB_OK, "%s B=%lld: plan failed", name, (long long)B))
            return;
        lb_check(plan.total > previous, "%s: bytes grow with B (B=%lld: %zu, before %zu)", name,
                 (long long)B, plan.total, previous);
        lb_check(plan.total == plan.weights + plan.workspace + plan.inputs + plan.temporaries && plan.temporaries > 0,
                 "%s B=%lld: the plan's parts add up to its total", name, (long long)B);
        previous = plan.total;

        LbArena a;
        LbModel m;
        LbInputs in;
        if (!lb_check(lb_arena_open(&a, be, plan.total) == LB_OK, "%s: arena of %zu bytes", name, plan.total))
            return;
        int rc = lb_model_build(&m, cfg, be, &a, 7);
        lb_check(rc == LB_OK, "%s: build: %s", name, lb_error_message());
        lb_check(a.used == plan.weights + plan.workspace, "%s: weights+workspace %zu planned %zu", name,
                 a.used, plan.weights + plan.workspace);
        if (rc == LB_OK) {
            rc = lb_inputs_alloc(&m, &a, B, &in);
            if (rc == LB_OK)
                rc = lb_inputs_fill(&m, &in, 3);
            if (rc == LB_OK)
                rc = lb_forward(&m, &a, &in);
            lb_check(rc == LB_OK, "%s B=%lld: forward: %s", name, (long long)B, lb_error_message());
            lb_check(a.high_water == plan.total, "%s B=%lld: high-water mark %zu, plan %zu", name,
                     (long long)B, a.high_water, plan.total);
            lb_check(a.used == plan.weights + plan.workspace + plan.inputs,
                     "%s B=%lld: temporaries released after the pass", name, (long long)B);
            lb_model_release(&m);
        }
        lb_arena_close(&a);
    }

    /* The largest batch: it fits, one more does not. */
    LbPlan p3, p1;
    lb_plan_compute(cfg, &pp, 3, &p3);
    size_t budget = p3.total + 1;
    int64_t B = lb_plan_largest_batch(cfg, &pp, budget, 0);
    LbPlan at, next;
    lb_plan_compute(cfg, &pp, B, &at);
    lb_plan_compute(cfg, &pp, B + 1, &next);
    lb_check(B >= 3 && at.total <= budget && next.total > budget, "%s: largest batch %lld for budget %zu",
             name, (long long)B, budget);
    lb_plan_compute(cfg, &pp, 1, &p1);
    lb_check(lb_plan_largest_batch(cfg, &pp, p1.total - 1, 0) == 0, "%s: batch 1 does not fit one byte less", name);
    lb_check(lb_plan_largest_batch(cfg, &pp, (size_t)1 << 40, 5) == 5, "%s: --max-batch caps the search", name);
    /* No budget at all: the search stops where sizes would approach 64 bits, at a batch whose
     * plan still computes. */
    int64_t huge = lb_plan_largest_batch(cfg, &pp, SIZE_MAX, 0);
    LbPlan ph;
    lb_check(huge > ((int64_t)1 << 30) && lb_plan_compute(cfg, &pp, huge, &ph) == LB_OK && ph.total < ((size_t)1 << 61),
             "%s: an unbounded budget gives a finite batch (%lld)", name, (long long)huge);

    /* A measured cell: the batch is the plan's, the peak is the plan. */
    LbTimingOptions t = lb_timing_defaults();
    LbCellResult r;
    int rc = lb_measure_cell(be, cfg, budget, &t, 11, NULL, &r);
    lb_check(rc == LB_OK && r.status == LB_CELL_OK, "%s: measure: %s", name, r.error);
    lb_check(r.batch == B, "%s: measured batch %lld, plan %lld", name, (long long)r.batch, (long long)B);
    lb_check(r.peak_bytes == r.planned_bytes && (size_t)r.planned_bytes == at.total,
             "%s: peak %lld planned %lld plan %zu", name, (long long)r.peak_bytes, (long long)r.planned_bytes, at.total);
    lb_check(r.passes >= 5 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms && r.min_ms > 0,
             "%s: timing stats (passes %d, min %g, median %g, max %g)", name, r.passes, r.min_ms, r.median_ms, r.max_ms);
}

int main(void)
{
    lb_test_init("test_plan");
    LbBackend *be = NULL;
    if (lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) != LB_OK) {
        printf("cannot open the CPU backend: %s\n", lb_error_message());
        return 1;
    }
    for (int i = 0; i < LB_TEST_VARIANTS; i++) {
        LbModelConfig c = lb_test_variant(i, 24, 8);
        check_variant(be, &c);
    }
    /* A budget below batch 1 gives an OOM cell, not an error. */
    LbModelConfig c = lb_test_variant(0, 24, 8);
    LbTimingOptions t = lb_timing_defaults();
    LbCellResult r;
    lb_check(lb_measure_cell(be, &c, 4096, &t, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OOM && r.batch == 0,
             "a budget below batch 1 is an OOM cell");
    /* The emulated device memory bounds the search: a budget above it steps down by allocation. */
    LbBackend *small = NULL;
    LbPlanParams pp = {4, 256, 0};
    LbPlan p2;
    lb_plan_compute(&c, &pp, 2, &p2);
    if (lb_cpu_backend_open(LB_DTYPE_FP32, p2.total, &small) == LB_OK) {
        lb_check(lb_measure_cell(small, &c, (size_t)1 << 30, &t, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OK && r.batch == 2,
                 "allocation failures bisect the batch down to what the device holds (got %lld)", (long long)r.batch);
        lb_backend_close(small);
    }
    lb_backend_close(be);
    return lb_test_finish("test_plan");
}
