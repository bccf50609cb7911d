/* linbench plot DIR [PEER_DIR] (reports/plot.h), rendered where gnuplot is on PATH; without it the
 * scripts are still written and one line says how to render them. Bad input exits 2; a file that
 * cannot be written, or a failed render, exits 1. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/base/paths.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/compare.h"
#include "reports/plot.h"
#include "reports/sweep_dir.h"

int lb_cmd_plot(LbRunSettings *o, int argc, char **argv)
{
    const char *out_dir = o->cmd.out;
    const int render = !o->cmd.no_render, timeout_s = o->cmd.render_timeout;
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
        /* every directory and --out before any is loaded, so a loaded one's warning never comes first */
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
    for (int i = 0; i < dirs && ex == LB_EXIT_OK; i++)
        ex = lb_load_result("plot", argv[optind + i], &d[i]);
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
        ex = lb_runtime_error(rc);
        goto out;
    }
    char gnuplot[4096], base[4096], script[4104];
    const int found = render && lb_find_on_path("gnuplot", gnuplot, sizeof gnuplot) == 0;
    if (!found)
        printf("%s: render with: gnuplot", render ? "gnuplot is not on PATH; wrote the scripts" : "wrote the scripts");
    for (size_t i = 0; i < plots.count; i++) {
        lb_path_join_buf(base, sizeof base, out_dir, plots.name[i]);
        /* gnuplot reads a word that starts with '-' as an option: -hd/time_speedup.gp goes as ./-hd/... */
        snprintf(script, sizeof script, "%s%s.gp", base[0] == '-' ? "./" : "", base);
        if (!found) {
            putchar(' ');
            lb_put_shell_word(stdout, script);
            continue;
        }
        lb_error_clear();
        if ((rc = lb_plot_render(gnuplot, script, timeout_s)) != LB_OK)
            ex = lb_runtime_error(rc);
        else
            printf("wrote %s.png and %s.svg\n", base, base);
    }
    if (!found)
        putchar('\n');
out:
    /* stdout that cannot be written: main's finish_output says so (failing here, it said nothing) */
    lb_sweep_dir_free(&d[0]);
    lb_sweep_dir_free(&d[1]);
    return ex;
}
