/* Parsing and help of the flags shared by `sweep` and `run`. */
#include "cmd/options.h"

#include <string.h>

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
    {NULL, 0, NULL, 0},
};

void lb_options_defaults(LbOptions *o)
{
    memset(o, 0, sizeof *o);
    o->model = lb_config_default();
    o->device = LB_DEVICE_CUDA;
    o->seed = 1;
    o->timing = lb_timing_defaults();
}

static int bad(const char *arg, const char *flag, const char *should)
{
    return lb_usage_error("invalid argument \"%s\" for --%s: should be %s", arg, flag, should);
}

static int int_flag(const char *arg, const char *flag, int min, int max, int *out)
{
    if (lb_parse_int(arg, min, max, out) == 0)
        return 0;
    char should[96];
    snprintf(should, sizeof should, "an integer from %d to %d", min, max);
    return bad(arg, flag, should);
}

int lb_options_apply(LbOptions *o, int code, const char *arg)
{
    LbModelConfig *m = &o->model;
    int64_t v64;
    switch (code) {
    case LB_OPT_LAYERS:
        o->given |= LB_GIVEN_LAYERS;
        return int_flag(arg, "layers", 1, LB_LAYERS_MAX, &m->layers);
    case LB_OPT_DMODEL:
        o->given |= LB_GIVEN_DMODEL;
        return int_flag(arg, "d-model", 1, LB_DMODEL_MAX, &m->d_model);
    case LB_OPT_HEADS:
        o->given |= LB_GIVEN_HEADS;
        return int_flag(arg, "heads", 1, LB_HEADS_MAX, &m->heads);
    case LB_OPT_FFN:
        o->given |= LB_GIVEN_FFN;
        return int_flag(arg, "ffn", 1, LB_FFN_MAX, &m->ffn);
    case LB_OPT_VOCAB:
        o->given |= LB_GIVEN_VOCAB;
        return int_flag(arg, "vocab", 1, LB_VOCAB_MAX, &m->vocab);
    case LB_OPT_DTYPE:
        o->given |= LB_GIVEN_DTYPE;
        return lb_dtype_parse(arg, &m->dtype) ? bad(arg, "dtype", "fp16, bf16 or fp32") : 0;
    case LB_OPT_SHARING:
        o->given |= LB_GIVEN_SHARING;
        return lb_sharing_parse(arg, &m->sharing) ? bad(arg, "sharing", "layerwise, kv, headwise or none") : 0;
    case LB_OPT_ORDER:
        o->given |= LB_GIVEN_ORDER;
        return lb_order_parse(arg, &m->order) ? bad(arg, "order", "early or late") : 0;
    case LB_OPT_DEVICE:
        o->given |= LB_GIVEN_DEVICE;
        if (strcmp(arg, "cuda") == 0)
            o->device = LB_DEVICE_CUDA;
        else if (strcmp(arg, "cpu") == 0)
            o->device = LB_DEVICE_CPU;
        else
            return bad(arg, "device", "cuda or cpu");
        return 0;
    case LB_OPT_GPU: return int_flag(arg, "gpu", 0, 1023, &o->gpu);
    case LB_OPT_TF32:
        o->given |= LB_GIVEN_TF32;
        o->tf32 = 1;
        return 0;
    case LB_OPT_MEM_LIMIT:
        o->given |= LB_GIVEN_MEM_LIMIT;
        if (lb_parse_size(arg, &o->mem_limit) != 0 || o->mem_limit < ((uint64_t)1 << 20))
            return bad(arg, "mem-limit", "a size of at least 1M, such as 16G, 16GiB, 512M or 1.5GiB");
        return 0;
    case LB_OPT_MAX_BATCH:
        if (lb_parse_int64(arg, 1, INT64_C(1) << 40, &v64) != 0)
            return bad(arg, "max-batch", "an integer from 1 to 2^40");
        o->timing.max_batch = v64;
        return 0;
    case LB_OPT_CELL_TIME: {
        int s;
        if (int_flag(arg, "cell-time", 1, 3600, &s))
            return LB_EXIT_USAGE;
        o->timing.cap_seconds = s;
        return 0;
    }
    case LB_OPT_SEED:
        o->given |= LB_GIVEN_SEED;
        if (lb_parse_int64(arg, 0, INT64_MAX, &v64) != 0)
            return bad(arg, "seed", "a non-negative integer");
        o->seed = (uint64_t)v64;
        return 0;
    }
    return lb_usage_error("internal: unknown shared option %d", code);
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
    *budget = free_bytes;
    if (o->mem_limit && o->mem_limit < *budget)
        *budget = o->mem_limit;
    return 0;
}
