/* The CPU reference backend: attn/ops.h's table filled with attn/cpu/cpu_ref.h's functions, on
 * host memory emulating a device of --mem-limit bytes. Storage is fp32 whatever dtype is asked
 * (the exact reference for every precision). Each op checks its sizes and pointers, so a forward
 * bug is an error, not a wild write. One thread drives a backend at a time, like a CUDA stream. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attn/cpu/cpu_backward.h"
#include "attn/cpu/cpu_energy.h"
#include "attn/cpu/cpu_ref.h"
#include "attn/op_args.h"
#include "attn/ops.h"
#include "attn/base/status.h"

#define LB_CPU_ALIGNMENT 256
/* Each allocation carries its size in a header this big, so the pointer handed out stays
 * aligned to LB_CPU_ALIGNMENT and mem_free can give the bytes back to the budget. */
#define LB_CPU_HEADER LB_CPU_ALIGNMENT

typedef struct LbCpuState {
    size_t capacity; /* the emulated device memory */
    size_t in_use;   /* bytes handed out and not freed (headers not counted) */
    double t0; /* timer_start's time in ms (CLOCK_MONOTONIC) */
    int timing; /* timer_start seen, timer_stop not yet */
    double *events; /* event_record's times in ms (CLOCK_MONOTONIC), NaN until recorded */
    int64_t n_events;
    LbCpuEnergy energy; /* the powercap counter, unwrapped (cpu_energy.c) */
} LbCpuState;

static LbCpuState *lb_cpu_state(LbBackend *be) { return be->impl; }

/* --- memory ---------------------------------------------------------------------------------- */

static int lb_cpu_mem_alloc(LbBackend *be, size_t bytes, void **ptr)
{
    LbCpuState *s = lb_cpu_state(be);
    *ptr = NULL;
    if (bytes > s->capacity - s->in_use)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory on the CPU backend: %zu bytes asked, %zu of %zu free (the memory limit)",
                       bytes, s->capacity - s->in_use, s->capacity);
    if (bytes > SIZE_MAX - LB_CPU_HEADER)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory on the CPU backend: %zu bytes asked", bytes);
    void *base = NULL;
    /* posix_memalign, not aligned_alloc: the latter wants a size that is a multiple of the
     * alignment. Large blocks come from mmap, so untouched bytes cost no RAM. */
    if (posix_memalign(&base, LB_CPU_ALIGNMENT, LB_CPU_HEADER + bytes) != 0 || !base)
        return LB_FAIL(LB_ERR_NOMEM, "out of memory on the CPU backend: the host could not give %zu bytes", bytes);
    memcpy(base, &bytes, sizeof bytes);
    s->in_use += bytes;
    *ptr = (char *)base + LB_CPU_HEADER;
    return LB_OK;
}

static void lb_cpu_mem_free(LbBackend *be, void *ptr)
{
    if (!ptr)
        return;
    LbCpuState *s = lb_cpu_state(be);
    char *base = (char *)ptr - LB_CPU_HEADER;
    size_t bytes;
    memcpy(&bytes, base, sizeof bytes);
    s->in_use -= bytes;
    free(base);
}

static int lb_cpu_mem_info(LbBackend *be, size_t *free_bytes, size_t *total_bytes)
{
    LbCpuState *s = lb_cpu_state(be);
    *free_bytes = s->capacity - s->in_use;
    *total_bytes = s->capacity;
    return LB_OK;
}

/* --- data in and out (argument checks: attn/op_args.h) ---------------------------------------- */

/* memcpy once the op's argument check `rc` has passed. */
static int lb_cpu_memcpy(int rc, void *dst, const void *src, size_t bytes)
{
    if (rc == LB_OK && bytes > 0)
        memcpy(dst, src, bytes);
    return rc;
}

int lb_cpu_upload(LbBackend *be, void *dst, const float *src, int64_t count)
{
    return lb_cpu_memcpy(lb_args_transfer(be, "upload", dst, src, count), dst, src, (size_t)count * sizeof *src);
}

static int lb_cpu_download(LbBackend *be, float *dst, const void *src, int64_t count)
{
    return lb_cpu_memcpy(lb_args_transfer(be, "download", dst, src, count), dst, src, (size_t)count * sizeof *dst);
}

static int lb_cpu_copy_raw_to_host(LbBackend *be, void *dst, const void *src, size_t bytes)
{
    return lb_cpu_memcpy(lb_args_copy(be, "copy_raw_to_host", dst, src, bytes, 0), dst, src, bytes);
}

int lb_cpu_copy(LbBackend *be, void *dst, const void *src, size_t bytes)
{
    return lb_cpu_memcpy(lb_args_copy(be, "copy", dst, src, bytes, 1), dst, src, bytes);
}

/* lb_cpu_OP: OP's argument check (attn/op_args.h), then its reference (cpu_ref.h, cpu_backward.h). */
#define LB_CPU_CHECKED(op, params, check, call) \
    int lb_cpu_##op params                      \
    {                                           \
        LB_TRY(check);                          \
        call;                                   \
        return LB_OK;                           \
    }

LB_CPU_CHECKED(fill_uniform, (LbBackend *be, void *x, int64_t count, uint64_t seed, float lo, float hi),
               lb_args_fill_uniform(be, x, count, lo, hi), lb_fill_uniform_cpu(x, count, seed, lo, hi))

int lb_cpu_linear(LbBackend *be, const void *x, const void *w, const void *b, void *y,
                         int64_t rows, int64_t in, int64_t out, int gelu)
{
    LB_TRY(lb_arg_dims(be, "linear", rows, in, out));
    LB_TRY(lb_arg_need(be, x, rows * in, "linear", "x"));
    LB_TRY(lb_arg_need(be, w, out * in, "linear", "w"));
    LB_TRY(lb_arg_need(be, y, rows * out, "linear", "y"));
    lb_linear_cpu(x, w, b, y, rows, in, out, gelu);
    return LB_OK;
}

/* beta and the summing stride_c 0 (the backward's): each product into t, then C = the sum + beta C
 * in double, rounded once per output. */
int lb_cpu_bmm(LbBackend *be, const LbBmm *p)
{
    LB_TRY(lb_args_bmm(be, p));
    const int sum = p->batch > 1 && p->stride_c == 0;
    if (p->beta == 0.0f && !sum) {
        lb_bmm_cpu(p);
        return LB_OK;
    }
    const int64_t mn = p->m * p->n;
    if (mn == 0 || p->batch == 0)
        return LB_OK;
    float *t = malloc((size_t)mn * sizeof *t);
    double *acc = calloc((size_t)mn, sizeof *acc);
    if (!t || !acc) {
        free(t);
        free(acc);
        return LB_FAIL(LB_ERR_NOMEM, "cpu bmm: out of host memory for a %lld x %lld product", (long long)p->m,
                       (long long)p->n);
    }
    for (int64_t i = 0; i < p->batch; i++) {
        LbBmm one = *p;
        one.a = (const float *)p->a + i * p->stride_a;
        one.b = (const float *)p->b + i * p->stride_b;
        one.c = t;
        one.ldc = p->n;
        one.batch = 1;
        lb_bmm_cpu(&one);
        float *c = (float *)p->c + (sum ? 0 : i * p->stride_c);
        for (int64_t r = 0; r < p->m; r++)
            for (int64_t j = 0; j < p->n; j++) {
                acc[r * p->n + j] += t[r * p->n + j];
                if (sum && i + 1 < p->batch)
                    continue;
                const double old = p->beta == 0.0f ? 0.0 : (double)p->beta * c[r * p->ldc + j];
                c[r * p->ldc + j] = (float)(acc[r * p->n + j] + old);
                acc[r * p->n + j] = 0.0;
            }
    }
    free(t);
    free(acc);
    return LB_OK;
}

LB_CPU_CHECKED(softmax, (LbBackend *be, void *x, int64_t rows, int64_t cols, float scale),
               lb_args_rows(be, "softmax", x, rows, cols), lb_softmax_cpu(x, rows, cols, scale))

LB_CPU_CHECKED(layernorm, (LbBackend *be, void *x, const void *r, const void *gamma, const void *beta, int64_t rows,
                           int64_t d, float eps),
               lb_args_layernorm(be, x, gamma, beta, rows, d, eps), lb_layernorm_cpu(x, r, gamma, beta, rows, d, eps))

LB_CPU_CHECKED(gelu, (LbBackend *be, void *y, int64_t rows, int64_t cols), lb_args_rows(be, "gelu", y, rows, cols),
               lb_gelu_array_cpu(y, rows * cols))

/* --- timing ------------------------------------------------------------------------------------ */

static double lb_cpu_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Every op has finished when it returns: nothing to wait for. */
static int lb_cpu_sync(LbBackend *be) { return (void)be, LB_OK; }

static int lb_cpu_timer_start(LbBackend *be)
{
    lb_cpu_state(be)->t0 = lb_cpu_now_ms();
    lb_cpu_state(be)->timing = 1;
    return LB_OK;
}

static int lb_cpu_timer_stop(LbBackend *be, double *ms)
{
    LbCpuState *s = lb_cpu_state(be);
    if (!s->timing)
        return LB_FAIL(LB_ERR_INVALID, "cpu timer_stop without timer_start");
    s->timing = 0;
    *ms = lb_cpu_now_ms() - s->t0;
    return LB_OK;
}

static int lb_cpu_event_record(LbBackend *be, int64_t index)
{
    LbCpuState *s = lb_cpu_state(be);
    if (index < 0 || index > INT32_MAX)
        return LB_FAIL(LB_ERR_INVALID, "cpu event_record: event %" PRId64 " is out of range", index);
    if (index >= s->n_events) {
        int64_t n = s->n_events ? s->n_events : 64;
        while (n <= index)
            n *= 2;
        double *e = realloc(s->events, (size_t)n * sizeof *e);
        if (!e)
            return LB_FAIL(LB_ERR_NOMEM, "out of host memory for %" PRId64 " timer events", n);
        for (int64_t i = s->n_events; i < n; i++)
            e[i] = NAN;
        s->events = e;
        s->n_events = n;
    }
    s->events[index] = lb_cpu_now_ms(); /* every op has finished when it returns */
    return LB_OK;
}

static int lb_cpu_event_elapsed(LbBackend *be, int64_t from, int64_t to, double *ms)
{
    LbCpuState *s = lb_cpu_state(be);
    if (from < 0 || to < 0 || from >= s->n_events || to >= s->n_events || isnan(s->events[from]) ||
        isnan(s->events[to]))
        return LB_FAIL(LB_ERR_INVALID, "cpu event_elapsed: event %" PRId64 " or %" PRId64 " was never recorded", from, to);
    *ms = s->events[to] - s->events[from];
    return LB_OK;
}

/* A CPU has no clock-event reasons to report, nor an SM clock. */
static int lb_cpu_clock_events(LbBackend *be, uint64_t *reasons) { return (void)be, *reasons = 0, LB_ERR_UNSUPPORTED; }
static int lb_cpu_sm_clock_mhz(LbBackend *be) { return (void)be, -1; }

static int lb_cpu_energy_j(LbBackend *be, double *joules) { return lb_cpu_energy_read(&lb_cpu_state(be)->energy, joules); }

/* --- the device -------------------------------------------------------------------------------- */

/* The "model name" line of /proc/cpuinfo into buf, or "" where it cannot be read. */
static void lb_cpu_model_name(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, size, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static int lb_cpu_describe(LbBackend *be, LbDeviceInfo *info)
{
    LbCpuState *s = lb_cpu_state(be);
    char model[96];
    lb_cpu_model_name(model, sizeof model);
    *info = (LbDeviceInfo){.cc_major = -1, .cc_minor = -1, .sm_count = -1, .total_bytes = (int64_t)s->capacity,
                           .free_bytes = (int64_t)(s->capacity - s->in_use), .sm_clock_mhz = -1,
                           .sm_clock_max_mhz = -1, .mem_clock_mhz = -1, .driver_version = -1,
                           .runtime_version = -1, .cublas_version = -1, .device_index = -1};
    snprintf(info->name, sizeof info->name, model[0] ? "CPU reference (%s)" : "CPU reference", model);
    return LB_OK;
}

static void lb_cpu_close(LbBackend *be)
{
    if (!be)
        return;
    LbCpuState *s = lb_cpu_state(be);
    if (s)
        free(s->events);
    free(be->impl);
    free(be);
}

/* --- the training step's backward: the references of attn/cpu/cpu_backward.h ----------------- */

/* The reference needs none of the scratch the ops are given. */
LB_CPU_CHECKED(add, (LbBackend *be, const void *x, void *y, int64_t count), lb_args_pair(be, "add", x, y, 1, count),
               lb_add_cpu(x, y, count))

LB_CPU_CHECKED(column_sums, (LbBackend *be, const void *x, void *y, int64_t rows, int64_t cols, void *scratch),
               lb_args_column_sums(be, x, y, rows, cols, scratch), lb_column_sums_cpu(x, y, rows, cols))

LB_CPU_CHECKED(gelu_backward, (LbBackend *be, const void *z, void *d, int64_t rows, int64_t cols),
               lb_args_pair(be, "gelu_backward", z, d, rows, cols), lb_gelu_backward_cpu(z, d, rows * cols))

LB_CPU_CHECKED(softmax_backward, (LbBackend *be, const void *y, void *d, int64_t rows, int64_t cols, float scale),
               lb_args_pair(be, "softmax_backward", y, d, rows, cols), lb_softmax_backward_cpu(y, d, rows, cols, scale))

LB_CPU_CHECKED(layernorm_backward,
               (LbBackend *be, const void *x, const void *r, const void *gamma, const void *dy, void *dv, void *dgamma,
                void *dbeta, int64_t rows, int64_t d, float eps, void *scratch),
               lb_args_layernorm_backward(be, x, gamma, dy, dv, rows, d, eps, scratch),
               return lb_layernorm_backward_cpu(x, r, gamma, dy, dv, dgamma, dbeta, rows, d, eps))

LB_CPU_CHECKED(embed_backward,
               (LbBackend *be, const int32_t *ids, const void *dx, void *dtok, void *dpos, int64_t batch, int64_t n,
                int64_t d, int64_t vocab, void *scratch),
               lb_args_embed_backward(be, ids, dx, dtok, dpos, batch, n, d, vocab, scratch),
               return lb_embed_backward_cpu(ids, dx, dtok, dpos, batch, n, d, vocab))

LB_CPU_CHECKED(pool_seq_backward,
               (LbBackend *be, const void *x, int64_t ld_x, const void *dy, int64_t ld_y, void *dx, int64_t batch,
                int64_t n, int64_t k, int64_t channels, int mode),
               lb_args_seq_backward(be, "pool_seq_backward", x, ld_x, NULL, dy, ld_y, dx, NULL, batch, n, k, channels),
               lb_pool_seq_backward_cpu(x, ld_x, dy, ld_y, dx, batch, n, k, channels, mode))

LB_CPU_CHECKED(depthwise_conv_seq_backward,
               (LbBackend *be, const void *x, int64_t ld_x, const void *wt, const void *dy, int64_t ld_y, void *dx,
                void *dwt, int64_t batch, int64_t n, int64_t k, int64_t channels, void *scratch),
               lb_args_seq_backward(be, "depthwise_conv_seq_backward", x, ld_x, wt, dy, ld_y, dx, dwt, batch, n, k,
                                    channels),
               (void)scratch; lb_depthwise_conv_seq_backward_cpu(x, ld_x, wt, dy, ld_y, dx, dwt, batch, n, k, channels))

LB_CPU_CHECKED(favor_features_backward,
               (LbBackend *be, const void *phi, const void *x, void *d, void *dx, int64_t groups, int64_t n, int64_t m,
                int64_t hd, float scale),
               lb_args_favor_backward(be, phi, x, d, dx, groups, n, m, hd),
               lb_favor_features_backward_cpu(phi, x, d, dx, groups, n, m, hd, scale))

LB_CPU_CHECKED(divide_by_last_backward,
               (LbBackend *be, const void *x, const void *dy, void *dx, int64_t rows, int64_t cols),
               lb_args_divide_by_last_backward(be, x, dy, dx, rows, cols),
               lb_divide_by_last_backward_cpu(x, dy, dx, rows, cols))

/* The reference recomputes everything from q, k and v: o and lse go unread. */
LB_CPU_CHECKED(flash_attention_backward,
               (LbBackend *be, const void *q, const void *k, const void *v, int64_t ld, const void *o, const float *lse,
                const void *do_, void *dq, void *dk, void *dv, int64_t batch, int64_t n, int64_t heads, int64_t hd,
                float scale, void *scratch),
               lb_args_flash_backward(be, "flash_attention_backward", q, k, v, ld, o, lse, do_, dq, dk, dv, batch, n,
                                      heads, hd),
               (void)scratch; return lb_flash_attention_backward_cpu(q, k, v, ld, do_, dq, dk, dv, batch, n, heads, hd,
                                                                     scale))

#define LB_CPU_OP_ENTRY(name, params) .name = lb_cpu_##name,
static const LbOps lb_cpu_ops = {
    .name = "cpu",
    .mem_alloc = lb_cpu_mem_alloc,
    .mem_free = lb_cpu_mem_free,
    .mem_info = lb_cpu_mem_info,
    .set_workspace = NULL,
    .download = lb_cpu_download,
    .copy_raw_to_host = lb_cpu_copy_raw_to_host,
    .fill_tokens = lb_fill_tokens_cpu,
    .sync = lb_cpu_sync,
    .timer_start = lb_cpu_timer_start,
    .timer_stop = lb_cpu_timer_stop,
    .sm_clock_mhz = lb_cpu_sm_clock_mhz,
    .clock_events = lb_cpu_clock_events,
    .describe = lb_cpu_describe,
    .close = lb_cpu_close,
    .event_record = lb_cpu_event_record,
    .event_elapsed = lb_cpu_event_elapsed,
    .energy_j = lb_cpu_energy_j,
    LB_PASS_OPS(LB_CPU_OP_ENTRY)
};

/* The host's physical memory, for a capacity of 0 (no --mem-limit). */
static size_t lb_cpu_host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return SIZE_MAX;
    return (size_t)pages * (size_t)page;
}

int lb_cpu_backend_open(LbDtype dtype, size_t capacity, LbBackend **out)
{
    *out = NULL;
    if (dtype != LB_DTYPE_FP16 && dtype != LB_DTYPE_BF16 && dtype != LB_DTYPE_FP32)
        return LB_FAIL(LB_ERR_INVALID, "cpu backend: unknown dtype %d", (int)dtype);
    LbBackend *be = calloc(1, sizeof *be);
    LbCpuState *s = calloc(1, sizeof *s);
    if (!be || !s) {
        free(be);
        free(s);
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory opening the CPU backend");
    }
    s->capacity = capacity > 0 ? capacity : lb_cpu_host_memory();
    be->ops = &lb_cpu_ops;
    be->impl = s;
    be->dtype = dtype;
    be->storage = LB_DTYPE_FP32;
    be->elem_bytes = sizeof(float);
    be->alignment = LB_CPU_ALIGNMENT; /* no workspace, no TF32 */
    *out = be;
    return LB_OK;
}
