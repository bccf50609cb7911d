/* Where the time of a pass goes (METHOD.md, "Breakdown"): one extra pass at a cell's batch, timer
 * events recorded where the role (lb_pass_role) changes, aggregated by role with every call's
 * FLOPs and bytes. */
#ifndef LB_BREAKDOWN_H
#define LB_BREAKDOWN_H

#include <stdint.h>

#include "attn/config.h"
#include "attn/ops.h"
#include "attn/pass_observer.h"
#include "attn/plan.h"

/* "embed", "layernorm", "qkv", ... as breakdown.csv writes them; NULL outside the enum. */
const char *lb_op_role_name(LbOpRole r);
/* The role named s; -1 when none is. */
int lb_op_role_parse(const char *s, LbOpRole *out);

/* One role's share of a pass. */
typedef struct LbBreakdownRow {
    LbOpRole role;
    int64_t calls;   /* op calls made under this role */
    double ms;       /* summed over every interval the role ran in */
    double share;    /* ms / the pass's ms */
    double flops;    /* products only: 2 m n k per product, multiply-add = 2 (METHOD.md) */
    double bytes;    /* elements read + written x element size, weights included (METHOD.md) */
} LbBreakdownRow;

/* The stated overhead: the roles' times sum to the pass's within this fraction of it plus
 * LB_BREAKDOWN_SLACK_MS (the event records, the time outside the first and last, and
 * cudaEventElapsedTime's resolution of about 0.5 us per event). */
#define LB_BREAKDOWN_OVERHEAD 0.05
#define LB_BREAKDOWN_SLACK_MS 0.05

typedef struct LbBreakdown {
    int64_t batch;
    double pass_ms;  /* the whole traced pass, backend timer around it */
    double ops_ms;   /* the sum of the rows' ms */
    double flops, bytes; /* the sums of the rows' */
    int64_t events;  /* timer events recorded in the pass */
    int count;       /* rows that ran (calls > 0), in LbOpRole order */
    LbBreakdownRow rows[LB_ROLE_COUNT];
} LbBreakdown;

/* cfg's model built at `batch` on `be` from `seed` in the plan's arena, one untimed traced pass
 * of one sequence (it creates the events, warms the caches), then one timed traced pass of the
 * batch into *out. LB_ERR_NOMEM when the arena does not fit. */
int lb_breakdown_cell(LbBackend *be, const LbModelConfig *cfg, int64_t batch, uint64_t seed, LbBreakdown *out);

/* The ms of one call of a counted pass, from its FLOPs and bytes. */
typedef double (*LbCallCost)(void *ctx, double flops, double bytes);

/* cfg's pass at `batch` counted, not run, on the plan's counting backend (attn/plan.h): FLOPs and
 * bytes as above, a row's ms the sum of cost(ctx, flops, bytes) over its calls (0 when cost is
 * NULL), pass_ms the rows' sum, no events. What linbench predict times. */
int lb_breakdown_count(const LbModelConfig *cfg, const LbPlanParams *p, int64_t batch, LbCallCost cost, void *ctx,
                       LbBreakdown *out);

/* Whether the rows sum to the pass within the stated overhead. */
int lb_breakdown_within_overhead(const LbBreakdown *b);

#endif
