/* linbench compare: a sweep beside the paper's Table 3 (ratio measured / paper per cell), or two
 * sweeps side by side (ratio B / A), or a sweep beside bench/peer's result (the same encoder in
 * PyTorch, reports/compare_peer.h), in either order. Reads raw.csv and meta.csv, so a partial
 * sweep works too. Bad input (flags, a directory that is not a sweep's, a malformed file, a peer's
 * result of another model) exits 2; a failure to write the report exits 1. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "attn/paths.h"
#include "attn/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "reports/compare.h"
#include "reports/compare_peer.h"
#include "reports/compare_predicted.h"
#include "reports/peer_dir.h"
#include "reports/settings.h"
#include "reports/sweep_dir.h"
#include "reports/sweep_engine.h"

/* Whether dir holds a result (raw.csv and meta.csv) and which: 1 bench/peer's, 0 linbench's; or
 * the exit code of a usage error, negated. */
static int result_kind(const char *dir)
{
    char why[256];
    if (lb_sweep_dir_check(dir, why, sizeof why))
        return -lb_usage_error("invalid argument \"%s\" for compare: %s: should be a directory written by linbench sweep", dir, why);
    return lb_result_dir_is_peer(dir) == 1;
}

/* LB_ERR_FORMAT is the user's input (exit 2); anything else is a runtime failure (exit 1). */
static int exit_for(const char *dir, int rc)
{
    if (rc == LB_ERR_FORMAT)
        return lb_usage_error("invalid argument \"%s\" for compare: %s", dir, lb_error_message());
    fprintf(stderr, "linbench: %s\n", lb_error_message());
    return LB_EXIT_FAILURE;
}

/* raw.csv rows that meta.csv's settings did not produce (a resume of a linbench that kept them, a
 * hand-edited file): one note, so a comparison that leaves them out, or shows them, does not pass
 * in silence. No note where the settings do not read (a meta.csv from before a setting). */
static void note_foreign_rows(const LbSweepDir *d)
{
    LbRunSettings s;
    LbSettingProblem p;
    if (lb_run_settings_init(&s) != LB_OK)
        return;
    char path[4096], why[512];
    size_t line = 0, count = 0;
    if (lb_run_settings_take(&s, &d->meta, &p) == 0 && lb_path_join_buf(path, sizeof path, d->dir, "raw.csv") == 0 &&
        lb_sweep_raw_foreign(&s, path, &line, &count, why, sizeof why) == LB_OK && count > 0)
        fprintf(stderr, "linbench: note: %s line %zu: %s (%zu such row%s): rows its meta.csv's settings did not produce\n",
                path, line, why, count, count == 1 ? "" : "s");
    lb_setting_problem_free(&p);
    lb_run_settings_free(&s);
    lb_error_clear();
}

static int load(const char *dir, LbSweepDir *s)
{
    lb_error_clear();
    int rc;
    rc = lb_sweep_dir_load(dir, s);
    if (rc != LB_OK)
        return exit_for(dir, rc);
    if (s->raw_cut_line)
        lb_warn_cut_row(dir, s->raw_cut_line);
    note_foreign_rows(s);
    return LB_EXIT_OK;
}

/* A linbench sweep beside a peer's result (either order on the command line). */
static int compare_peer(const char *lin_dir, const char *peer_dir, LbFormat fmt)
{
    LbSweepDir lin;
    LbPeerDir peer;
    memset(&lin, 0, sizeof lin);
    memset(&peer, 0, sizeof peer);
    int ex = load(lin_dir, &lin);
    if (ex == LB_EXIT_OK) {
        lb_error_clear();
        int rc = lb_peer_dir_load(peer_dir, &peer);
        if (rc != LB_OK)
            ex = exit_for(peer_dir, rc);
    }
    if (ex == LB_EXIT_OK && lb_compare_peer_check(&lin, &peer) != LB_OK)
        ex = lb_usage_error("invalid argument \"%s\" for compare: %s", peer_dir, lb_error_message());
    if (ex == LB_EXIT_OK) {
        lb_error_clear();
        if (lb_compare_peer(stdout, &lin, &peer, fmt) != LB_OK) {
            fprintf(stderr, "linbench: %s\n", lb_error_message());
            ex = LB_EXIT_FAILURE;
        } else if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "linbench: cannot write the comparison to standard output: %s\n", strerror(errno));
            ex = LB_EXIT_FAILURE;
        }
    }
    lb_sweep_dir_free(&lin);
    lb_peer_dir_free(&peer);
    return ex;
}

int lb_cmd_compare(int argc, char **argv)
{
    LbRunSettings o;
    const int parsed = lb_options_parse(LB_FOR_COMPARE, argc, argv, &o);
    lb_run_settings_free(&o);
    if (parsed != 0)
        return parsed < 0 ? LB_EXIT_OK : parsed;
    const LbFormat fmt = (LbFormat)o.cmd.format;
    int dirs = argc - optind;
    if (dirs < 1)
        return lb_usage_error("compare needs a sweep directory: linbench compare DIR [DIR_B] (see linbench compare --help)");
    if (dirs > 2)
        return lb_usage_error("unexpected argument \"%s\" for compare: it takes one or two directories", argv[optind + 2]);

    int kind[2] = {0, 0};
    for (int i = 0; i < dirs; i++)
        if ((kind[i] = result_kind(argv[optind + i])) < 0)
            return -kind[i];
    if (dirs == 2 && kind[0] && kind[1])
        return lb_usage_error("invalid argument \"%s\" for compare: both directories are results of bench/peer: should be a linbench sweep and a peer's result", argv[optind + 1]);
    if (dirs == 2 && (kind[0] || kind[1]))
        return compare_peer(argv[optind + kind[0]], argv[optind + !kind[0]], fmt); /* linbench's, the peer's */

    LbSweepDir a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    int ex = load(argv[optind], &a);
    if (ex == LB_EXIT_OK && dirs == 2)
        ex = load(argv[optind + 1], &b);
    if (ex != LB_EXIT_OK)
        goto out;
    lb_error_clear();
    /* a sweep and linbench predict's forecast, in either order: measured / predicted per cell */
    const int pa = lb_meta_is_predicted(&a.meta), pb = dirs == 2 && lb_meta_is_predicted(&b.meta);
    if (dirs == 2 && pa != pb && lb_compare_predicted_check(pa ? &b : &a, pa ? &a : &b) != LB_OK) {
        ex = lb_usage_error("invalid argument \"%s\" for compare: %s", pa ? a.dir : b.dir, lb_error_message());
        goto out;
    }
    char devices[512]; /* text and md say so in their header; CSV has none */
    if (dirs == 2 && fmt == LB_FORMAT_CSV && lb_compare_devices_differ(pa ? &b : &a, pa ? &a : &b, devices, sizeof devices))
        fprintf(stderr, "linbench: note: devices differ: %s: the ratios compare the devices as well\n", devices);
    int rc = dirs == 2 && pa != pb ? lb_compare_predicted(stdout, pa ? &b : &a, pa ? &a : &b, fmt)
             : dirs == 2           ? lb_compare_sweeps(stdout, &a, &b, fmt)
                                   : lb_compare_paper(stdout, &a, fmt);
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
