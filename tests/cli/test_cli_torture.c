/* A small CPU sweep killed at 30 random moments (kill -9), resumed after each, ends with exactly
 * the uninterrupted run's cells, each once, with the same settings, and every file parses after
 * every kill; then the same with Ctrl-C (SIGINT). The moments are drawn over the length of an
 * uninterrupted run, so they fall in start-up, in cells, and in the writes of meta.csv and the
 * grids. Bounded: each signal stops drawing after 50 s. Usage: test_cli_torture PATH-TO-LINBENCH */
#include <time.h>

#include "tests/cli/sweep_check.h"

static const char *bin;

#define GRID "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--n", "32:128", "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "--quiet"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Start (or resume, once meta.csv exists) the sweep into dir and send `sig` after `delay` s. */
static int hit(const char *dir, int sig, double delay)
{
    char path[600];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    char *fresh[] = {(char *)bin, "sweep", GRID, "--out", (char *)dir, NULL};
    char *again[] = {(char *)bin, "sweep", "--resume", (char *)dir, "--quiet", NULL};
    pid_t pid = lb_start(lb_exists(path) ? again : fresh);
    struct timespec t = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    nanosleep(&t, NULL);
    kill(pid, sig);
    LbRun r = lb_wait(pid);
    int code = r.code;
    /* SIGINT: 130 (stopped cleanly, or before the handler was set), or 0 (it had finished). */
    if (sig == SIGINT)
        lb_check(code == 130 || code == 0, "SIGINT after %.3f s: exit 130 or 0 (got %d): %s", delay, code, r.err);
    else
        lb_check(code == 128 + SIGKILL || code == 0, "kill -9 after %.3f s: killed or finished (got %d): %s", delay, code, r.err);
    lb_run_free(&r);
    return code;
}

static void torture(const char *dir, const char *full, int sig, double span, double deadline)
{
    const char *name = sig == SIGKILL ? "kill -9" : "SIGINT";
    int hits = 0;
    for (; hits < 30 && now_s() < deadline; hits++) {
        hit(dir, sig, uniform() * span);
        char what[64];
        snprintf(what, sizeof what, "after %s #%d", name, hits + 1);
        sc_files_parse(dir, 0, what);
    }
    lb_check(hits == 30, "%s: 30 interruptions within the time bound (got %d)", name, hits);
    char *again[] = {(char *)bin, "sweep", "--resume", (char *)dir, "--quiet", NULL};
    LbRun r = lb_run(again);
    lb_check(r.code == 0, "%s: the last resume exits 0 (%d): %s", name, r.code, r.err);
    lb_run_free(&r);
    char what[64];
    snprintf(what, sizeof what, "%s x30 then --resume", name);
    sc_same_cells(dir, full, what);
    sc_same_settings(dir, full, what);
    sc_files_parse(dir, 1, what);
    char *status = sc_meta(dir, "status");
    lb_check(status && strcmp(status, "complete") == 0, "%s: meta.csv says complete (%s)", what, status ? status : "none");
    free(status);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "%s: grids read", what)) {
        int na = 0;
        for (size_t c = 0; c < g.rows * g.cols; c++)
            na += g.time[c].kind == LB_GRID_MISSING || g.memory[c].kind == LB_GRID_MISSING;
        lb_check(na == 0, "%s: no NA left in the grids (%d)", what, na);
        lb_grid_free(&g);
    }
}

int main(int argc, char **argv)
{
    lb_test_init("test_cli_torture");
    if (argc < 2)
        return 1;
    bin = argv[1];
    rng_state = lb_test_seed;
    const char *scratch = lb_scratch_dir("cli-torture");
    char full[512], killed[512], stopped[512];
    snprintf(full, sizeof full, "%s/full", scratch);
    snprintf(killed, sizeof killed, "%s/killed", scratch);
    snprintf(stopped, sizeof stopped, "%s/stopped", scratch);

    double t0 = now_s();
    char *whole[] = {(char *)bin, "sweep", GRID, "--out", full, NULL};
    LbRun r = lb_run(whole);
    double span = (now_s() - t0) * 1.1;
    lb_check(r.code == 0, "uninterrupted sweep exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    printf("an uninterrupted run takes %.3f s; interrupting within %.3f s\n", span / 1.1, span);

    double deadline = now_s() + 50;
    torture(killed, full, SIGKILL, span, deadline);
    torture(stopped, full, SIGINT, span, deadline + 50);
    printf("took %.1f s\n", now_s() - t0);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_torture");
}
