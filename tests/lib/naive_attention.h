/* One head of softmax attention in double, the plain loops the tests' own references of a forward
 * pass share (tests/model/test_model.c forward_naive from a config, tests/reports/test_cli_dump_recompute.c
 * from run --dump's files): the slow, obvious arithmetic, never linbench's. */
#ifndef LB_TESTS_LIB_NAIVE_ATTENTION_H
#define LB_TESTS_LIB_NAIVE_ATTENTION_H

#include <math.h>
#include <stdint.h>

/* ctx[t, head] = softmax_j(q[t, head] . k[j, head] / sqrt(hd)) v[j, head] for t < n queries and
 * j < keys keys (n for standard attention, k for a Linformer's compressed K' and V'); rows of q,
 * k, v and ctx are d wide, the head at columns head * hd .. head * hd + hd - 1; s: room for `keys`
 * doubles. */
static inline void lb_naive_head_attention(const double *q, const double *k, const double *v, int64_t n,
                                           int64_t keys, int64_t d, int64_t hd, int64_t head, double *s,
                                           double *ctx)
{
    for (int64_t t = 0; t < n; t++) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < keys; j++) {
            double dot = 0;
            for (int64_t e = 0; e < hd; e++)
                dot += q[t * d + head * hd + e] * k[j * d + head * hd + e];
            s[j] = dot / sqrt((double)hd);
            mx = s[j] > mx ? s[j] : mx;
        }
        for (int64_t j = 0; j < keys; j++)
            sum += (s[j] = exp(s[j] - mx));
        for (int64_t e = 0; e < hd; e++) {
            double o = 0;
            for (int64_t j = 0; j < keys; j++)
                o += s[j] / sum * v[j * d + head * hd + e];
            ctx[t * d + head * hd + e] = o;
        }
    }
}

#endif
