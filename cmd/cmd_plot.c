/* linbench plot: gnuplot scripts and data of a sweep (two speedup heatmaps, time per sequence
 * against n), or of a sweep beside bench/peer's result (reports/plot.h),
 * rendered to PNG and SVG where gnuplot is on PATH. Without gnuplot the scripts are
 * still written and one line says how to render them. Bad input exits 2; a file that cannot be
 * written, or a failed render, exits 1. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/sizes.h"
#include "attn/status.h"
#include "cmd/commands.h"
#include "cmd/outdir.h"
#include "reports/compare.h"
#include "reports/plot.h"
#include "reports/sweep_dir.h"

void lb_help_plot(FILE *out)
{
    fputs("usage: linbench plot DIR [PEER_DIR] [--out DIR] [--no-render]\n\n"
          "Writes gnuplot scripts of the sweep in DIR (from its raw.csv and meta.csv):\n"
          "  time_speedup.gp     heatmap of the time grid (Linformer against standard), n\n"
          "                      against k, the value in each cell\n"
          "  memory_speedup.gp   the same for the memory grid\n"
          "  time_per_seq.gp     ms per sequence against n, log-log, one line per model and k\n"
          "and for each other model measured, against standard:\n"
          "  time_speedup_MODEL.gp, memory_speedup_MODEL.gp   its heatmaps, for a model with a k\n"
          "                      axis (performer)\n"
          "  speedup_MODEL.gp    time and memory saved against n, for one without (chunked)\n"
          "and the same against the other exact baselines measured (chunked, flash), named\n"
          "MODEL_vs_BASELINE: time_speedup_linformer_vs_flash.gp, speedup_standard_vs_flash.gp\n"
          "and, for a sweep run with --breakdown, per model of its breakdown.csv:\n"
          "  breakdown_MODEL.gp  a stacked bar per cell, one segment per operation's share\n"
          "each with its data (NAME.plot.csv), and where gnuplot is on PATH renders NAME.png and\n"
          "NAME.svg. A script works from any directory: gnuplot DIR/time_speedup.gp.\n\n"
          "With PEER_DIR, what bench/peer wrote (the same encoder in PyTorch; either order), these\n"
          "instead, into PEER_DIR by default:\n"
          "  versus_time_per_seq.gp  ms per sequence against n of every linbench model and every\n"
          "                      peer model (its work's colour, open points; torch-sdpa near-black)\n"
          "  versus_time_ratio.gp    linbench / peer ms per sequence against n, per pair of the\n"
          "                      same work (as linbench compare DIR PEER_DIR pairs them)\n"
          "  versus_batch_ratio.gp   the same for the largest batch\n"
          "  versus_energy_ratio.gp  the same for J per sequence, where both sides have energy\n\n"
          "  -o, --out DIR   where the scripts, data and images go; created if missing\n"
          "                  (default: the sweep's DIR; with PEER_DIR, PEER_DIR)\n"
          "  --no-render     write the scripts and data only, do not run gnuplot (default: render\n"
          "                  when gnuplot is on PATH)\n"
          "  --render-timeout SEC  stop a gnuplot that has not finished one plot in SEC seconds,\n"
          "                  1 to 3600 (default 60)\n"
          "  -h, --help      this help\n\n"
          "Exit codes: 0 done (also when gnuplot is missing: the scripts are written); 1 a file\n"
          "could not be written or gnuplot failed; 2 bad input (a flag, or a directory without\n"
          "linbench's raw.csv and meta.csv, or with one that does not read). A raw.csv whose\n"
          "last row is cut short is read without it, with a warning on stderr.\n",
          out);
}

/* An argument for the hint line, quoted for a POSIX shell when it needs it. */
static void print_shell_word(FILE *f, const char *s)
{
    if (s[strcspn(s, " \t\n'\"\\$`*?[]{}()<>|&;#~")] == '\0' && *s) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

enum { OPT_OUT = 'o', OPT_HELP = 'h', OPT_NO_RENDER = 1000, OPT_RENDER_TIMEOUT };

int lb_cmd_plot(int argc, char **argv)
{
    static const struct option longopts[] = {{"out", required_argument, NULL, OPT_OUT},
                                             {"no-render", no_argument, NULL, OPT_NO_RENDER},
                                             {"render-timeout", required_argument, NULL, OPT_RENDER_TIMEOUT},
                                             {"help", no_argument, NULL, OPT_HELP},
                                             {NULL, 0, NULL, 0}};
    const char *out_dir = NULL;
    int render = 1, timeout_s = 60, c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_OUT:
            if (!*optarg)
                return lb_usage_error("invalid argument \"\" for --out: should be a directory");
            out_dir = optarg;
            break;
        case OPT_NO_RENDER: render = 0; break;
        case OPT_RENDER_TIMEOUT:
            if (lb_parse_int(optarg, 1, 3600, &timeout_s))
                return lb_usage_error("invalid argument \"%s\" for --render-timeout: should be an integer from 1 to 3600", optarg);
            break;
        case OPT_HELP: lb_help_plot(stdout); return LB_EXIT_OK;
        case ':': return lb_usage_error("flag %s needs a value (see linbench plot --help)", argv[optind - 1]);
        default: return lb_usage_error("unknown flag \"%s\" for plot (see linbench plot --help)", argv[optind - 1]);
        }
    }
    const int dirs = argc - optind;
    if (dirs < 1)
        return lb_usage_error("plot needs a sweep directory: linbench plot DIR (see linbench plot --help)");
    if (dirs > 2)
        return lb_usage_error("unexpected argument \"%s\" for plot: it takes a sweep's directory and, beside it, a peer's", argv[optind + 2]);
    char why[256];
    for (int i = 0; i < dirs; i++) {
        const char *d = argv[optind + i];
        if (strlen(d) > LB_DIR_MAX)
            return lb_usage_error("invalid argument \"%s\" for plot: should be a path of at most %d bytes", d, LB_DIR_MAX);
        if (lb_sweep_dir_check(d, why, sizeof why))
            return lb_usage_error("invalid argument \"%s\" for plot: %s: should be a directory written by linbench sweep", d, why);
    }
    if (out_dir && lb_outdir_check_length(out_dir, "--out") != 0)
        return LB_EXIT_USAGE;
    struct stat st;
    if (out_dir && stat(out_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return lb_usage_error("invalid argument \"%s\" for --out: not a directory: should be a directory (created if missing)", out_dir);

    LbSweepDir d[2];
    memset(d, 0, sizeof d);
    int ex = LB_EXIT_OK;
    for (int i = 0; i < dirs && ex == LB_EXIT_OK; i++) {
        lb_error_clear();
        const int rc = lb_result_load(argv[optind + i], &d[i]);
        if (rc == LB_ERR_FORMAT) {
            ex = lb_usage_error("invalid argument \"%s\" for plot: %s", argv[optind + i], lb_error_message());
        } else if (rc != LB_OK) {
            fprintf(stderr, "linbench: %s\n", lb_error_message());
            ex = LB_EXIT_FAILURE;
        } else if (d[i].raw_cut_line) {
            lb_warn_cut_row(argv[optind + i], d[i].raw_cut_line);
        }
    }
    if (ex != LB_EXIT_OK)
        goto out;
    if (dirs == 2 && (d[0].kind == LB_RESULT_PEER) == (d[1].kind == LB_RESULT_PEER)) {
        ex = lb_usage_error("invalid argument \"%s\" for plot: a second directory should be a result of bench/peer beside a linbench sweep", argv[optind + 1]);
        goto out;
    }
    /* with two, linbench's first and the peer's second, whichever order they came in */
    LbSweepDir *s = &d[dirs == 2 && d[0].kind == LB_RESULT_PEER], *peer = dirs == 2 ? &d[d[0].kind != LB_RESULT_PEER] : NULL;
    lb_error_clear();
    if (lb_compare_check(s, peer) != LB_OK) {
        ex = lb_usage_error("invalid argument \"%s\" for plot: %s", peer ? peer->dir : s->dir, lb_error_message());
        goto out;
    }
    if (!out_dir)
        out_dir = peer ? peer->dir : s->dir;
    if (stat(out_dir, &st) != 0 && lb_outdir_create(out_dir) != 0) {
        ex = LB_EXIT_FAILURE; /* lb_outdir_create said why */
        goto out;
    }
    lb_error_clear();
    LbPlotList plots;
    int rc = peer ? lb_plot_peer_write(s, peer, out_dir, &plots) : lb_plot_write(s, out_dir, &plots);
    if (rc != LB_OK) {
        fprintf(stderr, "linbench: %s\n", lb_error_message());
        ex = LB_EXIT_FAILURE;
        goto out;
    }
    char scripts[LB_PLOT_MAX][4096];
    for (size_t i = 0; i < plots.count; i++)
        snprintf(scripts[i], sizeof scripts[i], "%s%s%s.gp", out_dir,
                 out_dir[strlen(out_dir) - 1] == '/' ? "" : "/", plots.name[i]);
    char gnuplot[4096];
    if (!render || lb_plot_find_gnuplot(gnuplot, sizeof gnuplot) != 0) {
        printf("%s: render with: gnuplot", render ? "gnuplot is not on PATH; wrote the scripts"
                                                 : "wrote the scripts");
        for (size_t i = 0; i < plots.count; i++) {
            putchar(' ');
            print_shell_word(stdout, scripts[i]);
        }
        putchar('\n');
        goto out;
    }
    for (size_t i = 0; i < plots.count; i++) {
        lb_error_clear();
        rc = lb_plot_render(gnuplot, scripts[i], timeout_s);
        if (rc != LB_OK) {
            fprintf(stderr, "linbench: %s\n", lb_error_message());
            ex = LB_EXIT_FAILURE;
            continue;
        }
        char base[4096];
        snprintf(base, sizeof base, "%.*s", (int)(strlen(scripts[i]) - 3), scripts[i]);
        printf("wrote %s.png and %s.svg\n", base, base);
    }
out:
    if (fflush(stdout) != 0 && ex == LB_EXIT_OK)
        ex = LB_EXIT_FAILURE;
    lb_sweep_dir_free(&d[0]);
    lb_sweep_dir_free(&d[1]);
    return ex;
}
