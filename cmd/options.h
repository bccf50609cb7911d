/* The flags `sweep` and `run` share: the model shape, precision, Linformer variant, device,
 * memory budget, timing and seed. One parser so both say the same thing about bad input. */
#ifndef LB_OPTIONS_H
#define LB_OPTIONS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/config.h"
#include "attn/measure.h"
#include "attn/ops.h"

/* Long-option codes of the shared flags (above any character). */
enum {
    LB_OPT_LAYERS = 256, LB_OPT_DMODEL, LB_OPT_HEADS, LB_OPT_FFN, LB_OPT_VOCAB, LB_OPT_DTYPE,
    LB_OPT_SHARING, LB_OPT_ORDER, LB_OPT_DEVICE, LB_OPT_GPU, LB_OPT_TF32, LB_OPT_MEM_LIMIT,
    LB_OPT_MAX_BATCH, LB_OPT_CELL_TIME, LB_OPT_SEED, LB_OPT_HEADROOM, LB_OPT_SHARED_END
};

/* Bits of LbOptions.given: which flags the user set (so --resume can take the rest from
 * meta.csv and refuse a contradiction). */
enum {
    LB_GIVEN_LAYERS = 1 << 0, LB_GIVEN_DMODEL = 1 << 1, LB_GIVEN_HEADS = 1 << 2,
    LB_GIVEN_FFN = 1 << 3, LB_GIVEN_VOCAB = 1 << 4, LB_GIVEN_DTYPE = 1 << 5,
    LB_GIVEN_SHARING = 1 << 6, LB_GIVEN_ORDER = 1 << 7, LB_GIVEN_DEVICE = 1 << 8,
    LB_GIVEN_MEM_LIMIT = 1 << 9, LB_GIVEN_SEED = 1 << 10, LB_GIVEN_N = 1 << 11,
    LB_GIVEN_K = 1 << 12, LB_GIVEN_TF32 = 1 << 13, LB_GIVEN_MAX_BATCH = 1 << 14,
    LB_GIVEN_CELL_TIME = 1 << 15, LB_GIVEN_HEADROOM = 1 << 16,
    LB_GIVEN_SHARD = 1 << 17 /* sweep's --shard */
};

typedef enum LbDeviceKind { LB_DEVICE_CUDA = 0, LB_DEVICE_CPU = 1 } LbDeviceKind;

/* --headroom not given: the larger of 256 MiB and 1% of the GPU's memory stays outside the budget,
 * for what the driver and libraries allocate beside the arena (local memory for deep stacks,
 * cuBLAS's own buffers, a lazily loaded module). */
#define LB_HEADROOM_AUTO UINT64_MAX
#define LB_HEADROOM_MIN ((uint64_t)256 << 20)

/* The CPU reference's emulated device memory when --mem-limit is not given. */
#define LB_CPU_DEFAULT_MEM ((uint64_t)512 << 20)

typedef struct LbOptions {
    LbModelConfig model;
    LbDeviceKind device;
    int gpu;
    int tf32;
    uint64_t mem_limit; /* 0 = none */
    uint64_t headroom;  /* GPU memory left outside the budget; LB_HEADROOM_AUTO = the default */
    uint64_t seed;
    LbTimingOptions timing;
    unsigned given;
} LbOptions;

void lb_options_defaults(LbOptions *o);

/* The getopt_long entries of the shared flags, terminated by a zero entry; a subcommand copies
 * them after its own. */
extern const struct option lb_shared_long_options[];
#define LB_SHARED_OPTION_COUNT (LB_OPT_SHARED_END - LB_OPT_LAYERS)

/* Apply one shared flag. Returns 0, or LB_EXIT_USAGE after printing the one-line message. */
int lb_options_apply(LbOptions *o, int code, const char *arg);

/* Apply one shared flag's value without printing (for values read from a file, where the flag
 * is not to blame): 0, or -1 with what the flag accepts in `should` ("an integer from 1 to
 * 1024"). --tf32 takes "0" or "1" here. Does not mark the flag as given. */
int lb_options_set(LbOptions *o, int code, const char *arg, char *should, size_t size);

/* The long name of a shared flag ("d-model"), or NULL. */
const char *lb_options_flag_name(int code);

/* Resolve what depends on several flags (--order defaults to late with --sharing none), then
 * check the model. Returns 0 or LB_EXIT_USAGE after printing. */
int lb_options_finish(LbOptions *o);

/* The shared flags' --help lines. */
void lb_options_help(FILE *out);

/* The memory this process can still have (bytes): the least of MemAvailable, the cgroup's
 * limit less its usage, and RLIMIT_AS / RLIMIT_DATA less what the process already maps; `what`
 * names the one that bound it. -1 when none can be read. */
int lb_host_memory_available(uint64_t *bytes, const char **what);

/* --device cpu: the budget (--mem-limit, or the default) must fit in the memory this process can
 * have, or the kernel kills the run part-way. Returns 0, or prints one line and returns
 * LB_EXIT_USAGE (--mem-limit given) or LB_EXIT_FAILURE (the default does not fit). */
int lb_options_check_host_memory(const LbOptions *o);

/* Open the chosen backend. On failure prints one line and returns LB_EXIT_FAILURE. The memory
 * budget is the device's free memory, or --mem-limit if smaller (METHOD.md). */
int lb_options_open_backend(const LbOptions *o, LbBackend **be, uint64_t *budget);
/* The GPU memory kept outside the budget on a device of `total_bytes`: --headroom, or the larger
 * of 256 MiB and 1% (LB_HEADROOM_AUTO). */
uint64_t lb_options_headroom(const LbOptions *o, uint64_t total_bytes);

/* Exit code for a runtime failure status, after printing "linbench: <message>". */
int lb_runtime_error(int status);

#endif
