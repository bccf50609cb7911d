/* The option table (see settings.h): its typed parsers and printers, the few settings of their own
 * syntax, its rows, and the walks over it. */
#include "reports/settings.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/lists.h"
#include "attn/base/paths.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "reports/table.h"
#include "lb_config.h"
#include "lb_revision.h"

static int refuse(const char *what, char *should, size_t size)
{
    snprintf(should, size, "%s", what);
    return -1;
}

/* "a,b,c" of count int64_t values (wide) or ints, malloc'd: as long as the list is, never cut. */
static char *list_text(const void *v, size_t count, int wide)
{
    char *buf = malloc(count * 21 + 1), *p = buf;
    if (!buf)
        return NULL;
    *p = '\0';
    for (size_t i = 0; i < count; i++)
        p += sprintf(p, "%s%lld", i ? "," : "", wide ? (long long)((const int64_t *)v)[i] : (long long)((const int *)v)[i]);
    return buf;
}

void lb_settings_model_names(unsigned models, const char *sep, const char *last, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (!(models >> m & 1))
            continue;
        const size_t used = strlen(buf);
        const int more = (models & LB_ALL_MODELS) >> (m + 1) != 0; /* names after this one */
        snprintf(buf + used, size - used, "%s%s", used == 0 ? "" : more ? sep : last, lb_model_name((LbModelKind)m));
    }
}

/* One name of a comma list into the bit set at ctx (lb_list_each). */
static int mark_model(const char *item, size_t len, void *ctx)
{
    char name[64];
    LbModelKind kind;
    if (len == 0 || len >= sizeof name)
        return -1;
    snprintf(name, sizeof name, "%.*s", (int)len, item);
    if (lb_model_parse(name, &kind) != 0)
        return -1;
    *(unsigned *)ctx |= 1u << kind;
    return 0;
}

int lb_settings_parse_models(const char *t, unsigned *models)
{
    unsigned set = 0;
    if (!t || lb_list_each(t, mark_model, &set) != 0)
        return -1;
    *models = set;
    return 0;
}

/* ---- the settings of their own syntax: a parser and a printer each ---- */

static int parse_models(LbRunSettings *s, const char *t, int from_meta, char *should, size_t size)
{
    (void)from_meta;
    if (lb_settings_parse_models(t, &s->models) == 0)
        return 0;
    char names[256];
    lb_settings_model_names(LB_ALL_MODELS, ", ", ", ", names, sizeof names);
    snprintf(should, size, "a comma list of models from: %s", names);
    return -1;
}
/* In the table's order whatever order they were given in, so a resume compares equal. */
static char *print_models(const LbRunSettings *s)
{
    char buf[512];
    lb_settings_model_names(s->models, ",", ",", buf, sizeof buf);
    return strdup(buf);
}

static int parse_shard(LbRunSettings *s, const char *t, int from_meta, char *should, size_t size)
{
    if (from_meta && t[0] == '\0') { /* not sharded */
        s->shard_index = s->shard_count = 0;
        return 0;
    }
    int i, n;
    const char *slash = strchr(t, '/');
    char head[32];
    if (slash && (size_t)(slash - t) < sizeof head) {
        snprintf(head, sizeof head, "%.*s", (int)(slash - t), t);
        if (lb_parse_int(slash + 1, 1, LB_SHARDS_MAX, &n) == 0 && lb_parse_int(head, 0, n - 1, &i) == 0) {
            s->shard_index = i;
            s->shard_count = n;
            return 0;
        }
    }
    if (from_meta)
        return refuse("I/N with 0 <= I < N", should, size);
    snprintf(should, size, "I/N with N from 1 to %d and I from 0 to N-1", LB_SHARDS_MAX);
    return -1;
}
static char *print_shard(const LbRunSettings *s)
{
    char buf[32] = "";
    if (s->shard_count)
        snprintf(buf, sizeof buf, "%d/%d", s->shard_index, s->shard_count);
    return strdup(buf);
}

/* One GPU index of --gpus into the settings at ctx, refused when already listed. */
static int add_gpu(const char *item, size_t len, void *ctx)
{
    LbRunSettings *s = ctx;
    char one[16];
    int g;
    if (len == 0 || len >= sizeof one)
        return -1;
    snprintf(one, sizeof one, "%.*s", (int)len, item);
    if (lb_parse_int(one, 0, 1023, &g) != 0)
        return -1;
    for (size_t i = 0; i < s->ngpus; i++)
        if (s->gpus[i] == g)
            return -1;
    s->gpus[s->ngpus++] = g;
    return 0;
}

/* --gpus: "all" or GPU indices as a comma list, each once, in the order given. */
static int parse_gpus(LbRunSettings *s, const char *t, int from_meta, char *should, size_t size)
{
    (void)from_meta;
    free(s->gpus);
    s->gpus = NULL;
    s->ngpus = 0;
    s->gpus_all = strcmp(t, "all") == 0;
    if (s->gpus_all)
        return 0;
    size_t count = 1;
    for (const char *p = t; *p; p++)
        count += *p == ',';
    if (!(s->gpus = malloc(count * sizeof *s->gpus)))
        return refuse("a list that fits in memory", should, size);
    if (lb_list_each(t, add_gpu, s) != 0)
        return refuse("all, or GPU indices from 0 to 1023 as a comma list, each once (0,1,3)", should, size);
    return 0;
}
static char *print_gpus(const LbRunSettings *s)
{
    return s->gpus_all ? strdup("all") : list_text(s->gpus, s->ngpus, 0);
}

/* --no-autotune turns it off (text NULL); meta.csv holds on or off. */
static int parse_autotune(LbRunSettings *s, const char *t, int from_meta, char *should, size_t size)
{
    (void)from_meta;
    if (t && strcmp(t, "on") != 0 && strcmp(t, "off") != 0)
        return refuse("on or off", should, size);
    s->autotune = t && strcmp(t, "on") == 0;
    return 0;
}
static char *print_autotune(const LbRunSettings *s) { return strdup(s->autotune ? "on" : "off"); }

static int parse_k_schedule(LbRunSettings *s, const char *t, int from_meta, char *should, size_t size)
{
    (void)from_meta;
    return lb_kschedule_parse(t, &s->model, should, size);
}
static char *print_k_schedule(const LbRunSettings *s)
{
    char buf[LB_LAYERS_MAX * 24];
    lb_kschedule_text(&s->model, buf, sizeof buf);
    return strdup(buf);
}

const char *const lb_projection_names[4] = {"linear", "mean", "max", "conv"};

/* The names of a choice's values by index, 0 to the row's max. */
static const char *dtype_name(int i) { return lb_dtype_name((LbDtype)i); }
static const char *sharing_name(int i) { return lb_sharing_name((LbSharing)i); }
static const char *order_name(int i) { return lb_order_name((LbOrder)i); }
static const char *device_name(int i) { return i == LB_DEVICE_CPU ? "cpu" : "cuda"; }
static const char *format_name(int i) { return i == LB_FORMAT_CSV ? "csv" : i == LB_FORMAT_MD ? "md" : "text"; }
static const char *projection_name(int i) { return lb_projection_names[i]; }
static const char *model_name(int i) { return lb_model_name((LbModelKind)i); }
static const char *pass_name(int i) { return i == LB_PASS_TRAIN ? "train" : "forward"; }

/* ---- the table ---- */

/* A recorded setting's row, and a row with no meta.csv key (the commands' own in LbSettingId's
 * order); then what a row's value is, in the manner of git's OPT_INTEGER: a number of type t
 * ('i', 'l', 'd') from lo to hi, a choice among names(0) .. names(last), a text or switch at
 * field, a parser and printer of its own. */
#define SET(f, a, k, g, c, h, ...) {f, a, .key = k, .group = g, .commands = c, .help = h, __VA_ARGS__}
#define OPT(f, a, g, c, h, ...) SET(f, a, NULL, g, c, h, __VA_ARGS__)
#define AT(field) .at = offsetof(LbRunSettings, field)
#define NUMBER(t, field, lo, hi) AT(field), .type = t, .min = lo, .max = hi
#define CHOICE(field, names, last) AT(field), .type = 'c', .name = names, .max = last
#define OWN(x) .parse = parse_##x, .print = print_##x
#define STR_(x) #x
#define STR(x) STR_(x)

#define MODEL "Model (default RoBERTa-base):"
#define LINFORMER "Linformer:"
#define CHUNKED "Chunked attention:"
#define DEVICE "Device and memory:"
#define TIMING "Timing:"
#define GRID "Grid:"
#define BOTH (LB_FOR_SWEEP | LB_FOR_RUN)
#define PLANNED (LB_FOR_SWEEP | LB_FOR_RUN | LB_FOR_PREDICT) /* what the plan and the pass read */
#define GRID_SET (LB_FOR_SWEEP | LB_FOR_PREDICT)
#define EFFICIENCY .type = 'p', .max = 1, .should = "a number above 0 and at most 1"

const LbSetting lb_settings[LB_SET_COUNT] = {
    [LB_SET_N] = SET("n", "LIST", "n_list", GRID, GRID_SET,
                     "sequence lengths, 2 to 1048576: comma list and doubling ranges a:b;\nthe paper's rows",
                     .def = "512:65536", NUMBER('L', n, LB_N_MIN, LB_N_MAX), .count_at = offsetof(LbRunSettings, nn),
                     .should = "sequence lengths"),
    [LB_SET_K] = SET("k", "LIST", "k_list", GRID, GRID_SET,
                     "k values, 1 to 1048576, same syntax, for each model with\na k axis{k}", .def = "128:2048",
                     NUMBER('L', k, LB_K_MIN, LB_N_MAX), .count_at = offsetof(LbRunSettings, nk),
                     .should = "projected lengths"),
    [LB_SET_MODELS] = SET("models", "LIST", "models", GRID, GRID_SET,
                          "attention models, a comma list of: {models};\neach measured for every n (and k)",
                          .def = "standard,linformer", .absent = "standard,linformer", OWN(models)),
    [LB_SET_SHARD] = SET("shard", "I/N", "shard", GRID, LB_FOR_SWEEP,
                         "measure only shard I (0 to N-1) of N, N from 1 to 4096: a split of\nthe cells by predicted cost; recorded in meta.csv as a setting;\nput the shards' directories together with linbench merge",
                         .absent = "", OWN(shard)),
    [LB_SET_LAYERS] = SET("layers", "N", "layers", MODEL, PLANNED, "encoder layers, 1 to 1024",
                          NUMBER('i', model.layers, 1, LB_LAYERS_MAX)),
    [LB_SET_DMODEL] = SET("d-model", "N", "d_model", MODEL, PLANNED, "model width, 1 to 65536, divisible by --heads",
                          NUMBER('i', model.d_model, 1, LB_DMODEL_MAX)),
    [LB_SET_HEADS] = SET("heads", "N", "heads", MODEL, PLANNED, "attention heads, 1 to 1024",
                         NUMBER('i', model.heads, 1, LB_HEADS_MAX)),
    [LB_SET_FFN] = SET("ffn", "N", "ffn", MODEL, PLANNED, "feed-forward width, 1 to 1048576",
                       NUMBER('i', model.ffn, 1, LB_FFN_MAX)),
    [LB_SET_VOCAB] = SET("vocab", "N", "vocab", MODEL, PLANNED, "token vocabulary, 1 to 16777216",
                         NUMBER('i', model.vocab, 1, LB_VOCAB_MAX)),
    [LB_SET_DTYPE] = SET("dtype", "T", "dtype", MODEL, PLANNED, "fp16, bf16 or fp32; products accumulate in fp32",
                         CHOICE(model.dtype, dtype_name, LB_DTYPE_FP32)),
    [LB_SET_TF32] = SET("tf32", NULL, "tf32", MODEL, PLANNED | LB_FOR_CHECK,
                        "let fp32 products use TF32, only with --dtype fp32", .def_help = "(default off)", AT(tf32)),
    [LB_SET_PASS] = SET("pass", "P", "pass", MODEL, PLANNED | LB_FOR_CHECK,
                        "forward (the paper's) or train: one training step without the\noptimizer's update, the forward keeping what the backward needs,\nthen the backward from a random upstream gradient to every\nparameter's gradient",
                        .def = "forward", .absent = "forward", CHOICE(model.pass, pass_name, LB_PASS_TRAIN)),
    [LB_SET_SHARING] = SET("sharing", "S", "sharing", LINFORMER, PLANNED, "layerwise, kv, headwise or none",
                           CHOICE(model.sharing, sharing_name, LB_SHARE_NONE)),
    [LB_SET_ORDER] = SET("order", "O", "order", LINFORMER, PLANNED,
                         "early (K' = (E X) W_K, fairseq) or late (K' = E (X W_K), the\npaper's figure)",
                         .def_help = "(default early; late with --sharing none)",
                         CHOICE(model.order, order_name, LB_ORDER_LATE)),
    [LB_SET_CHUNK] = SET("chunk", "ROWS", "chunk", CHUNKED, PLANNED,
                         "query rows per block of the chunked model, 1 to 1048576", .absent = "1024",
                         NUMBER('l', model.chunk, 1, LB_N_MAX)),
    [LB_SET_K_SCHEDULE] = SET("k-schedule", "S", "k_schedule", LINFORMER, PLANNED,
                              "the Linformer's k per layer: uniform; halve (k, k/2, k/4 on the\nlayers' thirds); or a comma list of one factor in (0, 1] per layer;\nk below the cell's rounded up to a multiple of 8. The grid's k is\nthe first layer's",
                              .def = "uniform", .absent = "uniform", OWN(k_schedule)),
    [LB_SET_DEVICE] = SET("device", "D", "device", DEVICE, BOTH | LB_FOR_CHECK, "cuda or cpu; cpu is the plain-C reference",
                          .def = "cuda", CHOICE(device, device_name, LB_DEVICE_CPU)),
    [LB_SET_MEM_LIMIT] = SET("mem-limit", "SIZE", "mem_limit", DEVICE, PLANNED,
                             "memory budget, at least 1M: 16G, 16GiB, 512M, 1.5GiB; K/M/G/T and\nKiB..TiB are binary, KB..TB decimal",
                             .def_help = "(default: the GPU's free memory;\n512MiB on --device cpu)",
                             AT(mem_limit), .type = 'z', .min = 1 << 20, .optional = 1,
                             .should = "a size of at least 1M, such as 16G, 16GiB, 512M or 1.5GiB"),
    [LB_SET_MAX_BATCH] = SET("max-batch", "N", "max_batch", DEVICE, PLANNED, "cap on the batch search, 1 to 2^40",
                             .def_help = "(default none)", NUMBER('l', timing.max_batch, 1, INT64_C(1) << 40),
                             .optional = 1, .should = "an integer from 1 to 2^40"),
    [LB_SET_HEADROOM] = SET("headroom", "SIZE", "headroom", DEVICE, PLANNED,
                            "GPU memory kept outside the budget for the driver and libraries",
                            .def_help = "\n(default the larger of 256M and 1% of the GPU's memory; 0 for none)",
                            AT(headroom), .type = 'z', .optional = 1, .unset = LB_HEADROOM_AUTO,
                            .should = "a size such as 256M, 1G or 0"),
    [LB_SET_CELL_TIME] = SET("cell-time", "SEC", "cell_time_s", TIMING, BOTH,
                             "stop adding timed passes past this much timed work, 1 to 3600,\nonce 5 passes ran",
                             NUMBER('d', timing.cap_seconds, 1, 3600)),
    [LB_SET_SEED] = SET("seed", "N", "seed", TIMING, BOTH, "seed of the random weights and tokens, >= 0", .def = "1",
                        NUMBER('l', seed, 0, INT64_MAX), .should = "a non-negative integer"),
    [LB_SET_BREAKDOWN] = SET("breakdown", NULL, "breakdown", TIMING, BOTH,
                             "after each measured cell, one more pass at its batch timing every\noperation: breakdown.csv in a sweep, a table after run's result\n(docs/METHOD.md, \"Breakdown\")",
                             .def = "0", .def_help = "(default off)", .absent = "0", AT(breakdown)),
    /* absent: a result from before the tuning took the heuristic's first algorithm */
    [LB_SET_AUTOTUNE] = SET("no-autotune", NULL, "matmul_autotune", TIMING, BOTH | LB_FOR_CHECK,
                            "take cuBLASLt's first heuristic algorithm for each product instead\nof timing up to 8 on the shape's first use (a warm-up pass, never a\ntimed one) and keeping the fastest",
                            .def = "on", .absent = "off", OWN(autotune)),
    [LB_SET_GPU] = OPT("gpu", "N", DEVICE, BOTH | LB_FOR_CHECK, "CUDA device index, 0 to 1023", NUMBER('i', gpu, 0, 1023)),
    [LB_SET_GPUS] = OPT("gpus", "LIST", DEVICE, LB_FOR_SWEEP,
                        "measure on several GPUs of one model at once: a sweep --shard per\nGPU into DIR/shard-I, merged into DIR; LIST is all or indices such\nas 0,1,3 (not with --gpu or --shard)",
                        OWN(gpus)),
    [LB_SET_PROJECTION] = OPT("projection", "P", LINFORMER, PLANNED,
                              "linear, mean, max or conv: the Linformer's compression of keys and\nvalues (E and F, mean or max pooling, or a depthwise convolution over\nwindows of n/k); P other than linear measures the model linformer-P\nin linformer's place",
                              .def = "linear", CHOICE(projection, projection_name, 3)),
    OPT("model", "M", "Cell:", LB_FOR_RUN, "{models}", .def = "standard",
        CHOICE(model.kind, model_name, LB_MODEL_COUNT - 1)),
    OPT("n", "N", "Cell:", LB_FOR_RUN, "sequence length, 2 to 1048576", .def = "512",
        NUMBER('l', model.n, LB_N_MIN, LB_N_MAX)),
    OPT("k", "N", "Cell:", LB_FOR_RUN, "the k of a model with a k axis, 1 to 1048576{k}", .def = "128",
        NUMBER('l', model.k, LB_K_MIN, LB_N_MAX)),
    OPT("gpu", "NAME", "Card:", LB_FOR_PREDICT, "a card of the table (docs/METHOD.md cites each datasheet):\n{cards}",
        AT(cmd.card)),
    OPT("spec", "S", "Card:", LB_FOR_PREDICT,
        "any other card: tflops=T (its product rate for --dtype, TFLOP/s),\nbw=B (memory bandwidth, GB/s), mem=SIZE (memory, as --mem-limit)",
        AT(cmd.spec)),
    OPT("product-efficiency", "E", "Roofline:", LB_FOR_PREDICT, "share of the rate a product reaches, above 0 to 1",
        .def = STR(LB_PREDICT_PRODUCT_EFFICIENCY), AT(cmd.product_efficiency), EFFICIENCY),
    OPT("copy-efficiency", "E", "Roofline:", LB_FOR_PREDICT,
        "share of the bandwidth a memory-bound call reaches, above 0 to 1", .def = STR(LB_PREDICT_COPY_EFFICIENCY),
        AT(cmd.copy_efficiency), EFFICIENCY),
    OPT("launch-us", "US", "Roofline:", LB_FOR_PREDICT, "microseconds added per kernel, 0 to 1000000",
        .def = STR(LB_PREDICT_LAUNCH_US), NUMBER('r', cmd.launch_us, 0, 1000000), .should = "a number from 0 to 1000000"),
    OPT("dump", "DIR", "Dump:", LB_FOR_RUN,
        "write ids.npy, every weight, output.npy, index.csv (the files) and\nmeta.csv (the settings) into DIR (a new or empty directory)\ninstead of timing; with --pass train also grad.output.npy (the\nupstream gradient) and grad.NAME.npy for every trained weight\n(none for Performer's fixed random features)",
        AT(cmd.dump)),
    OPT("batch", "N", "Dump:", LB_FOR_RUN, "batch of the dumped pass, 1 to 65536", .def = "1",
        NUMBER('l', cmd.batch, 1, 65536)),
    OPT("dtype", "T", "", LB_FOR_CHECK, "check only fp16, bf16 or fp32", .def_help = "(default all three)",
        CHOICE(model.dtype, dtype_name, LB_DTYPE_FP32)),
    OPT("seed", "N", "", LB_FOR_CHECK, "seed of the random data, >= 0", .def_help = "(default a new one each run, printed)",
        NUMBER('l', seed, 0, INT64_MAX), .should = "a non-negative integer"),
    OPT("quick", NULL, "", LB_FOR_CHECK, "the quick check sweep and run do: few shapes, one forward per model",
        AT(cmd.quick)),
    OPT("gpu", "N", "", LB_FOR_INFO, "describe only device N, 0 to 1023", .def_help = "(default: every device)",
        NUMBER('i', gpu, 0, 1023)),
    OPT("shards", "N", "", LB_FOR_SLURM, "how many shards, 1 to 4096", .def_help = "", NUMBER('i', cmd.shards, 1, LB_SHARDS_MAX)),
    OPT("partition", "P", "", LB_FOR_SLURM, "#SBATCH --partition (letters, digits and . _ - , : only)",
        AT(cmd.partition)),
    OPT("time", "T", "", LB_FOR_SLURM, "#SBATCH --time: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED", AT(cmd.time)),
    OPT("account", "A", "", LB_FOR_SLURM, "#SBATCH --account (same characters)", AT(cmd.account)),
    OPT("submit", NULL, "", LB_FOR_SLURM, "run the two sbatch commands (sbatch must be on PATH)", AT(cmd.submit)),
    OPT("out", "DIR", "", LB_FOR_SLURM, "where the shards, the merge and the scripts go; DIR/merged must\nhold no results", AT(cmd.out),
        .short_flag = 'o'),
    OPT("out", "DIR", "Output:", LB_FOR_SWEEP | LB_FOR_PREDICT, "where the files go; must be new or hold no results",
        .def_help = "(default a new\ndirectory linbench-YYYYmmdd-HHMMSS here)", AT(cmd.out), .short_flag = 'o'),
    OPT("out", "DIR", "", LB_FOR_PLOT, "where the scripts, data and images go; created if missing",
        .def_help = "\n(default: the sweep's DIR; with PEER_DIR, PEER_DIR)", AT(cmd.out), .should = "a directory",
        .short_flag = 'o'),
    OPT("no-render", NULL, "", LB_FOR_PLOT, "write the scripts and data only, do not run gnuplot",
        .def_help = "(default: render\nwhen gnuplot is on PATH)", AT(cmd.no_render)),
    OPT("render-timeout", "SEC", "", LB_FOR_PLOT, "stop a gnuplot that has not finished one plot in SEC seconds,\n1 to 3600",
        .def = "60", NUMBER('i', cmd.render_timeout, 1, 3600)),
    OPT("force", NULL, "Output:", LB_FOR_SWEEP | LB_FOR_PREDICT,
        "remove the results already in --out before the first new row", AT(cmd.force)),
    OPT("resume", "DIR", "Output:", LB_FOR_SWEEP,
        "measure only the cells not yet in DIR/raw.csv, with every setting\nfrom DIR/meta.csv; flags given must agree with them, and DIR must\ncome from this linbench version",
        AT(cmd.resume)),
    OPT("format", "F", "Output:", LB_FOR_SWEEP | LB_FOR_PREDICT, "the printed grids as text or md", .def = "text",
        CHOICE(cmd.format, format_name, LB_FORMAT_MD)),
    OPT("format", "F", "", LB_FOR_COMPARE,
        "text (aligned tables), md (Markdown tables) or csv (one row per cell:\ngrid,n,k,measured,paper,measured_over_paper, or grid,n,k,a,b,b_over_a;\nagainst a peer: comparison,linbench_model,peer_model,n,k,\nlinbench_ms_per_seq,peer_ms_per_seq,linbench_over_peer_time,\nlinbench_batch,peer_batch,linbench_over_peer_batch,\nlinbench_j_per_seq,peer_j_per_seq,linbench_over_peer_energy)",
        .def = "text", CHOICE(cmd.format, format_name, LB_FORMAT_CSV)),
    OPT("no-check", NULL, "Output:", LB_FOR_SWEEP | LB_FOR_RUN,
        "skip the quick check of the backend (linbench check --quick) that\nruns first; a sweep's meta.csv records check as skipped",
        AT(cmd.no_check)),
    OPT("quiet", NULL, "Output:", LB_FOR_SWEEP, "no progress on stderr", AT(cmd.quiet), .short_flag = 'q'),
    OPT("quiet", NULL, "Output:", LB_FOR_PREDICT, "no summary line on stderr", AT(cmd.quiet), .short_flag = 'q'),
    OPT("quiet", NULL, "", LB_FOR_MERGE, "no grids on stdout", AT(cmd.quiet), .short_flag = 'q'),
    OPT("markdown", NULL, "", LB_FOR_HELP, "every command's flags as the Markdown tables of README.md",
        AT(cmd.markdown)),
    OPT("help", NULL, "", ~0u, "this help", .short_flag = 'h'), /* the parser answers it, nothing applies it */
};

const char *const lb_setting_groups[] = {"Cell:", "Card:", "Roofline:", GRID, MODEL, LINFORMER, CHUNKED, DEVICE,
                                         TIMING, "Dump:", "Output:", "", NULL};

int lb_run_settings_init(LbRunSettings *s)
{
    memset(s, 0, sizeof *s);
    s->model = lb_config_default();
    s->timing = lb_timing_defaults();
    s->headroom = LB_HEADROOM_AUTO;
    for (int id = 0; id < LB_SET_COUNT; id++) {
        char should[160];
        if (lb_settings[id].def && lb_setting_apply(s, (LbSettingId)id, lb_settings[id].def, 0, should, sizeof should) != 0) {
            lb_run_settings_free(s);
            return LB_FAIL(LB_ERR_NOMEM, "out of memory setting the defaults"); /* the lists' malloc */
        }
    }
    return LB_OK;
}

void lb_run_settings_free(LbRunSettings *s)
{
    free(s->n);
    free(s->k);
    free(s->gpus);
    free(s->cmd.passed);
    s->cmd.passed = NULL;
    s->n = s->k = NULL;
    s->gpus = NULL;
    s->nn = s->nk = s->ngpus = 0;
}

int lb_setting_apply(LbRunSettings *s, LbSettingId id, const char *t, int from_meta, char *should, size_t size)
{
    const LbSetting *e = &lb_settings[id];
    void *at = (char *)s + e->at;
    int64_t v = 0;
    uint64_t bytes = 0;
    if (e->parse)
        return e->parse(s, t, from_meta, should, size);
    if (e->optional && from_meta && t[0] == '\0') { /* not set in the run that wrote meta.csv */
        *(uint64_t *)at = e->unset;
        return 0;
    }
    switch (e->type) {
    case 'c': { /* a choice: "a, b or c" */
        for (int i = 0; i <= e->max; i++)
            if (strcmp(t, e->name(i)) == 0) {
                *(int *)at = i;
                return 0;
            }
        size_t used = 0;
        for (int i = 0; i <= e->max && used < size; i++)
            used += (size_t)snprintf(should + used, size - used, "%s%s", i == 0 ? "" : i == e->max ? " or " : ", ", e->name(i));
        return -1;
    }
    case 'L': {
        int64_t *list;
        size_t count;
        if (lb_parse_list(t, e->min, e->max, &list, &count) != 0) {
            snprintf(should, size,
                     from_meta ? "a comma list of %s from %lld to %lld"
                               : "%s from %lld to %lld, as a comma list or doubling ranges like %s",
                     e->should, (long long)e->min, (long long)e->max, e->def);
            return -1;
        }
        free(*(int64_t **)at);
        *(int64_t **)at = list;
        *(size_t *)((char *)s + e->count_at) = count;
        return 0;
    }
    case 'z': /* "0" only where the row allows none: the sizes parser wants a positive size */
        if (!(e->min == 0 && strcmp(t, "0") == 0) &&
            (lb_parse_size(t, &bytes) != 0 || bytes < (uint64_t)e->min || (e->optional && bytes == e->unset)))
            return refuse(e->should, should, size);
        *(uint64_t *)at = bytes;
        return 0;
    case 'r':
    case 'p': {
        char *end = NULL;
        errno = 0;
        const double d = strtod(t, &end);
        if (end == t || *end || errno || !isfinite(d) || d > e->max || d < e->min || (e->type == 'p' && d == e->min))
            return refuse(e->should, should, size);
        *(double *)at = d;
        return 0;
    }
    case 'i':
    case 'l':
    case 'd':
        if (lb_parse_int64(t, e->min, e->max, &v) != 0) {
            if (e->should)
                return refuse(e->should, should, size);
            snprintf(should, size, "an integer from %lld to %lld", (long long)e->min, (long long)e->max);
            return -1;
        }
        if (e->type == 'i')
            *(int *)at = (int)v;
        else if (e->type == 'd')
            *(double *)at = (double)v;
        else
            *(int64_t *)at = v;
        return 0;
    }
    if (e->arg && !t[0] && e->should)
        return refuse(e->should, should, size);
    if (e->arg)
        *(const char **)at = t;
    else if (t && strcmp(t, "0") != 0 && strcmp(t, "1") != 0) /* a switch as meta.csv holds it */
        return refuse("0 or 1", should, size);
    else
        *(int *)at = !t || t[0] == '1';
    return 0;
}

char *lb_setting_text(const LbRunSettings *s, LbSettingId id)
{
    const LbSetting *e = &lb_settings[id];
    const char *at = (const char *)s + e->at;
    char buf[32] = "";
    if (e->print)
        return e->print(s);
    if (e->optional && *(const uint64_t *)at == e->unset)
        return strdup("");
    switch (e->type) {
    case 'L': return list_text(*(int64_t *const *)at, *(const size_t *)((const char *)s + e->count_at), 1);
    case 'c': return strdup(e->name(*(const int *)at));
    case 'z': snprintf(buf, sizeof buf, "%llu", (unsigned long long)*(const uint64_t *)at); break;
    case 'l': snprintf(buf, sizeof buf, "%lld", (long long)*(const int64_t *)at); break;
    case 'r':
    case 'p':
    case 'd': snprintf(buf, sizeof buf, "%g", *(const double *)at); break;
    default: /* an int, or a switch's 0 or 1; a text is no value */
        if (!e->type && e->arg)
            return NULL;
        snprintf(buf, sizeof buf, "%d", *(const int *)at);
    }
    return strdup(buf);
}

int lb_run_settings_finish(LbRunSettings *s, char *msg, size_t size)
{
    if (s->model.sharing == LB_SHARE_NONE && !(s->given & (UINT64_C(1) << LB_SET_ORDER)))
        s->model.order = LB_ORDER_LATE; /* per-head projections only exist in the late order */
    const int gpu = s->given >> LB_SET_GPU & 1, gpus = s->gpus_all || s->ngpus;
    const struct {
        int broken;
        const char *msg;
    } rules[] = {
        {gpu && s->device != LB_DEVICE_CUDA, "--gpu needs --device cuda: should be left out with --device cpu"},
        {gpus && s->device != LB_DEVICE_CUDA, "--gpus needs --device cuda: should be left out with --device cpu"},
        /* the CPU's budget is --mem-limit whole: a headroom there would be recorded and never kept */
        {(s->given >> LB_SET_HEADROOM & 1) && s->device != LB_DEVICE_CUDA,
         "--headroom needs --device cuda: should be left out with --device cpu (its budget is --mem-limit, 512M by default)"},
        {gpus && gpu, "--gpu and --gpus cannot be used together: should be --gpus LIST alone"},
        {gpus && s->shard_count,
         "--shard and --gpus cannot be used together: should be one or the other (--gpus makes a shard per GPU)"},
        {s->tf32 && s->model.dtype != LB_DTYPE_FP32, "--tf32 applies to --dtype fp32 only: should be used with --dtype fp32"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].broken) {
            snprintf(msg, size, "%s", rules[i].msg);
            return -1;
        }
    /* linformer-Q fixes its own projection: a --projection P given beside it, P not Q, asks for a
     * projection nothing measures: run's one model, or a sweep's models with no linformer for P to
     * replace (the models by name: reports/ names no model kind but Table 3's) */
    LbModelKind linformer;
    const int replaces = lb_model_parse("linformer", &linformer) == 0 && s->models >> linformer & 1;
    for (int q = 1; (s->given >> LB_SET_PROJECTION & 1) && q < 4; q++) {
        char name[32];
        LbModelKind fixed;
        snprintf(name, sizeof name, "linformer-%s", lb_projection_names[q]);
        if (q == s->projection || lb_model_parse(name, &fixed) != 0 ||
            !(s->model.kind == fixed || (!replaces && s->models >> fixed & 1)))
            continue;
        const char *p = lb_projection_names[s->projection & 3];
        char instead[128] = " (linear is the model linformer)";
        if (s->projection != 0)
            snprintf(instead, sizeof instead, ", or %s replaced by linformer, which --projection %s measures as linformer-%s",
                     name, p, p);
        if (s->model.kind == fixed) /* run's --model; a sweep's is never set */
            snprintf(msg, size, "--projection %s contradicts --model %s (that model's projection is %s): should be left out%s",
                     p, name, lb_projection_names[q], instead);
        else if (!(s->given >> LB_SET_MODELS & 1)) /* a resume's models, from its meta.csv */
            snprintf(msg, size, "--projection %s contradicts %s, a model of the run (its projection is %s): should be left out",
                     p, name, lb_projection_names[q]);
        else
            snprintf(msg, size, "--projection %s contradicts %s in --models (that model's projection is %s): should be left out%s",
                     p, name, lb_projection_names[q], instead);
        return -1;
    }
    if (s->projection != 0) { /* the models by name: reports/ names no model kind but Table 3's */
        char name[32];
        LbModelKind linear, projected;
        snprintf(name, sizeof name, "linformer-%s", lb_projection_names[s->projection & 3]);
        if (lb_model_parse("linformer", &linear) != 0 || lb_model_parse(name, &projected) != 0) {
            snprintf(msg, size, "--projection %s: no model %s in this build", lb_projection_names[s->projection & 3],
                     name);
            return -1;
        }
        /* without linformer there is nothing to replace: the note on flags no model reads says so */
        if (s->models >> linear & 1)
            s->models = (s->models & ~(1u << linear)) | 1u << projected;
        if (s->model.kind == linear)
            s->model.kind = projected;
    }
    return 0;
}

uint64_t lb_run_settings_headroom(const LbRunSettings *s, uint64_t total_bytes)
{
    if (s->headroom != LB_HEADROOM_AUTO)
        return s->headroom;
    const uint64_t one_percent = total_bytes / 100;
    return one_percent > LB_HEADROOM_MIN ? one_percent : LB_HEADROOM_MIN;
}

const char *lb_settings_meta_value(const LbMeta *meta, LbSettingId id)
{
    if ((unsigned)id >= LB_SET_RECORDED)
        return NULL;
    const char *v = lb_meta_get(meta, lb_settings[id].key);
    return v ? v : lb_settings[id].absent;
}

int lb_settings_first_difference(const LbMeta *a, const LbMeta *b, const LbSettingId *ids, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const char *x = lb_settings_meta_value(a, ids[i]), *y = lb_settings_meta_value(b, ids[i]);
        if (strcmp(x ? x : "", y ? y : "") != 0)
            return (int)i;
    }
    return -1;
}

/* The first recorded setting that meta.csv lacks or that s refuses (what it should be in should),
 * taking each other one the user did not give (a given one is compared once all are parsed): its
 * id, or -1 when every one is taken. */
static int take(LbRunSettings *s, const LbMeta *meta, char *should, size_t size)
{
    for (int id = 0; id < LB_SET_RECORDED; id++) {
        const char *v = lb_settings_meta_value(meta, (LbSettingId)id);
        if (!v || (!(s->given >> id & 1) && lb_setting_apply(s, (LbSettingId)id, v, 1, should, size) != 0))
            return id;
    }
    return -1;
}

int lb_run_settings_take(LbRunSettings *s, const LbMeta *meta, const char *dir)
{
    char should[160];
    const int id = take(s, meta, should, sizeof should);
    const char *v = id < 0 ? NULL : lb_settings_meta_value(meta, (LbSettingId)id);
    if (id >= 0 && !v)
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (%s/meta.csv has no %s)",
                       dir, dir, lb_settings[id].key);
    if (id >= 0)
        return LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\": should be %s", dir, dir,
                       lb_settings[id].key, v, should);
    return LB_OK;
}

int lb_settings_meta_check(const LbMeta *meta, const char *path)
{
    LbRunSettings s;
    LB_TRY(lb_run_settings_init(&s));
    char should[160];
    const int id = take(&s, meta, should, sizeof should);
    lb_run_settings_free(&s);
    const char *v = id < 0 ? NULL : lb_settings_meta_value(meta, (LbSettingId)id);
    if (id >= 0 && !v)
        return LB_FAIL(LB_ERR_FORMAT, "%s has no %s: should hold every setting linbench sweep records (a meta.csv cut short?)",
                       path, lb_settings[id].key);
    if (id >= 0)
        return LB_FAIL(LB_ERR_FORMAT, "%s's %s is \"%s\": should be %s", path, lb_settings[id].key, v, should);
    if (!lb_meta_get(meta, "device_name"))
        return LB_FAIL(LB_ERR_FORMAT, "%s has no device_name: should name the device linbench sweep measured on (a meta.csv cut short?)",
                       path);
    return LB_OK;
}

int lb_run_settings_compare(const LbRunSettings *s, const LbMeta *meta, const char *dir)
{
    for (int id = 0; id < LB_SET_RECORDED; id++) {
        const LbSetting *e = &lb_settings[id];
        const char *v = lb_settings_meta_value(meta, (LbSettingId)id), *theirs = v ? v : "";
        char *mine = lb_setting_text(s, (LbSettingId)id);
        if (!mine)
            return LB_FAIL(LB_ERR_NOMEM, "out of memory comparing settings");
        const int same = v && strcmp(mine, v) == 0;
        int rc = LB_OK;
        /* --projection is recorded through models: a resume's models it changed are its doing */
        const int projected = id == LB_SET_MODELS && (s->given >> LB_SET_PROJECTION & 1) && !(s->given >> id & 1);
        if (!same && projected)
            rc = LB_FAIL(LB_ERR_FORMAT, "--projection %s makes the models %s, and the resumed run's are \"%s\" (%s in %s/meta.csv): should be left out, to resume %s",
                         lb_projection_names[s->projection & 3], mine, theirs, e->key, dir, dir);
        else if (!same && (s->given >> id & 1))
            rc = LB_FAIL(LB_ERR_FORMAT, "--%s %s differs from the resumed run's \"%s\" (%s in %s/meta.csv): should be the same, or left out, to resume %s",
                         e->flag, mine[0] ? mine : "(unset)", theirs, e->key, dir, dir);
        else if (!same)
            rc = LB_FAIL(LB_ERR_FORMAT, "invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\", which reads back as \"%s\": should be as linbench sweep wrote it",
                         dir, dir, e->key, theirs, mine);
        free(mine);
        if (rc != LB_OK)
            return rc;
    }
    return LB_OK;
}

int lb_run_settings_check_grid(LbRunSettings *s, char *notes, size_t size)
{
    if (size)
        notes[0] = '\0';
    const unsigned models = s->models; /* as given: --projection swaps linformer out below */
    const char *k_text = s->cmd.k_text ? s->cmd.k_text : lb_settings[LB_SET_K].def;
    const char *p = lb_projection_names[s->projection & 3];
    char msg[256];
    const int finished = lb_run_settings_finish(s, msg, sizeof msg);
    /* A model with a k axis and no cell: the sweep would compare nothing with it. */
    const int64_t n_max = s->n[s->nn - 1];
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (!(models & (1u << m)) || !lb_model_has_k((LbModelKind)m))
            continue;
        int any = 0;
        for (size_t i = 0; i < s->nn && !any; i++)
            for (size_t j = 0; j < s->nk && !any; j++)
                any = lb_model_cell_exists((LbModelKind)m, s->n[i], s->k[j]);
        /* a k below some n that is still no cell: the model's own rule (k dividing n) says why */
        if (!any && s->k[0] < n_max && lb_model_skip_reason((LbModelKind)m))
            return LB_FAIL(LB_ERR_FORMAT, "--k %s has no cell of %s at any --n (the largest is %lld): %s: should include some k < n that the model takes, or there is nothing to compare",
                           k_text, lb_model_name((LbModelKind)m), (long long)n_max, lb_model_skip_reason((LbModelKind)m));
        if (!any)
            return LB_FAIL(LB_ERR_FORMAT, "--k %s has no value below the largest --n (%lld): should include some k < n, or there is nothing to compare",
                           k_text, (long long)n_max);
    }
    if (finished != 0)
        return LB_FAIL(LB_ERR_FORMAT, "%s", msg);
    /* Each listed model checked once, at the largest n and its smallest k that is a cell there
     * (the general projections' cells need k to divide n). */
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (!(s->models & (1u << m)))
            continue;
        LbModelConfig cfg = s->model;
        cfg.kind = (LbModelKind)m;
        cfg.n = n_max;
        cfg.k = !lb_model_has_k(cfg.kind) ? 0 : s->k[0] < cfg.n ? s->k[0] : cfg.n;
        for (size_t j = 0; lb_model_has_k(cfg.kind) && j < s->nk; j++)
            if (lb_model_cell_exists(cfg.kind, n_max, s->k[j])) {
                cfg.k = s->k[j];
                break;
            }
        if (lb_config_check(&cfg, msg, sizeof msg) != LB_OK)
            return LB_FAIL(LB_ERR_FORMAT, "%s", msg);
    }
    /* The notes: each model that skips cells with k < n (the general projections' windows: k must
     * divide n), so a grid's missing cells are not a surprise; and what --projection measures. */
    size_t used = 0;
    for (int m = 0; m < LB_MODEL_COUNT && used < size; m++) {
        const LbModelKind kind = (LbModelKind)m;
        if (!(s->models & (1u << m)) || !lb_model_has_k(kind) || !lb_model_skip_reason(kind))
            continue;
        size_t skipped = 0;
        int64_t n0 = 0, k0 = 0;
        for (size_t i = 0; i < s->nn; i++)
            for (size_t j = 0; j < s->nk; j++)
                if (s->k[j] < s->n[i] && !lb_model_cell_exists(kind, s->n[i], s->k[j]) && skipped++ == 0) {
                    n0 = s->n[i];
                    k0 = s->k[j];
                }
        if (skipped)
            used += (size_t)snprintf(notes + used, size - used, "linbench: note: %s skips %zu cell%s with k < n (the first: n %lld, k %lld): %s\n",
                                     lb_model_name(kind), skipped, skipped == 1 ? "" : "s", (long long)n0, (long long)k0,
                                     lb_model_skip_reason(kind));
    }
    LbModelKind linear;
    const int replaced = lb_model_parse("linformer", &linear) == 0 && (models >> linear & 1);
    if (s->projection != 0 && replaced && used < size) /* Table 3's files are the linear Linformer's, which this sweep replaced */
        snprintf(notes + used, size - used, "linbench: note: --projection %s measures linformer-%s in linformer's place: Table 3's grids "
                                            "(time_speedup.csv, memory_speedup.csv, energy_speedup.csv) are linformer-%s's against standard\n",
                 p, p, p);
    return LB_OK;
}

int lb_meta_write_dump(const char *dir, const LbModel *m, const LbInputs *in, const LbRunSettings *s)
{
    static const LbSettingId recorded[] = {LB_SET_LAYERS,  LB_SET_DMODEL, LB_SET_HEADS, LB_SET_FFN,
                                           LB_SET_VOCAB,   LB_SET_DTYPE,  LB_SET_TF32,  LB_SET_SHARING,
                                           LB_SET_ORDER,   LB_SET_CHUNK,  LB_SET_K_SCHEDULE, LB_SET_DEVICE,
                                           LB_SET_SEED,    LB_SET_PASS};
    const LbModelKind kind = m->cfg.kind;
    char n[24], k[24] = "", batch[24];
    snprintf(n, sizeof n, "%lld", (long long)m->cfg.n);
    if (lb_model_has_k(kind))
        snprintf(k, sizeof k, "%lld", (long long)m->cfg.k);
    snprintf(batch, sizeof batch, "%lld", (long long)in->batch);
    const char *const cell[][2] = {{"linbench_version", LB_VERSION}, {"git_revision", LB_GIT_REVISION},
                                   {"model", lb_model_name(kind)}, {"n", n}, {"k", k}, {"batch", batch}};
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    int rc = LB_OK;
    for (size_t i = 0; rc == LB_OK && i < sizeof cell / sizeof cell[0]; i++)
        rc = lb_meta_set(&meta, cell[i][0], "%s", cell[i][1]);
    for (size_t i = 0; rc == LB_OK && i < sizeof recorded / sizeof recorded[0]; i++) {
        const LbSetting *e = &lb_settings[recorded[i]];
        /* a model's own setting means nothing for another model: empty, as in raw.csv */
        char *v = lb_model_reads_flag(kind, e->flag) == 0 ? strdup("") : lb_setting_text(s, recorded[i]);
        rc = v ? lb_meta_set(&meta, e->key, "%s", v) : LB_FAIL(LB_ERR_NOMEM, "out of memory writing meta.csv");
        free(v);
    }
    if (rc == LB_OK && lb_model_reads_flag(kind, "k-schedule") == 1) {
        /* each layer's k as the schedule gave it: what a reader recomputing the pass needs */
        char ks[LB_LAYERS_MAX * 21] = "";
        for (int l = 0, used = 0; l < m->cfg.layers; l++)
            used += sprintf(ks + used, "%s%lld", l ? " " : "", (long long)lb_config_layer_k(&m->cfg, l));
        rc = lb_meta_set(&meta, "k_layers", "%s", ks);
    }
    if (rc == LB_OK)
        rc = lb_meta_set(&meta, "storage_dtype", "%s", lb_dtype_name(m->be->storage));
    char *path = rc == LB_OK ? lb_path_join(dir, "meta.csv") : NULL;
    if (rc == LB_OK && !path)
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory");
    if (rc == LB_OK)
        rc = lb_meta_write(path, &meta);
    free(path);
    lb_meta_free(&meta);
    return rc;
}
