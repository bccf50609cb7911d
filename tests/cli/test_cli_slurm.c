/* linbench slurm without a real Slurm: the two scripts carry the array, GPU, partition, time and
 * account, and run by bash as Slurm would (a quote and a space in the path) leave a complete merge;
 * --submit calls a stand-in sbatch twice, the second depending on the first; no sbatch on PATH is
 * exit 1; bad input is refused (exit 2, nothing written). Usage: test_cli_slurm PATH */
#include <limits.h>
#include <string.h>

#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *bin;

#define FLAGS "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
              "--n", "32:256", "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "-q"

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
    char *argv[] = {"/bin/bash", (char *)script, NULL};
    LbRun r = lb_run(argv);
    unsetenv("SLURM_ARRAY_TASK_ID");
    return r;
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_slurm");
    char self[PATH_MAX];
    if (!realpath(bin, self))
        return 1;
    const char *scratch = lb_scratch;
    char dir[512], sweep[600], merge[600], path[700];
    snprintf(dir, sizeof dir, "%s/it's my runs", scratch); /* a space and a quote */
    snprintf(sweep, sizeof sweep, "%s/slurm/sweep.sbatch", dir);
    snprintf(merge, sizeof merge, "%s/slurm/merge.sbatch", dir);

    char *args[] = {(char *)bin, "slurm", FLAGS, "--shards", "3", "--out", dir, "--partition", "gpu",
                    "--time", "00:10:00", "--account", "acct", NULL};
    LbRun r = lb_run(args);
    lb_check(r.code == 0, "slurm exits 0 (%d): %s", r.code, r.err);
    lb_check(strstr(r.out, "jobid=$(sbatch --parsable ") && strstr(r.out, "sweep.sbatch") &&
                 strstr(r.out, ") && sbatch --dependency=afterok:$jobid ") && strstr(r.out, "merge.sbatch"),
             "slurm prints the two sbatch commands: %s", r.out);
    lb_run_free(&r);

    char *s = lb_slurp(sweep), *m = lb_slurp(merge);
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
        char q[1200]; /* dir in single quotes, its quote as '\'' */
        size_t at = 0;
        q[at++] = '\'';
        for (const char *p = dir; *p && at < sizeof q - 8; p++) {
            if (*p == '\'') {
                memcpy(q + at, "'\\''", 4);
                at += 4;
            } else {
                q[at++] = *p;
            }
        }
        q[at++] = '\'';
        q[at] = '\0';
        snprintf(expect, sizeof expect, "exec %s merge %s/merged %s/shard-0 %s/shard-1 %s/shard-2\n", self, q, q, q, q);
        lb_check(exec && strcmp(exec, expect) == 0, "merge.sbatch merges the 3 shards: %s", exec ? exec : "(no exec line)");
    }
    free(s);
    free(m);

    /* run them as Slurm would: each array task, task 1 requeued (it resumes its shard, nothing
     * left to measure), then the merge (task NULL) */
    static const char *const tasks[] = {"0", "1", "2", "1", NULL};
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++) {
        r = bash(tasks[i] ? sweep : merge, tasks[i]);
        lb_check(r.code == 0, "%s %s exits 0 (%d): %s", tasks[i] ? "array task" : "merge.sbatch", tasks[i] ? tasks[i] : "",
                 r.code, r.err);
        lb_run_free(&r);
    }
    snprintf(path, sizeof path, "%s/merged", dir);
    sc_check_meta(path, "status", "complete", "merged");
    sc_check_meta(path, "parts", "3", "merged");

    /* --submit with a stand-in sbatch */
    char fake[600], log[600], newpath[2048];
    snprintf(fake, sizeof fake, "%s/bin", scratch);
    mkdir(fake, 0777);
    snprintf(log, sizeof log, "%s/sbatch.log", scratch);
    snprintf(path, sizeof path, "%s/sbatch", fake);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "#!/bin/sh\necho \"$*\" >> '%s'\necho 4242\n", log);
        fclose(f);
        chmod(path, 0755);
    }
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "/usr/bin:/bin");
    snprintf(newpath, sizeof newpath, "%s:%s", fake, saved);
    setenv("PATH", newpath, 1);
    char *submit[] = {(char *)bin, "slurm", "--device", "cpu", "--shards", "2", "--out", dir, "--submit", NULL};
    lb_run_ok(submit, "slurm --submit");
    char *calls = lb_slurp(log), first[800], second[800];
    snprintf(first, sizeof first, "--parsable %s\n", sweep);
    snprintf(second, sizeof second, "--dependency=afterok:4242 %s\n", merge);
    lb_check(calls && lb_lines(calls) == 2 && strncmp(calls, first, strlen(first)) == 0 &&
                 strcmp(calls + strlen(first), second) == 0,
             "--submit: sbatch --parsable sweep.sbatch, then sbatch --dependency=afterok:ID merge.sbatch: %s", calls ? calls : "(not called)");
    free(calls);

    /* no sbatch on PATH: one line, exit 1, nothing written */
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/unsubmitted", scratch);
    setenv("PATH", "/nonexistent", 1);
    char *nosbatch[] = {(char *)bin, "slurm", "--shards", "2", "--out", nodir, "--submit", NULL};
    r = lb_run(nosbatch);
    lb_check(r.code == 1 && strstr(r.err, "sbatch") && lb_lines(r.err) == 1 && !lb_exists(nodir),
             "--submit without sbatch: exit 1, one line, nothing written (%d): %s", r.code, r.err);
    lb_run_free(&r);
    setenv("PATH", saved, 1);
    free(saved);

    /* bad input */
    static const char *const bad[][2] = {{"--shards", "0"},    {"--shards", "x"},     {"--shard", "1/2"},
                                         {"--partition", "a b"}, {"--time", "xyz"},   {"--time", "1:2:3:4"},
                                         {"--n", "abc"},         {"--layers", "0"},   {"--frobnicate", "1"},
                                         {"--gpus", "all"}}; /* each task is a shard */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *b[] = {(char *)bin, "slurm", "--shards", "2", "--out", nodir, (char *)bad[i][0], (char *)bad[i][1], NULL};
        lb_run_refused(b, bad[i][0]);
        lb_check(!lb_exists(nodir), "slurm %s %s: nothing written", bad[i][0], bad[i][1]);
    }
    return lb_test_finish("test_cli_slurm");
}
