/* linbench sweep: the Table 3 grid. Validate, then run: flags (and with --resume, meta.csv's
 * settings) are checked before anything runs (exit 2, nothing written); the device is opened and
 * checked once the output directory exists, which a failure there removes again (exit 1); then
 * the sweep engine (reports/sweep_engine.h) measures the cells, and this file says how it went. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn/sizes.h"
#include "attn/status.h"
#include "cmd/calibration.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "cmd/check.h"
#include "cmd/progress.h"
#include "lb_config.h"
#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "reports/settings.h"
#include "reports/sweep_dir.h"
#include "reports/sweep_engine.h"

static volatile sig_atomic_t stop_requested;
static struct timespec first_stop; /* when the first stop signal came */

/* meta.csv's calibration_note where --no-check skipped the calibration with the check */
static const char no_check_note[] = "skipped with the check (--no-check)";

/* What stops a sweep (and its workers): SIGHUP too, so that a closed terminal or ssh session
 * ends a sweep as cleanly as Ctrl-C. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* The first stop signal ends the sweep after the pass in progress. A second Ctrl-C at least a
 * second later stops it at once, as a person pressing it again means; anything else is the same
 * request again: `timeout` sends its SIGTERM to the sweep and then to its whole process group,
 * twice within microseconds, and on an H100 (2026-11-23) the second one, taken as "stop now",
 * killed two sweeps before they could record that they were interrupted. clock_gettime is
 * async-signal-safe. */
static void on_signal(int sig)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!stop_requested) {
        first_stop = now;
        stop_requested = 1;
        return;
    }
    const double since = (double)(now.tv_sec - first_stop.tv_sec) + (double)(now.tv_nsec - first_stop.tv_nsec) * 1e-9;
    if (sig == SIGINT && since >= 1.0) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* handler for every stop signal */
static void catch_stop_signals(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        sigaction(stop_signals[i], &sa, NULL);
}

/* A stop during the set-up before the first cell: 0 when there was none, else exit 130 after one
 * line (the caller removes a directory it made). */
static int stopped_before_first_cell(void)
{
    if (!stop_requested)
        return 0;
    fprintf(stderr, "linbench: interrupted before the first cell: nothing was measured\n");
    return LB_EXIT_INTERRUPTED;
}

/* What sweep takes besides the settings. */
typedef struct SweepFlags {
    const char *out, *resume;
    int force, no_check, quiet, help;
    LbFormat format;
} SweepFlags;

static int parse_flags(int argc, char **argv, LbRunSettings *s, SweepFlags *f)
{
    const int rc = lb_options_parse(LB_FOR_SWEEP, argc, argv, s);
    const LbCommandFlags *c = &s->cmd;
    *f = (SweepFlags){c->out, c->resume, c->force, c->no_check, c->quiet, rc == LB_OPTIONS_HELPED, (LbFormat)c->format};
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (f->resume && f->out && strcmp(f->resume, f->out) != 0)
        return lb_usage_error("--out %s and --resume %s differ: should be given one directory, with --resume alone", f->out, f->resume);
    if (f->resume && f->force)
        return lb_usage_error("--force cannot be used with --resume: should be one or the other");
    return 0;
}

/* A result file of the directory that does not read: the file's fault is bad input, as for
 * compare, plot and merge (exit 2); one that cannot be read at all is a runtime failure. */
static int resumed_file_error(const char *dir, int status)
{
    if (status != LB_ERR_FORMAT)
        return lb_runtime_error(status);
    return lb_usage_error("invalid argument \"%s\" for --resume: %s", dir, lb_error_message());
}

/* --resume: the directory, locked, its meta.csv read, checked (lb_sweep_meta_read) and of this
 * version, its raw.csv readable, and the memory budget it ran with. */
static int open_resumed(const char *dir, LbMeta *meta, uint64_t *budget)
{
    int rc = lb_outdir_lock_existing(dir, "--resume");
    if (rc != 0)
        return rc;
    lb_error_clear();
    if ((rc = lb_sweep_meta_read(dir, meta)) != LB_OK)
        return resumed_file_error(dir, rc);
    /* rows that do not read would stop the sweep only once the backend is open and checked */
    char path[4096];
    struct stat st;
    LbCellResult *rows = NULL;
    size_t count = 0;
    lb_path_join_buf(path, sizeof path, dir, "raw.csv");
    lb_error_clear();
    rc = stat(path, &st) == 0 ? lb_raw_read(path, &rows, &count) : LB_OK;
    free(rows);
    if (rc != LB_OK)
        return resumed_file_error(dir, rc);
    if (lb_meta_is_predicted(meta)) /* nothing in it was measured: a resume would mix the two */
        return lb_usage_error("invalid argument \"%s\" for --resume: it was written by linbench predict (meta.csv's %s is %s), not measured: should be a directory written by linbench sweep",
                              dir, LB_META_SOURCE, LB_SOURCE_PREDICTED);
    const char *version = lb_meta_get(meta, "linbench_version");
    if (!version || strcmp(version, LB_VERSION) != 0)
        return lb_usage_error("invalid argument \"%s\" for --resume: it was written by linbench %s and this is linbench %s: should be resumed with linbench %s",
                              dir, version && *version ? version : "(unknown version)", LB_VERSION,
                              version && *version ? version : "of that version");
    const char *b = lb_meta_get(meta, "memory_budget_bytes");
    if (!b || lb_parse_size(b, budget))
        return lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's memory_budget_bytes is \"%s\": should be a byte count",
                              dir, dir, b ? b : "");
    return 0;
}

/* A --resume refusal in words: the file and key are blamed for what the file holds, the flag for
 * what the user gave. */
static int resume_refusal(int rc, LbSettingProblem *p, const char *dir)
{
    if (rc != -1) {
        lb_setting_problem_free(p);
        return lb_runtime_error(rc);
    }
    const LbSetting *e = &lb_settings[p->id];
    const char *theirs = p->theirs ? p->theirs : "";
    switch (p->kind) {
    case LB_SETTING_MISSING:
        rc = lb_usage_error("invalid argument \"%s\" for --resume: should be a directory written by linbench sweep (%s/meta.csv has no %s)",
                            dir, dir, e->key);
        break;
    case LB_SETTING_UNREADABLE:
        rc = lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\": should be %s", dir, dir, e->key,
                            theirs, p->should);
        break;
    case LB_SETTING_DIFFERS:
        rc = lb_usage_error("--%s %s differs from the resumed run's \"%s\" (%s in %s/meta.csv): should be the same, or left out, to resume %s",
                            e->flag, p->mine[0] ? p->mine : "(unset)", theirs, e->key, dir, dir);
        break;
    case LB_SETTING_READS_BACK:
        rc = lb_usage_error("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\", which reads back as \"%s\": should be as linbench sweep wrote it",
                            dir, dir, e->key, theirs, p->mine);
        break;
    }
    lb_setting_problem_free(p);
    return rc;
}

/* Everything that can be refused before a file is touched (bar the lock --resume takes): the
 * settings complete (from meta.csv when resuming), consistent, and the same as meta.csv's. */
/* Cells with k < n that a model still has not (the general projections' windows: k must divide
 * n): one note per model on stderr, so a grid's missing cells are not a surprise. */
static void note_skipped(const LbRunSettings *s)
{
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        const LbModelKind kind = (LbModelKind)m;
        if (!(s->models & (1u << m)) || !lb_model_has_k(kind) || !lb_model_skip_reason(kind))
            continue;
        size_t skipped = 0;
        int64_t n0 = 0, k0 = 0;
        for (size_t i = 0; i < s->nn; i++)
            for (size_t j = 0; j < s->nk; j++)
                if (s->k[j] < s->n[i] && !lb_model_cell_exists(kind, s->n[i], s->k[j]) && skipped++ == 0) {
                    n0 = s->n[i];
                    k0 = s->k[j];
                }
        if (skipped)
            fprintf(stderr, "linbench: note: %s skips %zu cell%s with k < n (the first: n %lld, k %lld): %s\n",
                    lb_model_name(kind), skipped, skipped == 1 ? "" : "s", (long long)n0, (long long)k0,
                    lb_model_skip_reason(kind));
    }
}

/* A resume keeps raw.csv's rows and adds its own: each kept row must be a cell these settings
 * produce, or the result holds a row that no setting of its meta.csv stands for (the grids leave
 * it out, speedups.csv and compare may not). Refused, not dropped: the row may be a measurement
 * someone put there on purpose, and only they can say where it belongs. A raw.csv that does not
 * read is the engine's to report, as before. */
static int check_resumed_rows(const LbRunSettings *s, const char *dir)
{
    char path[4096], why[512];
    lb_path_join_buf(path, sizeof path, dir, "raw.csv");
    size_t line = 0, count = 0;
    struct stat st;
    if (stat(path, &st) != 0 || lb_sweep_raw_foreign(s, path, &line, &count, why, sizeof why) != LB_OK || count == 0) {
        lb_error_clear();
        return 0;
    }
    return lb_usage_error("invalid argument \"%s\" for --resume: %s line %zu: %s (%zu such row%s): should hold only rows of the sweep its meta.csv describes",
                          dir, path, line, why, count, count == 1 ? "" : "s");
}

static int validate(LbRunSettings *s, SweepFlags *f, LbMeta *meta, uint64_t *resumed_budget)
{
    LbSettingProblem problem;
    int rc;
    if (f->resume) {
        if ((rc = open_resumed(f->resume, meta, resumed_budget)) != 0)
            return rc;
        if ((rc = lb_run_settings_take(s, meta, &problem)) != 0)
            return resume_refusal(rc, &problem, f->resume);
        if (!(s->given & (UINT64_C(1) << LB_SET_K)))
            s->cmd.k_text = lb_settings_meta_value(meta, LB_SET_K);
    }
    if ((rc = lb_options_check_grid(s)) != 0)
        return rc;
    note_skipped(s);
    if (s->projection != 0) /* Table 3's files are the linear Linformer's, which this sweep replaced */
        fprintf(stderr, "linbench: note: --projection %s measures linformer-%s in linformer's place: Table 3's grids "
                        "(time_speedup.csv, memory_speedup.csv, energy_speedup.csv) are linformer-%s's against standard\n",
                lb_projection_names[s->projection & 3], lb_projection_names[s->projection & 3],
                lb_projection_names[s->projection & 3]);
    if (f->resume && (rc = lb_run_settings_compare(s, meta, &problem)) != 0)
        return resume_refusal(rc, &problem, f->resume);
    if (f->resume && (rc = check_resumed_rows(s, f->resume)) != 0)
        return rc;
    return lb_options_check_host_memory(s);
}

/* --- sweep --gpus: a worker process per GPU ----------------------------------------------- *
 * The parent never touches CUDA (a CUDA context does not survive fork): a probe process lists
 * the GPUs (index, name, UUID), so a missing index or GPUs of different models are refused
 * before anything is written; then the directory; then a worker per GPU opens its backend,
 * reports its free memory (and quick check) through a pipe and waits; the parent picks one
 * budget for all (the smallest), begins the sweep (reports/sweep_engine.h) and says go; the
 * workers take cells from the queue until none is left; the parent writes the result files. */

typedef struct GpuProbe {
    int rc; /* LB_OK: a GPU; otherwise the first index that did not open, message says why */
    int index;
    char name[128];
    char uuid[48];
    char message[LB_ERROR_MAX];
} GpuProbe;

typedef struct WorkerReport {
    int rc; /* LB_OK, or the status of a backend that did not open (message) */
    int check_rc;
    char message[LB_ERROR_MAX];
    LbSweepDevice dev;
    uint64_t free_bytes, total_bytes;
    LbCheckResult check;
    int calibrated; /* this GPU's own limits measured (cal), for its breakdown rows */
    LbCalibration cal;
    char cal_note[256]; /* meta.csv's calibration_note for the first GPU */
} WorkerReport;

typedef struct WorkerGo {
    int go;
    uint64_t budget;
    size_t todo;
} WorkerGo;

/* A worker's exit status for each outcome (1 is a failure it has printed). */
enum { WORKER_COMPLETE = 0, WORKER_ERROR = 1, WORKER_CELL_ERRORS = 10, WORKER_FAILED, WORKER_INTERRUPTED };

static int write_all(int fd, const void *buf, size_t size)
{
    const char *p = buf;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

/* 1 read, 0 end of file, -1 error. */
static int read_all(int fd, void *buf, size_t size)
{
    char *p = buf;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, p + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 && got == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

/* The probe process: every GPU in index order, then the first index that does not open. */
static void probe_main(const LbRunSettings *s, int fd)
{
    GpuProbe *p = calloc(1, sizeof *p);
    if (!p)
        _exit(1);
    for (int i = 0; i < 1024; i++) {
        LbBackend *be = NULL;
        memset(p, 0, sizeof *p);
        p->index = i;
        p->rc = lb_cuda_backend_open(i, s->model.dtype, s->tf32, &be);
        if (p->rc == LB_OK) {
            LbSweepDevice d;
            lb_sweep_device_describe(be, &d);
            snprintf(p->name, sizeof p->name, "%s", d.info.name);
            snprintf(p->uuid, sizeof p->uuid, "%s", d.info.uuid);
            lb_backend_close(be);
        } else {
            snprintf(p->message, sizeof p->message, "%s", lb_error_message());
        }
        if (write_all(fd, p, sizeof *p) != 0 || p->rc != LB_OK)
            break;
    }
    _exit(0);
}

/* The GPUs of this machine into *probes (malloc'd), *count GPUs, then one entry saying why the
 * next index did not open. 0, or an exit code after printing. */
static int probe_gpus(const LbRunSettings *s, GpuProbe **probes, int *count)
{
    int fds[2];
    *probes = NULL;
    *count = 0;
    if (pipe(fds) != 0) {
        fprintf(stderr, "linbench: cannot make a pipe to list the GPUs: %s\n", strerror(errno));
        return LB_EXIT_FAILURE;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        probe_main(s, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        fprintf(stderr, "linbench: cannot start a process to list the GPUs: %s\n", strerror(errno));
        return LB_EXIT_FAILURE;
    }
    GpuProbe *p = NULL;
    int n = 0, r = 1;
    for (;;) {
        GpuProbe *grown = realloc(p, (size_t)(n + 1) * sizeof *p);
        if (!grown) {
            r = -1;
            break;
        }
        p = grown;
        if ((r = read_all(fds[0], &p[n], sizeof *p)) != 1)
            break;
        if (p[n].rc != LB_OK)
            break;
        n++;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (r != 1) {
        free(p);
        fprintf(stderr, "linbench: the process listing the GPUs ended early (%s)\n",
                WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer");
        return LB_EXIT_FAILURE;
    }
    *probes = p;
    *count = n;
    return 0;
}

/* Worker progress: each line names its GPU. */
typedef struct GpuProgress {
    int gpu, quiet;
} GpuProgress;

static void gpu_progress(void *ctx, const LbSweepEvent *e)
{
    const GpuProgress *p = ctx;
    if (e->kind != LB_SWEEP_END)
        return;
    const LbCellResult *r = e->result;
    char name[96];
    if (lb_model_has_k(r->model))
        snprintf(name, sizeof name, "%s n=%lld k=%lld", lb_model_name(r->model), (long long)r->n, (long long)r->k);
    else
        snprintf(name, sizeof name, "%s n=%lld", lb_model_name(r->model), (long long)r->n);
    if (r->status == LB_CELL_ERROR) /* said even with --quiet */
        fprintf(stderr, "linbench: gpu %d: %s failed: %s\n", p->gpu, name, r->error);
    else if (p->quiet)
        return;
    else if (r->status == LB_CELL_OK)
        fprintf(stderr, "[gpu %d] %s: batch %lld, %.4g ms/seq (median of %d)\n", p->gpu, name, (long long)r->batch,
                r->ms_per_seq, r->passes);
    else
        fprintf(stderr, "[gpu %d] %s: OOM (batch 1 does not fit)\n", p->gpu, name);
}

static volatile sig_atomic_t worker_stop;

static void on_worker_signal(int sig)
{
    (void)sig;
    worker_stop = 1; /* the cell in progress stops at its next pass and goes back to the queue */
}

/* A worker: its backend, its report, the parent's go, then cells until none is left. */
static void worker_main(const LbRunSettings *s, const SweepFlags *f, const LbSweepJob *parent_job, int gpu,
                        int up, int down)
{
    catch_stop_signals(on_worker_signal);
    /* a parent killed outright takes its workers with it: they give their cells back and stop */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    WorkerReport *rep = calloc(1, sizeof *rep);
    if (!rep)
        _exit(WORKER_ERROR);
    LbBackend *be = NULL;
    rep->rc = lb_cuda_backend_open(gpu, s->model.dtype, s->tf32, &be);
    if (rep->rc == LB_OK) {
        be->autotune = s->autotune;
        size_t free_bytes = 0, total = 0;
        lb_sweep_device_describe(be, &rep->dev);
        rep->rc = be->ops->mem_info(be, &free_bytes, &total);
        rep->free_bytes = free_bytes;
        rep->total_bytes = total;
    }
    if (rep->rc != LB_OK)
        snprintf(rep->message, sizeof rep->message, "%s", lb_error_message());
    else if (!f->no_check)
        rep->check_rc = lb_quick_check(be, &s->model, &rep->check);
    /* Each GPU's own calibration, as a one-GPU sweep makes it (after the check, unless --no-check
     * without --breakdown), within its free memory less the headroom; the parent prints them. */
    if (rep->rc == LB_OK && rep->check_rc == 0 && (!f->no_check || s->breakdown)) {
        const uint64_t headroom = lb_run_settings_headroom(s, rep->total_bytes);
        const uint64_t room = rep->free_bytes > headroom ? rep->free_bytes - headroom : 0;
        const uint64_t cap = s->mem_limit && s->mem_limit < room ? s->mem_limit : room;
        rep->check_rc = lb_sweep_calibrate(be, cap, 1, &rep->cal, &rep->calibrated, rep->cal_note, sizeof rep->cal_note);
    } else {
        snprintf(rep->cal_note, sizeof rep->cal_note, "%s", no_check_note);
    }
    WorkerGo go = {0, 0, 0};
    if (write_all(up, rep, sizeof *rep) != 0 || rep->rc != LB_OK || read_all(down, &go, sizeof go) != 1 || !go.go) {
        lb_backend_close(be);
        _exit(WORKER_COMPLETE); /* told not to start: the parent says why */
    }
    close(up);
    close(down);
    GpuProgress progress = {gpu, f->quiet};
    LbSweepJob job = *parent_job;
    job.budget = go.budget;
    job.calibration = rep->calibrated ? &rep->cal : NULL;
    job.progress = gpu_progress;
    job.progress_ctx = &progress;
    LbSweepOutcome outcome = LB_SWEEP_COMPLETE;
    const int rc = lb_sweep_multi_work(&job, be, &rep->dev, gpu, go.todo, &worker_stop, &outcome);
    lb_backend_close(be);
    if (rc != LB_OK) {
        fprintf(stderr, "linbench: gpu %d: %s\n", gpu, lb_error_message());
        _exit(WORKER_ERROR);
    }
    _exit(outcome == LB_SWEEP_INTERRUPTED ? WORKER_INTERRUPTED
          : outcome == LB_SWEEP_FAILED    ? WORKER_FAILED
          : outcome == LB_SWEEP_CELL_ERRORS ? WORKER_CELL_ERRORS
                                            : WORKER_COMPLETE);
}

/* The GPUs to use, checked against the probe: each exists, all of one model. 0 or exit 2 (1 when
 * no GPU can be opened at all). */
static int pick_gpus(const LbRunSettings *s, const GpuProbe *probes, int found, int **gpus, int *count)
{
    if (found == 0) {
        fprintf(stderr, "linbench: %s\n", probes[0].message);
        return LB_EXIT_FAILURE;
    }
    char *list = lb_setting_text(s, LB_SET_GPUS);
    const int n = s->gpus_all ? found : (int)s->ngpus;
    int *g = malloc((size_t)n * sizeof *g), rc = 0;
    if (!g || !list) {
        free(g);
        free(list);
        return lb_runtime_error(LB_ERR_NOMEM);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        g[i] = s->gpus_all ? i : s->gpus[i];
        if (g[i] >= found)
            rc = lb_usage_error("invalid argument \"%s\" for --gpus: there is no GPU %d (this machine has %d, 0 to %d): should name GPUs that exist, or all",
                                list, g[i], found, found - 1);
    }
    for (int i = 1; i < n && rc == 0; i++)
        if (strcmp(probes[g[i]].name, probes[g[0]].name) != 0)
            rc = lb_usage_error("invalid argument \"%s\" for --gpus: GPU %d is %s and GPU %d is %s: should list GPUs of one model, which alone share a result",
                                list, g[0], probes[g[0]].name, g[i], probes[g[i]].name);
    free(list);
    if (rc != 0) {
        free(g);
        return rc;
    }
    *gpus = g;
    *count = n;
    return 0;
}

typedef struct Worker {
    int gpu;
    pid_t pid;
    int up, down; /* the parent's ends of the two pipes; -1 once closed */
    int status;   /* waitpid's; -1 while running */
} Worker;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Wait for every worker; the first stop request is passed on to them (a SIGTERM to the parent
 * alone; Ctrl-C reaches them through the terminal). */
static void wait_workers(Worker *w, int count)
{
    int left = 0, forwarded = 0;
    for (int i = 0; i < count; i++)
        left += w[i].pid > 0 && w[i].status == -1;
    while (left > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0 && errno == EINTR) {
            if (stop_requested && !forwarded) {
                for (int i = 0; i < count; i++)
                    if (w[i].pid > 0 && w[i].status == -1)
                        kill(w[i].pid, SIGTERM);
                forwarded = 1;
            }
            continue;
        }
        if (pid < 0)
            break;
        for (int i = 0; i < count; i++)
            if (w[i].pid == pid) {
                w[i].status = status;
                left--;
            }
    }
}

static int run_gpus(LbRunSettings *s, SweepFlags *f, LbMeta *meta, uint64_t resumed_budget, int argc, char **argv)
{
    GpuProbe *probes = NULL;
    int *gpus = NULL, ngpus = 0, found = 0, created = 0;
    Worker *w = NULL;
    WorkerReport *rep = NULL;
    LbGrid grid;
    memset(&grid, 0, sizeof grid);
    char default_dir[64], *command_line = lb_command_line(argc, argv);
    int rc = probe_gpus(s, &probes, &found);
    if (rc == 0)
        rc = pick_gpus(s, probes, found, &gpus, &ngpus);
    if (rc != 0)
        goto out;

    const char *dir = f->resume;
    if (!dir) {
        if (!f->out) {
            lb_outdir_default(default_dir, sizeof default_dir);
            f->out = default_dir;
        }
        dir = f->out;
        if ((rc = lb_outdir_prepare(dir, f->force, "--out", LB_OUTDIR_OFFER_FORCE | LB_OUTDIR_OFFER_RESUME)) != 0)
            goto out;
        created = 1;
    }
    LbSweepJob job = {
        s, dir, f->resume != NULL, f->resume ? meta : NULL, command_line ? command_line : "linbench sweep", 0,
        {0, 0, 0.0, 0}, NULL, NULL,
        NULL, NULL, /* set from the first GPU's calibration once the workers report */
    };
    stop_requested = 0;
    catch_stop_signals(on_signal);

    w = calloc((size_t)ngpus, sizeof *w);
    rep = calloc((size_t)ngpus, sizeof *rep);
    if (!w || !rep) {
        rc = lb_runtime_error(LB_ERR_NOMEM);
        goto out;
    }
    for (int i = 0; i < ngpus; i++)
        w[i] = (Worker){gpus[i], -1, -1, -1, -1};
    fflush(NULL);
    for (int i = 0; i < ngpus; i++) {
        int up[2], down[2];
        if (pipe(up) != 0 || pipe(down) != 0) {
            fprintf(stderr, "linbench: cannot make a pipe for the worker on GPU %d: %s\n", w[i].gpu, strerror(errno));
            rc = LB_EXIT_FAILURE;
            goto stop_workers;
        }
        w[i].pid = fork();
        if (w[i].pid == 0) {
            for (int j = 0; j < i; j++) { /* the other workers' pipes are not this one's */
                close_fd(&w[j].up);
                close_fd(&w[j].down);
            }
            close(up[0]);
            close(down[1]);
            worker_main(s, f, &job, w[i].gpu, up[1], down[0]);
        }
        close(up[1]);
        close(down[0]);
        w[i].up = up[0];
        w[i].down = down[1];
        if (w[i].pid < 0) {
            fprintf(stderr, "linbench: cannot start the worker on GPU %d: %s\n", w[i].gpu, strerror(errno));
            rc = LB_EXIT_FAILURE;
            goto stop_workers;
        }
    }
    /* Every worker's report, then one budget for all: the smallest, so every cell is measured as
     * on the GPU with the least free memory, and a resume keeps the first run's. */
    uint64_t budget = UINT64_MAX;
    int least = 0; /* the worker whose GPU set the budget */
    for (int i = 0; i < ngpus && rc == 0; i++) {
        if (read_all(w[i].up, &rep[i], sizeof rep[i]) != 1) {
            fprintf(stderr, "linbench: the worker on GPU %d ended before opening it\n", w[i].gpu);
            rc = LB_EXIT_FAILURE;
        } else if (rep[i].rc != LB_OK) {
            fprintf(stderr, "linbench: GPU %d: %s\n", w[i].gpu, rep[i].message);
            rc = LB_EXIT_FAILURE;
        } else if (rep[i].check_rc != 0) {
            rc = LB_EXIT_FAILURE; /* the worker said which check failed */
        } else {
            const uint64_t headroom = lb_run_settings_headroom(s, rep[i].total_bytes);
            if (rep[i].free_bytes <= headroom) {
                char fr[32], h[32];
                lb_format_size(rep[i].free_bytes, fr, sizeof fr);
                lb_format_size(headroom, h, sizeof h);
                fprintf(stderr, "linbench: GPU %d has %s free, no more than the %s headroom kept for the driver and libraries: free memory, or pass a smaller --headroom\n",
                        w[i].gpu, fr, h);
                rc = LB_EXIT_FAILURE;
            } else if (rep[i].free_bytes - headroom < budget) {
                budget = rep[i].free_bytes - headroom;
                least = i;
            }
        }
    }
    if (rc != 0)
        goto stop_workers;
    if (s->mem_limit > budget && (s->given & (UINT64_C(1) << LB_SET_MEM_LIMIT))) { /* as one GPU refuses it */
        char where[32];
        snprintf(where, sizeof where, "GPU %d", w[least].gpu);
        lb_options_refuse_mem_limit(s->mem_limit, budget, rep[least].free_bytes, "free memory",
                                    lb_run_settings_headroom(s, rep[least].total_bytes), where);
        rc = LB_EXIT_USAGE;
        goto stop_workers;
    }
    if (s->mem_limit && s->mem_limit < budget)
        budget = s->mem_limit;
    if (f->resume) {
        if (budget < resumed_budget) {
            char have[32], want[32];
            lb_format_size(budget, have, sizeof have);
            lb_format_size(resumed_budget, want, sizeof want);
            fprintf(stderr, "linbench: cannot resume %s: it ran with a memory budget of %s and these GPUs have %s free now (the least of them)\n",
                    f->resume, want, have);
            rc = LB_EXIT_FAILURE;
            goto stop_workers;
        }
        budget = resumed_budget;
    }
    /* meta.csv: the first GPU's device, the check of all (failed if any failed, the largest error) */
    LbSweepDevice dev = rep[0].dev;
    dev.gpu_count = ngpus;
    job.budget = budget;
    job.check.ran = !f->no_check;
    for (int i = 0; i < ngpus; i++) {
        job.check.failed |= rep[i].check.failures > 0;
        if (rep[i].check.max_rel_error > job.check.max_rel_error)
            job.check.max_rel_error = rep[i].check.max_rel_error;
    }
    job.check.seed = rep[0].check.seed;
    /* meta.csv's calibration_* keys: the first GPU's, as its device; each worker's breakdown rows
     * use its own GPU's */
    if (rep[0].calibrated)
        job.calibration = &rep[0].cal;
    job.calibration_note = rep[0].cal_note;
    for (int i = 0; i < ngpus && !f->quiet; i++)
        if (rep[i].calibrated) {
            fprintf(stderr, "calibration: gpu %d: %.3g TFLOP/s (product %lld), %.3g GB/s copy\n", w[i].gpu,
                    rep[i].cal.tflop_per_s, (long long)rep[i].cal.dim, rep[i].cal.copy_gb_per_s);
            char lead[32];
            snprintf(lead, sizeof lead, "gpu %d: ", w[i].gpu);
            lb_print_card_limits(stderr, lead, rep[i].dev.info.name, rep[i].dev.storage, s->tf32, &rep[i].cal);
        } else if (!f->no_check || s->breakdown)
            fprintf(stderr, "calibration skipped: gpu %d: %s\n", w[i].gpu, rep[i].cal_note);
    if (f->force && (rc = lb_outdir_clear_results(dir)) != 0)
        goto stop_workers;
    created = 0; /* from here the directory holds results */
    size_t todo = 0;
    int erc = lb_sweep_multi_begin(&job, &dev, &todo);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto stop_workers;
    }
    if (!f->quiet)
        fprintf(stderr, "linbench: %zu cells on %d GPUs (%s)\n", todo, ngpus, dev.info.name);
    WorkerGo go = {1, budget, todo};
    for (int i = 0; i < ngpus; i++) {
        if (write_all(w[i].down, &go, sizeof go) != 0)
            fprintf(stderr, "linbench: the worker on GPU %d is gone; the others take its cells\n", w[i].gpu);
        close_fd(&w[i].down);
        close_fd(&w[i].up);
    }
    wait_workers(w, ngpus);
    LbSweepOutcome outcome = LB_SWEEP_COMPLETE;
    int interrupted = stop_requested != 0, failed = 0, cell_errors = 0;
    for (int i = 0; i < ngpus; i++) {
        const int st = w[i].status;
        if (WIFEXITED(st) && WEXITSTATUS(st) == WORKER_INTERRUPTED)
            interrupted = 1;
        else if (WIFEXITED(st) && WEXITSTATUS(st) == WORKER_CELL_ERRORS)
            cell_errors = 1;
        else if (!(WIFEXITED(st) && WEXITSTATUS(st) == WORKER_COMPLETE)) {
            failed = 1;
            if (WIFSIGNALED(st) && !stop_requested)
                fprintf(stderr, "linbench: the worker on GPU %d ended by signal %d (%s); its cell went back to the queue\n",
                        w[i].gpu, WTERMSIG(st), strsignal(WTERMSIG(st)));
        }
    }
    outcome = interrupted ? LB_SWEEP_INTERRUPTED : failed ? LB_SWEEP_FAILED : cell_errors ? LB_SWEEP_CELL_ERRORS : LB_SWEEP_COMPLETE;
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        signal(stop_signals[i], SIG_DFL);
    erc = lb_sweep_multi_end(&job, &dev, &outcome, &grid);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    lb_grid_print(stdout, &grid, f->format);
    fflush(stdout);
    if (outcome == LB_SWEEP_INTERRUPTED) {
        char *list = lb_setting_text(s, LB_SET_GPUS);
        fprintf(stderr, "linbench: interrupted; finished cells are in %s (continue with: linbench sweep --resume %s --gpus %s)\n",
                dir, dir, list ? list : "all");
        free(list);
        rc = LB_EXIT_INTERRUPTED;
        goto out;
    }
    if (!f->quiet)
        fprintf(stderr, "linbench: results in %s\n", dir);
    rc = outcome == LB_SWEEP_COMPLETE ? LB_EXIT_OK : LB_EXIT_FAILURE;
    goto out;

stop_workers: /* nothing measured: the workers are told no (their pipes close) and reaped */
    for (int i = 0; w && i < ngpus; i++) {
        close_fd(&w[i].down);
        close_fd(&w[i].up);
    }
    if (w)
        wait_workers(w, ngpus);
out:
    if (rc != 0 && created)
        lb_outdir_abandon();
    lb_grid_free(&grid);
    free(probes);
    free(gpus);
    free(w);
    free(rep);
    free(command_line);
    return rc;
}

int lb_cmd_sweep(int argc, char **argv)
{
    LbRunSettings s;
    SweepFlags f;
    LbMeta meta;
    memset(&meta, 0, sizeof meta);
    LbBackend *be = NULL;
    LbCheckResult check;
    memset(&check, 0, sizeof check);
    LbGrid grid;
    memset(&grid, 0, sizeof grid);
    char *command_line = NULL;
    char default_dir[64];
    uint64_t resumed_budget = 0, budget = 0;
    int created = 0; /* this run made the directory: a failed start removes it again */

    int rc = parse_flags(argc, argv, &s, &f);
    if (rc == 0 && f.help)
        goto out;
    if (rc == 0)
        rc = validate(&s, &f, &meta, &resumed_budget);
    if (rc != 0)
        goto out;
    lb_options_note_unread(s.given, s.models); /* --chunk without the chunked model ... */
    lb_options_note_no_ratio(s.models); /* --models standard alone */

    if (s.gpus_all || s.ngpus) {
        rc = run_gpus(&s, &f, &meta, resumed_budget, argc, argv);
        goto out;
    }
    /* A stop from here on is this sweep's to handle: one during the set-up below (the check and
     * the calibration take seconds on a GPU) ends it with nothing measured, exit 130, and no new
     * directory left behind, instead of a death by the signal beside an empty folder. */
    stop_requested = 0;
    catch_stop_signals(on_signal);
    /* The directory, then the device (exit 1 leaves no new directory behind), then the check. */
    const char *dir = f.resume;
    if (!dir) {
        if (!f.out) {
            lb_outdir_default(default_dir, sizeof default_dir);
            f.out = default_dir;
        }
        dir = f.out;
        if ((rc = lb_outdir_prepare(dir, f.force, "--out", LB_OUTDIR_OFFER_FORCE | LB_OUTDIR_OFFER_RESUME)) != 0)
            goto out;
        created = 1;
    }
    if ((rc = lb_options_open_backend(&s, &be, &budget)) != 0)
        goto out;
    if (f.resume) {
        if (budget < resumed_budget) {
            char have[32], want[32];
            lb_format_size(budget, have, sizeof have);
            lb_format_size(resumed_budget, want, sizeof want);
            fprintf(stderr, "linbench: cannot resume %s: it ran with a memory budget of %s and this device has %s free now\n",
                    f.resume, want, have);
            rc = LB_EXIT_FAILURE;
            goto out;
        }
        budget = resumed_budget;
    }
    /* A backend that gets its arithmetic wrong is not measured: nothing is written. */
    if (!f.no_check && (rc = lb_quick_check(be, &s.model, &check)) != 0)
        goto out;
    if ((rc = stopped_before_first_cell()) != 0)
        goto out;
    /* This device's own limits, before the first cell: skipped with the check under --no-check,
     * unless --breakdown wants them for its percentages. */
    LbCalibration calibration;
    char calibration_note[512];
    snprintf(calibration_note, sizeof calibration_note, "%s", no_check_note);
    int calibrated = 0;
    if ((!f.no_check || s.breakdown) &&
        (rc = lb_sweep_calibrate(be, budget, f.quiet, &calibration, &calibrated, calibration_note,
                                 sizeof calibration_note)) != 0)
        goto out;
    if ((rc = stopped_before_first_cell()) != 0)
        goto out;
    if (f.force && (rc = lb_outdir_clear_results(dir)) != 0) /* before the first new row */
        goto out;
    created = 0; /* from here the directory holds results */

    command_line = lb_command_line(argc, argv);
    LbProgress progress;
    lb_progress_init(&progress, f.quiet);
    const LbSweepJob job = {
        &s, dir, f.resume != NULL, f.resume ? &meta : NULL, command_line ? command_line : "linbench sweep", budget,
        {check.ran, check.failures > 0, check.max_rel_error, check.seed}, lb_progress_event, &progress,
        calibrated ? &calibration : NULL, calibration_note,
    };
    LbSweepOutcome outcome = LB_SWEEP_COMPLETE;
    int erc = lb_sweep_engine_run(&job, be, &stop_requested, &outcome, &grid);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    lb_grid_print(stdout, &grid, f.format);
    fflush(stdout);
    if (outcome == LB_SWEEP_INTERRUPTED) {
        fprintf(stderr, "linbench: interrupted; finished cells are in %s (continue with: linbench sweep --resume %s)\n",
                dir, dir);
        rc = LB_EXIT_INTERRUPTED;
        goto out;
    }
    if (!f.quiet)
        fprintf(stderr, "linbench: results in %s\n", dir);
    rc = outcome == LB_SWEEP_COMPLETE ? LB_EXIT_OK : LB_EXIT_FAILURE;
out:
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        signal(stop_signals[i], SIG_DFL);
    if (rc != 0 && created)
        lb_outdir_abandon(); /* nothing was written: leave no empty folder */
    lb_backend_close(be);
    lb_grid_free(&grid);
    free(command_line);
    lb_run_settings_free(&s);
    lb_meta_free(&meta);
    return rc;
}
