/* lb_breakdown_cell on the CPU reference backend, every variant of every model of the table: the
 * roles each model's pass must show (and no call left unlabelled, no head permute left in the
 * models that fold them), the roles' times summing to the pass within the stated overhead, the
 * products' FLOPs summing exactly to the model's count (lb_config_flops_per_seq x batch), and the
 * byte formula on two roles whose bytes are known in closed form. */
#include <math.h>
#include <stdio.h>

#include "attn/measure/breakdown.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

/* The encoder's roles, which every model's pass has. */
static const LbOpRole encoder_roles[] = {LB_ROLE_EMBED, LB_ROLE_LAYERNORM, LB_ROLE_QKV, LB_ROLE_OUT_PROJ,
                                         LB_ROLE_FFN_UP, LB_ROLE_GELU, LB_ROLE_FFN_DOWN};

static const LbBreakdownRow *find(const LbBreakdown *b, LbOpRole r)
{
    for (int i = 0; i < b->count; i++)
        if (b->rows[i].role == r)
            return &b->rows[i];
    return NULL;
}

/* A model's whole role list: the softmax-attention models (linbench folds their heads) score,
 * normalise and weight; the Performer still splits and merges heads (PERMUTE) around its feature
 * maps, K'^T [V 1], Q'(K'^T [V 1]) and D^-1; flash runs all three in one op. 0 for a model this test
 * does not know yet. */
static int exact_roles(LbModelKind m, LbOpRole *roles)
{
    int n = 0;
    for (size_t i = 0; i < sizeof encoder_roles / sizeof encoder_roles[0]; i++)
        roles[n++] = encoder_roles[i];
    if (m == LB_MODEL_PERFORMER) {
        roles[n++] = LB_ROLE_PERMUTE;
        roles[n++] = LB_ROLE_FEATURE_MAP;
        roles[n++] = LB_ROLE_KV_STATE;
        roles[n++] = LB_ROLE_PV;
        roles[n++] = LB_ROLE_NORMALISE;
        return n;
    }
    if (m == LB_MODEL_FLASH) {
        roles[n++] = LB_ROLE_ATTENTION; /* scores, softmax and P V in one op */
        return n;
    }
    if (m != LB_MODEL_STANDARD && !lb_test_is_linformer(m) && m != LB_MODEL_CHUNKED)
        return 0;
    roles[n++] = LB_ROLE_SCORES;
    roles[n++] = LB_ROLE_SOFTMAX;
    roles[n++] = LB_ROLE_PV;
    if (lb_test_is_linformer(m))
        roles[n++] = LB_ROLE_COMPRESS;
    return n;
}

static int folded(LbModelKind m)
{
    return m == LB_MODEL_STANDARD || lb_test_is_linformer(m) || m == LB_MODEL_CHUNKED || m == LB_MODEL_FLASH;
}

int main(void)
{
    lb_test_init("test_breakdown");
    const int64_t B = 3, n = 24, k = 8;
    for (int v = 0; v < LB_TEST_VARIANTS; v++) {
        LbModelConfig c = lb_test_variant(v, n, k);
        char name[96];
        lb_test_variant_name(&c, name, sizeof name);
        LbBackend *be = NULL;
        if (!lb_check(lb_cpu_backend_open(c.dtype, (size_t)64 << 20, &be) == LB_OK, "open: %s", lb_error_message()))
            break;
        LbBreakdown b;
        int rc = lb_breakdown_cell(be, &c, B, 11, &b);
        if (!lb_check(rc == LB_OK, "%s: breakdown: %s", name, lb_error_message())) {
            lb_backend_close(be);
            continue;
        }
        printf("%s: pass %.3f ms, roles %.3f ms, %lld events\n", name, b.pass_ms, b.ops_ms, (long long)b.events);
        for (int i = 0; i < b.count; i++)
            printf("  %-10s %4lld calls %8.3f ms %5.1f%% %12.0f FLOPs %12.0f bytes\n", lb_op_role_name(b.rows[i].role),
                   (long long)b.rows[i].calls, b.rows[i].ms, 100 * b.rows[i].share, b.rows[i].flops, b.rows[i].bytes);

        /* Roles: a model added to the table must be listed in exact_roles, and label every call. */
        LbOpRole want[LB_ROLE_COUNT];
        const int nw = exact_roles(c.kind, want);
        lb_check(nw > 0, "%s: no role list for this model in the test", name);
        for (int i = 0; i < nw; i++)
            lb_check(find(&b, want[i]) != NULL, "%s: no %s row", name, lb_op_role_name(want[i]));
        lb_check(b.count == nw, "%s: %d roles, want exactly %d", name, b.count, nw);
        if (folded(c.kind))
            lb_check(!find(&b, LB_ROLE_PERMUTE), "%s: a head permute is left", name);
        lb_check(!find(&b, LB_ROLE_UNLABELLED), "%s: calls left unlabelled", name);
        const LbBreakdownRow *ffn_up = find(&b, LB_ROLE_FFN_UP), *gelu = find(&b, LB_ROLE_GELU);
        lb_check(ffn_up && gelu && ffn_up->calls == c.layers && gelu->calls == c.layers, "%s: FFN up or GELU calls",
                 name);

        /* Times: each row's and the sum against the pass. */
        double share = 0;
        for (int i = 0; i < b.count; i++) {
            lb_check(b.rows[i].ms >= 0 && b.rows[i].calls > 0, "%s: %s: %g ms, %lld calls", name,
                     lb_op_role_name(b.rows[i].role), b.rows[i].ms, (long long)b.rows[i].calls);
            share += b.rows[i].share;
        }
        lb_check(b.pass_ms > 0 && lb_breakdown_within_overhead(&b),
                 "%s: the roles sum to %.4f ms of a %.4f ms pass: outside %g of it + %g ms", name, b.ops_ms, b.pass_ms,
                 LB_BREAKDOWN_OVERHEAD, LB_BREAKDOWN_SLACK_MS);
        lb_check(fabs(share - b.ops_ms / b.pass_ms) <= 1e-9, "%s: shares sum to %g, want %g", name, share,
                 b.ops_ms / b.pass_ms);

        /* FLOPs: the products of the pass are the model's count, exactly. */
        const double want_flops = lb_config_flops_per_seq(&c) * (double)B;
        lb_check(fabs(b.flops - want_flops) <= 1e-12 * want_flops, "%s: FLOPs %.17g, the model counts %.17g", name,
                 b.flops, want_flops);

        /* Bytes in closed form: softmax reads and writes B h n kv scores per layer; the
         * LayerNorms, 2 (embedding) then 3 (with the residual) B n d per LayerNorm plus gamma and beta. */
        const double e = (double)be->elem_bytes, bnd = (double)B * (double)n * c.d_model;
        const LbBreakdownRow *sm = find(&b, LB_ROLE_SOFTMAX), *ln = find(&b, LB_ROLE_LAYERNORM);
        if (sm && folded(c.kind)) {
            const double kv = lb_test_is_linformer(c.kind) ? (double)c.k : (double)n;
            const double want = c.layers * 2.0 * (double)B * c.heads * (double)n * kv * e;
            lb_check(sm->bytes == want, "%s: softmax bytes %.17g, want %.17g", name, sm->bytes, want);
        }
        const LbBreakdownRow *fused = find(&b, LB_ROLE_ATTENTION);
        if (fused) { /* Q, K, V read once and the output written once, per layer */
            const double want = c.layers * 4.0 * bnd * e;
            lb_check(fused->bytes == want && fused->calls == c.layers, "%s: attention bytes %.17g in %lld calls, want %.17g in %d",
                     name, fused->bytes, (long long)fused->calls, want, c.layers);
        }
        if (ln) {
            const double want = (2 * bnd + 2.0 * c.d_model + c.layers * 2 * (3 * bnd + 2.0 * c.d_model)) * e;
            lb_check(ln->bytes == want && ln->calls == 1 + 2 * c.layers, "%s: LayerNorm bytes %.17g in %lld calls, want %.17g in %d",
                     name, ln->bytes, (long long)ln->calls, want, 1 + 2 * c.layers);
        }
        lb_backend_close(be);
    }

    /* No memory for the arena: NOMEM, as a measured cell's. */
    LbBackend *be = NULL;
    if (lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, 4096, &be) == LB_OK, "open tiny: %s", lb_error_message())) {
        LbModelConfig c = lb_test_variant(0, n, k);
        LbBreakdown b;
        int rc = lb_breakdown_cell(be, &c, B, 1, &b);
        lb_check(rc == LB_ERR_NOMEM, "4 KiB: %s, want NOMEM", lb_status_name(rc));
        lb_backend_close(be);
    }
    for (int r = 0; r < LB_ROLE_COUNT; r++) {
        LbOpRole back;
        lb_check(lb_op_role_parse(lb_op_role_name((LbOpRole)r), &back) == 0 && back == (LbOpRole)r, "role %d name", r);
    }
    return lb_test_finish("test_breakdown");
}
