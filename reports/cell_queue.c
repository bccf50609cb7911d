/* The cell queue of several worker processes: see cell_queue.h. */
#include "reports/cell_queue.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/paths.h"
#include "attn/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"

struct LbCellQueue {
    char *dir;
    char *path;      /* DIR/queue.csv */
    char *lock_path; /* DIR/.linbench.queue.lock */
};

#define QUEUE_COLUMNS 7
static const char *const queue_columns[QUEUE_COLUMNS] = {"model", "n", "k", "state", "pid", "pid_start", "gpu"};
static const char *const state_names[] = {"pending", "claimed", "done"};

/* --- processes ----------------------------------------------------------------------------- */

/* State letter and start time (field 22) of /proc/PID/stat. 0, or -1 when there is none. */
static int proc_stat(long pid, char *state, long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    /* "pid (comm) S ppid ...": comm may hold spaces and parentheses, so count from the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return -1;
    *state = p[2];
    p += 2; /* field 3, the state */
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    *start = strtoll(p, NULL, 10);
    return 0;
}

long long lb_cell_queue_self_start(void)
{
    char state;
    long long start = 0;
    return proc_stat((long)getpid(), &state, &start) == 0 ? start : 0;
}

int lb_cell_queue_alive(long pid, long long pid_start)
{
    if (pid <= 0)
        return 0;
    char state;
    long long start = 0;
    if (proc_stat(pid, &state, &start) != 0) {
        if (access("/proc/self/stat", R_OK) == 0)
            return 0; /* /proc works and has no such process */
        return kill((pid_t)pid, 0) == 0 || errno == EPERM; /* no /proc: existence is all we know */
    }
    if (state == 'Z' || state == 'X')
        return 0; /* killed, not yet reaped by its parent: it will measure nothing more */
    return pid_start == 0 || start == pid_start;
}

/* --- the file -------------------------------------------------------------------------------- */

static int lock_queue(const LbCellQueue *q, int *fd)
{
    *fd = lb_open_plain(q->lock_path, O_RDWR | O_CREAT, 0666);
    if (*fd < 0)
        return LB_FAIL(LB_ERR_IO, "cannot open the queue's lock %s: %s", q->lock_path, lb_open_plain_strerror(errno));
    while (flock(*fd, LOCK_EX) != 0) {
        if (errno == EINTR)
            continue;
        int e = errno;
        close(*fd);
        *fd = -1;
        return LB_FAIL(LB_ERR_IO, "cannot lock %s: %s", q->lock_path, strerror(e));
    }
    return LB_OK;
}

static void unlock_queue(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

static int parse_entry(const LbCsvRow *r, const char *path, size_t line, LbQueueEntry *e)
{
    memset(e, 0, sizeof *e);
    e->gpu = -1;
    long long n = 0, k = 0, pid = 0, start = 0, gpu = -1;
    int state = -1;
    for (int s = 0; s < 3; s++)
        if (strcmp(r->fields[3], state_names[s]) == 0)
            state = s;
    if (r->count != QUEUE_COLUMNS || lb_model_parse(r->fields[0], &e->cell.model) != 0 ||
        lb_csv_parse_int64(r->fields[1], &n) != 0 || n < 1 || (*r->fields[2] && lb_csv_parse_int64(r->fields[2], &k) != 0) ||
        k < 0 || state < 0)
        return LB_FAIL(LB_ERR_FORMAT, "%s line %zu: not a queue entry (model,n,k,state,pid,pid_start,gpu)", path, line);
    if (state != LB_QUEUE_PENDING &&
        (lb_csv_parse_int64(r->fields[4], &pid) != 0 || pid < 1 || lb_csv_parse_int64(r->fields[5], &start) != 0 ||
         start < 0 || lb_csv_parse_int64(r->fields[6], &gpu) != 0 || gpu < -1 || gpu > 1 << 20))
        return LB_FAIL(LB_ERR_FORMAT, "%s line %zu: a %s cell without its worker's pid, pid_start and gpu", path, line,
                       state_names[state]);
    e->cell.n = n;
    e->cell.k = k;
    e->state = (LbQueueState)state;
    e->pid = (long)pid;
    e->pid_start = start;
    e->gpu = (int)gpu;
    return LB_OK;
}

/* The entries of an existing queue file; *exists 0 (and no entries) when there is none. */
static int read_entries(const LbCellQueue *q, LbQueueEntry **entries, size_t *count, int *exists)
{
    *entries = NULL;
    *count = 0;
    struct stat st;
    *exists = stat(q->path, &st) == 0;
    if (!*exists) {
        if (errno == ENOENT)
            return LB_OK;
        return LB_FAIL(LB_ERR_IO, "cannot read %s: %s", q->path, strerror(errno));
    }
    LbCsvTable t;
    memset(&t, 0, sizeof t);
    int rc = lb_csv_read_file(q->path, 1, &t);
    if (rc != LB_OK)
        return rc;
    if (t.rows < 1 || t.row[0].count != QUEUE_COLUMNS) {
        lb_csv_table_free(&t);
        return LB_FAIL(LB_ERR_FORMAT, "%s: no queue header (model,n,k,state,pid,pid_start,gpu)", q->path);
    }
    for (size_t c = 0; c < QUEUE_COLUMNS; c++)
        if (strcmp(t.row[0].fields[c], queue_columns[c]) != 0) {
            lb_csv_table_free(&t);
            return LB_FAIL(LB_ERR_FORMAT, "%s: column %zu is \"%s\", should be \"%s\"", q->path, c + 1, t.row[0].fields[c],
                           queue_columns[c]);
        }
    LbQueueEntry *e = calloc(t.rows, sizeof *e);
    if (!e) {
        lb_csv_table_free(&t);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory reading %s", q->path);
    }
    for (size_t i = 1; i < t.rows; i++) {
        rc = parse_entry(&t.row[i], q->path, t.line[i], &e[i - 1]);
        if (rc != LB_OK) {
            free(e);
            lb_csv_table_free(&t);
            return rc;
        }
    }
    *entries = e;
    *count = t.rows - 1;
    lb_csv_table_free(&t);
    return LB_OK;
}

static int write_entries(const LbCellQueue *q, const LbQueueEntry *e, size_t count)
{
    LbAtomicFile af;
    int rc = lb_atomic_open(&af, q->path);
    if (rc != LB_OK)
        return rc;
    rc = lb_csv_write_record(af.f, queue_columns, QUEUE_COLUMNS);
    for (size_t i = 0; i < count && rc == LB_OK; i++) {
        char n[24], k[24], pid[24], start[24], gpu[24];
        snprintf(n, sizeof n, "%lld", (long long)e[i].cell.n);
        snprintf(k, sizeof k, "%lld", (long long)e[i].cell.k);
        snprintf(pid, sizeof pid, "%ld", e[i].pid);
        snprintf(start, sizeof start, "%lld", e[i].pid_start);
        snprintf(gpu, sizeof gpu, "%d", e[i].gpu);
        const int pending = e[i].state == LB_QUEUE_PENDING;
        const char *fields[QUEUE_COLUMNS] = {lb_model_name(e[i].cell.model), n, lb_model_has_k(e[i].cell.model) ? k : "",
                                             state_names[e[i].state], pending ? "" : pid, pending ? "" : start,
                                             pending ? "" : gpu};
        rc = lb_csv_write_record(af.f, fields, QUEUE_COLUMNS);
    }
    if (rc != LB_OK) {
        lb_atomic_abort(&af);
        return LB_FAIL(LB_ERR_IO, "cannot write %s", q->path);
    }
    return lb_atomic_commit(&af);
}

static int same_cell(const LbQueueCell *a, const LbQueueCell *b)
{
    return a->model == b->model && a->n == b->n && a->k == b->k;
}

/* queue.csv.tmp.XXXXXX files: under the queue's lock nobody is writing one, so they are what a
 * worker killed mid-write left. */
static void remove_stale_temporaries(const LbCellQueue *q)
{
    DIR *d = opendir(q->dir);
    if (!d)
        return;
    const char *prefix = LB_CELL_QUEUE_FILE ".tmp.";
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
            char *p = lb_path_join(q->dir, de->d_name);
            if (p)
                unlink(p);
            free(p);
        }
    closedir(d);
}

/* --- the operations ---------------------------------------------------------------------------- */

void lb_cell_queue_close(LbCellQueue *q)
{
    if (!q)
        return;
    free(q->dir);
    free(q->path);
    free(q->lock_path);
    free(q);
}

int lb_cell_queue_open(const char *dir, const LbQueueCell *cells, size_t count, LbCellQueue **out)
{
    *out = NULL;
    LbCellQueue *q = calloc(1, sizeof *q);
    if (!q || !(q->dir = strdup(dir)) || !(q->path = lb_path_join(dir, LB_CELL_QUEUE_FILE)) ||
        !(q->lock_path = lb_path_join(dir, LB_CELL_QUEUE_LOCK))) {
        lb_cell_queue_close(q);
        return LB_FAIL(LB_ERR_NOMEM, "out of memory opening the queue of %s", dir);
    }
    int fd;
    int rc = lock_queue(q, &fd);
    if (rc != LB_OK) {
        lb_cell_queue_close(q);
        return rc;
    }
    remove_stale_temporaries(q);
    LbQueueEntry *e = NULL;
    size_t have = 0;
    int exists = 0;
    rc = read_entries(q, &e, &have, &exists);
    if (rc == LB_OK && exists) {
        /* The same cells, each once: a queue of another grid would hand out the wrong work. */
        int same = have == count;
        for (size_t i = 0; i < count && same; i++) {
            size_t found = 0;
            for (size_t j = 0; j < have; j++)
                found += same_cell(&cells[i], &e[j].cell);
            same = found == 1;
        }
        if (!same)
            rc = LB_FAIL(LB_ERR_FORMAT, "%s lists other cells than this sweep's (%zu there, %zu here)", q->path, have, count);
    } else if (rc == LB_OK) {
        e = calloc(count ? count : 1, sizeof *e);
        if (!e)
            rc = LB_FAIL(LB_ERR_NOMEM, "out of memory making %s", q->path);
        for (size_t i = 0; rc == LB_OK && i < count; i++) {
            e[i].cell = cells[i];
            e[i].state = LB_QUEUE_PENDING;
            e[i].gpu = -1;
        }
        if (rc == LB_OK)
            rc = write_entries(q, e, count);
    }
    free(e);
    unlock_queue(fd);
    if (rc != LB_OK) {
        lb_cell_queue_close(q);
        return rc;
    }
    *out = q;
    return LB_OK;
}

/* Read the queue under its lock for a change; the caller writes (or not) and unlocks. */
static int begin_change(const LbCellQueue *q, int *fd, LbQueueEntry **e, size_t *count)
{
    int rc = lock_queue(q, fd);
    if (rc != LB_OK)
        return rc;
    int exists = 0;
    rc = read_entries(q, e, count, &exists);
    if (rc == LB_OK && !exists)
        rc = LB_FAIL(LB_ERR_IO, "%s is gone: the queue was removed under its workers", q->path);
    if (rc != LB_OK) {
        unlock_queue(*fd);
        *fd = -1;
    }
    return rc;
}

int lb_cell_queue_take(LbCellQueue *q, int gpu, LbQueueMeasured measured, void *ctx, LbQueueTake *result,
                       LbQueueCell *cell)
{
    *result = LB_QUEUE_EMPTY;
    int fd;
    LbQueueEntry *e;
    size_t count;
    int rc = begin_change(q, &fd, &e, &count);
    if (rc != LB_OK)
        return rc;
    const long self = (long)getpid();
    const long long self_start = lb_cell_queue_self_start();
    int changed = 0, busy = 0;
    for (size_t i = 0; i < count; i++)
        if (e[i].state == LB_QUEUE_CLAIMED && !(e[i].pid == self && e[i].pid_start == self_start) &&
            !lb_cell_queue_alive(e[i].pid, e[i].pid_start)) {
            e[i].state = LB_QUEUE_PENDING; /* its worker died: back in the queue */
            e[i].pid = 0;
            e[i].pid_start = 0;
            e[i].gpu = -1;
            changed = 1;
        }
    for (size_t i = 0; i < count && *result != LB_QUEUE_GOT; i++) {
        if (e[i].state == LB_QUEUE_CLAIMED)
            busy = 1;
        if (e[i].state != LB_QUEUE_PENDING)
            continue;
        e[i].pid = self;
        e[i].pid_start = self_start;
        e[i].gpu = gpu;
        changed = 1;
        if (measured && measured(ctx, &e[i].cell)) {
            e[i].state = LB_QUEUE_DONE; /* measured by a worker that died before saying so */
            continue;
        }
        e[i].state = LB_QUEUE_CLAIMED;
        *cell = e[i].cell;
        *result = LB_QUEUE_GOT;
    }
    if (*result != LB_QUEUE_GOT && busy)
        *result = LB_QUEUE_BUSY;
    if (changed)
        rc = write_entries(q, e, count);
    if (rc != LB_OK)
        *result = LB_QUEUE_EMPTY; /* not written: nothing was claimed */
    free(e);
    unlock_queue(fd);
    return rc;
}

/* Move this process's claim on cell to `to`. */
static int end_claim(LbCellQueue *q, const LbQueueCell *cell, LbQueueState to)
{
    int fd;
    LbQueueEntry *e;
    size_t count;
    int rc = begin_change(q, &fd, &e, &count);
    if (rc != LB_OK)
        return rc;
    const long self = (long)getpid();
    const long long self_start = lb_cell_queue_self_start();
    size_t i = 0;
    while (i < count && !same_cell(&e[i].cell, cell))
        i++;
    if (i == count || e[i].state != LB_QUEUE_CLAIMED || e[i].pid != self || e[i].pid_start != self_start) {
        rc = LB_FAIL(LB_ERR_INVALID, "%s: cell %s n=%lld k=%lld is not claimed by this process (pid %ld)", q->path,
                     lb_model_name(cell->model), (long long)cell->n, (long long)cell->k, self);
    } else {
        e[i].state = to;
        if (to == LB_QUEUE_PENDING) {
            e[i].pid = 0;
            e[i].pid_start = 0;
            e[i].gpu = -1;
        }
        rc = write_entries(q, e, count);
    }
    free(e);
    unlock_queue(fd);
    return rc;
}

int lb_cell_queue_done(LbCellQueue *q, const LbQueueCell *cell) { return end_claim(q, cell, LB_QUEUE_DONE); }

int lb_cell_queue_release(LbCellQueue *q, const LbQueueCell *cell) { return end_claim(q, cell, LB_QUEUE_PENDING); }

int lb_cell_queue_read(LbCellQueue *q, LbQueueEntry **entries, size_t *count)
{
    int fd;
    int rc = begin_change(q, &fd, entries, count);
    if (rc != LB_OK)
        return rc;
    unlock_queue(fd);
    return LB_OK;
}
