/* One writer per result directory. Pairs of sweeps started together into a new --out: exactly
 * one writes, the other exits with one line (in use, or holds results if the first had already
 * finished), and the directory holds one run's cells, each once. While a sweep runs, --resume,
 * another sweep and --force into its directory are refused with one line and change nothing;
 * after kill -9 the kernel has released the lock and --resume finishes the run.
 * Usage: test_cli_lock PATH-TO-LINBENCH */
#include <time.h>

#include "tests/cli/sweep_check.h"

static const char *bin;

#define GRID "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--n", "32:64", "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "--quiet"
#define CELLS 6 /* n 32 and 64: 2 standard + 2 + 2 Linformer */
#define SLOW "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--n", "32:1024", "--k", "8:16", "--mem-limit", "32M", "--cell-time", "1", "--quiet"

static int one_line_refusal(const LbRun *r)
{
    return (r->code == 1 && strstr(r->err, "in use")) || (r->code == 2 && strstr(r->err, "already holds results"));
}

static void pairs(const char *scratch, int count)
{
    int in_use = 0;
    for (int i = 0; i < count; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/pair-%d/out", scratch, i);
        char *argv[] = {(char *)bin, "sweep", GRID, "--out", dir, NULL};
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
        char path[600];
        snprintf(path, sizeof path, "%s/raw.csv", dir);
        LbCellResult *rows = NULL;
        size_t n = 0;
        lb_check(lb_raw_read(path, &rows, &n) == 0 && n == CELLS, "pair %d: raw.csv holds one run's %d cells (%zu)", i, CELLS, n);
        free(rows);
        lb_run_free(&ra);
        lb_run_free(&rb);
    }
    lb_check(in_use > 0, "the lock, not only the results check, refused a racer at least once (%d of %d)", in_use, count);
}

static char *slurp_file(const char *dir, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lb_slurp(path);
}

int main(int argc, char **argv)
{
    lb_test_init("test_cli_lock");
    if (argc < 2)
        return 1;
    bin = argv[1];
    const char *scratch = lb_scratch_dir("cli-lock");
    pairs(scratch, 12);

    /* A sweep in progress: every other writer is turned away and nothing of it changes. */
    char busy[512];
    snprintf(busy, sizeof busy, "%s/busy", scratch);
    char *slow[] = {(char *)bin, "sweep", SLOW, "--out", busy, NULL};
    pid_t pid = lb_start_tagged(slow, "slow");
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 3000 && sc_rows(busy) < 2; i++)
        nanosleep(&pause, NULL);
    kill(pid, SIGSTOP); /* hold it still: what the others do must not change its files */
    char *meta_before = slurp_file(busy, "meta.csv"), *raw_before = slurp_file(busy, "raw.csv");
    char *resume[] = {(char *)bin, "sweep", "--resume", busy, "--quiet", NULL};
    char *again[] = {(char *)bin, "sweep", GRID, "--out", busy, NULL};
    char *force[] = {(char *)bin, "sweep", GRID, "--out", busy, "--force", NULL};
    char *dump[] = {(char *)bin, "run", "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32",
                    "--vocab", "100", "--n", "32", "--mem-limit", "8M", "--dump", busy, NULL};
    char **others[] = {resume, again, force, dump};
    const char *names[] = {"--resume", "another sweep", "--force", "run --dump"};
    for (int i = 0; i < 4; i++) {
        LbRun r = lb_run(others[i]);
        lb_check(r.code == 1 && strstr(r.err, "in use") && strstr(r.err, busy) && lb_lines(r.err) == 1,
                 "%s into a directory in use: exit 1, one line naming it (%d): %s", names[i], r.code, r.err);
        lb_run_free(&r);
        char *meta = slurp_file(busy, "meta.csv"), *raw = slurp_file(busy, "raw.csv");
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
    char *small[] = {(char *)bin, "sweep", "--resume", busy, "--quiet", "--n", "32:1024", NULL};
    r = lb_run(small);
    lb_check(r.code == 0, "--resume after kill -9 of the holder exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_files_parse(busy, 1, "resumed after kill -9");
    char path[600];
    snprintf(path, sizeof path, "%s/raw.csv", busy);
    LbCellResult *rows = NULL;
    size_t n = 0;
    /* n 32..1024 (6 values) standard, and k 8, 16 below each: 6 + 2 * 6 */
    lb_check(lb_raw_read(path, &rows, &n) == 0 && n == 18, "the resumed run has each of its 18 cells (%zu)", n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            lb_check(!(rows[i].model == rows[j].model && rows[i].n == rows[j].n && rows[i].k == rows[j].k),
                     "cell %s n=%lld k=%lld once", lb_model_name(rows[i].model), (long long)rows[i].n, (long long)rows[i].k);
    free(rows);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_lock");
}
