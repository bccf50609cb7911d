/* Embedding and the head layouts of the CPU reference: pure copies and one float addition, so
 * everything is checked for exact equality. split_heads is checked element by element against
 * its index formula (from each column block of a fused (rows, 3d) QKV buffer), and
 * split_heads then merge_heads must give back the input bit for bit. */
#include "attn/cpu/cpu_ref.h"
#include "attn/ops.h"
#include "attn/status.h"
#include "tests/lib/check.h"

static void lb_test_embed(LbBackend *be, int64_t batch, int64_t n, int64_t d, int32_t vocab)
{
    int32_t *ids = malloc((size_t)(batch * n) * sizeof *ids);
    float *tok = lb_test_alloc((int64_t)vocab * d), *pos = lb_test_alloc(n * d);
    float *x = lb_test_alloc(batch * n * d), *want = lb_test_alloc(batch * n * d);
    lb_test_random(tok, (int64_t)vocab * d, -1.0f, 1.0f);
    lb_test_random(pos, n * d, -1.0f, 1.0f);
    for (int64_t i = 0; i < batch * n; i++)
        ids[i] = (int32_t)lb_test_randint(0, vocab - 1);
    ids[0] = vocab - 1; /* the last row of the table is reachable */
    lb_test_poison(x, batch * n * d);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < n; t++)
            for (int64_t j = 0; j < d; j++)
                want[(b * n + t) * d + j] = tok[(int64_t)ids[b * n + t] * d + j] + pos[t * d + j];
    char what[96];
    snprintf(what, sizeof what, "embed %" PRId64 "x%" PRId64 "x%" PRId64 " vocab %" PRId32, batch, n, d, vocab);
    int rc = be->ops->embed(be, ids, tok, pos, x, batch, n, d);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where()))
        lb_check_same(what, x, want, batch * n * d);

    ids[batch * n - 1] = -3;
    rc = be->ops->embed(be, ids, tok, pos, x, batch, n, d);
    lb_check(rc == LB_ERR_INVALID, "embed with a negative token id: returned %s, want INVALID", lb_status_name(rc));
    lb_error_clear();
    free(ids);
    free(tok);
    free(pos);
    free(x);
    free(want);
}

static void lb_test_heads(LbBackend *be, int64_t batch, int64_t n, int64_t heads, int64_t hd)
{
    int64_t d = heads * hd, rows = batch * n;
    float *qkv = lb_test_alloc(rows * 3 * d), *split = lb_test_alloc(rows * d);
    float *merged = lb_test_alloc(rows * d), *want = lb_test_alloc(rows * d);
    lb_test_random(qkv, rows * 3 * d, -1.0f, 1.0f);
    char what[128];
    for (int part = 0; part < 3; part++) { /* Q, K, V: column offsets 0, d, 2d */
        const float *src = qkv + part * d;
        lb_test_poison(split, rows * d);
        snprintf(what, sizeof what, "split_heads part %d of (%" PRId64 ", 3 * %" PRId64 "), %" PRId64 " heads of %" PRId64,
                 part, rows, d, heads, hd);
        int rc = be->ops->split_heads(be, src, 3 * d, split, batch, n, heads, hd);
        if (!lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where()))
            continue;
        for (int64_t b = 0; b < batch; b++)
            for (int64_t h = 0; h < heads; h++)
                for (int64_t t = 0; t < n; t++)
                    for (int64_t j = 0; j < hd; j++)
                        want[((b * heads + h) * n + t) * hd + j] = src[(b * n + t) * 3 * d + h * hd + j];
        lb_check_same(what, split, want, rows * d);

        /* merge gives back the column block of the fused buffer */
        lb_test_poison(merged, rows * d);
        rc = be->ops->merge_heads(be, split, merged, batch, n, heads, hd);
        for (int64_t r = 0; r < rows; r++)
            memcpy(want + r * d, src + r * 3 * d, (size_t)d * sizeof *want);
        snprintf(what, sizeof what, "merge_heads(split_heads) part %d, %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64,
                 part, batch, n, heads, hd);
        if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where()))
            lb_check_same(what, merged, want, rows * d);
    }

    /* round trip from a contiguous (batch, n, d) tensor */
    lb_test_random(want, rows * d, -3.0f, 3.0f);
    lb_test_poison(merged, rows * d);
    int rc = be->ops->split_heads(be, want, d, split, batch, n, heads, hd);
    if (rc == LB_OK)
        rc = be->ops->merge_heads(be, split, merged, batch, n, heads, hd);
    snprintf(what, sizeof what, "round trip %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64, batch, n, heads, hd);
    if (lb_check(rc == LB_OK, "%s: returned %s (%s)", what, lb_status_name(rc), lb_error_where()))
        lb_check_same(what, merged, want, rows * d);

    rc = be->ops->split_heads(be, qkv, d - 1, split, batch, n, heads, hd);
    lb_check(rc == LB_ERR_INVALID, "split_heads with ld_src < heads * hd: returned %s, want INVALID", lb_status_name(rc));
    lb_error_clear();
    free(qkv);
    free(split);
    free(merged);
    free(want);
}

int main(void)
{
    lb_test_init("test_layout");
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_BF16, (size_t)1 << 30, &be) == LB_OK, "open: %s", lb_error_where()))
        return lb_test_finish("test_layout");

    lb_test_embed(be, 2, 17, 24, 50);
    lb_test_embed(be, 1, 1, 1, 1);
    lb_test_embed(be, 3, 64, 96, 1000);
    lb_test_heads(be, 2, 17, 4, 16);
    lb_test_heads(be, 1, 1, 1, 1);
    lb_test_heads(be, 3, 33, 12, 8);
    lb_test_heads(be, lb_test_randint(1, 4), lb_test_randint(1, 40), lb_test_randint(1, 8), lb_test_randint(1, 24));

    be->ops->close(be);
    return lb_test_finish("test_layout");
}
