/* linbench sweep --shard and linbench merge: three shards of a CPU sweep, merged, hold the
 * unsharded sweep's cells, statuses, batches and settings (not times: they differ between runs),
 * each cell in one shard; the refusals of bad shards and parts; a merge short of shards; and
 * linbench slurm, which writes and submits the same as Slurm jobs. Usage: test_cli_shard PATH */
#include <limits.h>
#include <string.h>

#include "tests/cli/sweep_check.h"

static const char *bin;
/* linbench's argv: ARGV("sweep", GRID, "--out", dir) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)

#define GRID "--device", "cpu", "--layers", "1", "--heads", "2", "--ffn", "32", "--vocab", "100", "--n", "32:256", \
             "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "-q"
#define CELLS 12 /* n 32, 64, 128, 256: 4 standard + 4 * 2 Linformer */

/* The sweep settings (reports/settings.c's recorded ones but shard). */
static const char *const settings[] = {"device", "mem_limit", "dtype", "tf32", "layers", "d_model", "heads", "ffn",
                                       "vocab", "sharing", "order", "seed", "n_list", "k_list", "cell_time_s",
                                       "max_batch", "headroom", "device_name", NULL};

static LbRun sweep(const char *d_model, const char *shard, const char *out)
{
    return lb_run(ARGV("sweep", GRID, "--d-model", (char *)d_model, "--out", (char *)out, shard ? "--shard" : NULL,
                       (char *)shard));
}

static LbRun merge(const char *out, const char *a, const char *b, const char *c)
{
    return lb_run(ARGV("merge", "-q", (char *)out, (char *)a, (char *)b, (char *)c));
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
    LbMeta m = {0};
    char path[2048];
    mkdir(to, 0777);
    snprintf(path, sizeof path, "%s/meta.csv", from);
    if (sc_read_rows(from, &rows, &count) != 0 || count == 0 || lb_meta_read(path, &m) != 0)
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

#define FLAGS GRID, "--d-model", "16"

/* the line of text starting with prefix, or NULL */
static const char *line_with(const char *text, const char *prefix)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, strlen(prefix)) == 0)
            return p;
    return NULL;
}

static LbRun bash(const char *script, const char *task)
{
    if (task)
        setenv("SLURM_ARRAY_TASK_ID", task, 1);
    LbRun r = lb_run(LB_ARGV("/bin/bash", (char *)script));
    unsetenv("SLURM_ARRAY_TASK_ID");
    return r;
}

/* linbench slurm without a real Slurm: the two scripts carry the array, GPU, partition, time and
 * account, and run by bash as Slurm would (a quote and a space in the path) leave a complete merge;
 * --submit calls a stand-in sbatch twice, the second depending on the first; no sbatch on PATH is
 * exit 1; bad input is refused (exit 2, nothing written). */
static void check_slurm(const char *scratch)
{
    char self[PATH_MAX];
    if (!lb_check(realpath(bin, self) != NULL, "the path of %s", bin))
        return;
    char dir[512], sweep_sh[600], merge_sh[600], path[700];
    snprintf(dir, sizeof dir, "%s/it's my runs", scratch); /* a space and a quote */
    snprintf(sweep_sh, sizeof sweep_sh, "%s/slurm/sweep.sbatch", dir);
    snprintf(merge_sh, sizeof merge_sh, "%s/slurm/merge.sbatch", dir);

    /* it prints the two sbatch commands */
    sc_run_says(ARGV("slurm", FLAGS, "--shards", "3", "--out", dir, "--partition", "gpu", "--time", "00:10:00", "--account",
                     "acct"),
                0, "jobid=$(sbatch --parsable ", "sweep.sbatch", ") && sbatch --dependency=afterok:$jobid ", "merge.sbatch");
    char merged[700];
    snprintf(merged, sizeof merged, "%s/merged", dir);
    lb_check(!lb_exists(merged), "slurm's check of the merge directory leaves none behind");

    char *s = lb_slurp(sweep_sh), *m = lb_slurp(merge_sh);
    if (lb_check(s && m, "both scripts written")) {
        static const char *const want[] = {"#!/bin/bash\n", "#SBATCH --array=0-2\n", "#SBATCH --gres=gpu:1\n",
                                           "#SBATCH --partition=gpu\n", "#SBATCH --time=00:10:00\n",
                                           "#SBATCH --account=acct\n"};
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            lb_check(line_with(s, want[i]) != NULL, "sweep.sbatch has %.*s", (int)strlen(want[i]) - 1, want[i]);
        const char *exec = line_with(s, "exec ");
        char expect[PATH_MAX + 4096];
        snprintf(expect, sizeof expect, "exec %s sweep --device cpu", self);
        lb_check(exec && strncmp(exec, expect, strlen(expect)) == 0, "sweep.sbatch runs the absolute linbench with the flags: %.200s",
                 exec ? exec : "(no exec line)");
        lb_check(exec && strstr(exec, "--shard \"$SLURM_ARRAY_TASK_ID/3\""), "sweep.sbatch passes --shard $SLURM_ARRAY_TASK_ID/3");
        lb_check(line_with(m, "#SBATCH --partition=gpu\n") && line_with(m, "#SBATCH --account=acct\n") &&
                     !line_with(m, "#SBATCH --gres"),
                 "merge.sbatch: partition and account, no GPU");
        exec = line_with(m, "exec ");
        char q[700]; /* dir in single quotes, its quote as '\'' (scratch holds none) */
        snprintf(q, sizeof q, "'%s/it'\\''s my runs'", scratch);
        snprintf(expect, sizeof expect, "exec %s merge %s/merged %s/shard-0 %s/shard-1 %s/shard-2\n", self, q, q, q, q);
        lb_check(exec && strcmp(exec, expect) == 0, "merge.sbatch merges the 3 shards: %s", exec ? exec : "(no exec line)");
    }
    free(s);
    free(m);

    /* run them as Slurm would: each array task, task 1 requeued (it resumes its shard, nothing
     * left to measure), then the merge (task NULL) */
    static const char *const tasks[] = {"0", "1", "2", "1", NULL};
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
        sc_expect(bash(tasks[i] ? sweep_sh : merge_sh, tasks[i]), 0, -1, tasks[i] ? "an array task" : "merge.sbatch");
    snprintf(path, sizeof path, "%s/merged", dir);
    sc_check_meta(path, "status", "complete", "merged");
    sc_check_meta(path, "parts", "3", "merged");

    /* submitted again into the finished DIR, its merge job would refuse DIR/merged after every
     * shard ran: refused now, the scripts as they were */
    char *before = lb_slurp(sweep_sh);
    lb_run_refused(ARGV("slurm", "--device", "cpu", "--shards", "2", "--out", dir), "--out", "merged", "already holds results");
    char *after = lb_slurp(sweep_sh);
    lb_check(before && after && strcmp(before, after) == 0, "slurm into a merged DIR: sweep.sbatch untouched");
    free(before);
    free(after);

    /* --submit with a stand-in sbatch, into a new DIR */
    snprintf(dir, sizeof dir, "%s/submitted", scratch);
    snprintf(sweep_sh, sizeof sweep_sh, "%s/slurm/sweep.sbatch", dir);
    snprintf(merge_sh, sizeof merge_sh, "%s/slurm/merge.sbatch", dir);
    char fake[600], log[600];
    snprintf(fake, sizeof fake, "PATH=%s/bin", scratch);
    mkdir(fake + 5, 0777);
    snprintf(log, sizeof log, "%s/sbatch.log", scratch);
    snprintf(path, sizeof path, "%s/sbatch", fake + 5);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "#!/bin/sh\necho \"$*\" >> '%s'\necho 4242\n", log);
        fclose(f);
        chmod(path, 0755);
    }
    lb_child_path = fake + 5;
    lb_run_ok(ARGV("slurm", "--device", "cpu", "--shards", "2", "--out", dir, "--submit"),
              "slurm --submit");
    char *calls = lb_slurp(log), first[800], second[800];
    snprintf(first, sizeof first, "--parsable %s\n", sweep_sh);
    snprintf(second, sizeof second, "--dependency=afterok:4242 %s\n", merge_sh);
    lb_check(calls && lb_lines(calls) == 2 && strncmp(calls, first, strlen(first)) == 0 &&
                 strcmp(calls + strlen(first), second) == 0,
             "--submit: sbatch --parsable sweep.sbatch, then sbatch --dependency=afterok:ID merge.sbatch: %s", calls ? calls : "(not called)");
    free(calls);

    /* no sbatch on PATH: one line, exit 1, nothing written */
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/unsubmitted", scratch);
    lb_child_path = "/nonexistent";
    sc_run_expect(ARGV("slurm", "--shards", "2", "--out", nodir, "--submit"), 1, 1, "sbatch");
    lb_child_path = NULL;
    lb_check(!lb_exists(nodir), "--submit without sbatch: nothing written");

    /* bad input */
    static const char *const bad[][2] = {{"--shards", "0"},    {"--shards", "x"},     {"--shard", "1/2"},
                                         {"--partition", "a b"}, {"--time", "xyz"},   {"--time", "1:2:3:4"},
                                         {"--n", "abc"},         {"--layers", "0"},   {"--frobnicate", "1"},
                                         {"--gpus", "all"}}; /* each task is a shard */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lb_run_refused(ARGV("slurm", "--shards", "2", "--out", nodir, (char *)bad[i][0], (char *)bad[i][1]), bad[i][0]);
        lb_check(!lb_exists(nodir), "slurm %s %s: nothing written", bad[i][0], bad[i][1]);
    }
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

    sc_expect(sweep("16", NULL, whole), 0, -1, "the unsharded sweep");
    for (int i = 0; i < 3; i++) {
        char spec[16];
        snprintf(spec, sizeof spec, "%d/3", i);
        snprintf(shard[i], sizeof shard[i], "%s/shard-%d", scratch, i);
        sc_expect(sweep("16", spec, shard[i]), 0, -1, spec);
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
                lb_check(!sc_find(rows[j], count[j], rows[i][a].model, rows[i][a].n, rows[i][a].k),
                         "cell n=%lld k=%lld in shards %d and %d", (long long)rows[i][a].n, (long long)rows[i][a].k, j, i);
    }
    lb_check(total == CELLS, "the shards hold %d cells together (%zu)", CELLS, total);
    for (int i = 0; i < 3; i++)
        free(rows[i]);

    /* the merge: the unsharded sweep's cells, statuses, batches and settings */
    sc_expect(merge(merged, shard[0], shard[1], shard[2]), 0, -1, "merge of the 3 shards");
    sc_same_rows(merged, whole, 1, "the merge");
    sc_same_settings(merged, whole, settings, "the merge");
    char *shard_key = sc_meta(merged, "shard");
    lb_check(shard_key == NULL, "merged meta.csv has no shard");
    free(shard_key);
    sc_check_meta(merged, "status", "complete", "the merge");
    sc_check_meta(merged, "parts", "3", "the merge");
    sc_check_meta(merged, "part_1", shard[0], "the merge");
    lb_check(lb_exists_in(merged, "time_speedup.csv"), "the merge wrote time_speedup.csv");
    LbRun r = lb_run(ARGV("compare", merged, whole, "--format", "csv"));
    lb_check(r.code == 0 && !strstr(r.out, "NA"), "compare reads the merge, no cell NA (%d): %s", r.code, r.err);
    lb_run_free(&r);

    /* bad --shard: exit 2, one line naming the flag, nothing written */
    static const char *const bad[] = {"3/3", "-1/3", "0/0", "1", "a/3", "1/3x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lb_check_refusal(sweep("16", bad[i], other), bad[i], "--shard");
        lb_check(!lb_exists(other), "--shard %s: nothing written", bad[i]);
    }
    /* --resume of a shard keeps it; another --shard is refused */
    lb_run_refused(ARGV("sweep", "--resume", shard[1], "--shard", "2/3", "-q"), "--shard", "1/3");

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
    sc_expect(merge(out, shard[0], shard[1], NULL), 0, -1, "two of three shards", "incomplete", "missing");
    sc_each_once(out, count[0] + count[1], "two of three shards: their cells");
    sc_check_meta(out, "status", "incomplete", "two of three shards");
    /* --resume measures the missing cells and keeps where the first rows came from */
    lb_run_ok(ARGV("sweep", "--resume", out, "-q"), "--resume of the incomplete merge: exit 0");
    /* ...its resume recorded, parts and part_N kept */
    sc_check_meta_has(out, "resume_1_time", "", "the resumed merge records its resume");
    sc_check_meta(out, "status", "complete", "the resumed merge");
    sc_check_meta(out, "parts", "2", "the resumed merge");
    sc_check_meta(out, "part_1", shard[0], "the resumed merge");
    sc_check_meta(out, "part_2", shard[1], "the resumed merge");
    /* an OUT that holds results: the refusal names merge's argument, which is no flag */
    r = merge(shard[2], shard[0], shard[1], shard[2]);
    lb_check(!strstr(r.err, "--out"), "merge into a part: the refusal names OUT, not --out: %s", r.err);
    sc_expect(r, 2, 1, "merge into a part", "OUT ", "already holds results");
    /* a missing part */
    char gone[600];
    snprintf(gone, sizeof gone, "%s/no-such-part", scratch);
    snprintf(out, sizeof out, "%s/refused2", scratch);
    refused("a missing part", out, shard[0], gone, shard[2], "no-such-part", gone);
    check_slurm(scratch);
    return lb_test_finish("test_cli_shard");
}
