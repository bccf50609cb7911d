/* The cell queue (reports/cell_queue.c) with real processes: one process's take, done, release
 * and resume; a cell claimed by a living process never handed out again, even when every other
 * cell is done, and handed out once that process is SIGKILLed (a zombie, not yet reaped); four
 * forked workers racing for the cells, each cell measured once (a marker file made with O_EXCL
 * says so); workers SIGKILLed at random moments (mid-claim, mid-measure, mid-write of the queue)
 * and replaced, until every cell is done, still each measured once; the queue file always
 * parsing (libcsv), and a queue of other cells or a broken file refused. The grid is random
 * (sizes from the seed). Usage: test_cell_queue */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn/status.h"
#include "reports/cell_queue.h"
#include "reports/csv_io.h"
#include "tests/lib/check.h"

static const char *scratch;
static int dir_no;

static void new_dir(char *dir, size_t size)
{
    snprintf(dir, size, "%s/q%d", scratch, ++dir_no);
    mkdir(dir, 0777);
    char m[600];
    snprintf(m, sizeof m, "%s/m", dir);
    mkdir(m, 0777);
}

/* A random grid: 4..7 values of n (powers of two from 32), k from 8 up to n/2 for Linformer. */
static size_t make_cells(LbQueueCell *cells, size_t max)
{
    float u[2];
    lb_test_random(u, 2, 0.0f, 1.0f);
    const int ns = 4 + (int)(u[0] * 3.99f), ks = 1 + (int)(u[1] * 3.99f);
    size_t count = 0;
    for (int i = 0; i < ns; i++) {
        const int64_t n = (int64_t)32 << i;
        if (count < max)
            cells[count++] = (LbQueueCell){LB_MODEL_STANDARD, n, 0};
        for (int j = 0; j < ks; j++) {
            const int64_t k = (int64_t)8 << j;
            if (k < n && count < max)
                cells[count++] = (LbQueueCell){LB_MODEL_LINFORMER, n, k};
        }
    }
    return count;
}

static int index_of(const LbQueueCell *cells, size_t count, const LbQueueCell *c)
{
    for (size_t i = 0; i < count; i++)
        if (cells[i].model == c->model && cells[i].n == c->n && cells[i].k == c->k)
            return (int)i;
    return -1;
}

static void marker_path(char *buf, size_t size, const char *dir, const LbQueueCell *c)
{
    snprintf(buf, size, "%s/m/%s-%lld-%lld", dir, lb_model_name(c->model), (long long)c->n, (long long)c->k);
}

/* measured(): the cell's marker exists (what raw.csv's row is to a sweep) */
static int marker_exists(void *ctx, const LbQueueCell *c)
{
    char p[700];
    marker_path(p, sizeof p, (const char *)ctx, c);
    return access(p, F_OK) == 0;
}

/* "Measure" a cell: make its marker, which must not exist yet (exit 3 from a worker if it does). */
static int measure(const char *dir, const LbQueueCell *c)
{
    char p[700];
    marker_path(p, sizeof p, dir, c);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int count_state(const LbQueueEntry *e, size_t n, LbQueueState s)
{
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += e[i].state == s;
    return c;
}

/* --- one process ----------------------------------------------------------------------------- */

static void check_one_process(void)
{
    char dir[512], path[700];
    new_dir(dir, sizeof dir);
    LbQueueCell cells[64];
    const size_t count = make_cells(cells, 64);
    LbCellQueue *q = NULL;
    if (!lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK, "open a new queue: %s", lb_error_message()))
        return;
    LbQueueEntry *e = NULL;
    size_t n = 0;
    if (lb_check(lb_cell_queue_read(q, &e, &n) == LB_OK && n == count, "the queue lists %zu cells (%zu)", count, n)) {
        int in_order = 1;
        for (size_t i = 0; i < n; i++)
            in_order &= index_of(cells, count, &e[i].cell) == (int)i && e[i].state == LB_QUEUE_PENDING && e[i].pid == 0;
        lb_check(in_order, "in the given order, all pending");
    }
    free(e);

    LbQueueTake got;
    LbQueueCell c, c2;
    lb_check(lb_cell_queue_take(q, 3, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_GOT && index_of(cells, count, &c) == 0,
             "the first take gets the first cell");
    lb_check(lb_cell_queue_read(q, &e, &n) == LB_OK && e[0].state == LB_QUEUE_CLAIMED && e[0].pid == (long)getpid() &&
                 e[0].gpu == 3 && e[0].pid_start == lb_cell_queue_self_start() && e[0].pid_start > 0,
             "claimed by this pid, its start time and GPU 3");
    free(e);
    lb_check(lb_cell_queue_done(q, &cells[1]) == LB_ERR_INVALID, "done on a cell not claimed refused");
    lb_check(lb_cell_queue_release(q, &c) == LB_OK, "release");
    lb_check(lb_cell_queue_take(q, 3, NULL, NULL, &got, &c2) == LB_OK && got == LB_QUEUE_GOT && index_of(cells, count, &c2) == 0,
             "a released cell is taken again");
    lb_check(lb_cell_queue_done(q, &c2) == LB_OK, "done");
    lb_check(lb_cell_queue_done(q, &c2) == LB_ERR_INVALID, "done twice refused");
    for (size_t i = 1; i < count; i++) {
        lb_check(lb_cell_queue_take(q, 0, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_GOT &&
                     index_of(cells, count, &c) == (int)i,
                 "take %zu gets cell %zu", i, i);
        lb_cell_queue_done(q, &c);
    }
    lb_check(lb_cell_queue_take(q, 0, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_EMPTY, "all done: empty");
    lb_cell_queue_close(q);

    /* resume: done stays done; a stale temporary of a write cut short is removed */
    snprintf(path, sizeof path, "%s/%s.tmp.abc123", dir, LB_CELL_QUEUE_FILE);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK, "reopen the queue (resume)");
    lb_check(access(path, F_OK) != 0, "the stale %s.tmp.* removed at open", LB_CELL_QUEUE_FILE);
    lb_check(lb_cell_queue_read(q, &e, &n) == LB_OK && count_state(e, n, LB_QUEUE_DONE) == (int)count,
             "after the reopen every cell is still done");
    free(e);
    lb_check(lb_cell_queue_take(q, 0, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_EMPTY, "resumed queue: empty");
    lb_cell_queue_close(q);

    /* another grid, or a broken file: refused */
    LbCellQueue *bad = NULL;
    lb_check(lb_cell_queue_open(dir, cells, count - 1, &bad) == LB_ERR_FORMAT && !bad, "a queue of other cells refused");
    LbQueueCell other[64];
    memcpy(other, cells, count * sizeof *cells);
    other[count - 1].n += 1;
    lb_check(lb_cell_queue_open(dir, other, count, &bad) == LB_ERR_FORMAT, "a queue with one other cell refused");
    snprintf(path, sizeof path, "%s/%s", dir, LB_CELL_QUEUE_FILE);
    f = fopen(path, "a");
    if (f) {
        fputs("linformer,64,8,claimed,,,\n", f);
        fclose(f);
    }
    lb_check(lb_cell_queue_open(dir, cells, count, &bad) == LB_ERR_FORMAT && strstr(lb_error_message(), "pid"),
             "a claim without its pid refused: %s", lb_error_message());

    /* measured(): cells with a marker are marked done on the way and not handed out */
    new_dir(dir, sizeof dir);
    for (size_t i = 0; i < count; i += 2)
        measure(dir, &cells[i]);
    lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK, "open a second queue");
    size_t taken = 0;
    int only_unmeasured = 1;
    while (lb_cell_queue_take(q, 1, marker_exists, dir, &got, &c) == LB_OK && got == LB_QUEUE_GOT) {
        only_unmeasured &= index_of(cells, count, &c) % 2 == 1;
        taken++;
        lb_cell_queue_done(q, &c);
    }
    lb_check(only_unmeasured && taken == count / 2 && got == LB_QUEUE_EMPTY, "only the %zu unmeasured cells handed out (%zu)",
             count / 2, taken);
    lb_cell_queue_close(q);
}

/* --- a living claimant, then killed ------------------------------------------------------------ */

static void check_claim_of_the_living(void)
{
    char dir[512];
    new_dir(dir, sizeof dir);
    LbQueueCell cells[64];
    const size_t count = make_cells(cells, 64);
    LbCellQueue *q = NULL;
    if (!lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK, "open: %s", lb_error_message()))
        return;
    int to_parent[2], to_child[2];
    if (pipe(to_parent) != 0 || pipe(to_child) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        LbQueueTake got;
        LbQueueCell c;
        int i = -1;
        if (lb_cell_queue_take(q, 7, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_GOT)
            i = index_of(cells, count, &c);
        if (write(to_parent[1], &i, sizeof i) != (ssize_t)sizeof i)
            _exit(1);
        char b;
        if (read(to_child[0], &b, 1) < 0) /* until killed */
            _exit(1);
        _exit(0);
    }
    int held = -1;
    if (read(to_parent[0], &held, sizeof held) != (ssize_t)sizeof held || held < 0) {
        lb_check(0, "the child claimed a cell");
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return;
    }
    LbQueueEntry *e = NULL;
    size_t n = 0;
    lb_check(lb_cell_queue_read(q, &e, &n) == LB_OK && e[held].state == LB_QUEUE_CLAIMED && e[held].pid == (long)pid &&
                 e[held].gpu == 7,
             "the child's claim is in the file with its pid and GPU");
    lb_check(lb_cell_queue_alive(e[held].pid, e[held].pid_start), "the child counts as alive");
    lb_check(!lb_cell_queue_alive(e[held].pid, e[held].pid_start + 1), "the child's pid with another start time counts as dead");
    free(e);
    LbQueueTake got;
    LbQueueCell c;
    int twice = 0;
    size_t taken = 0;
    while (lb_cell_queue_take(q, 0, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_GOT) {
        twice |= index_of(cells, count, &c) == held;
        taken++;
        lb_cell_queue_done(q, &c);
    }
    lb_check(!twice && taken == count - 1, "the living child's cell not handed out (%zu others taken)", taken);
    lb_check(got == LB_QUEUE_BUSY, "with only the child's claim left: busy (%d), not empty", (int)got);
    kill(pid, SIGKILL);
    /* not reaped yet: a zombie, which measures nothing more */
    for (int i = 0; i < 1000 && lb_cell_queue_take(q, 0, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_BUSY; i++)
        usleep(1000);
    lb_check(got == LB_QUEUE_GOT && index_of(cells, count, &c) == held, "the SIGKILLed child's cell handed out again (%d)",
             (int)got);
    lb_cell_queue_done(q, &c);
    lb_check(lb_cell_queue_take(q, 0, NULL, NULL, &got, &c) == LB_OK && got == LB_QUEUE_EMPTY, "then empty");
    waitpid(pid, NULL, 0);
    close(to_parent[0]);
    close(to_parent[1]);
    close(to_child[0]);
    close(to_child[1]);
    lb_cell_queue_close(q);
}

/* --- workers ----------------------------------------------------------------------------------- */

/* A worker's loop: take, measure (a marker, after a pause), done; exit 3 if a cell it was given
 * had been measured already, 2 on a queue error, 0 when the queue is empty. */
static void worker(LbCellQueue *q, const char *dir, int gpu, unsigned seed, int max_pause_us)
{
    for (;;) {
        LbQueueTake got;
        LbQueueCell c;
        if (lb_cell_queue_take(q, gpu, marker_exists, (void *)dir, &got, &c) != LB_OK)
            _exit(2);
        if (got == LB_QUEUE_EMPTY)
            _exit(0);
        if (got == LB_QUEUE_BUSY) {
            usleep(500);
            continue;
        }
        usleep((useconds_t)(rand_r(&seed) % (unsigned)max_pause_us));
        if (measure(dir, &c) != 0)
            _exit(3);
        if (lb_cell_queue_done(q, &c) != LB_OK)
            _exit(2);
    }
}

static pid_t start_worker(LbCellQueue *q, const char *dir, int gpu, int max_pause_us)
{
    pid_t pid = fork();
    if (pid == 0)
        worker(q, dir, gpu, (unsigned)(lb_test_seed + (uint64_t)getpid()), max_pause_us);
    return pid;
}

/* After the workers: every cell done and measured (its marker), the file parses. */
static void check_all_measured(const char *dir, const LbQueueCell *cells, size_t count, const char *what)
{
    LbCellQueue *q = NULL;
    LbQueueEntry *e = NULL;
    size_t n = 0;
    if (!lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK && lb_cell_queue_read(q, &e, &n) == LB_OK,
                  "%s: the queue reopens and reads: %s", what, lb_error_message()))
        return;
    lb_check(n == count && count_state(e, n, LB_QUEUE_DONE) == (int)count, "%s: all %zu cells done (%d)", what, count,
             count_state(e, n, LB_QUEUE_DONE));
    int markers = 0;
    for (size_t i = 0; i < count; i++)
        markers += marker_exists((void *)dir, &cells[i]);
    lb_check(markers == (int)count, "%s: every cell measured (%d of %zu)", what, markers, count);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, LB_CELL_QUEUE_FILE);
    LbCsvTable t;
    memset(&t, 0, sizeof t);
    lb_check(lb_csv_read_file(path, 0, &t) == LB_OK && t.rows == count + 1, "%s: queue.csv parses whole", what);
    lb_csv_table_free(&t);
    /* a write a kill cut short left at most a temporary file, which the reopen removed */
    int temporaries = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        temporaries += strstr(de->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    lb_check(temporaries == 0, "%s: no temporary file left after the reopen (%d)", what, temporaries);
    free(e);
    lb_cell_queue_close(q);
}

static void check_workers(void)
{
    char dir[512];
    new_dir(dir, sizeof dir);
    LbQueueCell cells[64];
    const size_t count = make_cells(cells, 64);
    LbCellQueue *q = NULL;
    if (!lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK, "open: %s", lb_error_message()))
        return;
    pid_t pids[4];
    for (int w = 0; w < 4; w++)
        pids[w] = start_worker(q, dir, w, 3000);
    for (int w = 0; w < 4; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        lb_check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker %d exits 0 (status %d: 3 = a cell measured twice)", w,
                 status);
    }
    LbQueueEntry *e = NULL;
    size_t n = 0;
    if (lb_cell_queue_read(q, &e, &n) == LB_OK) {
        int by_workers = 1;
        for (size_t i = 0; i < n; i++) {
            int w = 0;
            while (w < 4 && e[i].pid != (long)pids[w])
                w++;
            by_workers &= w < 4 && e[i].gpu == w;
        }
        lb_check(by_workers, "each done cell names the worker and GPU that measured it");
    }
    free(e);
    lb_cell_queue_close(q);
    check_all_measured(dir, cells, count, "4 workers");
}

static void check_random_kills(void)
{
    char dir[512];
    new_dir(dir, sizeof dir);
    LbQueueCell cells[64];
    const size_t count = make_cells(cells, 64);
    LbCellQueue *q = NULL;
    if (!lb_check(lb_cell_queue_open(dir, cells, count, &q) == LB_OK, "open: %s", lb_error_message()))
        return;
    enum { WORKERS = 3 };
    pid_t pids[WORKERS];
    for (int w = 0; w < WORKERS; w++)
        pids[w] = start_worker(q, dir, w, 4000);
    unsigned seed = (unsigned)lb_test_seed;
    int kills = 0, bad_exit = 0, running = WORKERS, rounds = 0;
    while (running > 0) {
        if (++rounds > 20000) { /* about a minute: a claim of the dead never given back */
            lb_check(0, "random kills: the workers did not empty the queue");
            for (int i = 0; i < WORKERS; i++)
                if (pids[i] > 0) {
                    kill(pids[i], SIGKILL);
                    waitpid(pids[i], NULL, 0);
                }
            break;
        }
        usleep((useconds_t)(rand_r(&seed) % 3000));
        int w = (int)(rand_r(&seed) % WORKERS);
        if (pids[w] > 0 && kills < 40) {
            kill(pids[w], SIGKILL);
            kills++;
        }
        for (int i = 0; i < WORKERS; i++) {
            int status;
            if (pids[i] <= 0 || waitpid(pids[i], &status, WNOHANG) != pids[i])
                continue;
            if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
                pids[i] = start_worker(q, dir, i, 4000); /* a replacement, as a resumed worker */
            } else {
                bad_exit |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
                if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
                    lb_check(0, "random kills: a cell was measured twice");
                pids[i] = 0;
                running--;
            }
        }
    }
    printf("  random kills: %d SIGKILLs over %zu cells\n", kills, count);
    lb_check(kills > 0 && !bad_exit, "random kills: %d kills, every surviving worker exits 0", kills);
    lb_cell_queue_close(q);
    check_all_measured(dir, cells, count, "random kills");
}

int main(void)
{
    lb_test_init("test_cell_queue");
    scratch = lb_test_tempdir("cell-queue");
    check_one_process();
    check_claim_of_the_living();
    check_workers();
    check_random_kills();
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cell_queue");
}
