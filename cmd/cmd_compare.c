/* linbench compare: a sweep beside the paper's Table 3 (ratio measured / paper per cell), or two
 * sweeps side by side (ratio B / A). Reads raw.csv and meta.csv, so a partial sweep works too.
 * Bad input (flags, a directory that is not a sweep's, a malformed file) exits 2; a failure to
 * write the report exits 1. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "attn/status.h"
#include "cmd/commands.h"
#include "reports/compare.h"
#include "reports/sweep_dir.h"

void lb_help_compare(FILE *out)
{
    fputs("usage: linbench compare DIR [DIR_B] [--format text|md|csv]\n\n"
          "With one directory: the sweep's time and memory grids beside Table 3 of the Linformer\n"
          "paper (16 GB Tesla V100), and per cell the ratio measured / paper. With two: both\n"
          "sweeps side by side, and per cell the ratio B / A. DIR is what linbench sweep wrote\n"
          "(raw.csv and meta.csv); a sweep still running or interrupted shows NA where a cell is\n"
          "not measured yet. Cells with k >= n show -, out of memory OOM, failed cells ERR.\n\n"
          "  --format F   text (aligned tables), md (Markdown tables) or csv (one row per cell:\n"
          "               grid,n,k,measured,paper,measured_over_paper, or grid,n,k,a,b,b_over_a)\n"
          "               (default text)\n"
          "  -h, --help   this help\n\n"
          "Exit codes: 0 done; 1 the report could not be written; 2 bad input (a flag, or a\n"
          "directory without linbench's raw.csv and meta.csv).\n",
          out);
}

/* LB_ERR_FORMAT is the user's input (exit 2); anything else is a runtime failure (exit 1). */
static int load(const char *dir, LbSweepDir *s)
{
    char why[256];
    if (lb_sweep_dir_check(dir, why, sizeof why))
        return lb_usage_error("invalid argument \"%s\" for compare: %s: should be a directory written by linbench sweep", dir, why);
    lb_error_clear();
    int rc;
    rc = lb_sweep_dir_load(dir, s);
    if (rc == LB_ERR_FORMAT)
        return lb_usage_error("invalid argument \"%s\" for compare: %s", dir, lb_error_message());
    if (rc != LB_OK) {
        fprintf(stderr, "linbench: %s\n", lb_error_message());
        return LB_EXIT_FAILURE;
    }
    return LB_EXIT_OK;
}

int lb_cmd_compare(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    LbFormat fmt = LB_FORMAT_TEXT;
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (lb_format_parse(optarg, &fmt))
                return lb_usage_error("invalid argument \"%s\" for --format: should be text, md or csv", optarg);
            break;
        case 'h': lb_help_compare(stdout); return LB_EXIT_OK;
        case ':': return lb_usage_error("flag %s needs a value (see linbench compare --help)", argv[optind - 1]);
        default: return lb_usage_error("unknown flag \"%s\" for compare (see linbench compare --help)", argv[optind - 1]);
        }
    }
    int dirs = argc - optind;
    if (dirs < 1)
        return lb_usage_error("compare needs a sweep directory: linbench compare DIR [DIR_B] (see linbench compare --help)");
    if (dirs > 2)
        return lb_usage_error("unexpected argument \"%s\" for compare: it takes one or two directories", argv[optind + 2]);

    LbSweepDir a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int ex = load(argv[optind], &a);
    if (ex == LB_EXIT_OK && dirs == 2)
        ex = load(argv[optind + 1], &b);
    if (ex != LB_EXIT_OK)
        goto out;
    lb_error_clear();
    int rc = dirs == 2 ? lb_compare_sweeps(stdout, &a, &b, fmt) : lb_compare_paper(stdout, &a, fmt);
    if (rc != LB_OK) {
        fprintf(stderr, "linbench: %s\n", lb_error_message());
        ex = LB_EXIT_FAILURE;
    } else if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "linbench: cannot write the comparison to standard output: %s\n", strerror(errno));
        ex = LB_EXIT_FAILURE;
    }
out:
    lb_sweep_dir_free(&a);
    lb_sweep_dir_free(&b);
    return ex;
}
