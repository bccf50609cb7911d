/* The directory a run without --out makes (linbench-YYYYmmdd-HHMMSS, then -2, -3 ...): a name that
 * anything holds, a dangling link included, is passed over; and runs started at once in one
 * directory each get a name of their own. The name was checked with stat and made later, so a
 * dangling link failed the run ("cannot be created"), and of two runs started in one second the
 * second could take the first's name and stop on its lock ("in use by another linbench").
 * Usage: test_cli_outdir_name PATH-TO-LINBENCH */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

#define PAIRS 12

/* The directories named linbench-* in the current directory that hold a meta.csv. */
static int results_here(void)
{
    int count = 0;
    DIR *d = opendir(".");
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char meta[600];
        struct stat st;
        snprintf(meta, sizeof meta, "%s/meta.csv", e->d_name);
        count += strncmp(e->d_name, "linbench-", 9) == 0 && stat(meta, &st) == 0;
    }
    if (d)
        closedir(d);
    return count;
}

int main(int argc, char **argv)
{
    char bin[PATH_MAX];
    const char *given = lb_cli_start(argc, argv, "test_cli_outdir_name");
    lb_check(realpath(given, bin) != NULL, "%s: its absolute path", given);
    char cwd[4200];
    snprintf(cwd, sizeof cwd, "%s/cwd", lb_scratch);
    lb_check(mkdir(cwd, 0755) == 0 && chdir(cwd) == 0, "working in %s", cwd);
#define PREDICT LB_ARGV(bin, "predict", "--gpu", "h100-sxm", "--n", "64", "--k", "16", "--layers", "1", "--d-model", "16", \
                        "--heads", "2", "--ffn", "32", "--vocab", "100", "-q")

    /* runs started at once: each its own directory (the race, so not every time without the fix) */
    LbRun r;
    pid_t pids[2 * PAIRS];
    for (int i = 0; i < 2 * PAIRS; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "%d", i);
        pids[i] = lb_start_tagged(PREDICT, tag);
    }
    int failed = 0;
    for (int i = 0; i < 2 * PAIRS; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "%d", i);
        r = lb_wait_tagged(pids[i], tag);
        if (!lb_check(r.code == 0, "run %d of %d started at once: exit %d: %s", i + 1, 2 * PAIRS, r.code, r.err))
            failed++;
        lb_run_free(&r);
    }
    lb_check(failed == 0 && results_here() == 2 * PAIRS, "%d runs at once: %d results: should be %d", 2 * PAIRS,
             results_here(), 2 * PAIRS);
    /* dangling links at the names of this second and the next few, in a directory of their own: each
     * is taken */
    lb_check(mkdir("links", 0755) == 0 && chdir("links") == 0, "working in %s/links", cwd);
    const time_t now = time(NULL);
    for (int s = -1; s <= 5; s++) {
        const time_t t = now + s;
        struct tm tm;
        char stamp[32], name[64];
        localtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(name, sizeof name, "linbench-%s", stamp);
        lb_check(symlink("/nonexistent/linbench-test", name) == 0, "planted a dangling link %s", name);
    }
    r = lb_run(PREDICT);
    lb_check(r.code == 0 && results_here() == 1, "predict beside dangling links at its name: exit %d, %d results: should "
             "be 0 and 1, in linbench-...-2: %s", r.code, results_here(), r.err);
    lb_run_free(&r);

    lb_check(chdir("/") == 0, "left %s", cwd);
    lb_test_cleanup(lb_scratch);
    return lb_test_finish("test_cli_outdir_name");
}
