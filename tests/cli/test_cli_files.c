/* What linbench leaves on disk stays whole and its own, one case each (LB_TEST_CASE=NAME runs
 * one): files, lock, links, torture, damaged. Usage: test_cli_files PATH-TO-LINBENCH */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/cli/sweep_check.h"
#include "tests/lib/cases.h"

static const char *bin, *scratch;

/* The tiny CPU model every case runs, and the grids of its sweeps. */
#define MODEL "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100"
#define TINY MODEL, "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "--quiet"
#define ONE_CELL TINY, "--n", "32", "--k", "8"
#define GRID6 TINY, "--n", "32:64", "--k", "8,16"
#define CELLS6 6 /* n 32 and 64: 2 standard + 2 * 2 Linformer */
#define GRID12 TINY, "--n", "32:128", "--k", "8:16"
#define SLOW MODEL, "--n", "32:1024", "--k", "8:16", "--mem-limit", "32M", "--cell-time", "1", "--quiet"
/* linbench's argv: ARGV("sweep", TINY, "--out", dir) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)

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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = fwrite(text, 1, strlen(text), f);
    return fclose(f) == 0 && put == strlen(text) ? 0 : -1;
}

/* scratch/name into dir (512 bytes). */
static char *in_scratch(char dir[512], const char *name)
{
    snprintf(dir, 512, "%s/%s", scratch, name);
    return dir;
}

/* A list longer than 1 KB, whole in meta.csv, in compare, and kept by --resume. */
static void long_lists(void)
{
    char list[4096] = "", dir[512];
    for (int n = 2; n <= 400; n++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", n > 2 ? "," : "", n);
    in_scratch(dir, "long");
    sc_expect(sc_stop_after(ARGV("sweep", TINY, "--n", list, "--k", "1", "--out", dir), dir, SIGINT, 3, -1), 130, -1,
              "long --n: interrupted");
    sc_check_meta(dir, "n_list", list, "all 399 values of --n");
    LbRun r = lb_run(ARGV("compare", dir, "--format", "csv"));
    /* one row per grid, n and k: 2 x 399 x 1, and the header */
    lb_check(r.code == 0 && lb_lines(r.out) == 1 + 2 * 399, "compare shows every n (%d lines, want %d)", lb_lines(r.out), 1 + 2 * 399);
    lb_run_free(&r);
    /* A resume that contradicts the list is refused; one that takes it keeps all 399 rows. */
    lb_run_refused(ARGV("sweep", "--resume", dir, "--n", "2:256", "--quiet"), "--n");
    r = sc_stop_after(ARGV("sweep", "--resume", dir, "--quiet"), dir, SIGINT, 6, -1);
    lb_run_free(&r);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "the grids after the resume read back")) {
        lb_check(g.rows == 399, "the resumed grids keep all 399 rows (%zu)", g.rows);
        lb_grid_free(&g);
    }
}

/* A sweep stopped by `sig` once (gap_us < 0), or twice gap_us apart (`timeout` signals the
 * sweep, then its group: still one request): exit 130 saying how to resume, meta.csv saying
 * interrupted. */
static void stop_sweep(const char *dir, int sig, long gap_us)
{
    char **argv = ARGV("sweep", TINY, "--n", "16:4096", "--k", "8", "--out", (char *)dir);
    char what[64];
    snprintf(what, sizeof what, "%s (a second %ld us later)", sig == SIGHUP ? "SIGHUP" : "SIGTERM", gap_us);
    sc_expect(sc_stop_after(argv, dir, sig, 2, gap_us), 130, -1, what, "--resume");
    sc_check_meta(dir, "status", "interrupted", what);
}

/* Whether dir holds anything of the run whose only n was 48: a row or a grid line. */
static int holds_old(const char *dir)
{
    LbCellResult *rows = NULL;
    size_t count = 0;
    int old = 0;
    if (sc_read_rows(dir, &rows, &count) == 0)
        for (size_t i = 0; i < count; i++)
            old |= rows[i].n == 48;
    free(rows);
    static const char *const grids[] = {"time_speedup.csv", "memory_speedup.csv", "energy_speedup.csv"};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        char *text = lb_slurp_in(dir, grids[g]);
        old |= text && strstr(text, "\n48,") != NULL;
        free(text);
    }
    return old;
}

/* Whether dir's meta.csv is that of a run given --force. */
static int forced_meta(const char *dir)
{
    char *cmd = sc_meta(dir, "command_line");
    const int forced = cmd && strstr(cmd, "--force");
    free(cmd);
    return forced;
}

/* --force killed at the three instants that matter, 10 times each: as the first old file goes, as
 * the new meta.csv appears, and after its first row. At none may meta.csv pair the new settings
 * (--mem-limit 8M) with the old run's rows or grids (--mem-limit 4M, n 48), and a resume must finish
 * the new run alone. */
static void force_killed(void)
{
    static const char *const instants[] = {"as the first old file went", "as its meta.csv appeared", "after its first row"};
    for (int i = 0; i < 30; i++) {
        const int at = i % 3;
        char dir[512], name[32];
        snprintf(name, sizeof name, "force-killed-%d", i);
        in_scratch(dir, name);
        lb_run_ok(ARGV("sweep", TINY, "--n", "48", "--k", "8", "--mem-limit", "4M", "--out", dir), "the first sweep");
        pid_t pid =
            lb_start(ARGV("sweep", TINY, "--n", "32:256", "--k", "8", "--mem-limit", "8M", "--out", dir, "--force"));
        for (int w = 0; w < 200000; w++) {
            if (at == 0 ? !lb_exists_in(dir, "time_speedup.csv") : forced_meta(dir) && (at == 1 || sc_rows(dir) >= 1))
                break;
            usleep(100);
        }
        kill(pid, SIGKILL);
        LbRun r = lb_wait(pid);
        lb_run_free(&r);
        char *limit = sc_meta(dir, "mem_limit");
        const int new_meta = limit && strcmp(limit, "8388608") == 0;
        free(limit);
        lb_check(!(new_meta && holds_old(dir)), "--force killed %s: meta.csv's new settings beside the old run's results",
                 instants[at]);
        lb_check(at < 2 || new_meta, "--force killed after its first row: meta.csv is the forced run's");
        if (!new_meta)
            continue; /* killed before it wrote anything of its own: nothing to resume */
        lb_run_ok(ARGV("sweep", "--resume", dir, "--quiet"), "the resumed --force run");
        lb_check(!holds_old(dir) && sc_rows(dir) == 8, "the resumed --force run finishes its own 8 cells alone (%d rows)",
                 sc_rows(dir));
        sc_check_meta(dir, "status", "complete", "the resumed --force run");
    }
}

/* A sweep of --n n --k k --mem-limit limit refused as bad input: exit 2, one line with want1 and
 * want2, nothing written. */
static void refused_input(char *n, char *k, char *limit, const char *want1, const char *want2)
{
    char dir[512];
    in_scratch(dir, "refused");
    char **argv = ARGV("sweep", TINY, "--n", n, "--k", k, "--mem-limit", limit, "--out", dir);
    lb_run_refused(argv, want1, want2);
    lb_check(!lb_exists(dir), "%s: nothing written", lb_argv_text(argv));
}

/* argv run under a file-size limit of `limit` bytes: exit 1 and one line, naming `file` (unless
 * NULL) and the limit as the system names it, not a full disk; every file in dir still parses. */
static void past_limit(char **argv, rlim_t limit, const char *dir, const char *file, const char *what)
{
    lb_child_resource = RLIMIT_FSIZE;
    lb_child_limit = limit;
    LbRun r = lb_run(argv);
    lb_child_resource = -1;
    lb_check(r.code == 1 && err_lines(r.err) == 1 && (!file || strstr(r.err, file)), "%s: exit 1, one line (%d): %s",
             what, r.code, r.err);
    lb_check(strstr(r.err, strerror(EFBIG)) && !strstr(r.err, "disk full"), "%s: the line says \"%s\": %s", what,
             strerror(EFBIG), r.err);
    lb_run_free(&r);
    sc_files_parse(dir, 1, what);
}

/* Writes that fail part-way, through RLIMIT_FSIZE: every file whole, no temporary left. */
static void failed_writes(void)
{
    char dir[512];
    in_scratch(dir, "fsize");
    /* meta.csv fits, raw.csv stops after a few rows */
    past_limit(ARGV("sweep", TINY, "--n", "32:256", "--k", "8:16", "--out", dir), 1800, dir, "raw.csv",
               "raw.csv past the file-size limit");
    /* no process runs it any more, so meta.csv does not say running */
    sc_check_meta(dir, "status", "failed", "after a failed raw.csv row");
    char *before = sc_meta(dir, "start_time");
    /* The whole of meta.csv cannot be written now: the old one stays. */
    char **resume = ARGV("sweep", "--resume", dir, "--quiet");
    past_limit(resume, 600, dir, "meta.csv", "meta.csv past the limit");
    lb_check(lb_same_text(before, sc_meta(dir, "start_time")), "the old meta.csv is still in place");
    /* The grids cannot be written (raw.csv is already past the limit): old grids, if any, stay whole. */
    past_limit(resume, 1100, dir, NULL, "a grid or row past the limit");
    lb_run_ok(resume, "without the limit, --resume finishes");
    sc_files_parse(dir, 1, "finished");
    sc_each_once(dir, 12, "finished");
}

/* A stop during the set-up (the check and the calibration, before meta.csv): exit 130 with one
 * line, and the new directory removed, not a death by the signal beside an empty folder. */
static void stop_during_setup(void)
{
    char dir[512];
    pid_t pid = lb_start(ARGV("sweep", TINY, "--n", "32:64", "--k", "8", "--out", in_scratch(dir, "setup-stopped")));
    for (int i = 0; i < 10000 && !lb_exists_in(dir, ".linbench.lock"); i++)
        usleep(1000);
    const int in_setup = !lb_exists_in(dir, "meta.csv"); /* the set-up takes about half a second here */
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
static void failed_one_shot_writes(void)
{
    char parts[2][512], dir[512], pdir[512];
    lb_run_ok(ARGV("sweep", TINY, "--no-check", "--n", "32,64", "--k", "8", "--shard", "0/2", "--out",
                   in_scratch(parts[0], "part-0")), "a shard");
    lb_run_ok(ARGV("sweep", TINY, "--no-check", "--n", "32,64", "--k", "8", "--shard", "1/2", "--out",
                   in_scratch(parts[1], "part-1")), "a shard");
    /* merge writes raw.csv, the grids, then meta.csv; predict meta.csv (running), then raw.csv:
     * the first file cut short, then a later one (the parts' raw.csv is under 1000 bytes, a
     * merged meta.csv over, predict's meta.csv under 1800 and its raw.csv over) */
    static const rlim_t limits[2][2] = {{600, 1000}, {600, 1800}};
    for (size_t l = 0; l < 2; l++) {
        char what[128];
        snprintf(dir, sizeof dir, "%s/merged-%zu", scratch, l);
        snprintf(pdir, sizeof pdir, "%s/predicted-%zu", scratch, l);
        char **cmds[] = {ARGV("merge", "-q", dir, parts[0], parts[1]),
                         ARGV("predict", "--gpu", "a10", "-q", "--out", pdir)};
        const char *outs[] = {dir, pdir};
        for (int c = 0; c < 2; c++) {
            snprintf(what, sizeof what, "%s under a file-size limit of %d bytes", cmds[c][1], (int)limits[c][l]);
            past_limit(cmds[c], limits[c][l], outs[c], NULL, what);
            holds_nothing(outs[c], what);
            lb_run_ok(cmds[c], "the same command without the limit");
            sc_files_parse(outs[c], 1, what);
        }
    }
}

static void test_files(void)
{
    scratch = lb_scratch_dir("cli-files");

    long_lists();
    force_killed();
    char dir[512];
    static const long gaps_us[] = {0, 2000, 10000, 50000};
    for (size_t i = 0; i < sizeof gaps_us / sizeof gaps_us[0]; i++) {
        snprintf(dir, sizeof dir, "%s/stopped-%zu", scratch, i);
        stop_sweep(dir, SIGTERM, gaps_us[i]);
    }
    /* SIGHUP: like Ctrl-C; its meta.csv is read below */
    stop_sweep(in_scratch(dir, "hup"), SIGHUP, -1);

    /* no k < n; more memory than there is (64 TiB), or than a limit allows (ulimit -v 1G) */
    refused_input("512", "4096", "8M", "--k", "--n");
    refused_input("32", "8", "64T", "--mem-limit", "at most");
    lb_child_resource = RLIMIT_AS;
    lb_child_limit = (rlim_t)1 << 30;
    refused_input("32", "8", "2G", "--mem-limit", "at most");
    lb_child_resource = -1;

    failed_writes();
    failed_one_shot_writes();
    stop_during_setup();

    /* Unknown values are empty fields, never -1. */
    char path[4400];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbMeta m = {0};
    if (lb_check(lb_meta_read(path, &m) == 0, "meta.csv reads")) {
        for (size_t i = 0; i < m.count; i++)
            lb_check(strcmp(m.values[i], "-1") != 0, "meta.csv %s is not -1", m.keys[i]);
        lb_meta_free(&m);
    }
    sc_check_meta(dir, "sm_count", "", "a CPU's sm_count is empty");

    /* Plot: the title says fp16 was stored as fp32; a gnuplot that hangs is stopped. */
    lb_run_ok(ARGV("plot", dir, "--no-render"), "plot --no-render");
    char *gp = lb_slurp_in(dir, "time_speedup.gp");
    lb_check(gp && strstr(gp, "fp16 stored as fp32"), "the plot title says what the CPU stored");
    free(gp);
    char fake[600];
    snprintf(fake, sizeof fake, "PATH=%s/bin", scratch);
    mkdir(fake + 5, 0777);
    snprintf(path, sizeof path, "%s/gnuplot", fake + 5);
    (void)write_text(path, "#!/bin/sh\nexec /bin/sleep 600\n");
    chmod(path, 0755);
    lb_child_path = fake + 5;
    const double t0 = now_s();
    sc_expect(lb_run(ARGV("plot", dir, "--render-timeout", "1")), 1, -1, "a hung gnuplot", "did not finish");
    lb_child_path = NULL;
    lb_check(now_s() - t0 < 30, "a hung gnuplot is stopped in %.1f s", now_s() - t0);

    /* A path longer than the files can have: refused whole (not cut), nothing created. */
    char longdir[5000];
    snprintf(longdir, sizeof longdir, "%s/deep", scratch);
    while (strlen(longdir) < 4000)
        strcat(longdir, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    lb_run_refused(ARGV("sweep", TINY, "--n", "32", "--k", "8", "--out", longdir), longdir, "--out");
    lb_check(!lb_exists_in(scratch, "deep"), "a 4 KB --out: nothing created");

    lb_test_cleanup(scratch);
}

/* One writer per result directory. Pairs of sweeps started together into a new --out: exactly
 * one writes, the other exits with one line (in use, or holds results if the first had already
 * finished), and the directory holds one run's cells, each once. While a sweep runs, --resume,
 * another sweep and --force into its directory are refused with one line and change nothing;
 * after kill -9 the kernel has released the lock and --resume finishes the run.
 **/
static int one_line_refusal(const LbRun *r)
{
    return (r->code == 1 && strstr(r->err, "in use")) || (r->code == 2 && strstr(r->err, "already holds results"));
}

static void pairs(int count)
{
    int in_use = 0;
    for (int i = 0; i < count; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/pair-%d/out", scratch, i);
        char **argv = ARGV("sweep", GRID6, "--out", dir);
        pid_t a = lb_start_tagged(argv, "a"), b = lb_start_tagged(argv, "b");
        LbRun ra = lb_wait_tagged(a, "a"), rb = lb_wait_tagged(b, "b");
        int wrote = (ra.code == 0) + (rb.code == 0);
        const LbRun *loser = ra.code == 0 ? &rb : &ra;
        lb_check(wrote == 1, "pair %d: exactly one sweep ran (exits %d and %d): %s%s", i, ra.code, rb.code, ra.err, rb.err);
        lb_check(one_line_refusal(loser) && lb_lines(loser->err) == 1, "pair %d: the other exits with one line (%d): %s", i,
                 loser->code, loser->err);
        in_use += loser->code == 1;
        char what[64];
        snprintf(what, sizeof what, "pair %d", i);
        sc_files_parse(dir, 1, what);
        sc_each_once(dir, CELLS6, what); /* one run's cells */
        lb_run_free(&ra);
        lb_run_free(&rb);
    }
    lb_check(in_use > 0, "the lock, not only the results check, refused a racer at least once (%d of %d)", in_use, count);
}

static void test_lock(void)
{
    scratch = lb_scratch_dir("cli-lock");
    pairs(12);

    /* A sweep in progress: every other writer is turned away and nothing of it changes. */
    char busy[512];
    pid_t pid = lb_start_tagged(ARGV("sweep", SLOW, "--out", in_scratch(busy, "busy")), "slow");
    for (int i = 0; i < 6000 && sc_rows(busy) < 2; i++)
        usleep(5000);
    kill(pid, SIGSTOP); /* hold it still: what the others do must not change its files */
    char *meta_before = lb_slurp_in(busy, "meta.csv"), *raw_before = lb_slurp_in(busy, "raw.csv");
    char **others[] = {ARGV("sweep", "--resume", busy, "--quiet"), ARGV("sweep", GRID6, "--out", busy),
                       ARGV("sweep", GRID6, "--out", busy, "--force"),
                       ARGV("run", MODEL, "--n", "32", "--mem-limit", "8M", "--dump", busy)};
    const char *names[] = {"--resume", "another sweep", "--force", "run --dump"};
    for (int i = 0; i < 4; i++) {
        sc_expect(lb_run(others[i]), 1, 1, names[i], "in use", busy);
        char *meta = lb_slurp_in(busy, "meta.csv"), *raw = lb_slurp_in(busy, "raw.csv");
        lb_check(meta && raw && meta_before && raw_before && strcmp(meta, meta_before) == 0 && strcmp(raw, raw_before) == 0,
                 "%s changed nothing in the directory in use", names[i]);
        free(meta);
        free(raw);
    }
    free(meta_before);
    free(raw_before);
    /* kill -9 releases the lock with the process: --resume then works at once. */
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    LbRun r = lb_wait_tagged(pid, "slow");
    lb_run_free(&r);
    lb_run_ok(ARGV("sweep", "--resume", busy, "--quiet", "--n", "32:1024"), "--resume after kill -9 of the holder");
    sc_files_parse(busy, 1, "resumed after kill -9");
    /* n 32..1024 (6 values) standard, and k 8, 16 below each: 6 + 2 * 6 */
    sc_each_once(busy, 18, "the run resumed after kill -9");
    lb_test_cleanup(scratch);
}

/* No write through a name planted in a directory linbench writes into. A symbolic link (dangling
 * or not), a hard link or a FIFO put where linbench keeps its lock, raw.csv, a result file, a
 * dumped array, a plot or a job script must never send a write to another file: each command
 * either refuses with one line or replaces the planted name, and the file it pointed at keeps
 * every byte. The lock is tried for each command that takes one (sweep, --resume, merge, predict,
 * run --dump).
 **/
static const char victim_text[] = "the user's own file: not linbench's to write\n";

/* A fresh file outside every result directory, holding victim_text. */
static void make_victim(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", scratch, name);
    (void)write_text(path, victim_text);
}

static void victim_intact(const char *path, const char *what)
{
    char *now = lb_slurp(path);
    lb_check(now && strcmp(now, victim_text) == 0, "%s: the file a planted name pointed at is unchanged (%s)", what,
             now ? now : "(gone)");
    free(now);
}

typedef enum Plant { PLANT_SYMLINK, PLANT_DANGLING, PLANT_HARDLINK, PLANT_FIFO } Plant;
static const char *const plant_name[] = {"a symbolic link", "a dangling symbolic link", "a hard link", "a FIFO"};

/* Put at dir/name what `how` says, pointing at victim where it points anywhere. */
static void plant(const char *dir, const char *name, Plant how, const char *victim)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(dir, 0777);
    unlink(path);
    int rc = -1;
    switch (how) {
    case PLANT_SYMLINK: rc = symlink(victim, path); break;
    case PLANT_DANGLING: {
        char gone[1024];
        snprintf(gone, sizeof gone, "%s.not-there", victim);
        rc = symlink(gone, path);
        break;
    }
    case PLANT_HARDLINK: rc = link(victim, path); break;
    case PLANT_FIFO: rc = mkfifo(path, 0666); break;
    }
    if (rc != 0)
        fprintf(stderr, "cannot plant %s at %s: %s\n", plant_name[how], path, strerror(errno));
}

/* A finished one-cell sweep in dir. */
static void sweep_into(const char *dir)
{
    lb_run_ok(ARGV("sweep", ONE_CELL, "--out", (char *)dir), "a sweep to plant into");
}

/* The lock of every command that takes one, planted each way: each refused naming the lock, the
 * file it pointed at unchanged. */
static void planted_locks(void)
{
    const Plant plants[] = {PLANT_SYMLINK, PLANT_DANGLING, PLANT_HARDLINK, PLANT_FIFO};
    for (size_t p = 0; p < sizeof plants / sizeof plants[0]; p++) {
        char victim[600], dir[600], resumed[600], out[600], what[200];
        make_victim(victim, sizeof victim, "victim-lock");
        /* sweep --resume of a finished sweep, the part merge reads */
        snprintf(resumed, sizeof resumed, "%s/lock-resume-%zu", scratch, p);
        sweep_into(resumed);
        const struct {
            const char *name;
            char **argv;
            const char *into;
        } cmds[] = {{"sweep --out", ARGV("sweep", ONE_CELL, "--out", dir), dir},
                    {"sweep --resume", ARGV("sweep", "--resume", resumed, "--quiet"), resumed},
                    {"merge", ARGV("merge", out, resumed), out},
                    {"predict", ARGV("predict", "--gpu", "h100-sxm", "--n", "512", "--k", "128", "--out", out), out},
                    {"run --dump", ARGV("run", MODEL, "--n", "32", "--dump", out), out}};
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            snprintf(dir, sizeof dir, "%s/lock-sweep-%zu", scratch, p);
            snprintf(out, sizeof out, "%s/lock-%zu-%zu", scratch, c, p);
            plant(cmds[c].into, ".linbench.lock", plants[p], victim);
            snprintf(what, sizeof what, "%s, its lock %s", cmds[c].name, plant_name[plants[p]]);
            sc_expect(lb_run(cmds[c].argv), 2, 1, what, ".linbench.lock");
            victim_intact(victim, what);
        }
        lb_check(!lb_exists_in(dir, "meta.csv"), "sweep --out, its lock %s: no result written", plant_name[plants[p]]);
    }
}

/* raw.csv, the one file appended to in place, planted in a directory to be resumed. */
static void planted_raw(void)
{
    const Plant plants[] = {PLANT_SYMLINK, PLANT_HARDLINK};
    for (size_t p = 0; p < sizeof plants / sizeof plants[0]; p++) {
        char dir[600], victim[600], raw[700], what[200];
        snprintf(dir, sizeof dir, "%s/raw-resume-%zu", scratch, p);
        sweep_into(dir);
        /* the victim is a whole raw.csv of another run, so only the name tells them apart */
        snprintf(victim, sizeof victim, "%s/victim-raw-%zu.csv", scratch, p);
        snprintf(raw, sizeof raw, "%s/raw.csv", dir);
        lb_check(rename(raw, victim) == 0, "moved raw.csv away");
        /* a partial last line, which a resume cuts */
        FILE *f = fopen(victim, "a");
        if (f) {
            fputs("standard,64", f);
            fclose(f);
        }
        char *before = lb_slurp(victim);
        plant(dir, "raw.csv", plants[p], victim);
        snprintf(what, sizeof what, "sweep --resume, raw.csv %s", plant_name[plants[p]]);
        sc_expect(lb_run(ARGV("sweep", "--resume", dir, "--quiet")), 1, -1, what, "raw.csv", "not a plain file");
        lb_check(lb_same_text(before, lb_slurp(victim)), "%s: the file it pointed at is unchanged", what);
    }
}

/* Result files planted as links: without --force the directory holds results; with it, the
 * links are removed, never followed. */
static void planted_results(void)
{
    static const char *const names[] = {"meta.csv", "raw.csv", "time_speedup.csv", "memory_speedup.csv",
                                        "speedups.csv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char dir[600], victim[600], what[200];
        make_victim(victim, sizeof victim, "victim-result");
        snprintf(dir, sizeof dir, "%s/result-%zu", scratch, i);
        plant(dir, names[i], PLANT_DANGLING, victim);
        snprintf(what, sizeof what, "sweep --out, %s a dangling link", names[i]);
        sc_expect(lb_run(ARGV("sweep", ONE_CELL, "--out", dir)), 2, 1, what, "already holds results");
        plant(dir, names[i], PLANT_SYMLINK, victim);
        snprintf(what, sizeof what, "sweep --force, %s a link", names[i]);
        lb_run_ok(ARGV("sweep", ONE_CELL, "--out", dir, "--force"), what);
        victim_intact(victim, what);
        sc_files_parse(dir, 1, what);
    }
}

/* A dumped array, a plot's image and a job script planted as links. */
static void planted_outputs(void)
{
    char victim[600], dir[600];
    make_victim(victim, sizeof victim, "victim-output");
    snprintf(dir, sizeof dir, "%s/dump", scratch);
    plant(dir, "ids.npy", PLANT_SYMLINK, victim);
    /* refused before the first write: --dump takes a new or empty directory only */
    sc_run_expect(ARGV("run", MODEL, "--n", "32", "--dump", dir), 2, 1, "ids.npy", "--dump");
    victim_intact(victim, "run --dump, ids.npy a link");

    snprintf(dir, sizeof dir, "%s/plot", scratch);
    sweep_into(dir);
    plant(dir, "time_speedup.png", PLANT_SYMLINK, victim);
    plant(dir, "time_per_seq.svg", PLANT_SYMLINK, victim);
    LbRun r = lb_run(ARGV("plot", dir));
    if (strstr(r.out, "not on PATH")) {
        printf("gnuplot is not on PATH: the plot's planted images are not tried\n");
    } else {
        lb_check(r.code == 0, "plot, its images planted as links: renders (%d): %s", r.code, r.err);
        victim_intact(victim, "plot, its images planted as links");
        char png[700];
        snprintf(png, sizeof png, "%s/time_speedup.png", dir);
        struct stat st;
        lb_check(lstat(png, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0,
                 "plot: time_speedup.png is a plain file of its own now");
    }
    lb_run_free(&r);

    snprintf(dir, sizeof dir, "%s/slurm", scratch);
    char scripts[700];
    snprintf(scripts, sizeof scripts, "%s/slurm", dir);
    mkdir(dir, 0777);
    plant(scripts, "sweep.sbatch", PLANT_SYMLINK, victim);
    sc_run_expect(ARGV("slurm", ONE_CELL, "--shards", "2", "--out", dir), 1, -1, "sweep.sbatch", "not a plain file");
    victim_intact(victim, "slurm, sweep.sbatch a link");
}

static void test_links(void)
{
    scratch = lb_scratch_dir("cli-links");
    planted_locks();
    planted_raw();
    planted_results();
    planted_outputs();
    lb_test_cleanup(scratch);
}

/* A small CPU sweep killed at 30 random moments (kill -9), resumed after each, ends with exactly
 * the uninterrupted run's cells, each once, with the same settings, and every file parses after
 * every kill; then the same with Ctrl-C (SIGINT). The moments are drawn over the length of an
 * uninterrupted run, so they fall in start-up, in cells, and in the writes of meta.csv and the
 * grids. Bounded: each signal stops drawing after 50 s.*/
static double uniform(void) { return (double)(lb_test_u64() >> 11) / 9007199254740992.0; }

/* The GRID12 sweep into dir, or its resume once meta.csv exists. */
#define SWEEP_OR_RESUME(dir)                                                                                          \
    (lb_exists_in(dir, "meta.csv") ? ARGV("sweep", "--resume", (char *)(dir), "--quiet")                              \
                                   : ARGV("sweep", GRID12, "--out", (char *)(dir)))

/* Start (or resume) the sweep into dir and send `sig` after `delay` s. */
static int hit(const char *dir, int sig, double delay)
{
    pid_t pid = lb_start(SWEEP_OR_RESUME(dir));
    struct timespec t = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    nanosleep(&t, NULL);
    kill(pid, sig);
    LbRun r = lb_wait(pid);
    int code = r.code;
    /* SIGINT: 130 (stopped cleanly, or before the handler was set); kill -9: killed; or 0 (it had finished) */
    lb_check(code == 0 || code == (sig == SIGINT ? 130 : 128 + SIGKILL), "signal %d after %.3f s: stopped or finished (got %d): %s",
             sig, delay, code, r.err);
    lb_run_free(&r);
    return code;
}

static void torture(const char *dir, const char *full, int sig, double span, double deadline)
{
    const char *name = sig == SIGKILL ? "kill -9" : "SIGINT";
    int hits = 0;
    for (; hits < 30 && now_s() < deadline; hits++) {
        int code = hit(dir, sig, uniform() * span);
        /* On a loaded machine start-up can outlast the span measured unloaded, and every moment
         * would fall before meta.csv: widen the span until interruptions reach the cells. */
        if (code != 0 && !lb_exists_in(dir, "meta.csv") && span < 10.0)
            span *= 1.5;
        char what[64];
        snprintf(what, sizeof what, "after %s #%d", name, hits + 1);
        sc_files_parse(dir, 0, what);
    }
    lb_check(hits == 30, "%s: 30 interruptions within the time bound (got %d)", name, hits);
    /* the last run resumes, or starts afresh where every interruption came before meta.csv */
    char what[64];
    snprintf(what, sizeof what, "%s x30 then --resume", name);
    lb_run_ok(SWEEP_OR_RESUME(dir), what);
    sc_same_cells(dir, full, what);
    sc_same_settings(dir, full, NULL, what);
    sc_files_parse(dir, 1, what);
    sc_check_meta(dir, "status", "complete", what);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "%s: grids read", what)) {
        int na = 0;
        for (size_t c = 0; c < g.rows * g.cols; c++)
            na += g.time[c].kind == LB_GRID_MISSING || g.memory[c].kind == LB_GRID_MISSING;
        lb_check(na == 0, "%s: no NA left in the grids (%d)", what, na);
        lb_grid_free(&g);
    }
}

static void test_torture(void)
{
    scratch = lb_scratch_dir("cli-torture");
    char full[512], killed[512], stopped[512];
    in_scratch(killed, "killed");
    in_scratch(stopped, "stopped");

    double t0 = now_s();
    lb_run_ok(ARGV("sweep", GRID12, "--out", in_scratch(full, "full")), "uninterrupted sweep");
    double span = (now_s() - t0) * 1.1;
    printf("an uninterrupted run takes %.3f s; interrupting within %.3f s\n", span / 1.1, span);

    double deadline = now_s() + 50;
    torture(killed, full, SIGKILL, span, deadline);
    torture(stopped, full, SIGINT, span, deadline + 50);
    printf("took %.1f s\n", now_s() - t0);
    lb_test_cleanup(scratch);
}

/* A result directory damaged after the sweep (read_damaged). The damages, each of the text of a whole file: malloc'd, or NULL when it lacks what is damaged. */
static char *meta_cut(const char *t) /* cut after its status line: no device, no setting */
{
    const char *status = strstr(t, "\nstatus,"), *cut = status ? strchr(status + 1, '\n') : NULL;
    return cut ? strndup(t, (size_t)(cut + 1 - t)) : NULL;
}

static char *meta_bad(const char *t) /* whole but for one value */
{
    const char *at = strstr(t, "\nd_model,16\n");
    char *bad = at ? malloc(strlen(t) + 16) : NULL;
    if (bad)
        sprintf(bad, "%.*s\nd_model,banana\n%s", (int)(at - t), t, at + 12);
    return bad;
}

static char *raw_bad(const char *t) /* line 3's batch does not read */
{
    const char *field = strchr(t, '\n');
    field = field ? strchr(field + 1, '\n') : NULL; /* the end of line 2 */
    for (int i = 0; field && i < 6; i++) /* model,n,k,sharing,order,dtype,batch: the seventh field */
        field = strchr(field + 1, ',');
    char *bad = field ? malloc(strlen(t) + 8) : NULL;
    if (bad)
        sprintf(bad, "%.*sbanana%s", (int)(field + 1 - t), t, field + 1 + strcspn(field + 1, ","));
    return bad;
}

static char *raw_cut(const char *t) /* the last row cut in half, without its newline */
{
    size_t len = strlen(t), last = len - 1;
    while (last > 0 && t[last - 1] != '\n')
        last--;
    return len > 2 ? strndup(t, last + (len - last) / 2) : NULL;
}

/* scratch/NAME made anew holding whole's raw.csv and meta.csv, `file` of them damaged; the
 * directory into dir, the damaged file's path into path. */
static int damaged_copy(const char *whole, const char *name, const char *file, char *(*damage)(const char *),
                        char dir[512], char path[600])
{
    static const char *const files[] = {"raw.csv", "meta.csv"};
    snprintf(dir, 512, "%s/%s", scratch, name);
    mkdir(dir, 0755);
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        const int damaged = strcmp(files[i], file) == 0;
        char *text = lb_slurp_in(whole, files[i]), *bad = text && damaged ? damage(text) : NULL;
        snprintf(path, 600, "%s/%s", dir, files[i]);
        ok &= lb_check(text && (bad || !damaged) && write_text(path, bad ? bad : text) == 0, "%s: %s written%s", name,
                       path, damaged ? " damaged" : "");
        free(text);
        free(bad);
    }
    snprintf(path, 600, "%s/%s", dir, file);
    return ok;
}

/* compare, plot and merge read dir (plot and merge into DIR-plots and DIR-merged), then sweep
 * --resume. With a key, each refuses it: exit 2, one line naming `file` (DIR/meta.csv), `key` and
 * dir, nothing written. Without (raw.csv's last row cut short), the three warn naming the cut
 * line and sweep --resume DIR, still showing what is whole, and the resume measures the cell. */
static void read_damaged(const char *dir, const char *file, const char *key, const char *what)
{
    char out[1024], plot_out[1024], cut[1024], hint[1024];
    snprintf(out, sizeof out, "%s-merged", dir);
    snprintf(plot_out, sizeof plot_out, "%s-plots", dir);
    snprintf(cut, sizeof cut, "%s line %d is cut short", file, CELLS6 + 1);
    snprintf(hint, sizeof hint, "linbench sweep --resume %s", dir);
    char *meta_before = lb_slurp_in(dir, "meta.csv"), *d = (char *)dir;
    LbRun r[4] = {lb_run(ARGV("compare", d, "--format", "csv")), lb_run(ARGV("plot", d, "--no-render", "--out", plot_out)),
                  lb_run(ARGV("merge", "-q", out, d)), lb_run(ARGV("sweep", "--resume", d, "-q"))};
    static const char *const name[4] = {"compare", "plot", "merge", "sweep --resume"};
    if (key) {
        for (int i = 0; i < 4; i++)
            lb_check_refusal(r[i], name[i], file, key, dir);
        lb_check(!lb_exists(out), "merge of %s: %s not made", what, out);
        lb_check(!lb_exists(plot_out), "plot of %s: %s not made", what, plot_out);
        lb_check(lb_same_text(meta_before, lb_slurp_in(dir, "meta.csv")),
                 "sweep --resume of %s: meta.csv not rewritten", what);
        return;
    }
    free(meta_before);
    /* what is whole is still shown: the cut cell is linformer n=64 k=16 (the sweep's last) */
    lb_check(strstr(r[0].out, "time,32,8,") && strstr(r[0].out, "time,64,8,") && strstr(r[0].out, "time,64,16,NA"),
             "compare shows the whole rows, the cut cell NA:\n%s", r[0].out);
    for (int i = 0; i < 3; i++) {
        lb_check(r[i].code == 0 && strncmp(r[i].err, "linbench: warning: ", 19) == 0 && strstr(r[i].err, cut) &&
                     strstr(r[i].err, hint),
                 "%s of %s: exit %d: should be 0 with a warning with \"%s\" and \"%s\", got: %s", name[i], what,
                 r[i].code, cut, hint, r[i].err);
        lb_run_free(&r[i]);
    }
    sc_expect(r[3], 0, -1, "sweep --resume of a cut raw.csv");
    sc_each_once(dir, CELLS6, "the cut raw.csv resumed");
    LbRun c = lb_run(ARGV("compare", d, "--format", "csv"));
    lb_check(c.code == 0 && c.err[0] == '\0' && strstr(c.out, "time,64,16,") && !strstr(c.out, "time,64,16,NA"),
             "compare after the resume: exit %d, no warning, the cell measured: %s%s", c.code, c.err, c.out);
    lb_run_free(&c);
}

static void test_damaged(void)
{
    scratch = lb_scratch_dir("cli-damaged");
    char whole[512], dir[512], file[600];
    if (!lb_run_ok(ARGV("sweep", GRID6, "--out", in_scratch(whole, "whole")), "the sweep to damage"))
        return;
    /* raw.csv's last row is cut while meta.csv still says complete */
    sc_check_meta(whole, "status", "complete", "the sweep to damage");
    static const struct {
        const char *name, *file;
        char *(*damage)(const char *);
        const char *key, *what;
    } damages[] = {{"meta-cut", "meta.csv", meta_cut, "n_list", "a meta.csv cut short"},
                   {"meta-bad", "meta.csv", meta_bad, "d_model", "a meta.csv value that does not read"},
                   {"raw-bad", "raw.csv", raw_bad, "line 3", "a raw.csv row that does not read"},
                   {"raw-cut", "raw.csv", raw_cut, NULL, "a cut raw.csv"}};
    for (size_t i = 0; i < sizeof damages / sizeof damages[0]; i++)
        if (damaged_copy(whole, damages[i].name, damages[i].file, damages[i].damage, dir, file))
            read_damaged(dir, file, damages[i].key, damages[i].what);
    lb_test_cleanup(scratch);
}

int main(int argc, char **argv)
{
    static const LbTestCase cases[] = {{"files", test_files}, {"lock", test_lock}, {"links", test_links},
                                       {"torture", test_torture}, {"damaged", test_damaged}};
    lb_test_init("test_cli_files");
    if (argc < 2)
        return 1;
    bin = argv[1];
    return LB_TEST_CASES("test_cli_files", cases);
}
