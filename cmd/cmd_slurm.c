/* linbench slurm [sweep flags] --shards N --out DIR: a sharded sweep as a Slurm job array.
 * DIR/slurm/sweep.sbatch runs task I's sweep --shard I/N into DIR/shard-I (a requeued task
 * resumes it), DIR/slurm/merge.sbatch merges them; prints (or --submit runs) the two sbatch. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/base/paths.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/settings.h"

/* An #SBATCH value: sbatch reads those lines without a shell, so no quoting is possible. */
static int sbatch_word(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:", *s))
            return 0;
    return 1;
}

/* A time limit as sbatch --time reads it: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or no limit. */
static int slurm_time(const char *s)
{
    if (strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0)
        return 1;
    const char *dash = strchr(s, '-');
    int parts = 0, days = dash != NULL;
    for (const char *p = s; *p;) {
        size_t digits = strspn(p, "0123456789");
        if (digits == 0)
            return 0;
        p += digits;
        parts++;
        if (*p == '-' && (p != dash || parts != 1))
            return 0;
        if (*p == '-' || *p == ':')
            p++;
        if (*p == '\0' && (p[-1] == ':' || p[-1] == '-'))
            return 0;
    }
    return days ? parts <= 4 : parts <= 3;
}

/* Run `sbatch FLAG SCRIPT`, each word quoted; its stdout into out (trailing newline dropped). 0, or -1. */
static int run_sbatch(const char *sbatch, const char *flag, const char *script, char *out, size_t size)
{
    char *command = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&command, &len);
    if (!m)
        return -1;
    lb_put_shell_word(m, sbatch);
    fputc(' ', m);
    lb_put_shell_word(m, flag);
    fputc(' ', m);
    lb_put_shell_word(m, script);
    FILE *p = fclose(m) == 0 ? (fflush(stdout), popen(command, "r")) : NULL;
    free(command);
    if (!p)
        return -1;
    size_t used = fread(out, 1, size - 1, p);
    out[used] = '\0';
    while (used && (out[used - 1] == '\n' || out[used - 1] == '\r'))
        out[--used] = '\0';
    return pclose(p) == 0 ? 0 : -1;
}

static void sbatch_options(FILE *f, const char *partition, const char *time_limit, const char *account)
{
    if (partition)
        fprintf(f, "#SBATCH --partition=%s\n", partition);
    if (time_limit)
        fprintf(f, "#SBATCH --time=%s\n", time_limit);
    if (account)
        fprintf(f, "#SBATCH --account=%s\n", account);
}

static int write_scripts(const char *slurm_dir, const char *dir, const char *self, char **sweep_flags,
                         int nflags, int shards, const char *partition, const char *time_limit,
                         const char *account, char *sweep_script, char *merge_script, size_t size)
{
    snprintf(sweep_script, size, "%s/sweep.sbatch", slurm_dir);
    snprintf(merge_script, size, "%s/merge.sbatch", slurm_dir);
    FILE *f = lb_fopen_plain(sweep_script);
    if (!f)
        goto fail;
    fprintf(f, "#!/bin/bash\n# linbench sweep in %d shards, one array task each (written by linbench slurm)\n", shards);
    fprintf(f, "#SBATCH --job-name=linbench-sweep\n#SBATCH --array=0-%d\n#SBATCH --gres=gpu:1\n#SBATCH --ntasks=1\n", shards - 1);
    sbatch_options(f, partition, time_limit, account);
    fputs("set -eu\nout=", f);
    lb_put_shell_word(f, dir);
    fputs("/shard-\"$SLURM_ARRAY_TASK_ID\"\n", f);
    fputs("# a requeued task continues what it had measured\n"
          "if [ -e \"$out/meta.csv\" ]; then where=(--resume \"$out\"); else where=(--out \"$out\"); fi\n"
          "exec ", f);
    lb_put_shell_word(f, self);
    fputs(" sweep", f);
    for (int i = 0; i < nflags; i++) {
        fputc(' ', f);
        lb_put_shell_word(f, sweep_flags[i]);
    }
    fprintf(f, " --shard \"$SLURM_ARRAY_TASK_ID/%d\" \"${where[@]}\"\n", shards);
    if (fclose(f) != 0)
        goto fail;
    f = lb_fopen_plain(merge_script);
    if (!f)
        goto fail;
    fputs("#!/bin/bash\n# linbench merge of the shards (written by linbench slurm)\n#SBATCH --job-name=linbench-merge\n#SBATCH --ntasks=1\n", f);
    sbatch_options(f, partition, time_limit, account);
    fputs("set -eu\nexec ", f);
    lb_put_shell_word(f, self);
    fputs(" merge ", f);
    lb_put_shell_word(f, dir);
    fputs("/merged", f);
    for (int i = 0; i < shards; i++) {
        fputc(' ', f);
        lb_put_shell_word(f, dir);
        fprintf(f, "/shard-%d", i);
    }
    fputc('\n', f);
    if (fclose(f) != 0)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "linbench: cannot write %s: %s\n", f ? merge_script : sweep_script, lb_open_plain_strerror(errno));
    return LB_EXIT_FAILURE;
}

int lb_cmd_slurm(LbRunSettings *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *out = o->cmd.out, *partition = o->cmd.partition, *time_limit = o->cmd.time, *account = o->cmd.account;
    const int submit = o->cmd.submit, nflags = o->cmd.npassed, shards = o->cmd.shards;
    char **flags = o->cmd.passed;
    if (o->given >> LB_SET_SHARD & 1)
        return lb_usage_error("--shard is given by linbench slurm to each task: should be --shards N");
    if (o->given >> LB_OPT_RESUME & 1 || o->given >> LB_OPT_FORCE & 1)
        return lb_usage_error("%s cannot be used with linbench slurm: should be left out (a requeued task resumes its shard)",
                              o->given >> LB_OPT_RESUME & 1 ? "--resume" : "--force");
    if (!shards)
        return lb_usage_error("linbench slurm needs --shards N: should be a number of shards from 1 to %d", LB_SHARDS_MAX);
    if (!out)
        return lb_usage_error("linbench slurm needs --out DIR: should be where the shards, the merge and the scripts go");
    static const char *const names[3] = {"partition", "time", "account"};
    const char *values[3] = {partition, time_limit, account};
    for (int i = 0; i < 3; i++)
        if (values[i] && !sbatch_word(values[i]))
            return lb_usage_error("invalid argument \"%s\" for --%s: should be letters, digits and . _ - , : only", values[i], names[i]);
    if (time_limit && !slurm_time(time_limit))
        return lb_usage_error("invalid argument \"%s\" for --time: should be a Slurm time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED (such as 04:00:00)",
                              time_limit);
    /* flags the tasks' sweep would refuse once queued, maybe hours later, are refused here */
    int rc = lb_options_check_grid(o);
    if (rc != 0)
        return rc;
    if (o->gpus_all || o->ngpus)
        return lb_usage_error("--shard and --gpus cannot be used together: should be left out (each Slurm task is one --shard)");
    if ((rc = lb_outdir_check_length(out, "--out")) != 0)
        return rc;
    /* the merge job refuses a DIR/merged that holds results, after every shard ran: refused now by
     * the merge's own check (what it creates to check removed again) */
    char merged[PATH_MAX + 16];
    snprintf(merged, sizeof merged, "%s/merged", out);
    if ((rc = lb_outdir_prepare(merged, 0, "--out's merge directory", 0)) != 0)
        return rc;
    lb_outdir_abandon();
    char sbatch[PATH_MAX + 8];
    if (submit && lb_find_on_path("sbatch", sbatch, sizeof sbatch) != 0) {
        fprintf(stderr, "linbench: --submit needs sbatch on PATH, and there is none: should be run where Slurm is installed, or without --submit\n");
        return LB_EXIT_FAILURE;
    }
    char self[PATH_MAX], dir[PATH_MAX + 8], slurm_dir[PATH_MAX + 16];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "linbench: cannot find this linbench's own path (/proc/self/exe): %s\n", strerror(errno));
        return LB_EXIT_FAILURE;
    }
    self[len] = '\0';
    snprintf(slurm_dir, sizeof slurm_dir, "%s/slurm", out);
    if ((rc = lb_outdir_create(slurm_dir)) != 0)
        return rc;
    if (!realpath(out, dir)) {
        fprintf(stderr, "linbench: cannot resolve --out %s: %s\n", out, strerror(errno));
        return LB_EXIT_FAILURE;
    }
    char sweep_script[PATH_MAX + 32], merge_script[PATH_MAX + 32];
    snprintf(slurm_dir, sizeof slurm_dir, "%s/slurm", dir);
    if ((rc = write_scripts(slurm_dir, dir, self, flags, nflags, (int)shards, partition, time_limit, account,
                            sweep_script, merge_script, sizeof sweep_script)) != 0)
        return rc;
    printf("jobid=$(sbatch --parsable ");
    lb_put_shell_word(stdout, sweep_script);
    printf(") && sbatch --dependency=afterok:$jobid ");
    lb_put_shell_word(stdout, merge_script);
    printf("\n");
    if (!submit)
        return LB_EXIT_OK;
    char jobid[256], reply[512], dependency[300];
    if (run_sbatch(sbatch, "--parsable", sweep_script, jobid, sizeof jobid) != 0 || !jobid[0]) {
        fprintf(stderr, "linbench: %s --parsable %s failed\n", sbatch, sweep_script);
        return LB_EXIT_FAILURE;
    }
    char *semi = strchr(jobid, ';'); /* --parsable prints jobid;cluster on a multi-cluster setup */
    if (semi)
        *semi = '\0';
    snprintf(dependency, sizeof dependency, "--dependency=afterok:%s", jobid);
    if (run_sbatch(sbatch, dependency, merge_script, reply, sizeof reply) != 0) {
        fprintf(stderr, "linbench: %s %s %s failed (the sweep is job %s)\n", sbatch, dependency, merge_script, jobid);
        return LB_EXIT_FAILURE;
    }
    printf("sweep: job %s; merge: %s\n", jobid, reply);
    return LB_EXIT_OK;
}
