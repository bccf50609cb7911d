/* What a sweep leaves on disk stays true: long lists whole in meta.csv; --force clears old results
 * first; no k < n or too much memory refused before anything is written; a write failing part-way
 * (RLIMIT_FSIZE) leaves every file whole; SIGHUP stops as Ctrl-C; unknown values empty; plot
 * titles and a hung gnuplot; a path too long refused whole. Usage: test_cli_files PATH-TO-LINBENCH */
#include <errno.h>
#include <time.h>

#include "tests/cli/sweep_check.h"

static const char *bin;

#define TINY "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "--quiet"

/* Lines of stderr, less those of a coverage build's profiler (which cannot write its .gcda files
 * under the file-size limit either). */
static int err_lines(const char *err)
{
    int n = 0;
    for (const char *p = err; p && *p;) {
        const char *end = strchr(p, '\n');
        n += strncmp(p, "profiling:", 10) != 0 && strncmp(p, "libgcov profiling error:", 24) != 0;
        if (!end)
            break;
        p = end + 1;
    }
    return n;
}

static void wait_rows(const char *dir, int rows)
{
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (int i = 0; i < 6000 && sc_rows(dir) < rows; i++)
        nanosleep(&pause, NULL);
}

/* A list longer than 1 KB, whole in meta.csv, in compare, and kept by --resume. */
static void long_lists(const char *scratch)
{
    char list[4096] = "";
    for (int n = 2; n <= 400; n++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", n > 2 ? "," : "", n);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/long", scratch);
    char *argv[] = {(char *)bin, "sweep", TINY, "--n", list, "--k", "1", "--out", dir, NULL};
    pid_t pid = lb_start(argv);
    wait_rows(dir, 3);
    kill(pid, SIGINT);
    LbRun r = lb_wait(pid);
    lb_check(r.code == 130, "long --n: interrupted (%d): %s", r.code, r.err);
    lb_run_free(&r);
    char *n_list = sc_meta(dir, "n_list");
    lb_check(n_list && strcmp(n_list, list) == 0, "meta.csv holds all 399 values of --n (%zu of %zu bytes)", n_list ? strlen(n_list) : 0,
             strlen(list));
    free(n_list);
    char *compare[] = {(char *)bin, "compare", dir, "--format", "csv", NULL};
    r = lb_run(compare);
    /* one row per grid, n and k: 2 x 399 x 1, and the header */
    lb_check(r.code == 0 && lb_lines(r.out) == 1 + 2 * 399, "compare shows every n (%d lines, want %d)", lb_lines(r.out), 1 + 2 * 399);
    lb_run_free(&r);
    /* A resume that contradicts the list is refused; one that takes it keeps all 399 rows. */
    char *refuse[] = {(char *)bin, "sweep", "--resume", dir, "--n", "2:256", "--quiet", NULL};
    r = lb_run(refuse);
    lb_check(r.code == 2 && strstr(r.err, "--n") && lb_lines(r.err) == 1, "--resume with another --n: exit 2 naming it (%d): %s", r.code,
             r.err);
    lb_run_free(&r);
    char *resume[] = {(char *)bin, "sweep", "--resume", dir, "--quiet", NULL};
    pid = lb_start(resume);
    wait_rows(dir, 6);
    kill(pid, SIGINT);
    r = lb_wait(pid);
    lb_run_free(&r);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "the grids after the resume read back")) {
        lb_check(g.rows == 399, "the resumed grids keep all 399 rows (%zu)", g.rows);
        lb_grid_free(&g);
    }
}

/* One stop request sent twice (`timeout` signals the sweep, then its group) is still one request:
 * at every gap below, a clean interruption with meta.csv saying so. */
static void repeated_stop(const char *scratch)
{
    const long gaps_us[] = {0, 2000, 10000, 50000};
    for (size_t i = 0; i < sizeof gaps_us / sizeof gaps_us[0]; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/stopped-%zu", scratch, i);
        char *argv[] = {(char *)bin, "sweep", TINY, "--n", "16:4096", "--k", "8", "--out", dir, NULL};
        pid_t pid = lb_start(argv);
        wait_rows(dir, 2);
        kill(pid, SIGTERM);
        struct timespec gap = {0, gaps_us[i] * 1000};
        nanosleep(&gap, NULL);
        kill(pid, SIGTERM);
        LbRun r = lb_wait(pid);
        char *status = sc_meta(dir, "status");
        lb_check(r.code == 130 && status && strcmp(status, "interrupted") == 0,
                 "SIGTERM twice, %ld us apart: exit %d (want 130), meta.csv status %s (want interrupted)", gaps_us[i],
                 r.code, status ? status : "(none)");
        free(status);
        lb_run_free(&r);
    }
}

/* Whether dir holds anything of the run whose only n was 48: a row or a grid line. */
static int holds_old(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    LbCellResult *rows = NULL;
    size_t count = 0;
    int old = 0;
    if (lb_raw_read(path, &rows, &count) == 0)
        for (size_t i = 0; i < count; i++)
            old |= rows[i].n == 48;
    free(rows);
    static const char *const grids[] = {"time_speedup.csv", "memory_speedup.csv", "energy_speedup.csv"};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        snprintf(path, sizeof path, "%s/%s", dir, grids[g]);
        char *text = lb_slurp(path);
        old |= text && strstr(text, "\n48,") != NULL;
        free(text);
    }
    return old;
}

/* --force removes the old grids before its first row. */
static void force_clears(const char *scratch)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/forced", scratch);
    char *first[] = {(char *)bin, "sweep", TINY, "--n", "48", "--k", "8", "--out", dir, NULL};
    LbRun r = lb_run(first);
    lb_check(r.code == 0, "the first sweep exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    char *forced[] = {(char *)bin, "sweep", TINY, "--n", "32:4096", "--k", "8", "--out", dir, "--force", NULL};
    pid_t pid = lb_start(forced);
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (int i = 0; i < 6000; i++) { /* until the forced run has written its first row */
        char *cmd = sc_meta(dir, "command_line");
        int mine = cmd && strstr(cmd, "--force");
        free(cmd);
        if (mine && sc_rows(dir) >= 1)
            break;
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    r = lb_wait(pid);
    lb_run_free(&r);
    lb_check(!holds_old(dir), "a killed --force sweep leaves none of the old run's rows or grids");
    char *cmd = sc_meta(dir, "command_line");
    lb_check(cmd && strstr(cmd, "--force"), "meta.csv is the forced run's (%s)", cmd ? cmd : "none");
    free(cmd);
}

/* --force killed at the two instants that matter, 10 times each: as the first old file goes, and
 * as the new meta.csv appears. At neither may meta.csv pair the new settings (--mem-limit 8M)
 * with the old run's rows or grids (--mem-limit 4M, n 48), and a resume must finish the new run
 * alone. */
static void force_killed(const char *scratch)
{
    for (int i = 0; i < 20; i++) {
        const int at_new_meta = i % 2;
        char dir[512], time_grid[600];
        snprintf(dir, sizeof dir, "%s/force-killed-%d", scratch, i);
        snprintf(time_grid, sizeof time_grid, "%s/time_speedup.csv", dir);
        char *first[] = {(char *)bin, "sweep", TINY, "--n", "48", "--k", "8", "--mem-limit", "4M", "--out", dir, NULL};
        LbRun r = lb_run(first);
        lb_check(r.code == 0, "the first sweep exits 0 (%d): %s", r.code, r.err);
        lb_run_free(&r);
        char *forced[] = {(char *)bin, "sweep", TINY, "--n", "32:256", "--k", "8", "--mem-limit", "8M", "--out", dir,
                          "--force", NULL};
        pid_t pid = lb_start(forced);
        struct timespec pause = {0, 100 * 1000};
        for (int w = 0; w < 200000; w++) {
            int hit;
            if (at_new_meta) {
                char *cmd = sc_meta(dir, "command_line");
                hit = cmd && strstr(cmd, "--force");
                free(cmd);
            } else {
                hit = !lb_exists(time_grid);
            }
            if (hit)
                break;
            nanosleep(&pause, NULL);
        }
        kill(pid, SIGKILL);
        r = lb_wait(pid);
        lb_run_free(&r);
        char *limit = sc_meta(dir, "mem_limit");
        const int new_meta = limit && strcmp(limit, "8388608") == 0;
        free(limit);
        lb_check(!(new_meta && holds_old(dir)), "--force killed %s: meta.csv's new settings beside the old run's results",
                 at_new_meta ? "as its meta.csv appeared" : "as the first old file went");
        if (!new_meta)
            continue; /* killed before it wrote anything of its own: nothing to resume */
        char *resume[] = {(char *)bin, "sweep", "--resume", dir, "--quiet", NULL};
        r = lb_run(resume);
        char *status = sc_meta(dir, "status");
        lb_check(r.code == 0 && status && strcmp(status, "complete") == 0 && !holds_old(dir) && sc_rows(dir) == 8,
                 "the resumed --force run finishes its own 8 cells alone (exit %d, status %s, %d rows): %s", r.code,
                 status ? status : "none", sc_rows(dir), r.err);
        free(status);
        lb_run_free(&r);
    }
}

/* Bad input: exit 2, one line naming what, nothing written. */
static void refused(const char *scratch, const char *what, const char *want1, const char *want2, char *const extra[], int count)
{
    static int calls;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/refused-%d", scratch, ++calls);
    char *argv[48], *tiny[] = {TINY};
    int a = lb_argv(argv, 46, bin, "sweep", tiny, (int)(sizeof tiny / sizeof tiny[0]), extra, count);
    argv[a++] = "--out";
    argv[a++] = dir;
    argv[a] = NULL;
    LbRun r = lb_run(argv);
    lb_check(r.code == 2 && strstr(r.err, want1) && strstr(r.err, want2) && lb_lines(r.err) == 1,
             "%s: exit 2, one line naming %s and %s (%d): %s", what, want1, want2, r.code, r.err);
    lb_check(!lb_exists(dir), "%s: nothing written", what);
    lb_run_free(&r);
}

/* Writes that fail part-way, through RLIMIT_FSIZE: every file whole, no temporary left. */
static void failed_writes(const char *scratch)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fsize", scratch);
    char *argv[] = {(char *)bin, "sweep", TINY, "--n", "32:256", "--k", "8:16", "--out", dir, NULL};
    lb_child_resource = RLIMIT_FSIZE;
    lb_child_limit = 1500; /* meta.csv fits, raw.csv stops after a few rows */
    LbRun r = lb_run(argv);
    lb_check(r.code == 1 && strstr(r.err, "raw.csv") && err_lines(r.err) == 1, "raw.csv past the file-size limit: exit 1, one line (%d): %s",
             r.code, r.err);
    /* the limit named as the system names it, not taken for a full disk */
    lb_check(strstr(r.err, strerror(EFBIG)) && !strstr(r.err, "disk full"),
             "raw.csv past the file-size limit: the line says \"%s\": %s", strerror(EFBIG), r.err);
    lb_run_free(&r);
    sc_files_parse(dir, 1, "after a failed raw.csv row");
    /* no process runs it any more, so meta.csv does not say running */
    char *status = sc_meta(dir, "status");
    lb_check(status && strcmp(status, "failed") == 0, "after a failed raw.csv row meta.csv says failed (%s)",
             status ? status : "none");
    free(status);
    char *before = sc_meta(dir, "start_time");
    /* The whole of meta.csv cannot be written now: the old one stays. */
    char *resume[] = {(char *)bin, "sweep", "--resume", dir, "--quiet", NULL};
    lb_child_limit = 600;
    r = lb_run(resume);
    lb_check(r.code == 1 && strstr(r.err, "meta.csv") && err_lines(r.err) == 1, "meta.csv past the limit: exit 1, one line (%d): %s", r.code,
             r.err);
    lb_run_free(&r);
    sc_files_parse(dir, 1, "after a failed meta.csv");
    char *after = sc_meta(dir, "start_time");
    lb_check(before && after && strcmp(before, after) == 0, "the old meta.csv is still in place");
    free(before);
    free(after);
    /* The grids cannot be written (raw.csv is already past the limit): old grids, if any, stay whole. */
    lb_child_limit = 1100;
    r = lb_run(resume);
    lb_check(r.code == 1 && err_lines(r.err) == 1, "a grid or row past the limit: exit 1, one line (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_files_parse(dir, 1, "after a failed grid");
    lb_child_resource = -1;
    r = lb_run(resume);
    lb_check(r.code == 0, "without the limit, --resume finishes (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_files_parse(dir, 1, "finished");
    char path[600];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    LbCellResult *rows = NULL;
    size_t count = 0;
    lb_check(lb_raw_read(path, &rows, &count) == 0 && count == 12, "12 cells in the end (%zu)", count);
    free(rows);
}

/* A stop during the set-up (the check and the calibration, before meta.csv): exit 130 with one
 * line, and the new directory removed, not a death by the signal beside an empty folder. */
static void stop_during_setup(const char *scratch)
{
    char dir[512], lock[600], meta[600];
    snprintf(dir, sizeof dir, "%s/setup-stopped", scratch);
    snprintf(lock, sizeof lock, "%s/.linbench.lock", dir);
    snprintf(meta, sizeof meta, "%s/meta.csv", dir);
    char *argv[] = {(char *)bin, "sweep", TINY, "--n", "32:64", "--k", "8", "--out", dir, NULL};
    pid_t pid = lb_start(argv);
    struct timespec pause = {0, 1000 * 1000};
    for (int i = 0; i < 10000 && !lb_exists(lock); i++)
        nanosleep(&pause, NULL);
    const int in_setup = !lb_exists(meta); /* the set-up takes about half a second here */
    kill(pid, SIGTERM);
    LbRun r = lb_wait(pid);
    if (lb_check(in_setup, "the stop came during the set-up")) {
        lb_check(r.code == 130 && lb_lines(r.err) == 1 && strstr(r.err, "interrupted"),
                 "SIGTERM during the set-up: exit 130, one line (%d): %s", r.code, r.err);
        lb_check(!lb_exists(dir), "SIGTERM during the set-up: no directory left");
    }
    lb_run_free(&r);
}

/* Nothing in dir but the lock: no result file, whole or half-written, and no temporary. */
static int holds_nothing(const char *dir, const char *what)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int ok = 1;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, ".linbench.lock") != 0)
            ok &= lb_check(0, "%s: nothing left behind (%s)", what, e->d_name);
    if (d)
        closedir(d);
    return ok;
}

/* merge and predict write their whole result at once: a write that fails part-way (meta.csv, or
 * raw.csv after it) is exit 1 and one line, and leaves no file behind that would read as a
 * result, or block the same command run again once there is room. */
static void failed_one_shot_writes(const char *scratch)
{
    char parts[2][512], dir[512];
    for (int i = 0; i < 2; i++) {
        snprintf(parts[i], sizeof parts[i], "%s/part-%d", scratch, i);
        char shard[8];
        snprintf(shard, sizeof shard, "%d/2", i);
        char *argv[] = {(char *)bin, "sweep", TINY, "--no-check", "--n", "32,64", "--k", "8", "--shard", shard, "--out", parts[i], NULL};
        LbRun r = lb_run(argv);
        lb_check(r.code == 0, "shard %s exits 0 (%d): %s", shard, r.code, r.err);
        lb_run_free(&r);
    }
    /* merge writes raw.csv, the grids, then meta.csv; predict meta.csv (running), then raw.csv:
     * the first file cut short, then a later one (the parts' raw.csv is under 1000 bytes, a
     * merged meta.csv over, predict's meta.csv under 1800 and its raw.csv over) */
    static const rlim_t limits[2][2] = {{600, 1000}, {600, 1800}};
    for (size_t l = 0; l < 2; l++) {
        char what[128];
        snprintf(dir, sizeof dir, "%s/merged-%zu", scratch, l);
        char *merge[] = {(char *)bin, "merge", "-q", dir, parts[0], parts[1], NULL};
        char *predict[] = {(char *)bin, "predict", "--gpu", "a10", "-q", "--out", NULL, NULL};
        char pdir[512];
        snprintf(pdir, sizeof pdir, "%s/predicted-%zu", scratch, l);
        predict[6] = pdir;
        char **cmds[] = {merge, predict};
        const char *outs[] = {dir, pdir};
        for (int c = 0; c < 2; c++) {
            snprintf(what, sizeof what, "%s under a file-size limit of %d bytes", cmds[c][1], (int)limits[c][l]);
            lb_child_resource = RLIMIT_FSIZE;
            lb_child_limit = limits[c][l];
            LbRun r = lb_run(cmds[c]);
            lb_child_resource = -1;
            lb_check(r.code == 1 && err_lines(r.err) == 1, "%s: exit 1, one line (%d): %s", what, r.code, r.err);
            lb_run_free(&r);
            holds_nothing(outs[c], what);
            r = lb_run(cmds[c]);
            lb_check(r.code == 0, "%s: the same command without the limit writes it (%d): %s", what, r.code, r.err);
            lb_run_free(&r);
            sc_files_parse(outs[c], 1, what);
        }
    }
}

int main(int argc, char **argv)
{
    lb_test_init("test_cli_files");
    if (argc < 2)
        return 1;
    bin = argv[1];
    const char *scratch = lb_scratch_dir("cli-files");

    long_lists(scratch);
    force_clears(scratch);
    force_killed(scratch);
    repeated_stop(scratch);

    /* no k < n */
    char *nothing[] = {"--n", "512", "--k", "4096"};
    refused(scratch, "--n 512 --k 4096", "--k", "--n", nothing, 4);
    /* more memory than there is (64 TiB), or than a limit allows. */
    char *huge[] = {"--n", "32", "--k", "8", "--mem-limit", "64T"};
    refused(scratch, "--mem-limit 64T", "--mem-limit", "at most", huge, 6);
    lb_child_resource = RLIMIT_AS;
    lb_child_limit = (rlim_t)1 << 30;
    char *limited[] = {"--n", "32", "--k", "8", "--mem-limit", "2G"};
    refused(scratch, "--mem-limit 2G under ulimit -v 1G", "--mem-limit", "at most", limited, 6);
    lb_child_resource = -1;

    failed_writes(scratch);
    failed_one_shot_writes(scratch);

    stop_during_setup(scratch);
    /* SIGHUP: like Ctrl-C, exit 130 with the finished cells and meta.csv saying interrupted. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/hup", scratch);
    char *hup[] = {(char *)bin, "sweep", TINY, "--n", "32:4096", "--k", "8", "--out", dir, NULL};
    pid_t pid = lb_start(hup);
    wait_rows(dir, 2);
    kill(pid, SIGHUP);
    LbRun r = lb_wait(pid);
    lb_check(r.code == 130 && strstr(r.err, "--resume"), "SIGHUP: exit 130 and how to resume (%d): %s", r.code, r.err);
    lb_run_free(&r);
    char *status = sc_meta(dir, "status");
    lb_check(status && strcmp(status, "interrupted") == 0, "SIGHUP: meta.csv says interrupted (%s)", status ? status : "none");
    free(status);

    /* Unknown values are empty fields, never -1. */
    char path[4400];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbMeta m;
    memset(&m, 0, sizeof m);
    if (lb_check(lb_meta_read(path, &m) == 0, "meta.csv reads")) {
        for (size_t i = 0; i < m.count; i++)
            lb_check(strcmp(m.values[i], "-1") != 0, "meta.csv %s is not -1", m.keys[i]);
        const char *sm = lb_meta_get(&m, "sm_count");
        lb_check(sm && sm[0] == '\0', "a CPU's sm_count is empty (%s)", sm ? sm : "none");
        lb_meta_free(&m);
    }

    /* Plot: the title says fp16 was stored as fp32; a gnuplot that hangs is stopped. */
    char *plot[] = {(char *)bin, "plot", dir, "--no-render", NULL};
    r = lb_run(plot);
    lb_run_free(&r);
    snprintf(path, sizeof path, "%s/time_speedup.gp", dir);
    char *gp = lb_slurp(path);
    lb_check(gp && strstr(gp, "fp16 stored as fp32"), "the plot title says what the CPU stored");
    free(gp);
    char fake[512];
    snprintf(fake, sizeof fake, "%s/bin", scratch);
    mkdir(fake, 0777);
    snprintf(path, sizeof path, "%s/gnuplot", fake);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("#!/bin/sh\nexec /bin/sleep 600\n", f);
        fclose(f);
    }
    chmod(path, 0755);
    const char *old_path = getenv("PATH");
    char *saved = old_path ? strdup(old_path) : NULL;
    setenv("PATH", fake, 1);
    char *hung[] = {(char *)bin, "plot", dir, "--render-timeout", "1", NULL};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = lb_run(hung);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (saved) {
        setenv("PATH", saved, 1);
        free(saved);
    }
    double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    lb_check(r.code == 1 && strstr(r.err, "did not finish") && took < 30, "a hung gnuplot is stopped: exit 1 in %.1f s (%d): %s", took,
             r.code, r.err);
    lb_run_free(&r);

    /* A path longer than the files can have: refused whole (not cut), nothing created. */
    char longdir[5000];
    snprintf(longdir, sizeof longdir, "%s/deep", scratch);
    while (strlen(longdir) < 4000)
        strcat(longdir, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    char *deep[] = {(char *)bin, "sweep", TINY, "--n", "32", "--k", "8", "--out", longdir, NULL};
    r = lb_run(deep);
    lb_check(r.code == 2 && strstr(r.err, longdir) && strstr(r.err, "--out") && lb_lines(r.err) == 1,
             "a 4 KB --out: exit 2, one line with the whole path (%d, %zu bytes)", r.code, strlen(r.err));
    lb_run_free(&r);
    snprintf(path, sizeof path, "%s/deep", scratch);
    lb_check(!lb_exists(path), "a 4 KB --out: nothing created");

    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_files");
}
