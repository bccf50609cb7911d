/* The identity check: a Linformer with k = n and E = F = the identity computes exactly standard
 * attention, so with the same weights and tokens its output equals the standard model's to
 * rounding, for every sharing level and both orders. Both models draw their shared weights from
 * one seed (same tensors in the same order); only E and F are overwritten with the identity.
 * A Linformer whose E is left random must NOT match, so the check can fail. */
#include <stdlib.h>

#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/forward.h"
#include "tests/lib/model.h"

/* Every projection of m set to the identity (n x n). */
static int identity(LbModel *m)
{
    const int64_t n = m->cfg.n;
    float *eye = calloc((size_t)(n * n), sizeof *eye);
    int rc = eye ? 0 : -1;
    for (int64_t i = 0; eye && i < n; i++)
        eye[i * n + i] = 1.0f;
    for (int64_t p = 0; eye && p < m->own_count; p++)
        rc |= m->be->ops->upload(m->be, m->own[p].ptr, eye, n * n) != LB_OK;
    free(eye);
    return rc;
}

int main(void)
{
    lb_test_init("test_identity");
    LbBackend *be = NULL;
    if (lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) != LB_OK)
        return 1;
    const int64_t n = 20, B = 3;
    const uint64_t seed = lb_test_seed;
    LbModelConfig std_cfg = lb_test_model(n, n);
    float *ref = lb_test_forward(be, &std_cfg, B, seed);
    lb_check(ref != NULL, "standard forward ran");
    const int64_t count = B * n * std_cfg.d_model;
    for (int i = 0; ref && i < lb_model_desc(LB_MODEL_LINFORMER)->variants; i++) {
        LbModelConfig c = lb_model_variant(LB_MODEL_LINFORMER, i, lb_test_model(n, n));
        char name[64];
        lb_test_variant_name(&c, name, sizeof name);
        float *out = lb_test_forward_with(be, &c, B, seed, identity);
        if (!lb_check(out != NULL, "%s: forward ran: %s", name, lb_error_message()))
            continue;
        /* fp32 storage, double accumulation: only the order of rounding differs. */
        double err = lb_test_rel_error(out, ref, count);
        lb_check(err <= 1e-5, "%s with E = F = I equals standard attention: relative error %.3g (<= 1e-5)", name, err);
        free(out);
        /* The same model with its random E must differ: the check above can fail. */
        out = lb_test_forward(be, &c, B, seed);
        err = out ? lb_test_rel_error(out, ref, count) : 0;
        lb_check(out && err > 1e-2, "%s with a random E differs from standard attention: relative error %.3g (> 1e-2)", name, err);
        free(out);
    }
    free(ref);
    lb_backend_close(be);
    return lb_test_finish("test_identity");
}
