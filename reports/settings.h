/* The option table: every flag of every command (name, argument, commands, help, default), and
 * for the settings a sweep records their meta.csv key, parser and printer. cmd/'s one parser and
 * --help, meta.csv and --resume all walk it. It lives below cmd/ so that reports/ reads meta.csv
 * through it. Nothing here prints: a parser hands back what it accepts for cmd/ to word; the walks
 * over meta.csv record their refusal with LB_FAIL. */
#ifndef LB_SETTINGS_H
#define LB_SETTINGS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU)
#error "attn/ and gpu/ may not include reports/ headers"
#endif

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"
#include "attn/measure/measure.h"
#include "reports/meta.h"

/* linbench predict's default efficiencies, here as the defaults of its flags */
#define LB_PREDICT_PRODUCT_EFFICIENCY 0.66 /* Markidis et al. 2018: cuBLAS 83 of the V100's 125 TFLOP/s */
#define LB_PREDICT_COPY_EFFICIENCY 0.83    /* Jia et al. 2018: 750 of the V100's 900 GB/s */
#define LB_PREDICT_LAUNCH_US 5.0           /* an assumption: a few microseconds per kernel */

typedef enum LbDeviceKind { LB_DEVICE_CUDA = 0, LB_DEVICE_CPU = 1 } LbDeviceKind;

/* --headroom not given: the larger of 256 MiB and 1% of the GPU's memory stays outside the budget,
 * for what the driver and libraries allocate beside the arena. */
#define LB_HEADROOM_AUTO UINT64_MAX
#define LB_HEADROOM_MIN ((uint64_t)256 << 20)

/* The CPU reference's emulated device memory when --mem-limit is not given. */
#define LB_CPU_DEFAULT_MEM ((uint64_t)512 << 20)

/* The most shards a sweep is cut into (--shard I/N). */
#define LB_SHARDS_MAX 4096

/* The table's rows: the settings meta.csv records first, then the other settings, then each
 * command's own flags (one flag may have a row per command: --gpu N, predict's --gpu NAME). */
typedef enum LbSettingId {
    LB_SET_N = 0, LB_SET_K, LB_SET_MODELS, LB_SET_SHARD,
    LB_SET_LAYERS, LB_SET_DMODEL, LB_SET_HEADS, LB_SET_FFN, LB_SET_VOCAB, LB_SET_DTYPE, LB_SET_TF32, LB_SET_PASS,
    LB_SET_SHARING, LB_SET_ORDER, LB_SET_CHUNK, LB_SET_K_SCHEDULE,
    LB_SET_DEVICE, LB_SET_MEM_LIMIT, LB_SET_MAX_BATCH, LB_SET_HEADROOM,
    LB_SET_CELL_TIME, LB_SET_SEED, LB_SET_BREAKDOWN, LB_SET_AUTOTUNE,
    LB_SET_RECORDED,
    LB_SET_GPU = LB_SET_RECORDED, /* which GPU is not a setting of the result: a resume may move */
    LB_SET_GPUS,                  /* nor which GPUs (meta.csv records gpu_count, raw.csv each row's GPU) */
    LB_SET_PROJECTION,            /* recorded through --models: it swaps linformer for linformer-P there */
    LB_OPT_MODEL, LB_OPT_RUN_N, LB_OPT_RUN_K, LB_OPT_CARD, LB_OPT_SPEC, LB_OPT_PRODUCT_EFF, LB_OPT_COPY_EFF,
    LB_OPT_LAUNCH, LB_OPT_DUMP, LB_OPT_BATCH, LB_OPT_CHECK_DTYPE, LB_OPT_CHECK_SEED, LB_OPT_QUICK, LB_OPT_INFO_GPU,
    LB_OPT_SHARDS, LB_OPT_PARTITION, LB_OPT_TIME, LB_OPT_ACCOUNT, LB_OPT_SUBMIT,
    LB_OPT_SLURM_OUT, LB_OPT_OUT, LB_OPT_PLOT_OUT, LB_OPT_NO_RENDER, LB_OPT_RENDER_TIMEOUT, LB_OPT_FORCE,
    LB_OPT_RESUME, LB_OPT_FORMAT, LB_OPT_COMPARE_FORMAT, LB_OPT_NO_CHECK, LB_OPT_QUIET, LB_OPT_PREDICT_QUIET,
    LB_OPT_MERGE_QUIET, LB_OPT_MARKDOWN, LB_OPT_HELP,
    LB_SET_COUNT
} LbSettingId;

/* Which commands take a row's flag: bit 1u << the command's index in cmd/commands.c's table. */
#define LB_FOR_SWEEP 1u
#define LB_FOR_RUN 2u
#define LB_FOR_PREDICT 4u
#define LB_FOR_MERGE 8u
#define LB_FOR_SLURM 16u
#define LB_FOR_COMPARE 32u
#define LB_FOR_PLOT 64u
#define LB_FOR_CHECK 128u
#define LB_FOR_INFO 256u
#define LB_FOR_HELP 512u

/* What the commands' own rows hold once parsed (NULL / 0 when not given). */
typedef struct LbCommandFlags {
    const char *out, *resume, *dump, *card, *spec, *partition, *time, *account;
    const char *k_text; /* --k LIST as given, for messages */
    int force, quiet, no_check, quick, no_render, submit, markdown, shards, render_timeout;
    int format; /* LbFormat (reports/table.h) */
    int64_t batch;
    double product_efficiency, copy_efficiency, launch_us;
    int args;   /* index into argv of the first operand (getopt puts them last) */
    char **passed; /* slurm: sweep's flags as given, to pass on (owned array) */
    int npassed;
} LbCommandFlags;

/* Everything a sweep (or one run) is set up with. */
typedef struct LbRunSettings {
    LbModelConfig model;   /* shape, dtype, sharing, order, chunk; kind, n and k are per cell */
    LbDeviceKind device;
    int gpu;
    int tf32;
    uint64_t mem_limit;    /* 0 = none */
    uint64_t headroom;     /* GPU memory left outside the budget; LB_HEADROOM_AUTO = the default */
    uint64_t seed;
    int breakdown;         /* --breakdown: time every operation of each measured cell (breakdown.csv) */
    int autotune;          /* linear's algorithm chosen by timing (LbBackend.autotune); 0: --no-autotune */
    int projection;        /* --projection: index into lb_projection_names, 0 linear (the linformer model) */
    LbTimingOptions timing;
    int64_t *n, *k;        /* the sweep's axes, ascending, unique (owned) */
    size_t nn, nk;
    unsigned models;       /* bit 1u << kind for every model the sweep measures */
    int shard_index, shard_count; /* --shard I/N; shard_count 0: every cell */
    int gpus_all;          /* --gpus all */
    int *gpus;             /* --gpus LIST: the indices, each once, as given (owned) */
    size_t ngpus;
    uint64_t given;        /* bit 1 << id for every flag the user gave */
    LbCommandFlags cmd;
} LbRunSettings;

typedef struct LbSetting {
    const char *flag;  /* long flag without "--" */
    const char *arg;   /* its value in --help ("N", "LIST"); NULL: a switch that takes none */
    const char *key;   /* meta.csv key (NULL past LB_SET_RECORDED) */
    const char *group; /* the --help heading it is listed under */
    const char *help;  /* --help text; '\n' continues on the next, indented line; {models} is the
                        * model table's names, {k} adds what k is per model after the entry */
    const char *def;   /* the default as the parser takes it; NULL: lb_run_settings_init's own
                        * (the model's shape from lb_config_default, timing from lb_timing_defaults) */
    const char *def_help; /* --help's default when not "(default <printed>)"; "" (or a switch): none */
    const char *absent;   /* what a meta.csv without the key (written before it existed) means;
                           * NULL: a sweep's meta.csv must hold it */
    unsigned commands;    /* LB_FOR_SWEEP | LB_FOR_RUN ... */
    /* text into s: 0, or -1 with what it accepts in should. from_meta: the text comes from a
     * meta.csv (an empty value there means "not set" for the optional settings). */
    int (*parse)(LbRunSettings *s, const char *text, int from_meta, char *should, size_t size);
    char *(*print)(const LbRunSettings *s); /* as meta.csv holds it (malloc'd) */
    char short_flag; /* -o, or 0 */
    /* No parser: the value's type and offset in LbRunSettings. 'i' an int, 'l' an int64_t, 'd' a
     * double, each a whole number from min to max; 'L' a list of int64_t from min to max
     * (lb_parse_list; its count's offset count_at); 'z' a size in bytes (uint64_t) of at least min,
     * "0" taken where min is 0; 'r' a double from min to max, 'p' above min to max; 'c' a choice
     * (an int, one of name(0) .. name(max)); else a text's char * or a switch's int (0 or 1). */
    size_t at;
    char type;
    int64_t min, max;
    const char *(*name)(int i);
    size_t count_at;
    const char *should; /* what a refused value should be, where the type's words do not say it ('L':
                         * what the values are); a text row with one refuses an empty text */
    int optional;       /* 'l', 'z': `unset` means not given: meta.csv holds it as an empty value */
    uint64_t unset;
} LbSetting;

extern const LbSetting lb_settings[LB_SET_COUNT];
/* The --help headings in the order they are listed, "" (none) last; NULL-terminated. */
extern const char *const lb_setting_groups[];

/* Defaults of every setting (the table's def texts parsed, the model's shape and timing from
 * attn/). 0, or LB_ERR_NOMEM. Free with lb_run_settings_free. */
int lb_run_settings_init(LbRunSettings *s);
void lb_run_settings_free(LbRunSettings *s);

/* One row's text (NULL: a switch given) into s (the given bit is the caller's). 0, or -1 with what
 * it accepts in should. */
int lb_setting_apply(LbRunSettings *s, LbSettingId id, const char *text, int from_meta, char *should, size_t size);
/* A setting's value as meta.csv holds it: malloc'd, NULL when out of memory or not a value. */
char *lb_setting_text(const LbRunSettings *s, LbSettingId id);

/* --projection's values: linear is the linformer model, each other P the model linformer-P. */
extern const char *const lb_projection_names[4];

/* What depends on several settings (--order's default with --sharing none, --gpu and --gpus,
 * --tf32, --projection's model). 0, or -1 with the message in msg. */
int lb_run_settings_finish(LbRunSettings *s, char *msg, size_t size);

/* The GPU memory kept outside the budget on a device of `total_bytes`. */
uint64_t lb_run_settings_headroom(const LbRunSettings *s, uint64_t total_bytes);

/* --resume DIR: every recorded setting the user did not give, taken from meta.csv. LB_OK, or
 * LB_ERR_FORMAT naming the key meta.csv lacks or holds unreadable. */
int lb_run_settings_take(LbRunSettings *s, const LbMeta *meta, const char *dir);
/* With everything parsed: each recorded setting agrees with meta.csv, as this run would record it.
 * LB_OK; LB_ERR_FORMAT blaming the flag for a value the user gave, DIR/meta.csv for one that reads
 * back otherwise; LB_ERR_NOMEM. */
int lb_run_settings_compare(const LbRunSettings *s, const LbMeta *meta, const char *dir);

/* A sweep's settings, whole (sweep, predict, slurm): each model with a k axis has some cell,
 * lb_run_settings_finish, and each listed model checked at the largest n. LB_OK, with the notes a
 * sweep prints into notes (lines of "linbench: note: ...", "" for none; size 0: none); or
 * LB_ERR_FORMAT with the refusal. */
int lb_run_settings_check_grid(LbRunSettings *s, char *notes, size_t size);

/* A result's meta.csv as every reader needs it: each recorded setting present (or absent with a
 * meaning) and readable, and device_name present, so a meta.csv cut short is refused instead of
 * read as "?". LB_OK; LB_ERR_FORMAT naming `path` and the key; LB_ERR_NOMEM. */
int lb_settings_meta_check(const LbMeta *meta, const char *path);

/* A recorded setting's value in a result's meta.csv, the table's `absent` value for a key written
 * before it existed, or NULL when it has none. */
const char *lb_settings_meta_value(const LbMeta *meta, LbSettingId id);

/* The first of ids[0 .. count-1] whose values differ between two results' meta.csv: its index
 * into ids, or -1 when they all agree. */
int lb_settings_first_difference(const LbMeta *a, const LbMeta *b, const LbSettingId *ids, size_t count);

/* The models of a `models` value ("standard,linformer") as a bit set (1u << kind): 0, or -1. */
int lb_settings_parse_models(const char *text, unsigned *models);
#define LB_ALL_MODELS ((1u << LB_MODEL_COUNT) - 1)
/* The names of the models of `models` (bit 1u << kind) in the model table's order, joined by sep
 * and before the last by last ("standard, linformer and chunked"). */
void lb_settings_model_names(unsigned models, const char *sep, const char *last, char *buf, size_t size);

/* DIR/meta.csv of run --dump (reports/dump.h): the cell, the model's settings under their keys
 * (empty for one the model does not read), k_layers under a k schedule, storage_dtype. */
struct LbModel;
struct LbInputs;
int lb_meta_write_dump(const char *dir, const struct LbModel *m, const struct LbInputs *in, const LbRunSettings *s);

#endif
