/* linbench merge OUT DIR...: the directories of a sharded sweep (linbench sweep --shard I/N)
 * put together into one result directory that compare and plot read like any other. The parts
 * are checked before anything is written (exit 2, nothing written): every setting of
 * the settings table records but shard, device_name and linbench_version, the same in all; no
 * cell in two parts with different rows. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attn/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/grid.h"
#include "reports/merge.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "reports/settings.h"
#include "reports/speedups.h"
#include "reports/sweep_dir.h"

/* A part's own key, not a setting the merge carries over. */
static int own_key(const char *key)
{
    static const char *const own[] = {"shard", "status", "command_line", "start_time", "end_time"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(key, own[i]) == 0)
            return 1;
    return strncmp(key, "resume_", 7) == 0 || strncmp(key, "part", 4) == 0;
}

/* meta.csv of the merge: the merge's command, status, every key all parts agree on, the parts. */
static int merged_meta(const LbSweepDir *parts, size_t count, const char *command, const char *status,
                       LbMeta *meta)
{
    int rc = lb_meta_set(meta, "command_line", "%s", command);
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "status", "%s", status);
    const LbMeta *first = &parts[0].meta;
    for (size_t i = 0; i < first->count && rc == LB_OK; i++) {
        const char *key = first->keys[i];
        if (own_key(key))
            continue;
        int common = 1;
        for (size_t p = 1; p < count && common; p++) {
            const char *v = lb_meta_get(&parts[p].meta, key);
            common = v && strcmp(v, first->values[i]) == 0;
        }
        if (common)
            rc = lb_meta_set(meta, key, "%s", first->values[i]);
    }
    if (rc == LB_OK)
        rc = lb_meta_set(meta, "parts", "%zu", count);
    for (size_t p = 0; p < count && rc == LB_OK; p++) {
        char key[32];
        snprintf(key, sizeof key, "part_%zu", p + 1);
        rc = lb_meta_set(meta, key, "%s", parts[p].dir);
    }
    return rc;
}

static int write_result(const char *out, const LbCellResult *rows, size_t nrows, const LbMeta *meta,
                        const LbSweepDir *first, const int *measured, int quiet)
{
    char path[4096];
    (void)lb_path_join_buf(path, sizeof path, out, "raw.csv");
    LbRawWriter *w = NULL;
    int rc = lb_raw_open(path, 0, &w);
    for (size_t i = 0; i < nrows && rc == LB_OK; i++)
        rc = lb_raw_append(w, &rows[i]);
    if (w)
        lb_raw_close(w);
    LbGrid g;
    memset(&g, 0, sizeof g);
    if (rc == LB_OK)
        rc = lb_grid_from_raw(rows, nrows, first->grid.n, first->grid.rows, first->grid.k, first->grid.cols, &g);
    if (rc == LB_OK)
        rc = lb_grids_write(out, &g);
    if (rc == LB_OK)
        rc = lb_speedups_write(out, rows, nrows, first->grid.n, first->grid.rows, first->grid.k,
                               first->grid.cols, measured);
    (void)lb_path_join_buf(path, sizeof path, out, "meta.csv");
    if (rc == LB_OK)
        rc = lb_meta_write(path, meta);
    if (rc == LB_OK && !quiet)
        lb_grid_print(stdout, &g, LB_FORMAT_TEXT);
    lb_grid_free(&g);
    return rc;
}

int lb_cmd_merge(int argc, char **argv)
{
    LbRunSettings o;
    const int parsed = lb_options_parse(LB_FOR_MERGE, argc, argv, &o);
    lb_run_settings_free(&o);
    if (parsed != 0)
        return parsed < 0 ? LB_EXIT_OK : parsed;
    const int quiet = o.cmd.quiet;
    if (argc - optind < 2)
        return lb_usage_error("merge needs OUT and at least one part directory: should be linbench merge OUT DIR... (see linbench merge --help)");
    const char *out = argv[optind];
    char **dirs = argv + optind + 1;
    size_t count = (size_t)(argc - optind - 1);
    int rc = lb_outdir_check_length(out, "OUT");
    if (rc)
        return rc;

    LbSweepDir *parts = calloc(count, sizeof *parts);
    struct stat *ids = calloc(count, sizeof *ids); /* each part's device and inode */
    const char **keys = malloc((LB_SET_RECORDED + 1) * sizeof *keys);
    LbCellResult *rows = NULL;
    size_t nrows = 0, loaded = 0, nkeys = 0;
    char *command = NULL;
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    if (!parts || !keys || !ids) {
        rc = lb_runtime_error(LB_FAIL(LB_ERR_NOMEM, "out of memory"));
        goto out;
    }
    for (; loaded < count; loaded++) {
        char why[256];
        const char *dir = dirs[loaded];
        if (lb_sweep_dir_check(dir, why, sizeof why)) {
            rc = lb_usage_error("invalid argument \"%s\" for merge: %s: should be a directory written by linbench sweep", dir, why);
            goto out;
        }
        /* by inode, not by spelling: "runs/a" and "./runs/a/" (or a link to it) are one part, whose
         * rows would pass the merge's own check, agreeing with themselves */
        struct stat st;
        memset(&st, 0, sizeof st);
        if (stat(dir, &st) == 0)
            for (size_t p = 0; p < loaded; p++)
                if (ids[p].st_dev == st.st_dev && ids[p].st_ino == st.st_ino) {
                    rc = lb_usage_error("invalid argument \"%s\" for merge: it is the directory of part %zu (\"%s\"): should be each part once",
                                        dir, p + 1, dirs[p]);
                    goto out;
                }
        ids[loaded] = st;
        lb_error_clear();
        int lrc = lb_sweep_dir_load(dir, &parts[loaded]);
        if (lrc != LB_OK) {
            rc = lrc == LB_ERR_FORMAT ? lb_usage_error("invalid argument \"%s\" for merge: %s", dir, lb_error_message())
                                      : lb_runtime_error(lrc);
            goto out;
        }
        if (parts[loaded].raw_cut_line)
            lb_warn_cut_row(dir, parts[loaded].raw_cut_line);
    }
    /* every setting but the shard: the parts must be one sweep cut in pieces; and one linbench
     * version, as --resume asks, or the merge holds cells of two codes and, with the version
     * no longer common to its parts, says of neither */
    for (size_t id = 0; id < LB_SET_RECORDED; id++)
        if (id != LB_SET_SHARD)
            keys[nkeys++] = lb_settings[id].key;
    keys[nkeys++] = "linbench_version";
    char why[1024];
    if (lb_merge_check_settings(parts, count, keys, nkeys, why, sizeof why) != 0) {
        rc = lb_usage_error("cannot merge: %s: should be parts of one sweep", why);
        goto out;
    }
    lb_error_clear();
    int mrc = lb_merge_rows(parts, count, &rows, &nrows, why, sizeof why);
    if (mrc < 0 && mrc != -1) {
        rc = lb_runtime_error(mrc);
        goto out;
    }
    if (mrc == -1) {
        rc = lb_usage_error("cannot merge: %s: should be measured once, or the same in both", why);
        goto out;
    }

    /* The parts agree on every setting, the model list included: the first part's stands for all. */
    int measured[LB_MODEL_COUNT];
    if (lb_models_measured(&parts[0].meta, rows, nrows, measured) != 0) {
        rc = lb_usage_error("invalid argument \"%s\" for merge: meta.csv's models \"%s\" names a model this linbench does not know",
                            parts[0].dir, lb_sweep_meta(&parts[0], lb_settings[LB_SET_MODELS].key, ""));
        goto out;
    }
    char missing[512];
    size_t nmissing = lb_merge_missing(rows, nrows, parts[0].grid.n, parts[0].grid.rows, parts[0].grid.k,
                                       parts[0].grid.cols, measured, missing, sizeof missing);
    const char *unfinished = NULL, *unfinished_status = NULL;
    for (size_t p = 0; p < count && !unfinished; p++) {
        const char *st = lb_sweep_meta(&parts[p], "status", "");
        if (strcmp(st, "complete") != 0) {
            unfinished = parts[p].dir;
            unfinished_status = st;
        }
    }
    int complete = !unfinished && nmissing == 0;

    rc = lb_outdir_prepare(out, 0, "OUT", 0);
    if (rc)
        goto out;
    command = lb_command_line(argc, argv);
    int wrc = merged_meta(parts, count, command ? command : "linbench merge", complete ? "complete" : "incomplete", &meta);
    if (wrc == LB_OK)
        wrc = write_result(out, rows, nrows, &meta, &parts[0], measured, quiet);
    if (wrc != LB_OK) {
        rc = lb_runtime_error(wrc);
        /* OUT held no results before (lb_outdir_prepare): what is in it now is this merge's, cut
         * short, and left there it would read as a result and refuse the merge run again */
        (void)lb_outdir_clear_results(out);
        lb_outdir_abandon();
        goto out;
    }
    if (!complete) {
        if (nmissing)
            fprintf(stderr, "linbench: merged %zu parts into %s, incomplete: %zu cells missing (%s)%s%s%s%s\n", count, out,
                    nmissing, missing, unfinished ? "; " : "", unfinished ? unfinished : "", unfinished ? " is " : "",
                    unfinished ? (*unfinished_status ? unfinished_status : "(no status)") : "");
        else
            fprintf(stderr, "linbench: merged %zu parts into %s, incomplete: %s is %s\n", count, out, unfinished,
                    *unfinished_status ? unfinished_status : "(no status)");
    } else if (!quiet) {
        fprintf(stderr, "linbench: merged %zu parts into %s\n", count, out);
    }
    rc = LB_EXIT_OK;
out:
    for (size_t p = 0; p < loaded && parts; p++)
        lb_sweep_dir_free(&parts[p]);
    free(parts);
    free(ids);
    free(keys);
    free(rows);
    free(command);
    lb_meta_free(&meta);
    return rc;
}
