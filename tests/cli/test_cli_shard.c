/* linbench sweep --shard and linbench merge: three shards of a CPU sweep, merged, hold the same
 * cells (model, n, k), statuses and batches, and the same settings, as the unsharded sweep
 * (times differ between runs on the CPU, so they are not compared); each cell is in exactly one
 * shard; compare reads the merge. Bad --shard values, parts of different sweeps or linbench
 * versions, a cell measured twice with different values, one part given twice and a missing part
 * are refused (exit 2, one line, nothing written); a merge short of shards says which cells are
 * missing. Usage: test_cli_shard PATH */
#include <string.h>

#include "reports/meta.h"
#include "reports/raw.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *bin;

#define GRID "--device", "cpu", "--layers", "1", "--heads", "2", "--ffn", "32", "--vocab", "100", "--n", "32:256", \
             "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "-q"
#define CELLS 12 /* n 32, 64, 128, 256: 4 standard + 4 * 2 Linformer */

/* The sweep settings (reports/settings.c's recorded ones but shard). */
static const char *const settings[] = {"device", "mem_limit", "dtype", "tf32", "layers", "d_model", "heads", "ffn",
                                       "vocab", "sharing", "order", "seed", "n_list", "k_list", "cell_time_s",
                                       "max_batch", "headroom", "device_name", NULL};

static int read_meta(const char *dir, LbMeta *m)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    memset(m, 0, sizeof *m);
    return lb_meta_read(path, m);
}

static int same_cell(const LbCellResult *a, const LbCellResult *b)
{
    return a->model == b->model && a->n == b->n && a->k == b->k;
}

static LbRun sweep(const char *d_model, const char *shard, const char *out)
{
    char *argv[] = {(char *)bin, "sweep", GRID, "--d-model", (char *)d_model, "--out", (char *)out,
                    shard ? "--shard" : NULL, (char *)shard, NULL};
    return lb_run(argv);
}

static LbRun merge(const char *out, const char *a, const char *b, const char *c)
{
    char *argv[] = {(char *)bin, "merge", "-q", (char *)out, (char *)a, (char *)b, (char *)c, NULL};
    return lb_run(argv);
}

/* merge OUT A B C refused: exit 2, one line holding `word` and `name`, nothing written */
static void refused(const char *what, const char *out, const char *a, const char *b, const char *c, const char *word,
                    const char *name)
{
    lb_check_refusal(merge(out, a, b, c), what, word, name);
    lb_check(!lb_exists(out), "merge of %s: nothing written", what);
}

/* a copy of dir, its first row's batch one more (other_batch: the same cell measured differently)
 * or its meta.csv's linbench_version another's (version, when not NULL) */
static void copy_changed(const char *from, const char *to, int other_batch, const char *version)
{
    LbCellResult *rows;
    size_t count;
    LbMeta m;
    char path[2048];
    mkdir(to, 0777);
    if (sc_read_rows(from, &rows, &count) != 0 || count == 0 || read_meta(from, &m) != 0)
        return;
    rows[0].batch += other_batch;
    snprintf(path, sizeof path, "%s/raw.csv", to);
    LbRawWriter *w;
    if (lb_raw_open(path, 0, &w) == 0) {
        for (size_t i = 0; i < count; i++)
            lb_raw_append(w, &rows[i]);
        lb_raw_close(w);
    }
    if (version)
        lb_meta_set(&m, "linbench_version", "%s", version);
    snprintf(path, sizeof path, "%s/meta.csv", to);
    lb_meta_write(path, &m);
    lb_meta_free(&m);
    free(rows);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_shard");
    const char *scratch = lb_scratch;
    char whole[512], shard[3][512], merged[512], other[512], twice[512];
    snprintf(whole, sizeof whole, "%s/whole", scratch);
    snprintf(merged, sizeof merged, "%s/merged", scratch);
    snprintf(other, sizeof other, "%s/other", scratch);
    snprintf(twice, sizeof twice, "%s/twice", scratch);

    LbRun r = sweep("16", NULL, whole);
    lb_check(r.code == 0, "unsharded sweep exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    for (int i = 0; i < 3; i++) {
        char spec[16];
        snprintf(spec, sizeof spec, "%d/3", i);
        snprintf(shard[i], sizeof shard[i], "%s/shard-%d", scratch, i);
        r = sweep("16", spec, shard[i]);
        lb_check(r.code == 0, "sweep --shard %s exits 0 (%d): %s", spec, r.code, r.err);
        lb_run_free(&r);
        sc_check_meta(shard[i], "shard", spec, shard[i]);
    }

    /* each cell in exactly one shard, and every shard has some */
    LbCellResult *rows[3];
    size_t count[3], total = 0;
    for (int i = 0; i < 3; i++) {
        lb_check(sc_read_rows(shard[i], &rows[i], &count[i]) == 0, "shard %d's raw.csv reads back", i);
        lb_check(count[i] > 0, "shard %d measured some cells (%zu)", i, count[i]);
        total += count[i];
        for (int j = 0; j < i; j++)
            for (size_t a = 0; a < count[i]; a++)
                for (size_t b = 0; b < count[j]; b++)
                    lb_check(!same_cell(&rows[i][a], &rows[j][b]), "cell n=%lld k=%lld in shards %d and %d",
                             (long long)rows[i][a].n, (long long)rows[i][a].k, j, i);
    }
    lb_check(total == CELLS, "the shards hold %d cells together (%zu)", CELLS, total);
    for (int i = 0; i < 3; i++)
        free(rows[i]);

    /* the merge: the unsharded sweep's cells, statuses, batches and settings */
    r = merge(merged, shard[0], shard[1], shard[2]);
    lb_check(r.code == 0, "merge of the 3 shards exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_same_rows(merged, whole, 1, "the merge");
    sc_same_settings(merged, whole, settings, "the merge");
    char *shard_key = sc_meta(merged, "shard");
    lb_check(shard_key == NULL, "merged meta.csv has no shard");
    free(shard_key);
    sc_check_meta(merged, "status", "complete", "the merge");
    sc_check_meta(merged, "parts", "3", "the merge");
    sc_check_meta(merged, "part_1", shard[0], "the merge");
    lb_check(lb_exists_in(merged, "time_speedup.csv"), "the merge wrote time_speedup.csv");
    char *cmp[] = {(char *)bin, "compare", merged, whole, "--format", "csv", NULL};
    r = lb_run(cmp);
    lb_check(r.code == 0 && !strstr(r.out, "NA"), "compare reads the merge, no cell NA (%d): %s", r.code, r.err);
    lb_run_free(&r);

    /* bad --shard: exit 2, one line naming the flag, nothing written */
    static const char *const bad[] = {"3/3", "-1/3", "0/0", "1", "a/3", "1/3x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lb_check_refusal(sweep("16", bad[i], other), bad[i], "--shard");
        lb_check(!lb_exists(other), "--shard %s: nothing written", bad[i]);
    }
    /* --resume of a shard keeps it; another --shard is refused */
    char *res[] = {(char *)bin, "sweep", "--resume", shard[1], "--shard", "2/3", "-q", NULL};
    lb_run_refused(res, "--shard", "1/3");

    /* parts of another sweep: a different --d-model */
    r = sweep("32", "1/3", other);
    lb_run_free(&r);
    char out[600];
    snprintf(out, sizeof out, "%s/refused", scratch);
    refused("parts with different --d-model", out, shard[0], other, shard[2], "d_model", other);
    /* a cell in two parts with different values */
    copy_changed(shard[0], twice, 1, NULL);
    refused("a cell measured twice differently", out, shard[0], twice, shard[1], "cell", twice);
    /* a part measured by another linbench version (0.0.1): its cells are another code's */
    char older[600], theirs[700];
    snprintf(older, sizeof older, "%s/older", scratch);
    snprintf(theirs, sizeof theirs, "\"0.0.1\" in %s", older);
    copy_changed(shard[1], older, 0, "0.0.1");
    refused("a part from another linbench version", out, shard[0], older, shard[2], "linbench_version", theirs);
    /* one part given twice, spelled two ways: its rows would agree with themselves */
    char again[700];
    snprintf(again, sizeof again, "%s/./", shard[0]);
    refused("a part given twice", out, shard[0], again, shard[1], "part 1", again);
    /* two of three shards */
    r = merge(out, shard[0], shard[1], NULL);
    LbCellResult *d = NULL;
    size_t nd = 0;
    lb_check(r.code == 0 && sc_read_rows(out, &d, &nd) == 0 && nd == count[0] + count[1],
             "two of three shards: their cells (%d, %zu rows): %s", r.code, nd, r.err);
    free(d);
    lb_check(strstr(r.err, "incomplete") && strstr(r.err, "missing") != NULL, "two of three shards: incomplete, cells missing named: %s", r.err);
    sc_check_meta(out, "status", "incomplete", "two of three shards");
    lb_run_free(&r);
    /* --resume measures the missing cells and keeps where the first rows came from */
    char *finish[] = {(char *)bin, "sweep", "--resume", out, "-q", NULL};
    lb_run_ok(finish, "--resume of the incomplete merge: exit 0");
    /* ...its resume recorded, parts and part_N kept */
    char *resumed = sc_meta(out, "resume_1_time");
    lb_check(resumed != NULL, "the resumed merge records its resume");
    free(resumed);
    sc_check_meta(out, "status", "complete", "the resumed merge");
    sc_check_meta(out, "parts", "2", "the resumed merge");
    sc_check_meta(out, "part_1", shard[0], "the resumed merge");
    sc_check_meta(out, "part_2", shard[1], "the resumed merge");
    /* an OUT that holds results: the refusal names merge's argument, which is no flag */
    r = merge(shard[2], shard[0], shard[1], shard[2]);
    lb_check(r.code == 2 && lb_lines(r.err) == 1 && strstr(r.err, "OUT ") && strstr(r.err, "already holds results") &&
                 !strstr(r.err, "--out"),
             "merge into a part: exit 2, one line naming OUT, not --out (%d): %s", r.code, r.err);
    lb_run_free(&r);
    /* a missing part */
    char gone[600];
    snprintf(gone, sizeof gone, "%s/no-such-part", scratch);
    snprintf(out, sizeof out, "%s/refused2", scratch);
    refused("a missing part", out, shard[0], gone, shard[2], "no-such-part", gone);
    return lb_test_finish("test_cli_shard");
}
