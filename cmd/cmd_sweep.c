/* linbench sweep: the Table 3 grid. Flags are checked before anything runs (exit 2, nothing
 * written); the device is opened before the output directory is created (exit 1, nothing
 * written); then cells are measured and written as they finish. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/status.h"
#include "cmd/args.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "cmd/sweep.h"
#include "reports/meta.h"

#define DEFAULT_N "512:65536"
#define DEFAULT_K "128:2048"

void lb_help_sweep(FILE *out)
{
    fputs("usage: linbench sweep [FLAGS]\n\n"
          "Measures Table 3 of the Linformer paper on this machine: for every n, the standard\n"
          "Transformer at its largest batch; for every k < n, the Linformer at its largest batch.\n"
          "Writes raw.csv (a row per cell, as it finishes), time_speedup.csv, memory_speedup.csv\n"
          "and meta.csv, then prints both grids.\n\n"
          "Grid:\n"
          "  --n LIST            sequence lengths, " "2 to 1048576: comma list and doubling ranges a:b\n"
          "                      (default " DEFAULT_N ", the paper's rows)\n"
          "  --k LIST            projected lengths, 1 to 1048576, same syntax (default " DEFAULT_K ")\n",
          out);
    lb_options_help(out);
    fputs("Output:\n"
          "  -o, --out DIR       where the files go; must be new or hold no results (default a new\n"
          "                      directory linbench-YYYYmmdd-HHMMSS here)\n"
          "  --force             overwrite the results already in --out\n"
          "  --resume DIR        measure only the cells not yet in DIR/raw.csv, with DIR's settings\n"
          "                      (meta.csv); flags given must agree with them\n"
          "  --format F          closing summary as text or md (default text)\n"
          "  -q, --quiet         no progress on stderr\n"
          "  -h, --help          this help\n\n"
          "Exit codes: 0 done; 1 runtime failure (no GPU, a cell failed, a file not written);\n"
          "2 bad input; 130 interrupted (finished cells kept; continue with --resume).\n",
          out);
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    if (stop_requested) { /* a second Ctrl-C: stop now */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    stop_requested = 1;
}

enum { OPT_N = 'n', OPT_K = 'k', OPT_OUT = 'o', OPT_QUIET = 'q', OPT_HELP = 'h',
       OPT_FORCE = 1000, OPT_RESUME, OPT_FORMAT };

static char *join_command_line(int argc, char **argv)
{
    size_t size = 16;
    for (int i = 0; i < argc; i++)
        size += strlen(argv[i]) * 2 + 3;
    char *s = malloc(size), *p = s;
    if (!s)
        return NULL;
    p += sprintf(p, "linbench");
    for (int i = 0; i < argc; i++)
        p += sprintf(p, strpbrk(argv[i], " \t\"'") ? " '%s'" : " %s", argv[i]);
    return s;
}

/* --resume: settings the user did not give come from meta.csv; those given must agree. */
typedef struct MetaField {
    const char *key;  /* in meta.csv */
    const char *flag; /* on the command line */
    int code;         /* its LB_OPT_ code */
    unsigned given;   /* its LB_GIVEN_ bit */
} MetaField;

static const MetaField meta_fields[] = {
    {"layers", "layers", LB_OPT_LAYERS, LB_GIVEN_LAYERS},
    {"d_model", "d-model", LB_OPT_DMODEL, LB_GIVEN_DMODEL},
    {"heads", "heads", LB_OPT_HEADS, LB_GIVEN_HEADS},
    {"ffn", "ffn", LB_OPT_FFN, LB_GIVEN_FFN},
    {"vocab", "vocab", LB_OPT_VOCAB, LB_GIVEN_VOCAB},
    {"dtype", "dtype", LB_OPT_DTYPE, LB_GIVEN_DTYPE},
    {"sharing", "sharing", LB_OPT_SHARING, LB_GIVEN_SHARING},
    {"order", "order", LB_OPT_ORDER, LB_GIVEN_ORDER},
    {"device", "device", LB_OPT_DEVICE, LB_GIVEN_DEVICE},
    {"seed", "seed", LB_OPT_SEED, LB_GIVEN_SEED},
    {"mem_limit", "mem-limit", LB_OPT_MEM_LIMIT, LB_GIVEN_MEM_LIMIT},
};

/* A setting as meta.csv writes it (cmd/sweep.c). */
static void setting_text(const LbOptions *o, const char *key, char *buf, size_t size)
{
    const LbModelConfig *m = &o->model;
    if (strcmp(key, "layers") == 0) snprintf(buf, size, "%d", m->layers);
    else if (strcmp(key, "d_model") == 0) snprintf(buf, size, "%d", m->d_model);
    else if (strcmp(key, "heads") == 0) snprintf(buf, size, "%d", m->heads);
    else if (strcmp(key, "ffn") == 0) snprintf(buf, size, "%d", m->ffn);
    else if (strcmp(key, "vocab") == 0) snprintf(buf, size, "%d", m->vocab);
    else if (strcmp(key, "dtype") == 0) snprintf(buf, size, "%s", lb_dtype_name(m->dtype));
    else if (strcmp(key, "sharing") == 0) snprintf(buf, size, "%s", lb_sharing_name(m->sharing));
    else if (strcmp(key, "order") == 0) snprintf(buf, size, "%s", lb_order_name(m->order));
    else if (strcmp(key, "device") == 0) snprintf(buf, size, "%s", o->device == LB_DEVICE_CPU ? "cpu" : "cuda");
    else if (strcmp(key, "seed") == 0) snprintf(buf, size, "%llu", (unsigned long long)o->seed);
    else if (strcmp(key, "mem_limit") == 0 && o->mem_limit) snprintf(buf, size, "%llu", (unsigned long long)o->mem_limit);
    else if (strcmp(key, "tf32") == 0) snprintf(buf, size, "%d", o->tf32);
    else buf[0] = '\0';
}

static int apply_meta(LbOptions *o, const LbMeta *meta, const char *dir, uint64_t *budget,
                      const char **n_list, const char **k_list)
{
    char mine[64];
    for (size_t i = 0; i < sizeof meta_fields / sizeof meta_fields[0]; i++) {
        const MetaField *f = &meta_fields[i];
        const char *v = lb_meta_get(meta, f->key);
        if (!v)
            return lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (meta.csv has no %s)", dir, f->key);
        if (o->given & f->given) {
            setting_text(o, f->key, mine, sizeof mine);
            if (strcmp(mine, v) != 0)
                return lb_usage_error("--%s %s differs from the resumed run's \"%s\" (meta.csv): should be the same to resume %s",
                                      f->flag, mine, v, dir);
        } else if (v[0] != '\0') {
            unsigned given = o->given;
            if (lb_options_apply(o, f->code, v) != 0)
                return lb_usage_error("invalid argument \"%s\" for --resume: meta.csv's %s \"%s\" is not readable", dir, f->key, v);
            o->given = given; /* taken from meta.csv, not given */
        }
    }
    const char *tf32 = lb_meta_get(meta, "tf32");
    if (tf32) {
        setting_text(o, "tf32", mine, sizeof mine);
        if ((o->given & LB_GIVEN_TF32) && strcmp(mine, tf32) != 0)
            return lb_usage_error("--tf32 differs from the resumed run's (meta.csv): should be the same to resume %s", dir);
        o->tf32 = strcmp(tf32, "1") == 0;
    }
    const char *b = lb_meta_get(meta, "memory_budget_bytes");
    if (!b || lb_parse_size(b, budget))
        return lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (meta.csv has no readable memory_budget_bytes)", dir);
    *n_list = lb_meta_get(meta, "n_list");
    *k_list = lb_meta_get(meta, "k_list");
    return 0;
}

int lb_cmd_sweep(int argc, char **argv)
{
    enum { OWN = 8 };
    struct option longopts[OWN + LB_SHARED_OPTION_COUNT + 1] = {
        {"n", required_argument, NULL, OPT_N},          {"k", required_argument, NULL, OPT_K},
        {"out", required_argument, NULL, OPT_OUT},      {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},          {"force", no_argument, NULL, OPT_FORCE},
        {"resume", required_argument, NULL, OPT_RESUME}, {"format", required_argument, NULL, OPT_FORMAT},
    };
    memcpy(longopts + OWN, lb_shared_long_options, sizeof(struct option) * (LB_SHARED_OPTION_COUNT + 1));

    LbSweep s;
    memset(&s, 0, sizeof s);
    lb_options_defaults(&s.opt);
    s.format = LB_FORMAT_TEXT;
    const char *n_arg = NULL, *k_arg = NULL, *out = NULL, *resume = NULL;
    int force = 0, c, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_N: n_arg = optarg; s.opt.given |= LB_GIVEN_N; break;
        case OPT_K: k_arg = optarg; s.opt.given |= LB_GIVEN_K; break;
        case OPT_OUT: out = optarg; break;
        case OPT_QUIET: s.quiet = 1; break;
        case OPT_HELP: lb_help_sweep(stdout); return LB_EXIT_OK;
        case OPT_FORCE: force = 1; break;
        case OPT_RESUME: resume = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                s.format = LB_FORMAT_TEXT;
            else if (strcmp(optarg, "md") == 0)
                s.format = LB_FORMAT_MD;
            else
                return lb_usage_error("invalid argument \"%s\" for --format: should be text or md", optarg);
            break;
        case ':': return lb_usage_error("flag %s needs a value (see linbench sweep --help)", argv[optind - 1]);
        case '?': return lb_usage_error("unknown flag \"%s\" for sweep (see linbench sweep --help)", argv[optind - 1]);
        default:
            if ((rc = lb_options_apply(&s.opt, c, optarg)) != 0)
                return rc;
        }
    }
    if (optind < argc)
        return lb_usage_error("unexpected argument \"%s\" for sweep: it takes flags only (see linbench sweep --help)", argv[optind]);
    if (resume && out && strcmp(resume, out) != 0)
        return lb_usage_error("--out %s and --resume %s differ: should be given one directory, with --resume alone", out, resume);
    if (resume && force)
        return lb_usage_error("--force cannot be used with --resume: should be one or the other");

    /* --resume: the settings come from the run being continued. */
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    uint64_t resumed_budget = 0;
    if (resume) {
        char path[4096];
        lb_outdir_path(path, sizeof path, resume, "meta.csv");
        if (lb_meta_read(path, &meta) != 0)
            return lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (cannot read %s)", resume, path);
        lb_outdir_path(path, sizeof path, resume, "raw.csv");
        FILE *f = fopen(path, "r");
        if (!f) {
            lb_meta_free(&meta);
            return lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (cannot read %s)", resume, path);
        }
        fclose(f);
        const char *nl = NULL, *kl = NULL;
        if ((rc = apply_meta(&s.opt, &meta, resume, &resumed_budget, &nl, &kl)) != 0) {
            lb_meta_free(&meta);
            return rc;
        }
        if (!n_arg)
            n_arg = nl;
        if (!k_arg)
            k_arg = kl;
        s.resumed_start_time = lb_meta_get(&meta, "start_time");
    }
    rc = 0;
    if (lb_parse_list(n_arg ? n_arg : DEFAULT_N, LB_N_MIN, LB_N_MAX, &s.n, &s.nn) != 0)
        rc = lb_usage_error("invalid argument \"%s\" for --n: should be sequence lengths from %d to %d, as a comma list or doubling ranges like 512:65536",
                            n_arg, LB_N_MIN, LB_N_MAX);
    else if (lb_parse_list(k_arg ? k_arg : DEFAULT_K, LB_K_MIN, LB_N_MAX, &s.k, &s.nk) != 0)
        rc = lb_usage_error("invalid argument \"%s\" for --k: should be projected lengths from %d to %d, as a comma list or doubling ranges like 128:2048",
                            k_arg, LB_K_MIN, LB_N_MAX);
    if (rc == 0)
        rc = lb_options_finish(&s.opt);
    if (rc == 0) {
        /* Check the model once as standard at the largest n, once as Linformer with the smallest k. */
        char msg[256];
        LbModelConfig cfg = s.opt.model;
        cfg.kind = LB_MODEL_STANDARD;
        cfg.n = s.n[s.nn - 1];
        if (lb_config_check(&cfg, msg, sizeof msg) == LB_OK) {
            cfg.kind = LB_MODEL_LINFORMER;
            cfg.k = s.k[0] < cfg.n ? s.k[0] : cfg.n;
        }
        if (lb_config_check(&cfg, msg, sizeof msg) != LB_OK)
            rc = lb_usage_error("%s", msg);
    }
    char default_dir[64];
    if (rc == 0) {
        if (resume) {
            s.dir = resume;
            s.resume = 1;
        } else {
            if (!out) {
                lb_outdir_default(default_dir, sizeof default_dir);
                out = default_dir;
            }
            s.dir = out;
            rc = lb_outdir_prepare(out, force, "out");
        }
    }
    LbBackend *be = NULL;
    uint64_t budget = 0;
    char *command_line = NULL;
    if (rc == 0) {
        rc = lb_options_open_backend(&s.opt, &be, &budget);
        if (rc != 0 && !resume)
            lb_outdir_abandon(); /* nothing was written: leave no empty folder */
    }
    if (rc == 0 && resume) {
        if (budget < resumed_budget) {
            char have[32], want[32];
            lb_format_size(budget, have, sizeof have);
            lb_format_size(resumed_budget, want, sizeof want);
            fprintf(stderr, "linbench: cannot resume %s: it ran with a memory budget of %s and this device has %s free now\n",
                    resume, want, have);
            rc = LB_EXIT_FAILURE;
        }
        budget = resumed_budget;
    }
    if (rc == 0) {
        command_line = join_command_line(argc, argv);
        s.command_line = command_line ? command_line : "linbench sweep";
        s.budget = budget;
        stop_requested = 0;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        rc = lb_sweep_run(&s, be, &stop_requested);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
    }
    lb_backend_close(be);
    free(command_line);
    free(s.n);
    free(s.k);
    lb_meta_free(&meta);
    return rc;
}
