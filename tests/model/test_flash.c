/* The flash model against the standard one on the CPU backend: the same output to rounding for
 * every storage the CPU is asked for, at lengths of one row, under and past the GPU kernels' tiles
 * (1, 15, 36, 70), from one seed (and another seed differs, so the comparison can fail); its
 * memory is linear in n (no n x n buffer: the plan's temporaries double when n doubles, where the
 * standard model's grow fourfold with the scores); it has no k axis, counts the standard model's
 * FLOPs, and refuses a head width the kernels cannot take, naming the flags. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attention.h"
#include "attn/base/status.h"
#include "tests/lib/model.h"
#include "tests/lib/check.h"
#include "tests/lib/forward.h"


/* The tests' small model with heads 16 wide, which flash takes. */
static LbModelConfig model(LbModelKind kind, int64_t n)
{
    LbModelConfig c = lb_test_model(n, 8);
    c.heads = 1;
    c.kind = kind;
    return c;
}

int main(void)
{
    lb_test_init("test_flash");
    const int64_t B = 2;
    static const LbDtype dtypes[] = {LB_DTYPE_FP32, LB_DTYPE_FP16, LB_DTYPE_BF16};
    static const int64_t ns[] = {1, 15, 36, 70};
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        LbBackend *be = NULL;
        if (!lb_check(lb_cpu_backend_open(dtypes[t], (size_t)1 << 30, &be) == LB_OK, "CPU backend %s",
                      lb_dtype_name(dtypes[t])))
            continue;
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            LbModelConfig s = model(LB_MODEL_STANDARD, ns[i]), f = model(LB_MODEL_FLASH, ns[i]);
            s.dtype = f.dtype = dtypes[t];
            const int64_t count = B * ns[i] * s.d_model;
            float *ref = lb_test_forward(be, &s, B, lb_test_seed), *out = lb_test_forward(be, &f, B, lb_test_seed);
            float *other = lb_test_forward(be, &f, B, lb_test_seed + 1);
            if (lb_check(ref && out && other, "%s n %lld: both models ran: %s", lb_dtype_name(dtypes[t]),
                         (long long)ns[i], lb_error_message())) {
                /* fp32 storage both; standard rounds its scores and probabilities to storage, flash
                 * keeps them in double: a few fp32 ulps apart */
                const double err = lb_test_rel_error(out, ref, count);
                printf("  %s n %lld: flash against standard, relative error %.3g\n", lb_dtype_name(dtypes[t]),
                       (long long)ns[i], err);
                lb_check(err <= 1e-5, "%s n %lld: flash equals standard: relative error %.3g (<= 1e-5)",
                         lb_dtype_name(dtypes[t]), (long long)ns[i], err);
                lb_check(lb_test_rel_error(other, ref, count) > 1e-2, "%s n %lld: another seed differs",
                         lb_dtype_name(dtypes[t]), (long long)ns[i]);
            }
            free(ref);
            free(out);
            free(other);
        }
        lb_backend_close(be);
    }

    /* Memory linear in n: temporaries double with n (the standard model's scores quadruple). */
    const LbPlanParams pp = {2, 256, 0};
    for (int64_t n = 256; n <= 2048; n *= 2) {
        LbModelConfig f = model(LB_MODEL_FLASH, n), f2 = model(LB_MODEL_FLASH, 2 * n), s = model(LB_MODEL_STANDARD, n);
        LbPlan pf, pf2, ps;
        lb_plan_compute(&f, &pp, 3, &pf);
        lb_plan_compute(&f2, &pp, 3, &pf2);
        lb_plan_compute(&s, &pp, 3, &ps);
        const size_t scores = (size_t)(3 * s.heads * n * n) * 2;
        lb_check(pf2.temporaries <= 2 * pf.temporaries + 4096 && pf2.temporaries >= 2 * pf.temporaries - 4096,
                 "n %lld -> %lld: flash temporaries %zu -> %zu, linear in n", (long long)n, (long long)(2 * n),
                 pf.temporaries, pf2.temporaries);
        lb_check(ps.temporaries >= pf.temporaries + scores,
                 "n %lld: standard's temporaries %zu hold the %zu bytes of scores flash's %zu do not", (long long)n,
                 ps.temporaries, scores, pf.temporaries);
    }

    /* The table entry: no k axis, the standard model's FLOPs, the head width checked. */
    LbModelConfig f = model(LB_MODEL_FLASH, 64), s = model(LB_MODEL_STANDARD, 64);
    char msg[256];
    lb_check(!lb_model_has_k(LB_MODEL_FLASH) && strcmp(lb_model_name(LB_MODEL_FLASH), "flash") == 0,
             "flash is named flash and has no k axis");
    lb_check(lb_config_flops_per_seq(&f) == lb_config_flops_per_seq(&s) && lb_config_flops_per_seq(&f) > 0,
             "flash counts the standard model's FLOPs");
    lb_check(lb_config_check(&f, msg, sizeof msg) == LB_OK, "head width 16 is taken: %s", msg);
    static const int bad[][2] = {{16, 4}, {24, 1}, {144, 1}}; /* widths 4, 24, 144 */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.d_model = bad[i][0];
        f.heads = bad[i][1];
        msg[0] = '\0';
        lb_check(lb_config_check(&f, msg, sizeof msg) == LB_ERR_INVALID && strstr(msg, "--d-model") &&
                     strstr(msg, "--heads") && strstr(msg, "multiple of 16 up to 128"),
                 "d_model %d heads %d refused naming the flags and the widths taken: %s", bad[i][0], bad[i][1], msg);
    }
    /* the variant `linbench check` and the tests run takes 16-wide heads on the small model */
    LbModelConfig v = lb_model_variant(LB_MODEL_FLASH, 0, lb_test_model(64, 8));
    lb_check(lb_config_check(&v, msg, sizeof msg) == LB_OK, "flash's variant of the tests' model is valid: %s", msg);
    return lb_test_finish("test_flash");
}
