/* linbench compare DIR [DIR_B] (reports/compare.h), from raw.csv and meta.csv, so a partial sweep
 * works too. Bad input (flags, a directory that is not a result, a malformed file, two results that
 * do not compare) exits 2; a failure to write the report exits 1. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "reports/compare.h"
#include "reports/settings.h"
#include "reports/sweep_dir.h"
#include "cmd/sweep/engine.h"

/* raw.csv rows that meta.csv's settings did not produce (a resume of a linbench that kept them, a
 * hand-edited file): one note, so a comparison that leaves them out, or shows them, does not pass
 * in silence. No note where the settings do not read (a meta.csv from before a setting). */
static void note_foreign_rows(const LbSweepDir *d)
{
    LbRunSettings s;
    if (lb_run_settings_init(&s) != LB_OK)
        return;
    char path[4096], why[512];
    size_t line = 0, count = 0;
    if (lb_run_settings_take(&s, &d->meta, d->dir) == LB_OK && lb_path_join_buf(path, sizeof path, d->dir, "raw.csv") == 0 &&
        lb_sweep_raw_foreign(&s, path, &line, &count, why, sizeof why) == LB_OK && count > 0)
        fprintf(stderr, "linbench: note: %s line %zu: %s (%zu such row%s): rows its meta.csv's settings did not produce\n",
                path, line, why, count, count == 1 ? "" : "s");
    lb_run_settings_free(&s);
    lb_error_clear();
}

static int load(const char *dir, LbSweepDir *s)
{
    const int ex = lb_load_result("compare", dir, s);
    if (ex == LB_EXIT_OK && s->kind != LB_RESULT_PEER)
        note_foreign_rows(s);
    return ex;
}

int lb_cmd_compare(LbRunSettings *o, int argc, char **argv)
{
    const LbFormat fmt = (LbFormat)o->cmd.format;
    int dirs = argc - optind;
    if (dirs < 1)
        return lb_usage_error("compare needs a sweep directory: linbench compare DIR [DIR_B] (see linbench compare --help)");
    if (dirs > 2)
        return lb_usage_error("unexpected argument \"%s\" for compare: it takes one or two directories", argv[optind + 2]);

    LbSweepDir a = {0}, b = {0};
    int ex = load(argv[optind], &a);
    if (ex == LB_EXIT_OK && dirs == 2)
        ex = load(argv[optind + 1], &b);
    if (ex != LB_EXIT_OK)
        goto out;
    lb_error_clear();
    const LbSweepDir *second = dirs == 2 ? &b : NULL;
    if (lb_compare_check(&a, second) != LB_OK) { /* name the side that is not the sweep */
        const int blame_b = second && (b.kind == LB_RESULT_PEER || (b.kind == LB_RESULT_PREDICTED && a.kind == LB_RESULT_SWEEP));
        ex = lb_usage_error("invalid argument \"%s\" for compare: %s", blame_b ? b.dir : a.dir, lb_error_message());
        goto out;
    }
    char devices[512]; /* text and md say so in their header; CSV has none */
    if (second && fmt == LB_FORMAT_CSV && a.kind != LB_RESULT_PEER && b.kind != LB_RESULT_PEER &&
        lb_compare_devices_differ(&a, &b, devices, sizeof devices))
        fprintf(stderr, "linbench: note: devices differ: %s: the ratios compare the devices as well\n", devices);
    const int rc = lb_compare(stdout, &a, second, fmt);
    if (rc != LB_OK)
        ex = lb_runtime_error(rc);
    else if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "linbench: cannot write the comparison to standard output: %s\n", strerror(errno));
        ex = LB_EXIT_FAILURE;
    }
out:
    lb_sweep_dir_free(&a);
    lb_sweep_dir_free(&b);
    return ex;
}
