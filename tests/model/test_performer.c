/* The Performer's estimate approaches exact softmax attention as the number of random features m
 * grows: on one fixed hidden state and fixed weights (the Performer and the standard model draw
 * the same encoder weights from one seed), the attention block's output (output projection
 * included) at m = 4096 is much closer to the standard model's than at m = 64, and at m = 64 it
 * is far from equal (an estimator with no error at small m, or a Performer that computed exact
 * attention, would fail). FAVOR+'s error falls like 1/sqrt(m): a factor 8 from 64 to 4096. Also
 * the projections: orthogonal within each block of d_h rows, row norms those of Gaussian vectors
 * (about sqrt(d_h)), one per layer and different between layers. CPU reference backend, fp32. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/attention_impl.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"



enum { N = 64, D = 64, HEADS = 2, SEED = 11, X_SEED = 99 };
/* x uniform in [-1, 1]: |x'|^2 about 2 for queries and keys. FAVOR+'s variance grows like
 * exp(|q' + k'|^2), so at [-3, 3] (|x'|^2 about 17) even 4096 features were off by 70%; here the
 * error falls by 7.7 from m = 64 (0.047) to 4096 (measured, fixed seeds), the 1/sqrt(m) law's 8. */
#define X_RANGE 1.0f

static LbModelConfig config(LbModelKind kind, int64_t m)
{
    LbModelConfig c = lb_test_model(N, m);
    c.kind = kind;
    c.layers = 2;
    c.d_model = D;
    c.heads = HEADS;
    return c;
}

/* The attention block of layer 0 on a fixed x (1, N, D) uniform in [-X_RANGE, X_RANGE]; out
 * (N * D) on the host. *omega, when not NULL, gets the model's own tensors 0 and 1 (the
 * Performer's two layers' projections), (m, hd) each. */
static int attend(LbBackend *be, const LbModelConfig *cfg, float *out, float **omega)
{
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena a;
    LbModel m;
    LbInputs in;
    if (lb_plan_compute(cfg, &pp, 1, &plan) != LB_OK || lb_arena_open(&a, be, plan.total) != LB_OK)
        return 0;
    int ok = lb_model_build(&m, cfg, be, &a, SEED) == LB_OK;
    if (ok) {
        ok = lb_inputs_alloc(&m, &a, 1, &in) == LB_OK &&
             be->ops->fill_uniform(be, in.x, (int64_t)N * D, X_SEED, -X_RANGE, X_RANGE) == LB_OK;
        LbPass p; /* by name: the encoder may give the pass fields this test does not need */
        memset(&p, 0, sizeof p);
        p.m = &m, p.a = &a, p.be = be, p.ops = be->ops;
        p.B = 1, p.n = cfg->n, p.k = cfg->k, p.d = cfg->d_model, p.h = cfg->heads;
        p.hd = lb_config_head_dim(cfg), p.f = cfg->ffn;
        ok = ok && lb_model_desc(cfg->kind)->attention(&p, 0, &m.layers[0], in.x, in.y) == LB_OK;
        ok = ok && be->ops->download(be, out, in.y, (int64_t)N * D) == LB_OK;
        for (int l = 0; ok && omega && l < 2; l++) {
            omega[l] = lb_test_alloc(m.own[l].rows * m.own[l].cols);
            ok = be->ops->download(be, omega[l], m.own[l].ptr, m.own[l].rows * m.own[l].cols) == LB_OK;
        }
        lb_model_release(&m);
    }
    lb_arena_close(&a);
    return ok;
}

static double rel_error(const float *a, const float *ref, int64_t count)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < count; i++) {
        num += ((double)a[i] - ref[i]) * ((double)a[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    return sqrt(num / den);
}

/* Rows of each block of hd orthonormal up to their lengths; lengths like a Gaussian vector's. */
static void check_projection(const float *w, int64_t m, int64_t hd, const char *what)
{
    double worst_cos = 0, mean_len2 = 0;
    for (int64_t i = 0; i < m; i++) {
        double li = 0;
        for (int64_t e = 0; e < hd; e++)
            li += (double)w[i * hd + e] * w[i * hd + e];
        mean_len2 += li / (double)m;
        for (int64_t j = (i / hd) * hd; j < i; j++) {
            double dot = 0, lj = 0;
            for (int64_t e = 0; e < hd; e++) {
                dot += (double)w[i * hd + e] * w[j * hd + e];
                lj += (double)w[j * hd + e] * w[j * hd + e];
            }
            const double cosine = fabs(dot) / sqrt(li * lj);
            worst_cos = cosine > worst_cos ? cosine : worst_cos;
        }
    }
    /* fp32 storage of orthogonal rows: cosines at rounding level; E|g|^2 = hd */
    lb_check(worst_cos < 1e-5, "%s: rows of a block orthogonal (worst |cos| %.3g)", what, worst_cos);
    lb_check(fabs(mean_len2 / (double)hd - 1.0) < 0.1, "%s: mean squared row norm %.4g, hd %lld", what, mean_len2,
             (long long)hd);
}

int main(void)
{
    lb_test_init("test_performer");
    LbBackend *be = NULL;
    if (lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &be) != LB_OK)
        return 1;
    const int64_t count = (int64_t)N * D, hd = D / HEADS;
    float *exact = lb_test_alloc(count), *small = lb_test_alloc(count), *large = lb_test_alloc(count);
    float *omega[2] = {NULL, NULL};
    LbModelConfig cs = config(LB_MODEL_STANDARD, 64), c64 = config(LB_MODEL_PERFORMER, 64),
                  c4096 = config(LB_MODEL_PERFORMER, 4096);
    if (!lb_check(attend(be, &cs, exact, NULL) && attend(be, &c64, small, NULL) && attend(be, &c4096, large, omega),
                  "attention blocks ran: %s", lb_error_message()))
        return lb_test_finish("test_performer");
    const double e64 = rel_error(small, exact, count), e4096 = rel_error(large, exact, count);
    printf("  relative error against softmax attention: m = 64: %.4g, m = 4096: %.4g (ratio %.2f)\n", e64, e4096,
           e64 / e4096);
    lb_check(e64 > 0.01, "m = 64 is far from exact (%.3g > 0.01)", e64);
    lb_check(e4096 < e64 / 4, "m = 4096 is much closer than m = 64 (%.3g < %.3g / 4)", e4096, e64);
    check_projection(omega[0], 4096, hd, "omega0");
    check_projection(omega[1], 4096, hd, "omega1");
    lb_check(rel_error(omega[0], omega[1], 4096 * hd) > 0.5, "each layer draws its own projection");
    free(exact), free(small), free(large), free(omega[0]), free(omega[1]);
    lb_backend_close(be);
    return lb_test_finish("test_performer");
}
