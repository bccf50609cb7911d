/* The CPU backend as the forward passes see it: what it reports (fp32 storage whatever dtype is
 * asked, alignment, name), its memory budget (LB_ERR_NOMEM past the capacity, usable again after
 * a free), the timer, the seeded fills, and the argument checks that turn a bad call into
 * LB_ERR_INVALID instead of a wild write. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "attn/cpu/cpu_ref.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"

static void lb_test_props(void)
{
    static const LbDtype dtypes[] = {LB_DTYPE_FP16, LB_DTYPE_BF16, LB_DTYPE_FP32};
    for (size_t i = 0; i < 3; i++) {
        LbBackend *be = NULL;
        int rc = lb_cpu_backend_open(dtypes[i], 12345, &be);
        if (!lb_check(rc == LB_OK && be, "open dtype %d: %s", (int)dtypes[i], lb_error_where()))
            continue;
        lb_check(be->dtype == dtypes[i] && be->storage == LB_DTYPE_FP32 && be->elem_bytes == 4,
                 "dtype %d: dtype %d storage %d elem_bytes %zu, want the request, fp32, 4",
                 (int)dtypes[i], (int)be->dtype, (int)be->storage, be->elem_bytes);
        lb_check(be->alignment == 256 && be->workspace_bytes == 0 && be->tf32 == 0,
                 "alignment %zu workspace %zu tf32 %d, want 256, 0, 0", be->alignment, be->workspace_bytes, be->tf32);
        lb_check(strcmp(be->ops->name, "cpu") == 0, "ops name \"%s\", want \"cpu\"", be->ops->name);
        LbDeviceInfo info;
        memset(&info, 0x5a, sizeof info);
        rc = be->ops->describe(be, &info);
        lb_check(rc == LB_OK && strncmp(info.name, "CPU reference", 13) == 0 && info.total_bytes == 12345 &&
                     info.free_bytes == 12345 && info.sm_count == -1 && info.cc_major == -1 && info.sm_clock_mhz == -1,
                 "describe: \"%s\", total %" PRId64 ", free %" PRId64 ", sm_count %d", info.name, info.total_bytes,
                 info.free_bytes, info.sm_count);
        lb_check(be->ops->sm_clock_mhz(be) == -1, "sm_clock_mhz is not -1");
        be->ops->close(be);
    }
}

static void lb_test_memory(void)
{
    const size_t cap = (size_t)1 << 20;
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP16, cap, &be) == LB_OK, "open: %s", lb_error_where()))
        return;
    void *a = NULL, *b = NULL, *c = NULL;
    size_t free_b = 0, total = 0;
    int rc = be->ops->mem_alloc(be, 600000, &a);
    lb_check(rc == LB_OK && a && ((uintptr_t)a & 255) == 0, "alloc 600000 of 1 MiB: %s, %p", lb_status_name(rc), a);
    if (a)
        memset(a, 0x11, 600000); /* the bytes are really there */
    be->ops->mem_info(be, &free_b, &total);
    lb_check(free_b == cap - 600000 && total == cap, "mem_info after 600000: free %zu total %zu", free_b, total);

    rc = be->ops->mem_alloc(be, 600000, &b);
    lb_check(rc == LB_ERR_NOMEM && b == NULL, "second 600000 of 1 MiB: %s, want NOMEM", lb_status_name(rc));
    lb_check(strstr(lb_error_message(), "600000") != NULL, "NOMEM message names the size: \"%s\"", lb_error_message());
    lb_error_clear();

    rc = be->ops->mem_alloc(be, cap - 600000, &c); /* exactly what is left */
    lb_check(rc == LB_OK && c, "the remaining %zu bytes: %s", cap - 600000, lb_status_name(rc));
    rc = be->ops->mem_alloc(be, 1, &b);
    lb_check(rc == LB_ERR_NOMEM, "one byte past the capacity: %s, want NOMEM", lb_status_name(rc));
    lb_error_clear();

    be->ops->mem_free(be, a);
    be->ops->mem_free(be, c);
    be->ops->mem_free(be, NULL);
    be->ops->mem_info(be, &free_b, &total);
    lb_check(free_b == cap, "mem_info after freeing all: free %zu, want %zu", free_b, cap);
    rc = be->ops->mem_alloc(be, 600000, &b);
    lb_check(rc == LB_OK && b, "600000 again after free: %s", lb_status_name(rc));
    be->ops->mem_free(be, b);
    rc = be->ops->mem_alloc(be, cap, &b);
    lb_check(rc == LB_OK && b, "the whole capacity in one block: %s", lb_status_name(rc));
    be->ops->mem_free(be, b);
    rc = be->ops->mem_alloc(be, SIZE_MAX, &b);
    lb_check(rc == LB_ERR_NOMEM, "SIZE_MAX bytes: %s, want NOMEM", lb_status_name(rc));
    lb_error_clear();
    be->ops->close(be);

    /* a budget bigger than the host: the failure of the host allocation is NOMEM too */
    if (lb_cpu_backend_open(LB_DTYPE_FP32, SIZE_MAX, &be) == LB_OK) {
        rc = be->ops->mem_alloc(be, SIZE_MAX / 2, &b);
        lb_check(rc == LB_ERR_NOMEM, "8 EiB from the host: %s, want NOMEM", lb_status_name(rc));
        lb_error_clear();
        be->ops->close(be);
    }
}

static void lb_test_timer(LbBackend *be)
{
    double ms = -1.0;
    lb_check(be->ops->timer_stop(be, &ms) == LB_ERR_INVALID, "timer_stop without timer_start is not INVALID");
    lb_error_clear();
    be->ops->timer_start(be);
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
    int rc = be->ops->timer_stop(be, &ms);
    lb_check(rc == LB_OK && ms >= 19.0 && ms < 5000.0, "timer around a 20 ms sleep: %s, %.3f ms", lb_status_name(rc), ms);
    lb_check(be->ops->sync(be) == LB_OK, "sync");
}

static void lb_test_fill(LbBackend *be)
{
    const int64_t count = 100000;
    const uint64_t seed = lb_test_seed;
    float *x = lb_test_alloc(count), *y = lb_test_alloc(count), *z = lb_test_alloc(count);
    lb_test_poison(x, count);
    int rc = be->ops->fill_uniform(be, x, count, seed, -0.25f, 0.75f);
    lb_check(rc == LB_OK, "fill_uniform: %s", lb_status_name(rc));
    int64_t out = 0, differ = 0;
    double mean = 0.0;
    for (int64_t i = 0; i < count; i++) {
        out += !(x[i] >= -0.25f && x[i] < 0.75f);
        differ += x[i] != lb_rng_range(seed, (uint64_t)i, -0.25f, 0.75f);
        mean += x[i];
    }
    mean /= count;
    lb_check(out == 0, "fill_uniform: %" PRId64 " values outside [-0.25, 0.75)", out);
    lb_check(differ == 0, "fill_uniform: %" PRId64 " values differ from lb_rng_range", differ);
    /* the mean of 1e5 uniforms on a width-1 interval has standard deviation 9e-4: 6 sigma */
    lb_check(fabs(mean - 0.25) < 6 * 9.2e-4, "fill_uniform: mean %.5f, want 0.25", mean);

    lb_fill_uniform_cpu(y, count, seed, -0.25f, 0.75f);
    lb_check_same("fill_uniform, same seed twice", x, y, count);
    lb_fill_uniform_cpu(z, count, seed + 1, -0.25f, 0.75f);
    differ = 0;
    for (int64_t i = 0; i < count; i++)
        differ += x[i] != z[i];
    lb_check(differ > count * 99 / 100, "fill_uniform: seeds %" PRIu64 " and +1 agree on %" PRId64 " of %" PRId64 " values",
             seed, count - differ, count);

    int32_t ids[2000];
    int seen[7] = {0};
    rc = be->ops->fill_tokens(be, ids, 2000, seed, 7);
    int64_t bad = 0;
    for (int i = 0; i < 2000; i++) {
        if (ids[i] < 0 || ids[i] >= 7)
            bad++;
        else
            seen[ids[i]] = 1;
        bad += ids[i] != lb_rng_token(seed, (uint64_t)i, 7);
    }
    lb_check(rc == LB_OK && bad == 0, "fill_tokens vocab 7: %" PRId64 " ids out of range or not lb_rng_token", bad);
    lb_check(seen[0] && seen[1] && seen[2] && seen[3] && seen[4] && seen[5] && seen[6], "fill_tokens: some of 7 ids never drawn in 2000");
    rc = be->ops->fill_tokens(be, ids, 10, seed, 50265);
    bad = 0;
    for (int i = 0; i < 10; i++)
        bad += ids[i] < 0 || ids[i] >= 50265;
    lb_check(rc == LB_OK && bad == 0, "fill_tokens vocab 50265: %" PRId64 " out of range", bad);
    lb_check(be->ops->fill_tokens(be, ids, 10, seed, 0) == LB_ERR_INVALID, "fill_tokens vocab 0 is not INVALID");
    lb_error_clear();
    free(x);
    free(y);
    free(z);
}

static void lb_test_copies(LbBackend *be)
{
    const int64_t count = 1000;
    float *host = lb_test_alloc(count), *back = lb_test_alloc(count);
    void *dev = NULL;
    lb_test_random(host, count, -5.0f, 5.0f);
    int rc = be->ops->mem_alloc(be, (size_t)count * be->elem_bytes, &dev);
    if (rc == LB_OK)
        rc = be->ops->upload(be, dev, host, count);
    if (rc == LB_OK)
        rc = be->ops->download(be, back, dev, count);
    if (lb_check(rc == LB_OK, "upload/download: %s", lb_status_name(rc)))
        lb_check_same("upload then download", back, host, count);
    lb_test_poison(back, count);
    rc = be->ops->copy_raw_to_host(be, back, dev, (size_t)count * sizeof(float));
    if (lb_check(rc == LB_OK, "copy_raw_to_host: %s", lb_status_name(rc)))
        lb_check_same("copy_raw_to_host", back, host, count);
    be->ops->mem_free(be, dev);
    free(host);
    free(back);
}

/* rc of a call the forward pass must never make: LB_ERR_INVALID (and, where `names` is given, a
 * message naming it). */
static void refused(int rc, const char *what, const char *names)
{
    lb_check(rc == LB_ERR_INVALID && (!names || strstr(lb_error_message(), names)), "%s: %s \"%s\"", what,
             lb_status_name(rc), lb_error_message());
    lb_error_clear();
}

static void lb_test_invalid(LbBackend *be)
{
    float buf[64];
    lb_test_random(buf, 64, -1.0f, 1.0f);
    refused(be->ops->linear(be, buf, buf, NULL, buf, -1, 4, 4, 0), "linear rows -1", "linear");
    LbBmm p = {.m = 4, .n = 4, .kdim = 4, .alpha = 1.0f, .a = buf, .lda = 3, .b = buf, .ldb = 4,
               .c = buf + 32, .ldc = 4, .batch = 1};
    refused(be->ops->bmm(be, &p), "bmm lda 3 < kdim 4", NULL);
    p.lda = 4;
    p.trans_a = 1;
    p.m = 5;
    refused(be->ops->bmm(be, &p), "bmm trans_a, lda 4 < m 5", NULL);
    refused(be->ops->softmax(be, NULL, 2, 2, 1.0f), "softmax of NULL", NULL);
    refused(be->ops->layernorm(be, buf, NULL, NULL, buf, 2, 4, 1e-5f), "layernorm without gamma", NULL);
    refused(be->ops->merge_heads(be, buf, buf + 32, 1, 2, -2, 4), "merge_heads heads -2", NULL);
    refused(be->ops->split_heads(be, buf, 3, buf + 32, 1, 2, 2, 2), "split_heads with ld_src < heads * hd", NULL);
    const int32_t ids[2] = {0, -3};
    refused(be->ops->embed(be, ids, buf, buf + 4, buf + 32, 1, 2, 1), "embed with a negative token id", NULL);
    const int rc = be->ops->softmax(be, buf, 0, 5, 1.0f);
    lb_check(rc == LB_OK, "softmax of 0 rows: %s", lb_status_name(rc));
}

int main(void)
{
    lb_test_init("test_backend");
    lb_test_props();
    lb_test_memory();
    LbBackend *be = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 28, &be) == LB_OK, "open: %s", lb_error_where()))
        return lb_test_finish("test_backend");
    lb_test_timer(be);
    lb_test_fill(be);
    lb_test_copies(be);
    lb_test_invalid(be);
    be->ops->close(be);
    return lb_test_finish("test_backend");
}
