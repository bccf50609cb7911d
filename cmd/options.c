/* Parsing and help of the flags shared by `sweep` and `run`. */
#include "cmd/options.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "attn/status.h"
#include "cmd/args.h"
#include "cmd/commands.h"

const struct option lb_shared_long_options[] = {
    {"layers", required_argument, NULL, LB_OPT_LAYERS},
    {"d-model", required_argument, NULL, LB_OPT_DMODEL},
    {"heads", required_argument, NULL, LB_OPT_HEADS},
    {"ffn", required_argument, NULL, LB_OPT_FFN},
    {"vocab", required_argument, NULL, LB_OPT_VOCAB},
    {"dtype", required_argument, NULL, LB_OPT_DTYPE},
    {"sharing", required_argument, NULL, LB_OPT_SHARING},
    {"order", required_argument, NULL, LB_OPT_ORDER},
    {"device", required_argument, NULL, LB_OPT_DEVICE},
    {"gpu", required_argument, NULL, LB_OPT_GPU},
    {"tf32", no_argument, NULL, LB_OPT_TF32},
    {"mem-limit", required_argument, NULL, LB_OPT_MEM_LIMIT},
    {"max-batch", required_argument, NULL, LB_OPT_MAX_BATCH},
    {"cell-time", required_argument, NULL, LB_OPT_CELL_TIME},
    {"seed", required_argument, NULL, LB_OPT_SEED},
    {"headroom", required_argument, NULL, LB_OPT_HEADROOM},
    {NULL, 0, NULL, 0},
};

void lb_options_defaults(LbOptions *o)
{
    memset(o, 0, sizeof *o);
    o->model = lb_config_default();
    o->device = LB_DEVICE_CUDA;
    o->seed = 1;
    o->headroom = LB_HEADROOM_AUTO;
    o->timing = lb_timing_defaults();
}

static int bad(const char *arg, const char *flag, const char *should)
{
    return lb_usage_error("invalid argument \"%s\" for --%s: should be %s", arg, flag, should);
}

static int int_value(const char *arg, int min, int max, int *out, char *should, size_t size)
{
    if (lb_parse_int(arg, min, max, out) == 0)
        return 0;
    snprintf(should, size, "an integer from %d to %d", min, max);
    return -1;
}

/* The "should be" text of each fixed-text refusal. */
static int refuse(const char *text, char *should, size_t size)
{
    snprintf(should, size, "%s", text);
    return -1;
}

const char *lb_options_flag_name(int code)
{
    for (const struct option *opt = lb_shared_long_options; opt->name; opt++)
        if (opt->val == code)
            return opt->name;
    return NULL;
}

int lb_options_set(LbOptions *o, int code, const char *arg, char *should, size_t size)
{
    LbModelConfig *m = &o->model;
    int64_t v64;
    switch (code) {
    case LB_OPT_LAYERS: return int_value(arg, 1, LB_LAYERS_MAX, &m->layers, should, size);
    case LB_OPT_DMODEL: return int_value(arg, 1, LB_DMODEL_MAX, &m->d_model, should, size);
    case LB_OPT_HEADS: return int_value(arg, 1, LB_HEADS_MAX, &m->heads, should, size);
    case LB_OPT_FFN: return int_value(arg, 1, LB_FFN_MAX, &m->ffn, should, size);
    case LB_OPT_VOCAB: return int_value(arg, 1, LB_VOCAB_MAX, &m->vocab, should, size);
    case LB_OPT_DTYPE:
        return lb_dtype_parse(arg, &m->dtype) ? refuse("fp16, bf16 or fp32", should, size) : 0;
    case LB_OPT_SHARING:
        return lb_sharing_parse(arg, &m->sharing) ? refuse("layerwise, kv, headwise or none", should, size) : 0;
    case LB_OPT_ORDER:
        return lb_order_parse(arg, &m->order) ? refuse("early or late", should, size) : 0;
    case LB_OPT_DEVICE:
        if (strcmp(arg, "cuda") == 0)
            o->device = LB_DEVICE_CUDA;
        else if (strcmp(arg, "cpu") == 0)
            o->device = LB_DEVICE_CPU;
        else
            return refuse("cuda or cpu", should, size);
        return 0;
    case LB_OPT_GPU: return int_value(arg, 0, 1023, &o->gpu, should, size);
    case LB_OPT_TF32:
        if (!arg) { /* the flag itself */
            o->tf32 = 1;
            return 0;
        }
        if (strcmp(arg, "0") != 0 && strcmp(arg, "1") != 0)
            return refuse("0 or 1", should, size);
        o->tf32 = arg[0] == '1';
        return 0;
    case LB_OPT_MEM_LIMIT:
        if (lb_parse_size(arg, &o->mem_limit) != 0 || o->mem_limit < ((uint64_t)1 << 20))
            return refuse("a size of at least 1M, such as 16G, 16GiB, 512M or 1.5GiB", should, size);
        return 0;
    case LB_OPT_HEADROOM:
        if (strcmp(arg, "0") == 0) { /* no headroom: the sizes parser wants a positive size */
            o->headroom = 0;
            return 0;
        }
        if (lb_parse_size(arg, &o->headroom) != 0 || o->headroom >= LB_HEADROOM_AUTO)
            return refuse("a size such as 256M, 1G or 0", should, size);
        return 0;
    case LB_OPT_MAX_BATCH:
        if (lb_parse_int64(arg, 1, INT64_C(1) << 40, &v64) != 0)
            return refuse("an integer from 1 to 2^40", should, size);
        o->timing.max_batch = v64;
        return 0;
    case LB_OPT_CELL_TIME: {
        int s;
        if (int_value(arg, 1, 3600, &s, should, size))
            return -1;
        o->timing.cap_seconds = s;
        return 0;
    }
    case LB_OPT_SEED:
        if (lb_parse_int64(arg, 0, INT64_MAX, &v64) != 0)
            return refuse("a non-negative integer", should, size);
        o->seed = (uint64_t)v64;
        return 0;
    }
    return refuse("a known flag (internal error)", should, size);
}

/* The LB_GIVEN_ bit of each shared flag that --resume compares (0: not compared). */
static unsigned given_bit(int code)
{
    switch (code) {
    case LB_OPT_LAYERS: return LB_GIVEN_LAYERS;
    case LB_OPT_DMODEL: return LB_GIVEN_DMODEL;
    case LB_OPT_HEADS: return LB_GIVEN_HEADS;
    case LB_OPT_FFN: return LB_GIVEN_FFN;
    case LB_OPT_VOCAB: return LB_GIVEN_VOCAB;
    case LB_OPT_DTYPE: return LB_GIVEN_DTYPE;
    case LB_OPT_SHARING: return LB_GIVEN_SHARING;
    case LB_OPT_ORDER: return LB_GIVEN_ORDER;
    case LB_OPT_DEVICE: return LB_GIVEN_DEVICE;
    case LB_OPT_TF32: return LB_GIVEN_TF32;
    case LB_OPT_MEM_LIMIT: return LB_GIVEN_MEM_LIMIT;
    case LB_OPT_MAX_BATCH: return LB_GIVEN_MAX_BATCH;
    case LB_OPT_CELL_TIME: return LB_GIVEN_CELL_TIME;
    case LB_OPT_SEED: return LB_GIVEN_SEED;
    case LB_OPT_HEADROOM: return LB_GIVEN_HEADROOM;
    }
    return 0;
}

int lb_options_apply(LbOptions *o, int code, const char *arg)
{
    char should[128];
    const char *flag = lb_options_flag_name(code);
    if (!flag)
        return lb_usage_error("internal: unknown shared option %d", code);
    o->given |= given_bit(code);
    if (lb_options_set(o, code, arg, should, sizeof should) != 0)
        return bad(arg, flag, should);
    return 0;
}

int lb_options_finish(LbOptions *o)
{
    if (o->model.sharing == LB_SHARE_NONE && !(o->given & LB_GIVEN_ORDER))
        o->model.order = LB_ORDER_LATE; /* per-head projections only exist in the late order */
    if (o->tf32 && o->model.dtype != LB_DTYPE_FP32)
        return lb_usage_error("--tf32 applies to --dtype fp32 only: should be used with --dtype fp32");
    return 0;
}

void lb_options_help(FILE *out)
{
    fputs("Model (default RoBERTa-base):\n"
          "  --layers N          encoder layers, 1 to 1024 (default 12)\n"
          "  --d-model N         model width, 1 to 65536, divisible by --heads (default 768)\n"
          "  --heads N           attention heads, 1 to 1024 (default 12)\n"
          "  --ffn N             feed-forward width, 1 to 1048576 (default 3072)\n"
          "  --vocab N           token vocabulary, 1 to 16777216 (default 50265)\n"
          "  --dtype T           fp16, bf16 or fp32 (default fp16); products accumulate in fp32\n"
          "  --tf32              let fp32 products use TF32 (only with --dtype fp32; default off)\n"
          "Linformer:\n"
          "  --sharing S         layerwise, kv, headwise or none (default layerwise, as Table 3)\n"
          "  --order O           early (K' = (E X) W_K, fairseq) or late (K' = E (X W_K), the\n"
          "                      paper's figure) (default early; late with --sharing none)\n"
          "Device and memory:\n"
          "  --device D          cuda or cpu (default cuda; cpu is the plain-C reference)\n"
          "  --gpu N             CUDA device index, 0 to 1023 (default 0)\n"
          "  --mem-limit SIZE    memory budget, at least 1M: 16G, 16GiB, 512M, 1.5GiB; K/M/G/T and\n"
          "                      KiB..TiB are binary, KB..TB decimal (default: the GPU's free memory;\n"
          "                      512MiB on --device cpu)\n"
          "  --max-batch N       cap on the batch search, 1 to 2^40 (default none)\n"
          "  --headroom SIZE     GPU memory kept outside the budget for the driver and libraries\n"
          "                      (default the larger of 256M and 1% of the GPU's memory; 0 for none)\n"
          "Timing:\n"
          "  --cell-time SEC     stop adding timed passes past this much timed work, 1 to 3600,\n"
          "                      once 5 passes ran (default 10)\n"
          "  --seed N            seed of the random weights and tokens, >= 0 (default 1)\n",
          out);
}

int lb_runtime_error(int status)
{
    fprintf(stderr, "linbench: %s\n", lb_error_message());
    if (status == LB_ERR_INTERRUPTED)
        return LB_EXIT_INTERRUPTED;
    return LB_EXIT_FAILURE;
}

/* The first number after `key` on a line of a /proc or /sys file that starts with it, times
 * `unit`; -1 when absent. An empty key reads the file's first line ("max" reads as absent). */
static int read_number(const char *path, const char *key, uint64_t unit, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    int rc = -1;
    size_t klen = strlen(key);
    while (rc != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = line + klen, *end = NULL;
        while (*p == ' ' || *p == '\t')
            p++;
        unsigned long long v = strtoull(p, &end, 10);
        if (end != p) {
            *out = v > UINT64_MAX / unit ? UINT64_MAX : (uint64_t)v * unit;
            rc = 0;
        }
        if (klen == 0)
            break;
    }
    fclose(f);
    return rc;
}

/* The cgroup v2 directory of this process (/sys/fs/cgroup + the "0::" line of
 * /proc/self/cgroup) into buf; -1 when there is none. */
static int cgroup_dir(char *buf, size_t size)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return -1;
    char line[4096];
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        int n = snprintf(buf, size, "/sys/fs/cgroup%s", strcmp(line + 3, "/") == 0 ? "" : line + 3);
        rc = n > 0 && (size_t)n < size ? 0 : -1;
    }
    fclose(f);
    return rc;
}

static void take_min(uint64_t v, const char *why, uint64_t *best, const char **what)
{
    if (v < *best) {
        *best = v;
        *what = why;
    }
}

int lb_host_memory_available(uint64_t *bytes, const char **what)
{
    uint64_t best = UINT64_MAX, v, used;
    *what = NULL;
    if (read_number("/proc/meminfo", "MemAvailable:", 1024, &v) == 0)
        take_min(v, "MemAvailable in /proc/meminfo", &best, what);
    char dir[4096], path[4200];
    if (cgroup_dir(dir, sizeof dir) == 0) {
        snprintf(path, sizeof path, "%s/memory.max", dir);
        if (read_number(path, "", 1, &v) == 0) {
            snprintf(path, sizeof path, "%s/memory.current", dir);
            if (read_number(path, "", 1, &used) != 0)
                used = 0;
            take_min(v > used ? v - used : 0, "the cgroup's memory.max", &best, what);
        }
    }
    if (read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes", "", 1, &v) == 0) {
        if (read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes", "", 1, &used) != 0)
            used = 0;
        take_min(v > used ? v - used : 0, "the cgroup's memory.limit_in_bytes", &best, what);
    }
    /* Address-space and data limits count what the process already maps. */
    uint64_t mapped = 0, data = 0;
    (void)read_number("/proc/self/status", "VmSize:", 1024, &mapped);
    (void)read_number("/proc/self/status", "VmData:", 1024, &data);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take_min(rl.rlim_cur > mapped ? rl.rlim_cur - mapped : 0, "the address-space limit (ulimit -v)", &best, what);
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take_min(rl.rlim_cur > data ? rl.rlim_cur - data : 0, "the data-size limit (ulimit -d)", &best, what);
    if (!*what)
        return -1;
    *bytes = best;
    return 0;
}

int lb_options_check_host_memory(const LbOptions *o)
{
    if (o->device != LB_DEVICE_CPU)
        return 0;
    uint64_t want = o->mem_limit ? o->mem_limit : LB_CPU_DEFAULT_MEM, have;
    const char *what;
    if (lb_host_memory_available(&have, &what) != 0 || want <= have)
        return 0;
    char w[32], h[32];
    lb_format_size(want, w, sizeof w);
    lb_format_size(have, h, sizeof h);
    if (o->mem_limit)
        return lb_usage_error("invalid argument \"%s\" for --mem-limit: should be at most %s with --device cpu, the memory this process can have (%s)",
                              w, h, what);
    fprintf(stderr, "linbench: the CPU reference's default budget of %s is more than the %s this process can have (%s): pass a smaller --mem-limit\n",
            w, h, what);
    return LB_EXIT_FAILURE;
}

uint64_t lb_options_headroom(const LbOptions *o, uint64_t total_bytes)
{
    if (o->headroom != LB_HEADROOM_AUTO)
        return o->headroom;
    const uint64_t one_percent = total_bytes / 100;
    return one_percent > LB_HEADROOM_MIN ? one_percent : LB_HEADROOM_MIN;
}

int lb_options_open_backend(const LbOptions *o, LbBackend **be, uint64_t *budget)
{
    int rc;
    if (o->device == LB_DEVICE_CPU) {
        uint64_t cap = o->mem_limit ? o->mem_limit : LB_CPU_DEFAULT_MEM;
        rc = lb_cpu_backend_open(o->model.dtype, (size_t)cap, be);
        if (rc != LB_OK)
            return lb_runtime_error(rc);
        *budget = cap;
        return 0;
    }
    rc = lb_cuda_backend_open(o->gpu, o->model.dtype, o->tf32, be);
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    size_t free_bytes = 0, total = 0;
    rc = (*be)->ops->mem_info(*be, &free_bytes, &total);
    if (rc != LB_OK) {
        lb_backend_close(*be);
        *be = NULL;
        return lb_runtime_error(rc);
    }
    const uint64_t headroom = lb_options_headroom(o, total);
    if (free_bytes <= headroom) {
        char f[32], h[32];
        lb_format_size(free_bytes, f, sizeof f);
        lb_format_size(headroom, h, sizeof h);
        fprintf(stderr, "linbench: the GPU has %s free, no more than the %s headroom kept for the driver and libraries: free memory, or pass a smaller --headroom\n",
                f, h);
        lb_backend_close(*be);
        *be = NULL;
        return LB_EXIT_FAILURE;
    }
    *budget = free_bytes - headroom;
    if (o->mem_limit && o->mem_limit < *budget)
        *budget = o->mem_limit;
    return 0;
}
