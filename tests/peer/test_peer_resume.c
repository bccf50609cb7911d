/* linbench-peer sweep --resume on the CPU: a peer sweep killed by SIGKILL then resumed measures
 * every cell once (the first rows kept byte for byte), with meta.csv, the grids and compare whole;
 * a partial last row is dropped; a resume with another setting, of a directory in use, or whose
 * lock is a symbolic link is refused.
 * Usage: test_peer_resume PATH-TO-LINBENCH SOURCE_DIR FIND_PYTHON (exit 77 without torch). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/sweep_dir.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"
#include "tests/peer/peer_test.h"


/* n 64 and 128, k 8 and 16: per n torch-standard, torch-linformer twice, torch-sdpa-flash */
#define MODEL "--device", "cpu", "--dtype", "fp32", "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", \
              "--vocab", "100", "--k", "8,16", "--mem-limit", "8M", "--cell-time", "1"
#define CELLS 8

static pid_t start_peer(char **args)
{
    char *argv[64] = {python, peer};
    int n = 2;
    for (; args[n - 2] && n < 63; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    return lb_start(argv);
}

static LbRun run_peer(char **args) { return lb_wait(start_peer(args)); }

static LbRun resume(const char *dir, const char *flag, const char *value)
{
    char *args[] = {"sweep", "--resume", (char *)dir, "-q", (char *)flag, (char *)value, NULL};
    return run_peer(args);
}

static char *file_text(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lb_slurp(path);
}

/* dir's rows: every cell of the grid once, each ok; its grids numbers in every k < n cell. */
static void check_each_once(const char *dir, const char *what)
{
    LbSweepDir p;
    if (!lb_check(lb_result_load(dir, &p) == LB_OK, "%s: %s reads back as a peer's result: %s", what, dir,
                  lb_error_message()))
        return;
    lb_check(p.count == CELLS, "%s: %d rows, one per cell (%zu)", what, CELLS, p.count);
    for (size_t i = 0; i < p.count; i++) {
        lb_check(p.rows[i].status == LB_CELL_OK && p.rows[i].batch >= 1, "%s: row %zu ok", what, i + 1);
        for (size_t j = 0; j < i; j++)
            lb_check(!(p.variant[i] == p.variant[j] && p.rows[i].n == p.rows[j].n && p.rows[i].k == p.rows[j].k),
                     "%s: %s n=%lld k=%lld measured once (rows %zu and %zu)", what, p.variants[p.variant[i]].name,
                     (long long)p.rows[i].n, (long long)p.rows[i].k, j + 1, i + 1);
    }
    lb_sweep_dir_free(&p);
    char path[4400];
    snprintf(path, sizeof path, "%s/time_speedup.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 1, &t) == LB_OK && t.rows == 3 && t.row[0].count == 3,
                 "%s: time_speedup.csv, n 64 and 128 by k 8 and 16", what)) {
        for (size_t r = 1; r < t.rows; r++)
            for (size_t c = 1; c < t.row[r].count; c++)
                lb_check(atof(t.row[r].fields[c]) > 0, "%s: time_speedup.csv n=%s %s: a number (%s)", what,
                         t.row[r].fields[0], t.row[0].fields[c], t.row[r].fields[c]);
        lb_csv_table_free(&t);
    }
    char *status = sc_meta(dir, "status");
    lb_check(status && strcmp(status, "complete") == 0, "%s: meta.csv says complete (%s)", what,
             status ? status : "absent");
    free(status);
}

/* `linbench compare LIN dir --format csv`: every pair of the same work and every model against
 * the peer's exact attention, each with numbers on both sides. */
static void check_compare(const char *lin, const char *dir)
{
    char *argv[] = {bin, "compare", (char *)lin, (char *)dir, "--format", "csv", NULL};
    LbRun r = lb_run(argv);
    LbCsvTable t;
    if (lb_check(r.code == 0, "compare LIN RESUMED: exit %d (%s)", r.code, r.err) &&
        lb_check(lb_csv_parse_text(r.out, strlen(r.out), 0, "compare", &t) == LB_OK, "compare's CSV parses")) {
        /* standard with torch-standard and torch-sdpa-flash (2 n each), linformer with
         * torch-linformer (4 cells), linformer against torch-sdpa-flash (4) */
        lb_check(t.rows == 1 + 12, "compare: 12 cells (%zu)", t.rows - 1);
        for (size_t i = 1; i < t.rows; i++)
            lb_check(t.row[i].count == 14 && atof(t.row[i].fields[5]) > 0 && atof(t.row[i].fields[6]) > 0,
                     "compare row %zu: ms per sequence on both sides (%s, %s)", i,
                     t.row[i].count > 6 ? t.row[i].fields[5] : "", t.row[i].count > 6 ? t.row[i].fields[6] : "");
        lb_csv_table_free(&t);
    }
    lb_run_free(&r);
}

/* Start the sweep, SIGKILL it once raw.csv has a row: the killed run's raw.csv. */
static char *killed_mid_grid(const char *dir)
{
    char *args[] = {"sweep", MODEL, "--n", "64,128", "-q", "--out", (char *)dir, NULL};
    pid_t pid = start_peer(args);
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 15000 && sc_rows(dir) < 1; i++) { /* 5 minutes at most */
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            lb_check(0, "the sweep ended (status %d) before its first row could be killed", status);
            LbRun r = lb_wait(pid); /* its captures */
            lb_run_free(&r);
            return NULL;
        }
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    LbRun r = lb_wait(pid);
    lb_check(r.code == 128 + SIGKILL, "kill -9 ends the peer sweep (%d: %s)", r.code, r.err);
    lb_run_free(&r);
    const int kept = sc_rows(dir);
    lb_check(kept >= 1 && kept < CELLS, "killed mid-grid: %d of %d rows on disk", kept, CELLS);
    char *status = sc_meta(dir, "status");
    lb_check(status && strcmp(status, "running") == 0, "the killed run's meta.csv says running (%s)",
             status ? status : "absent");
    free(status);
    return file_text(dir, "raw.csv");
}

/* A flag that differs from meta.csv: refused in one line naming it, exit 2, nothing written. */
static void check_refused(const char *dir, const char *flag, const char *value, int code, const char *want,
                          const char *what)
{
    char *raw = file_text(dir, "raw.csv"), *meta = file_text(dir, "meta.csv");
    LbRun r = resume(dir, flag, value);
    lb_check(r.code == code && lb_lines(r.err) == 1 && strncmp(r.err, "linbench-peer: ", 15) == 0 &&
                 strstr(r.err, want),
             "%s: exit %d (should be %d), one line with \"%s\": %s", what, r.code, code, want, r.err);
    char *raw2 = file_text(dir, "raw.csv"), *meta2 = file_text(dir, "meta.csv");
    lb_check(raw && raw2 && meta && meta2 && strcmp(raw, raw2) == 0 && strcmp(meta, meta2) == 0,
             "%s: raw.csv and meta.csv as they were", what);
    lb_run_free(&r);
    free(raw);
    free(raw2);
    free(meta);
    free(meta2);
}

/* Another process holding the lock, and a lock file that is a symbolic link: refused. */
static void check_lock(const char *dir)
{
    char lock[4400], target[4400];
    snprintf(lock, sizeof lock, "%s/.linbench.lock", dir);
    int fd = open(lock, O_RDWR | O_CLOEXEC);
    if (lb_check(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "the test takes %s", lock)) {
        check_refused(dir, NULL, NULL, 1, "is in use by another", "--resume of a directory another process holds");
        close(fd);
    }
    snprintf(target, sizeof target, "%s/elsewhere", scratch);
    if (lb_check(unlink(lock) == 0 && symlink(target, lock) == 0, "%s made a symbolic link", lock)) {
        check_refused(dir, NULL, NULL, 2, ".linbench.lock is a symbolic link", "--resume with a symbolic-link lock");
        lb_check(!lb_exists(target), "the link's target not created");
        unlink(lock);
    }
}

int main(int argc, char **argv)
{
    const int started = lb_peer_test_start(argc, argv, "test_peer_resume");
    if (started >= 0)
        return started;

    char lin[4200], dir[4200], zone[4200];
    snprintf(zone, sizeof zone, "%s/zone-empty", scratch); /* no energy counter, whatever this machine has */
    lb_check(mkdir(zone, 0755) == 0, "mkdir %s", zone);
    setenv("LB_POWERCAP_ZONE", zone, 1);
    snprintf(lin, sizeof lin, "%s/lin", scratch);
    snprintf(dir, sizeof dir, "%s/peer", scratch);
    char *sweep[] = {bin, "sweep", MODEL, "--n", "64,128", "--models", "standard,linformer", "-q", "--out", lin, NULL};
    LbRun r = lb_run(sweep);
    lb_check(r.code == 0, "linbench sweep: exit %d (%s)", r.code, r.err);
    lb_run_free(&r);

    /* Killed mid-grid, then resumed: each cell once, the killed run's rows kept as they were. */
    char *before = killed_mid_grid(dir);
    char *command = sc_meta(dir, "command_line"), *start = sc_meta(dir, "start_time");
    check_refused(dir, "--seed", "2", 2, "--seed 2 differs from the resumed run's \"1\"", "--resume --seed 2");
    check_refused(dir, "--n", "64", 2, "--n 64 differs from the resumed run's \"64,128\"", "--resume --n 64");
    check_lock(dir);
    r = resume(dir, "--n", "64:128"); /* a flag that agrees with meta.csv is fine */
    lb_check(r.code == 0, "resume after kill -9: exit %d (%s)", r.code, r.err);
    lb_run_free(&r);
    char *after = file_text(dir, "raw.csv");
    lb_check(before && after && strncmp(before, after, strlen(before)) == 0,
             "the killed run's rows are kept as they were, the resume's after them");
    check_each_once(dir, "kill -9 then --resume");
    char *command2 = sc_meta(dir, "command_line"), *start2 = sc_meta(dir, "start_time");
    char *resumed = sc_meta(dir, "resume_1_command"), *when = sc_meta(dir, "resume_1_time");
    lb_check(command && command2 && strcmp(command, command2) == 0 && start && start2 && strcmp(start, start2) == 0,
             "meta.csv keeps the first run's command line and start time (%s, %s)", command2 ? command2 : "absent",
             start2 ? start2 : "absent");
    lb_check(resumed && strstr(resumed, "--resume") && when && when[0], "meta.csv adds the resume's command and time (%s)",
             resumed ? resumed : "absent");
    check_compare(lin, dir);
    free(before);
    free(command);
    free(command2);
    free(start);
    free(start2);
    free(resumed);
    free(when);

    /* A row cut in the middle: dropped, and its cell measured again. */
    char path[4400];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    char *last = after ? strrchr(after, '\n') : NULL;
    if (!lb_check(last && last != after, "raw.csv has rows to cut")) {
        free(after);
        return lb_test_finish("test_peer_resume");
    }
    *last = '\0';
    char *cut = strrchr(after, '\n') + 1;
    const size_t whole = (size_t)(cut - after);
    cut[strlen(cut) / 2] = '\0';
    FILE *f = fopen(path, "w");
    lb_check(f && fputs(after, f) >= 0 && fclose(f) == 0, "%s rewritten with half its last row", path);
    r = resume(dir, NULL, NULL);
    lb_check(r.code == 0, "resume after a partial last row: exit %d (%s)", r.code, r.err);
    lb_run_free(&r);
    char *again = file_text(dir, "raw.csv");
    lb_check(again && strncmp(again, after, whole) == 0, "the whole rows before the partial one are kept");
    check_each_once(dir, "a partial last row then --resume");
    char *second = sc_meta(dir, "resume_2_command");
    lb_check(second != NULL, "meta.csv adds the second resume");
    free(second);
    free(again);
    free(after);

    lb_test_cleanup(scratch);
    free(python);
    return lb_test_finish("test_peer_resume");
}
