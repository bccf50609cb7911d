/* The chunked model against the standard one on the CPU backend: the same output to rounding for
 * every storage the CPU is asked for (it stores fp32 whatever the dtype) and chunks that divide
 * n, do not, are 1 row, n rows or past n, from one seed; its score buffer holds B h c n elements
 * (the plan's temporaries differ from the standard model's by exactly the score rows it does not
 * hold, and are the standard model's when c >= n); it has no k axis, checks --chunk, and counts
 * the standard model's FLOPs. A chunked pass that skipped or repeated a block would fail the first
 * check: the blocks' rows are the whole output. */
#include <math.h>
#include <stdlib.h>

#include "attn/attention.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/forward.h"
#include "tests/lib/model.h"


int main(void)
{
    lb_test_init("test_chunked");
    const int64_t n = 36, B = 3;
    static const LbDtype dtypes[] = {LB_DTYPE_FP32, LB_DTYPE_FP16, LB_DTYPE_BF16};
    static const int64_t chunks[] = {1, 7, 9, 35, 36, 100};
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        LbBackend *be = NULL;
        if (!lb_check(lb_cpu_backend_open(dtypes[t], (size_t)1 << 30, &be) == LB_OK, "CPU backend %s",
                      lb_dtype_name(dtypes[t])))
            continue;
        LbModelConfig std_cfg = lb_test_model(n, 8);
        std_cfg.dtype = dtypes[t];
        const int64_t count = B * n * std_cfg.d_model;
        float *ref = lb_test_forward(be, &std_cfg, B, lb_test_seed);
        lb_check(ref != NULL, "%s standard ran", lb_dtype_name(dtypes[t]));
        for (size_t i = 0; ref && i < sizeof chunks / sizeof chunks[0]; i++) {
            LbModelConfig c = std_cfg;
            c.kind = LB_MODEL_CHUNKED;
            c.chunk = chunks[i];
            float *out = lb_test_forward(be, &c, B, lb_test_seed);
            if (!lb_check(out != NULL, "%s chunk %lld ran: %s", lb_dtype_name(dtypes[t]), (long long)c.chunk,
                          lb_error_message()))
                continue;
            /* fp32 storage, double accumulation, the same dot products split by rows only. */
            const double err = lb_test_rel_error(out, ref, count);
            printf("  %s chunk %3lld of n %lld: relative error against standard %.3g\n", lb_dtype_name(dtypes[t]),
                   (long long)c.chunk, (long long)n, err);
            lb_check(err <= 1e-6, "%s chunk %lld of n %lld equals standard: relative error %.3g (<= 1e-6)",
                     lb_dtype_name(dtypes[t]), (long long)c.chunk, (long long)n, err);
            free(out);
        }
        /* A different seed must differ: the comparison above can fail. */
        LbModelConfig c = std_cfg;
        c.kind = LB_MODEL_CHUNKED;
        c.chunk = 7;
        float *other = lb_test_forward(be, &c, B, lb_test_seed + 1);
        lb_check(ref && other && lb_test_rel_error(other, ref, count) > 1e-2, "%s: another seed differs",
                 lb_dtype_name(dtypes[t]));
        free(other);
        free(ref);
        lb_backend_close(be);
    }

    /* Memory: the scores are (B, h, min(c, n), n); everything else is the standard model's. */
    const LbPlanParams pp = {4, 256, 0};
    for (int64_t Bm = 1; Bm <= 4; Bm++) {
        LbModelConfig s = lb_test_model(256, 8), c = s;
        c.kind = LB_MODEL_CHUNKED;
        LbPlan ps, pc;
        lb_plan_compute(&s, &pp, Bm, &ps);
        for (int64_t ch = 16; ch <= 512; ch *= 2) {
            c.chunk = ch;
            lb_plan_compute(&c, &pp, Bm, &pc);
            const int64_t rows = ch < 256 ? ch : 256;
            const size_t scores_std = lb_align_up((size_t)(Bm * s.heads * 256 * 256) * 4, 256);
            const size_t scores_chk = lb_align_up((size_t)(Bm * s.heads * rows * 256) * 4, 256);
            lb_check(pc.weights == ps.weights && pc.inputs == ps.inputs, "chunk %lld: weights and inputs are standard's",
                     (long long)ch);
            /* the attention phase is the larger one here (scores of 256 columns vs FFN 24) */
            lb_check(ps.temporaries - pc.temporaries == scores_std - scores_chk,
                     "B %lld chunk %lld: temporaries %zu, standard %zu: differ by the score rows not held",
                     (long long)Bm, (long long)ch, pc.temporaries, ps.temporaries);
        }
    }

    /* The table entry: no k axis, the chunk checked, the standard model's FLOPs. */
    LbModelConfig c = lb_test_model(64, 8);
    c.kind = LB_MODEL_CHUNKED;
    char msg[256];
    lb_check(!lb_model_has_k(LB_MODEL_CHUNKED) && lb_model_cell_exists(LB_MODEL_CHUNKED, 64, 4096) &&
                 strcmp(lb_model_k_meaning(LB_MODEL_CHUNKED), "") == 0,
             "chunked has no k axis");
    LbModelKind parsed;
    lb_check(lb_model_parse("chunked", &parsed) == 0 && parsed == LB_MODEL_CHUNKED &&
                 strcmp(lb_model_name(LB_MODEL_CHUNKED), "chunked") == 0,
             "chunked is named chunked");
    lb_check(lb_config_check(&c, msg, sizeof msg) == LB_OK, "chunk 1024 of n 64 is fine");
    c.chunk = 0;
    lb_check(lb_config_check(&c, msg, sizeof msg) == LB_ERR_INVALID && strstr(msg, "--chunk 0") &&
                 strstr(msg, "should be 1 to"),
             "chunk 0 is refused naming --chunk: %s", msg);
    c.chunk = 16;
    LbModelConfig s = c;
    s.kind = LB_MODEL_STANDARD;
    lb_check(lb_config_flops_per_seq(&c) == lb_config_flops_per_seq(&s) && lb_config_flops_per_seq(&c) > 0,
             "chunked counts the standard model's FLOPs");
    return lb_test_finish("test_chunked");
}
