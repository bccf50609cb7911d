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
#include "cmd/shard.h"
#include "cmd/sweep.h"
#include "lb_config.h"
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
          "  --force             remove the results already in --out before the first new row\n"
          "  --resume DIR        measure only the cells not yet in DIR/raw.csv, with every setting\n"
          "                      from DIR/meta.csv; flags given must agree with them, and DIR must\n"
          "                      come from this linbench version\n"
          "  --shard I/N         measure only shard I (0 to N-1) of N, N from 1 to 4096: a split of\n"
          "                      the cells by predicted cost; recorded in meta.csv as a setting;\n"
          "                      put the shards' directories together with linbench merge\n"
          "  --format F          closing summary as text or md (default text)\n"
          "  --no-check          skip the quick check of the backend (linbench check --quick) that\n"
          "                      runs first; meta.csv records check as skipped\n"
          "  -q, --quiet         no progress on stderr\n"
          "  -h, --help          this help\n\n"
          "A directory is written by one linbench at a time (a lock held for the whole run).\n\n"
          "Exit codes: 0 done; 1 runtime failure (no GPU, a cell failed, a file not written, the\n"
          "directory in use); 2 bad input; 130 interrupted by Ctrl-C, SIGTERM or SIGHUP (finished\n"
          "cells kept; continue with --resume).\n",
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
       OPT_FORCE = 1000, OPT_RESUME, OPT_FORMAT, OPT_NO_CHECK, OPT_SHARD };

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

/* --resume, first half: every setting the user did not give comes from meta.csv. A value there
 * that cannot be read is blamed on the file and its key, not on a flag the user never gave. The
 * n and k lists are handed back as text for the list parser. */
static int take_settings(LbSweep *s, const LbMeta *meta, const char *dir, const char **n_arg,
                         const char **k_arg)
{
    for (size_t i = 0; i < lb_sweep_setting_count; i++) {
        const LbSweepSetting *f = &lb_sweep_settings[i];
        const char *v = lb_meta_get(meta, f->key);
        if (!v && strcmp(f->key, "shard") == 0)
            continue; /* a directory from before --shard: not sharded */
        if (!v)
            return lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (%s/meta.csv has no %s)",
                                  dir, dir, f->key);
        if (s->opt.given & f->given)
            continue; /* compared once everything is parsed */
        if (strcmp(f->key, "shard") == 0) {
            if (v[0] != '\0' && lb_shard_parse(v, &s->shard_index, &s->shard_count) != 0)
                return lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's shard is \"%s\": should be I/N with 0 <= I < N",
                                      dir, dir, v);
            continue;
        }
        if (f->code == 0) {
            *(strcmp(f->key, "n_list") == 0 ? n_arg : k_arg) = v;
            continue;
        }
        if (v[0] == '\0' && (f->code == LB_OPT_MEM_LIMIT || f->code == LB_OPT_MAX_BATCH || f->code == LB_OPT_HEADROOM))
            continue; /* not set in the first run either */
        char should[128];
        if (lb_options_set(&s->opt, f->code, v, should, sizeof should) != 0)
            return lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\": should be %s",
                                  dir, dir, f->key, v, should);
    }
    return 0;
}

/* --resume, second half: with everything parsed, each setting as this run would record it must
 * be what meta.csv holds; a flag that contradicts it is named. */
static int compare_settings(const LbSweep *s, const LbMeta *meta, const char *dir)
{
    for (size_t i = 0; i < lb_sweep_setting_count; i++) {
        const LbSweepSetting *f = &lb_sweep_settings[i];
        const char *theirs = lb_meta_get(meta, f->key);
        if (!theirs && strcmp(f->key, "shard") == 0)
            theirs = ""; /* a directory from before --shard */
        char *mine = lb_sweep_setting_text(s, f->key);
        if (!mine)
            return lb_usage_error("out of memory comparing --resume %s's settings", dir);
        int same = theirs && strcmp(mine, theirs) == 0;
        int rc = 0;
        if (!same && (s->opt.given & f->given))
            rc = lb_usage_error("--%s %s differs from the resumed run's \"%s\" (%s in %s/meta.csv): should be the same, or left out, to resume %s",
                                f->flag, mine[0] ? mine : "(unset)", theirs ? theirs : "", f->key, dir, dir);
        else if (!same)
            rc = lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\", which reads back as \"%s\": should be as linbench sweep wrote it",
                                dir, dir, f->key, theirs ? theirs : "", mine);
        free(mine);
        if (rc)
            return rc;
    }
    return 0;
}

/* --resume: the directory, locked, its meta.csv read and of this version, and the memory budget
 * it ran with. */
static int open_resumed(const char *dir, LbMeta *meta, uint64_t *budget)
{
    int rc = lb_outdir_lock_existing(dir, "resume");
    if (rc != 0)
        return rc;
    char path[4096];
    lb_outdir_path(path, sizeof path, dir, "meta.csv");
    lb_error_clear();
    if (lb_meta_read(path, meta) != 0)
        return lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (%s)", dir,
                              lb_error_message());
    const char *version = lb_meta_get(meta, "linbench_version");
    if (!version || strcmp(version, LB_VERSION) != 0)
        return lb_usage_error("invalid argument \"%s\" for --resume: it was written by linbench %s and this is linbench %s: should be resumed with linbench %s",
                              dir, version && *version ? version : "(unknown version)", LB_VERSION,
                              version && *version ? version : "of that version");
    const char *b = lb_meta_get(meta, "memory_budget_bytes");
    if (!b || lb_parse_size(b, budget))
        return lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's memory_budget_bytes is \"%s\": should be a byte count",
                              dir, dir, b ? b : "");
    return 0;
}

int lb_cmd_sweep(int argc, char **argv)
{
    enum { OWN = 10 };
    struct option longopts[OWN + LB_SHARED_OPTION_COUNT + 1] = {
        {"n", required_argument, NULL, OPT_N},          {"k", required_argument, NULL, OPT_K},
        {"out", required_argument, NULL, OPT_OUT},      {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},          {"force", no_argument, NULL, OPT_FORCE},
        {"resume", required_argument, NULL, OPT_RESUME}, {"format", required_argument, NULL, OPT_FORMAT},
        {"no-check", no_argument, NULL, OPT_NO_CHECK},   {"shard", required_argument, NULL, OPT_SHARD},
    };
    memcpy(longopts + OWN, lb_shared_long_options, sizeof(struct option) * (LB_SHARED_OPTION_COUNT + 1));

    LbSweep s;
    memset(&s, 0, sizeof s);
    lb_options_defaults(&s.opt);
    s.format = LB_FORMAT_TEXT;
    const char *n_arg = NULL, *k_arg = NULL, *out = NULL, *resume = NULL;
    int force = 0, no_check = 0, c, rc;
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
        case OPT_NO_CHECK: no_check = 1; break;
        case OPT_RESUME: resume = optarg; break;
        case OPT_SHARD:
            if (lb_shard_parse(optarg, &s.shard_index, &s.shard_count) != 0)
                return lb_usage_error("invalid argument \"%s\" for --shard: should be I/N with N from 1 to %d and I from 0 to N-1", optarg,
                                      LB_SHARDS_MAX);
            s.opt.given |= LB_GIVEN_SHARD;
            break;
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
    int n_from_meta = 0, k_from_meta = 0;
    if (resume) {
        const char *nl = NULL, *kl = NULL;
        rc = open_resumed(resume, &meta, &resumed_budget);
        if (rc == 0)
            rc = take_settings(&s, &meta, resume, &nl, &kl);
        if (rc != 0) {
            lb_meta_free(&meta);
            return rc;
        }
        n_from_meta = !n_arg;
        k_from_meta = !k_arg;
        if (!n_arg)
            n_arg = nl;
        if (!k_arg)
            k_arg = kl;
        s.previous = &meta;
    }
    rc = 0;
    if (lb_parse_list(n_arg ? n_arg : DEFAULT_N, LB_N_MIN, LB_N_MAX, &s.n, &s.nn) != 0)
        rc = n_from_meta ? lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's n_list is \"%s\": should be a comma list of sequence lengths from %d to %d",
                                          resume, resume, n_arg, LB_N_MIN, LB_N_MAX)
                         : lb_usage_error("invalid argument \"%s\" for --n: should be sequence lengths from %d to %d, as a comma list or doubling ranges like 512:65536",
                                          n_arg, LB_N_MIN, LB_N_MAX);
    else if (lb_parse_list(k_arg ? k_arg : DEFAULT_K, LB_K_MIN, LB_N_MAX, &s.k, &s.nk) != 0)
        rc = k_from_meta ? lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's k_list is \"%s\": should be a comma list of projected lengths from %d to %d",
                                          resume, resume, k_arg, LB_K_MIN, LB_N_MAX)
                         : lb_usage_error("invalid argument \"%s\" for --k: should be projected lengths from %d to %d, as a comma list or doubling ranges like 128:2048",
                                          k_arg, LB_K_MIN, LB_N_MAX);
    else if (s.k[0] >= s.n[s.nn - 1])
        /* no k < n anywhere: the sweep would measure the standard model and compare nothing */
        rc = lb_usage_error("--k %s has no value below the largest --n (%lld): should include some k < n, or there is nothing to compare",
                            k_arg ? k_arg : DEFAULT_K, (long long)s.n[s.nn - 1]);
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
    if (rc == 0 && resume)
        rc = compare_settings(&s, &meta, resume);
    if (rc == 0)
        rc = lb_options_check_host_memory(&s.opt);
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
            rc = lb_outdir_prepare(out, force, "out", 1);
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
    /* A backend that gets its arithmetic wrong is not measured: nothing is written, and a new
     * directory is removed as when the device cannot be opened. */
    if (rc == 0 && !no_check) {
        rc = lb_quick_check(be, &s.opt.model, &s.check);
        if (rc != 0 && !resume)
            lb_outdir_abandon();
    }
    if (rc == 0 && force)
        rc = lb_outdir_clear_results(s.dir); /* before the first new row, not after the last */
    if (rc == 0) {
        command_line = join_command_line(argc, argv);
        s.command_line = command_line ? command_line : "linbench sweep";
        s.budget = budget;
        stop_requested = 0;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        /* SIGHUP too: a closed terminal or ssh session ends a sweep as cleanly as Ctrl-C */
        static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
        for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
            sigaction(stop_signals[i], &sa, NULL);
        rc = lb_sweep_run(&s, be, &stop_requested);
        for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
            signal(stop_signals[i], SIG_DFL);
    }
    lb_backend_close(be);
    free(command_line);
    free(s.n);
    free(s.k);
    lb_meta_free(&meta);
    return rc;
}
