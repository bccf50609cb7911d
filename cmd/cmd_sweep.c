/* linbench sweep: the Table 3 grid. Validate, then run: flags (and with --resume, meta.csv's
 * settings) are checked before anything runs (exit 2, nothing written); the device is opened and
 * checked once the output directory exists, which a failure there removes again (exit 1); then
 * the sweep engine (reports/sweep_engine.h) measures the cells, and this file says how it went. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/sizes.h"
#include "attn/status.h"
#include "cmd/calibration.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "cmd/check.h"
#include "cmd/progress.h"
#include "lb_config.h"
#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/settings.h"
#include "reports/sweep_engine.h"

void lb_help_sweep(FILE *out)
{
    fputs("usage: linbench sweep [FLAGS]\n\n"
          "Measures Table 3 of the Linformer paper on this machine: for every n, each model of\n"
          "--models at its largest batch (the standard Transformer once per n, the Linformer for\n"
          "every k < n). Writes raw.csv (a row per cell, as it finishes), time_speedup.csv and\n"
          "memory_speedup.csv (Linformer against standard) and meta.csv, then prints both grids.\n\n",
          out);
    lb_options_help(out, LB_FOR_SWEEP);
    fputs("Output:\n"
          "  -o, --out DIR       where the files go; must be new or hold no results (default a new\n"
          "                      directory linbench-YYYYmmdd-HHMMSS here)\n"
          "  --force             remove the results already in --out before the first new row\n"
          "  --resume DIR        measure only the cells not yet in DIR/raw.csv, with every setting\n"
          "                      from DIR/meta.csv; flags given must agree with them, and DIR must\n"
          "                      come from this linbench version\n"
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

enum { OPT_OUT = 'o', OPT_QUIET = 'q', OPT_HELP = 'h', OPT_FORCE = 1000, OPT_RESUME, OPT_FORMAT, OPT_NO_CHECK };

/* What sweep takes besides the settings. */
typedef struct SweepFlags {
    const char *out, *resume;
    int force, no_check, quiet, help;
    LbFormat format;
    const char *k_text; /* the k list as given, read from meta.csv, or the default: for messages */
} SweepFlags;

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

static int parse_flags(int argc, char **argv, LbRunSettings *s, SweepFlags *f)
{
    struct option longopts[LB_OPTIONS_MAX] = {
        {"out", required_argument, NULL, OPT_OUT},       {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},           {"force", no_argument, NULL, OPT_FORCE},
        {"resume", required_argument, NULL, OPT_RESUME}, {"format", required_argument, NULL, OPT_FORMAT},
        {"no-check", no_argument, NULL, OPT_NO_CHECK},
    };
    lb_options_fill(longopts, 7, LB_FOR_SWEEP);
    int c, rc;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_OUT: f->out = optarg; break;
        case OPT_QUIET: f->quiet = 1; break;
        case OPT_HELP: f->help = 1; return 0;
        case OPT_FORCE: f->force = 1; break;
        case OPT_NO_CHECK: f->no_check = 1; break;
        case OPT_RESUME: f->resume = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "text") == 0)
                f->format = LB_FORMAT_TEXT;
            else if (strcmp(optarg, "md") == 0)
                f->format = LB_FORMAT_MD;
            else
                return lb_usage_error("invalid argument \"%s\" for --format: should be text or md", optarg);
            break;
        case ':': return lb_usage_error("flag %s needs a value (see linbench sweep --help)", argv[optind - 1]);
        case '?': return lb_usage_error("unknown flag \"%s\" for sweep (see linbench sweep --help)", argv[optind - 1]);
        default:
            if ((rc = lb_options_apply(s, c, optarg)) != 0)
                return rc;
            if (c == LB_OPT_SETTING + LB_SET_K)
                f->k_text = optarg;
        }
    }
    if (optind < argc)
        return lb_usage_error("unexpected argument \"%s\" for sweep: it takes flags only (see linbench sweep --help)", argv[optind]);
    if (f->resume && f->out && strcmp(f->resume, f->out) != 0)
        return lb_usage_error("--out %s and --resume %s differ: should be given one directory, with --resume alone", f->out, f->resume);
    if (f->resume && f->force)
        return lb_usage_error("--force cannot be used with --resume: should be one or the other");
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
    lb_path_join_buf(path, sizeof path, dir, "meta.csv");
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

/* A --resume refusal in words: the file and key are blamed for what the file holds, the flag for
 * what the user gave. */
static int resume_refusal(int rc, LbSettingProblem *p, const char *dir)
{
    if (rc != -1) {
        lb_setting_problem_free(p);
        return lb_runtime_error(rc);
    }
    const LbSetting *e = &lb_settings[p->id];
    const char *theirs = p->theirs ? p->theirs : "";
    switch (p->kind) {
    case LB_SETTING_MISSING:
        rc = lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (%s/meta.csv has no %s)",
                            dir, dir, e->key);
        break;
    case LB_SETTING_UNREADABLE:
        rc = lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\": should be %s", dir, dir, e->key,
                            theirs, p->should);
        break;
    case LB_SETTING_DIFFERS:
        rc = lb_usage_error("--%s %s differs from the resumed run's \"%s\" (%s in %s/meta.csv): should be the same, or left out, to resume %s",
                            e->flag, p->mine[0] ? p->mine : "(unset)", theirs, e->key, dir, dir);
        break;
    case LB_SETTING_READS_BACK:
        rc = lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\", which reads back as \"%s\": should be as linbench sweep wrote it",
                            dir, dir, e->key, theirs, p->mine);
        break;
    }
    lb_setting_problem_free(p);
    return rc;
}

/* Everything that can be refused before a file is touched (bar the lock --resume takes): the
 * settings complete (from meta.csv when resuming), consistent, and the same as meta.csv's. */
static int validate(LbRunSettings *s, SweepFlags *f, LbMeta *meta, uint64_t *resumed_budget)
{
    LbSettingProblem problem;
    int rc;
    if (f->resume) {
        if ((rc = open_resumed(f->resume, meta, resumed_budget)) != 0)
            return rc;
        if ((rc = lb_run_settings_take(s, meta, &problem)) != 0)
            return resume_refusal(rc, &problem, f->resume);
        if (!(s->given & (UINT64_C(1) << LB_SET_K)))
            f->k_text = lb_settings_meta_value(meta, LB_SET_K);
    }
    if (!f->k_text)
        f->k_text = lb_settings[LB_SET_K].def;
    /* A model with a k axis and no cell: the sweep would compare nothing with it. */
    const int64_t n_max = s->n[s->nn - 1];
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (!(s->models & (1u << m)) || !lb_model_has_k((LbModelKind)m))
            continue;
        int any = 0;
        for (size_t i = 0; i < s->nn && !any; i++)
            for (size_t j = 0; j < s->nk && !any; j++)
                any = lb_model_cell_exists((LbModelKind)m, s->n[i], s->k[j]);
        if (!any)
            return lb_usage_error("--k %s has no value below the largest --n (%lld): should include some k < n, or there is nothing to compare",
                                  f->k_text, (long long)n_max);
    }
    if ((rc = lb_options_finish(s)) != 0)
        return rc;
    /* Each listed model checked once, at the largest n and its smallest k. */
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (!(s->models & (1u << m)))
            continue;
        char msg[256];
        LbModelConfig cfg = s->model;
        cfg.kind = (LbModelKind)m;
        cfg.n = n_max;
        cfg.k = !lb_model_has_k(cfg.kind) ? 0 : s->k[0] < cfg.n ? s->k[0] : cfg.n;
        if (lb_config_check(&cfg, msg, sizeof msg) != LB_OK)
            return lb_usage_error("%s", msg);
    }
    if (f->resume && (rc = lb_run_settings_compare(s, meta, &problem)) != 0)
        return resume_refusal(rc, &problem, f->resume);
    return lb_options_check_host_memory(s);
}

int lb_cmd_sweep(int argc, char **argv)
{
    LbRunSettings s;
    if (lb_run_settings_init(&s) != LB_OK)
        return lb_runtime_error(LB_ERR_NOMEM);
    SweepFlags f;
    memset(&f, 0, sizeof f);
    f.format = LB_FORMAT_TEXT;
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    LbBackend *be = NULL;
    LbCheckResult check;
    memset(&check, 0, sizeof check);
    LbGrid grid;
    memset(&grid, 0, sizeof grid);
    char *command_line = NULL;
    char default_dir[64];
    uint64_t resumed_budget = 0, budget = 0;
    int created = 0; /* this run made the directory: a failed start removes it again */

    int rc = parse_flags(argc, argv, &s, &f);
    if (rc == 0 && f.help) {
        lb_help_sweep(stdout);
        goto out;
    }
    if (rc == 0)
        rc = validate(&s, &f, &meta, &resumed_budget);
    if (rc != 0)
        goto out;

    /* The directory, then the device (exit 1 leaves no new directory behind), then the check. */
    const char *dir = f.resume;
    if (!dir) {
        if (!f.out) {
            lb_outdir_default(default_dir, sizeof default_dir);
            f.out = default_dir;
        }
        dir = f.out;
        if ((rc = lb_outdir_prepare(dir, f.force, "out", 1)) != 0)
            goto out;
        created = 1;
    }
    if ((rc = lb_options_open_backend(&s, &be, &budget)) != 0)
        goto out;
    if (f.resume) {
        if (budget < resumed_budget) {
            char have[32], want[32];
            lb_format_size(budget, have, sizeof have);
            lb_format_size(resumed_budget, want, sizeof want);
            fprintf(stderr, "linbench: cannot resume %s: it ran with a memory budget of %s and this device has %s free now\n",
                    f.resume, want, have);
            rc = LB_EXIT_FAILURE;
            goto out;
        }
        budget = resumed_budget;
    }
    /* A backend that gets its arithmetic wrong is not measured: nothing is written. */
    if (!f.no_check && (rc = lb_quick_check(be, &s.model, &check)) != 0)
        goto out;
    /* This device's own limits, before the first cell: skipped with the check under --no-check,
     * unless --breakdown wants them for its percentages. */
    LbCalibration calibration;
    const int calibrate = !f.no_check || s.breakdown;
    if (calibrate && (rc = lb_sweep_calibrate(be, budget, f.quiet, &calibration)) != 0)
        goto out;
    if (f.force && (rc = lb_outdir_clear_results(dir)) != 0) /* before the first new row */
        goto out;
    created = 0; /* from here the directory holds results */

    command_line = join_command_line(argc, argv);
    LbProgress progress;
    lb_progress_init(&progress, f.quiet);
    const LbSweepJob job = {
        &s, dir, f.resume != NULL, f.resume ? &meta : NULL, command_line ? command_line : "linbench sweep", budget,
        {check.ran, check.failures > 0, check.max_rel_error, check.seed}, lb_progress_event, &progress,
        calibrate ? &calibration : NULL,
    };
    stop_requested = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SIGHUP too: a closed terminal or ssh session ends a sweep as cleanly as Ctrl-C */
    static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        sigaction(stop_signals[i], &sa, NULL);
    LbSweepOutcome outcome = LB_SWEEP_COMPLETE;
    int erc = lb_sweep_engine_run(&job, be, &stop_requested, &outcome, &grid);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        signal(stop_signals[i], SIG_DFL);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    lb_grid_print(stdout, &grid, f.format);
    fflush(stdout);
    if (outcome == LB_SWEEP_INTERRUPTED) {
        fprintf(stderr, "linbench: interrupted; finished cells are in %s (continue with: linbench sweep --resume %s)\n",
                dir, dir);
        rc = LB_EXIT_INTERRUPTED;
        goto out;
    }
    if (!f.quiet)
        fprintf(stderr, "linbench: results in %s\n", dir);
    rc = outcome == LB_SWEEP_COMPLETE ? LB_EXIT_OK : LB_EXIT_FAILURE;
out:
    if (rc != 0 && created)
        lb_outdir_abandon(); /* nothing was written: leave no empty folder */
    lb_backend_close(be);
    lb_grid_free(&grid);
    free(command_line);
    lb_run_settings_free(&s);
    lb_meta_free(&meta);
    return rc;
}
