/* linbench merge OUT DIR...: the directories of a sharded sweep put together into one result
 * directory. The parts are checked (reports/merge.h) before anything is written (exit 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn/base/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/grid.h"
#include "reports/merge.h"
#include "reports/sweep_dir.h"

int lb_cmd_merge(LbRunSettings *o, int argc, char **argv)
{
    const int quiet = o->cmd.quiet;
    if (argc - optind < 2)
        return lb_usage_error("merge needs OUT and at least one part directory: should be linbench merge OUT DIR... (see linbench merge --help)");
    const char *out = argv[optind];
    char **dirs = argv + optind + 1;
    size_t count = (size_t)(argc - optind - 1);
    int rc = lb_outdir_check_length(out, "OUT");
    if (rc)
        return rc;

    LbMerge m;
    LbMeta meta = {0};
    LbGrid grid = {0};
    char *command = NULL;
    lb_error_clear();
    int lrc = lb_merge_load(&m, dirs, count);
    for (size_t p = 0; p < m.count && lrc != LB_ERR_NOMEM; p++)
        if (m.parts[p].raw_cut_line)
            lb_warn_cut_row(m.parts[p].dir, m.parts[p].raw_cut_line);
    if (lrc != LB_OK) {
        rc = lrc == LB_ERR_FORMAT ? lb_usage_error("%s", lb_error_message()) : lb_runtime_error(lrc);
        goto out;
    }
    /* what keeps it incomplete: cells without a row, a part that did not finish */
    char why[8192] = "";
    if (m.nmissing)
        snprintf(why, sizeof why, "%zu cells missing (%s)", m.nmissing, m.missing);
    if (m.unfinished) {
        const char *status = lb_sweep_meta(m.unfinished, "status", "");
        snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s is %s", m.nmissing ? "; " : "", m.unfinished->dir,
                 *status ? status : "(no status)");
    }
    const int complete = why[0] == '\0';

    rc = lb_outdir_prepare(out, 0, "OUT", 0);
    if (rc)
        goto out;
    command = lb_command_line(argc, argv);
    int wrc = lb_merge_meta(&m, command ? command : "linbench merge", complete ? "complete" : "incomplete", 0, &meta);
    if (wrc == LB_OK)
        wrc = lb_merge_write(&m, out, &meta, &grid);
    if (wrc != LB_OK) {
        rc = lb_runtime_error(wrc);
        /* OUT held no results before: left there, this merge's cut-short files would read as one */
        (void)lb_outdir_clear_results(out);
        lb_outdir_abandon();
        goto out;
    }
    if (!quiet)
        lb_grid_print(stdout, &grid, LB_FORMAT_TEXT);
    if (!complete)
        fprintf(stderr, "linbench: merged %zu part%s into %s, incomplete: %s\n", count, count == 1 ? "" : "s", out, why);
    else if (!quiet)
        fprintf(stderr, "linbench: merged %zu part%s into %s\n", count, count == 1 ? "" : "s", out);
    rc = LB_EXIT_OK;
out:
    lb_merge_free(&m);
    lb_grid_free(&grid);
    free(command);
    lb_meta_free(&meta);
    return rc;
}
