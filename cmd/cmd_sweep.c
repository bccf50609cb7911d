/* linbench sweep: the Table 3 grid. Flags (and with --resume, meta.csv's settings) are checked
 * before anything runs (exit 2); the device is opened and checked once the output directory exists,
 * which a failure there removes again (exit 1); then the engine (cmd/sweep/engine.h) measures. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/calibration.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "cmd/check.h"
#include "cmd/progress.h"
#include "reports/grid.h"
#include "reports/merge.h"
#include "reports/meta.h"
#include "reports/settings.h"
#include "reports/sweep_dir.h"
#include "cmd/sweep/engine.h"

static volatile sig_atomic_t stop_requested;
static struct timespec first_stop; /* when the first stop signal came */

/* SIGHUP too: a closed terminal or ssh session ends a sweep as cleanly as Ctrl-C. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* The first stop signal ends the sweep after the pass in progress. A second Ctrl-C at least a
 * second later stops it at once, as a person pressing it again means; anything else is the same
 * request again (`timeout` signals the sweep, then its whole process group, at once). */
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

static void catch_stop_signals(void)
{
    stop_requested = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        sigaction(stop_signals[i], &sa, NULL);
}

/* A stop during the set-up before the first cell: 0, or exit 130 after one line. */
static int stopped_before_first_cell(void)
{
    if (!stop_requested)
        return 0;
    fprintf(stderr, "linbench: interrupted before the first cell: nothing was measured\n");
    return LB_EXIT_INTERRUPTED;
}

/* Whether two paths name one directory: "run" and "run/", as a shell's completion writes it. */
static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, b) == 0 || (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/* The flags' own checks, then with --resume the directory locked, and the settings checked whole. */
static int validate(LbRunSettings *s, LbMeta *meta, uint64_t *resumed_budget)
{
    const LbCommandFlags *f = &s->cmd;
    char notes[4096];
    int rc;
    if (f->resume && f->out && !same_dir(f->resume, f->out))
        return lb_usage_error("--out %s and --resume %s differ: should be given one directory, with --resume alone", f->out, f->resume);
    if (f->resume && f->force)
        return lb_usage_error("--force cannot be used with --resume: should be one or the other");
    if (f->resume && (rc = lb_outdir_lock_existing(f->resume, "--resume")) != 0)
        return rc;
    rc = lb_sweep_settings_check(f->resume, s, meta, resumed_budget, notes, sizeof notes);
    fputs(notes, stderr);
    if (rc != LB_OK) /* the directory's fault, or a flag's, is bad input; a file that cannot be read, a runtime failure */
        return rc == LB_ERR_FORMAT ? lb_usage_error("%s", lb_error_message()) : lb_runtime_error(rc);
    return lb_options_check_host_memory(s);
}

/* --resume: the run's budget, which the device (`has`: "this device has") must still hold. */
static int keep_budget(const char *dir, uint64_t *budget, uint64_t resumed, const char *has)
{
    if (*budget < resumed) {
        char now[32], then[32];
        lb_format_size(*budget, now, sizeof now);
        lb_format_size(resumed, then, sizeof then);
        fprintf(stderr, "linbench: cannot resume %s: it ran with a memory budget of %s and %s %s free now%s\n", dir, then,
                has, now, strstr(has, "GPUs") ? " (the least of them)" : "");
        return LB_EXIT_FAILURE;
    }
    *budget = resumed;
    return 0;
}

/* The grids on stdout, then how the sweep went: its exit code (interrupted: how to go on). */
static int finish(const LbCommandFlags *f, const char *dir, LbGrid *grid, LbSweepOutcome outcome, const char *gpus)
{
    lb_grid_print(stdout, grid, (LbFormat)f->format);
    fflush(stdout);
    if (outcome == LB_SWEEP_INTERRUPTED) {
        fprintf(stderr, "linbench: interrupted; finished cells are in %s (continue with: linbench sweep --resume %s%s%s)\n",
                dir, dir, gpus && *gpus ? " --gpus " : "", gpus && *gpus ? gpus : "");
        return LB_EXIT_INTERRUPTED;
    }
    if (!f->quiet)
        fprintf(stderr, "linbench: results in %s\n", dir);
    return outcome == LB_SWEEP_COMPLETE ? LB_EXIT_OK : LB_EXIT_FAILURE;
}

/* --- sweep --gpus: one `linbench sweep --resume DIR/shard-I --gpu G` per GPU, then a merge ---
 * The parent never touches CUDA (a context does not survive fork): a probe process lists the GPUs.
 * The parent writes every meta.csv first, so a first run and a resume take one path. */

#define PARTS_DIR_FMT "%s/shard-%d"

#define PROBE_MAX 1024 /* the most CUDA device indices tried */

typedef struct GpuProbe {
    int opened; /* 0: the first index that did not open, message says why */
    LbSweepDevice dev;
    uint64_t free_bytes, total_bytes;
    char message[LB_ERROR_MAX];
} GpuProbe;

/* The GPUs of this machine, then the first index that does not open, listed by a child process
 * into a shared map (munmap PROBE_MAX of them). 0, or an exit code after printing. */
static int probe_gpus(const LbRunSettings *s, GpuProbe **probes, int *count)
{
    GpuProbe *p = mmap(NULL, PROBE_MAX * sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "linbench: cannot map memory to list the GPUs: %s\n", strerror(errno));
        return LB_EXIT_FAILURE;
    }
    fflush(NULL);
    pid_t pid = fork();
    for (int i = 0; pid == 0 && i < PROBE_MAX; i++) {
        LbBackend *be = NULL;
        size_t free_bytes = 0, total = 0;
        int rc = lb_cuda_backend_open(i, s->model.dtype, s->tf32, &be);
        if (rc == LB_OK) {
            lb_sweep_device_describe(be, &p[i].dev);
            rc = be->ops->mem_info(be, &free_bytes, &total);
            lb_backend_close(be);
        }
        p[i].free_bytes = free_bytes;
        p[i].total_bytes = total;
        p[i].opened = rc == LB_OK;
        if (rc != LB_OK) {
            snprintf(p[i].message, sizeof p[i].message, "%s", lb_error_message());
            _exit(0);
        }
    }
    if (pid == 0)
        _exit(0);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        munmap(p, PROBE_MAX * sizeof *p);
        fprintf(stderr, "linbench: the process listing the GPUs ended early (%s)\n",
                pid < 0 ? strerror(errno) : WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no answer");
        return LB_EXIT_FAILURE;
    }
    int n = 0;
    while (n < PROBE_MAX - 1 && p[n].opened)
        n++;
    *probes = p;
    *count = n;
    return 0;
}

/* The GPUs to use (--gpus, or --gpu where a resume names none): each exists, all of one model; and
 * their budget, the smallest GPU's. 0, or an exit code after printing. */
static int pick_gpus(const LbRunSettings *s, const GpuProbe *probes, int found, int *gpus, int *count,
                     uint64_t *budget)
{
    if (found == 0) {
        fprintf(stderr, "linbench: %s\n", probes[0].message);
        return LB_EXIT_FAILURE;
    }
    const int listed = s->gpus_all || s->ngpus;
    char *list = lb_setting_text(s, listed ? LB_SET_GPUS : LB_SET_GPU);
    const char *flag = listed ? "--gpus" : "--gpu";
    const int n = s->gpus_all ? found : s->ngpus ? (int)s->ngpus : 1;
    int rc = 0, least = 0;
    *budget = UINT64_MAX;
    for (int i = 0; i < n && rc == 0; i++) {
        gpus[i] = s->gpus_all ? i : s->ngpus ? s->gpus[i] : s->gpu;
        if (gpus[i] >= found)
            rc = lb_usage_error("invalid argument \"%s\" for %s: there is no GPU %d (this machine has %d, 0 to %d): should name GPUs that exist, or all",
                                list ? list : "", flag, gpus[i], found, found - 1);
        else if (strcmp(probes[gpus[i]].dev.info.name, probes[gpus[0]].dev.info.name) != 0)
            rc = lb_usage_error("invalid argument \"%s\" for %s: GPU %d is %s and GPU %d is %s: should list GPUs of one model, which alone share a result",
                                list ? list : "", flag, gpus[0], probes[gpus[0]].dev.info.name, gpus[i],
                                probes[gpus[i]].dev.info.name);
    }
    /* the least room of them, whatever --mem-limit says; then that GPU's budget, as one GPU's */
    LbRunSettings unlimited = *s;
    unlimited.mem_limit = 0;
    char name[32];
    for (int i = 0; i < n && rc == 0; i++) {
        const GpuProbe *p = &probes[gpus[i]];
        uint64_t room = 0;
        snprintf(name, sizeof name, "GPU %d", gpus[i]);
        rc = lb_options_gpu_budget(&unlimited, p->free_bytes, p->total_bytes, name, name, &room);
        if (rc == 0 && room < *budget) {
            *budget = room;
            least = gpus[i];
        }
    }
    snprintf(name, sizeof name, "GPU %d", least);
    if (rc == 0)
        rc = lb_options_gpu_budget(s, probes[least].free_bytes, probes[least].total_bytes, name, name, budget);
    free(list);
    *count = n;
    return rc;
}

/* The number of parts of a directory that sweep --gpus wrote, else 0. */
static int gpus_parts(const LbMeta *meta)
{
    const char *parts = lb_meta_get(meta, "parts"), *first = lb_meta_get(meta, "part_1");
    const int n = parts ? atoi(parts) : 0;
    return first && strcmp(first, "shard-0") == 0 && n > 0 && n <= LB_SHARDS_MAX ? n : 0;
}

/* `linbench sweep --resume DIR --gpu G`, stdout to /dev/null, stderr through a relay process that
 * leads each line with "[gpu G] "; stopped when the parent dies. Its pid, or -1 after printing. */
static pid_t start_part(const char *dir, int gpu, const LbCommandFlags *f)
{
    int fds[2];
    char g[16];
    snprintf(g, sizeof g, "%d", gpu);
    char *argv[8] = {"linbench", "sweep", "--resume", (char *)dir, "--gpu", g};
    int argc = 6;
    if (f->quiet)
        argv[argc++] = "-q";
    if (f->no_check)
        argv[argc++] = "--no-check";
    argv[argc] = NULL;
    if (pipe(fds) != 0) {
        fprintf(stderr, "linbench: cannot make a pipe for GPU %d: %s\n", gpu, strerror(errno));
        return -1;
    }
    fflush(NULL);
    const pid_t part = fork();
    if (part == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        signal(SIGPIPE, SIG_IGN); /* a relay gone: its lines are lost, not the part */
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0)
            _exit(LB_EXIT_FAILURE);
        close(fds[0]);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "linbench: cannot run /proc/self/exe: %s\n", strerror(errno));
        _exit(LB_EXIT_FAILURE);
    }
    const pid_t relay = part > 0 ? fork() : -1;
    if (relay == 0) { /* it ends with the part's last line, not on a stop */
        for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
            signal(stop_signals[i], SIG_IGN);
        close(fds[1]);
        FILE *in = fdopen(fds[0], "r");
        char line[4096];
        while (in && fgets(line, sizeof line, in))
            fprintf(stderr, "[gpu %d] %s%s", gpu, line, strchr(line, '\n') ? "" : "\n");
        _exit(0);
    }
    close(fds[0]);
    close(fds[1]);
    if (relay > 0)
        return part;
    fprintf(stderr, "linbench: cannot start the part on GPU %d: %s\n", gpu, strerror(errno));
    if (part > 0)
        kill(part, SIGKILL); /* its lines would go nowhere */
    return -1;
}

/* Run the parts, at most one per GPU at a time, until every part and relay has ended; a stop is
 * passed on to them (a SIGTERM to the parent alone does not reach them) and starts no more. 0, or
 * an exit code after printing. */
static int run_parts(char (*dirs)[4096], const int *todo, int ntodo, const int *gpus, int ngpus,
                     const LbCommandFlags *f)
{
    pid_t *part = calloc((size_t)ngpus, sizeof *part);
    if (!part)
        return lb_runtime_error(LB_ERR_NOMEM);
    int next = 0, forwarded = 0, rc = 0, status;
    for (;;) {
        for (int g = 0; g < ngpus && next < ntodo && !stop_requested && rc == 0; g++)
            if (part[g] == 0 && (part[g] = start_part(dirs[todo[next]], gpus[g], f)) > 0)
                next++;
            else if (part[g] < 0) /* a start that failed: no more */
                rc = LB_EXIT_FAILURE;
        if (stop_requested && !forwarded) {
            for (int g = 0; g < ngpus; g++)
                if (part[g] > 0)
                    kill(part[g], SIGTERM);
            forwarded = 1;
        }
        const pid_t pid = wait(&status);
        if (pid < 0 && errno == EINTR)
            continue; /* a stop signal, passed on above */
        if (pid < 0)
            break; /* no child left */
        for (int g = 0; g < ngpus; g++) {
            if (pid != part[g])
                continue;
            if (WIFSIGNALED(status) && !stop_requested)
                fprintf(stderr, "linbench: the part on GPU %d ended by signal %d (%s)\n", gpus[g], WTERMSIG(status),
                        strsignal(WTERMSIG(status)));
            part[g] = 0;
        }
    }
    free(part);
    return rc;
}

static int run_gpus(LbRunSettings *s, LbMeta *meta, uint64_t resumed_budget, int argc, char **argv)
{
    GpuProbe *probes = NULL;
    int found = 0, ngpus = 0, nparts = 0, ntodo = 0, created = 0;
    int *gpus = NULL, *todo = NULL;
    char (*dirs)[4096] = NULL, **ready = NULL;
    char now[64], why[512], *command_line = lb_command_line(argc, argv);
    LbCommandFlags *f = &s->cmd;
    uint64_t budget = 0;
    LbMerge m = {0};
    LbMeta extra = {0}, merged = {0};
    LbGrid grid = {0};
    lb_sweep_now_text(now, sizeof now);
    int rc = probe_gpus(s, &probes, &found);
    if (rc == 0 && !(gpus = malloc(((size_t)found + s->ngpus + 1) * sizeof *gpus)))
        rc = lb_runtime_error(LB_ERR_NOMEM);
    if (rc == 0)
        rc = pick_gpus(s, probes, found, gpus, &ngpus, &budget);
    if (rc != 0)
        goto out;
    const char *dir = f->resume;
    if (dir && !(nparts = gpus_parts(meta))) {
        rc = lb_usage_error("invalid argument \"%s\" for --resume: it was measured on one GPU: should be resumed without --gpus", dir);
        goto out;
    }
    if (dir && (rc = keep_budget(dir, &budget, resumed_budget, "these GPUs have")) != 0)
        goto out;
    if (!dir) {
        if ((rc = lb_outdir_prepare_out(f, LB_OUTDIR_OFFER_RESUME)) != 0)
            goto out;
        dir = f->out;
        nparts = ngpus;
        created = 1;
        if (f->force && (rc = lb_outdir_clear_forced(dir)) != 0)
            goto out;
    }
    dirs = malloc((size_t)nparts * sizeof *dirs);
    todo = malloc((size_t)nparts * sizeof *todo);
    ready = malloc((size_t)nparts * sizeof *ready);
    if (!dirs || !todo || !ready) {
        rc = lb_runtime_error(LB_ERR_NOMEM);
        goto out;
    }
    LbSweepDevice dev = probes[gpus[0]].dev;
    LbSweepJob job = {s, dir, f->resume ? meta : NULL, command_line ? command_line : "linbench sweep",
                      budget, {.ran = !f->no_check}, NULL, NULL, NULL, NULL};
    int erc = lb_meta_set(&extra, "parts", "%d", nparts);
    for (int i = 0; i < nparts && erc == LB_OK; i++) {
        char key[32];
        snprintf(key, sizeof key, "part_%d", i + 1);
        erc = lb_meta_set(&extra, key, "shard-%d", i);
    }
    dev.gpu_count = ngpus;
    if (erc == LB_OK)
        erc = lb_sweep_write_meta(&job, &dev, "running", &extra);
    created = created && erc != LB_OK;
    dev.gpu_count = 1;
    /* each part's meta.csv: written afresh for a new run, kept (its status read) for a resume */
    for (int i = 0; i < nparts && erc == LB_OK && rc == 0; i++) {
        snprintf(dirs[i], sizeof dirs[i], PARTS_DIR_FMT, dir, i);
        LbMeta pm = {0};
        char path[4096];
        lb_path_join_buf(path, sizeof path, dirs[i], "meta.csv");
        if (f->resume && lb_meta_read(path, &pm) == LB_OK) {
            const char *st = lb_meta_get(&pm, "status");
            if (!st || strcmp(st, "complete") != 0)
                todo[ntodo++] = i;
            lb_meta_free(&pm);
            continue;
        }
        lb_error_clear();
        struct stat st;
        if (mkdir(dirs[i], 0777) != 0 && (errno != EEXIST || lstat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode)))
            erc = LB_FAIL(LB_ERR_IO, "cannot create %s: %s", dirs[i], errno == EEXIST ? "it is there, and not a directory" : strerror(errno));
        if (erc == LB_OK && f->force && (rc = lb_outdir_clear_forced(dirs[i])) != 0)
            break;
        LbRunSettings part = *s; /* shares s's lists, not freed here */
        part.shard_index = i;
        part.shard_count = nparts;
        LbSweepJob pjob = {&part, dirs[i], NULL, job.command_line, budget, job.check, NULL, NULL, NULL, NULL};
        if (erc == LB_OK)
            erc = lb_sweep_write_meta(&pjob, &dev, "running", NULL);
        todo[ntodo++] = i;
    }
    if (erc != LB_OK)
        rc = lb_runtime_error(erc);
    if (rc != 0)
        goto out;

    catch_stop_signals();
    if (!f->quiet)
        fprintf(stderr, "linbench: %d of %d shards to measure on %d GPU%s (%s), in %s/shard-*\n", ntodo, nparts, ngpus, ngpus == 1 ? "" : "s",
                probes[gpus[0]].dev.info.name, dir);
    rc = run_parts(dirs, todo, ntodo, gpus, ngpus, f);

    /* the parts with results, merged into DIR; the run's outcome the worst of theirs (the enum's
     * order), a part with any other status failed */
    int nready = 0;
    for (int i = 0; i < nparts; i++)
        if (lb_sweep_dir_check(dirs[i], why, sizeof why) == 0)
            ready[nready++] = dirs[i];
    LbSweepOutcome outcome = stop_requested ? LB_SWEEP_INTERRUPTED
                             : rc != 0 || nready < nparts ? LB_SWEEP_FAILED : LB_SWEEP_COMPLETE;
    lb_error_clear();
    if (nready == 0 || (erc = lb_merge_load(&m, ready, (size_t)nready)) != LB_OK) {
        rc = nready ? lb_runtime_error(erc) : stop_requested ? LB_EXIT_INTERRUPTED : LB_EXIT_FAILURE;
        goto out; /* DIR/meta.csv still says running: --resume goes on */
    }
    for (size_t p = 0; p < m.count; p++) {
        LbSweepOutcome o = LB_SWEEP_FAILED;
        for (int k = LB_SWEEP_COMPLETE; k <= LB_SWEEP_INTERRUPTED; k++)
            if (strcmp(lb_sweep_meta(&m.parts[p], "status", ""), lb_sweep_outcome_name((LbSweepOutcome)k)) == 0)
                o = (LbSweepOutcome)k;
        outcome = o > outcome ? o : outcome;
    }
    const char *status = lb_sweep_outcome_name(outcome);
    erc = lb_merge_meta(&m, job.command_line, status, 1, &merged);
    for (size_t i = 0; i < extra.count && erc == LB_OK; i++) /* parts: every shard, inside DIR */
        erc = lb_meta_set(&merged, extra.keys[i], "%s", extra.values[i]);
    if (erc == LB_OK)
        erc = lb_sweep_meta_history(&job, now, status, &merged);
    if (erc == LB_OK)
        erc = lb_meta_set(&merged, "gpu_count", "%d", ngpus);
    if (erc == LB_OK)
        erc = lb_merge_write(&m, dir, &merged, &grid);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    char *list = lb_setting_text(s, LB_SET_GPUS);
    rc = finish(f, dir, &grid, outcome, list);
    free(list);
out:
    if (rc != 0 && created)
        lb_outdir_abandon();
    lb_merge_free(&m);
    lb_meta_free(&extra);
    lb_meta_free(&merged);
    lb_grid_free(&grid);
    if (probes)
        munmap(probes, PROBE_MAX * sizeof *probes);
    free(gpus);
    free(todo);
    free(dirs);
    free(ready);
    free(command_line);
    return rc;
}

int lb_cmd_sweep(LbRunSettings *s, int argc, char **argv)
{
    LbMeta meta = {0};
    LbBackend *be = NULL;
    LbCheckResult check = {0};
    LbGrid grid = {0};
    char *command_line = NULL;
    uint64_t resumed_budget = 0, budget = 0;
    int created = 0; /* this run made the directory: a failed start removes it again */

    LbCommandFlags *f = &s->cmd;
    int rc = validate(s, &meta, &resumed_budget);
    if (rc != 0)
        goto out;
    lb_options_note_unread(s->given, s->models); /* --chunk without the chunked model ... */
    lb_options_note_no_ratio(s->models); /* --models standard alone */

    if (s->gpus_all || s->ngpus || (f->resume && gpus_parts(&meta))) {
        rc = run_gpus(s, &meta, resumed_budget, argc, argv);
        goto out;
    }
    /* A stop during the set-up (check, calibration) ends it with exit 130 and no new directory. */
    catch_stop_signals();
    if (!f->resume && (rc = lb_outdir_prepare_out(f, LB_OUTDIR_OFFER_RESUME)) != 0)
        goto out;
    const char *dir = f->resume ? f->resume : f->out;
    created = !f->resume;
    if ((rc = lb_options_open_backend(s, &be, &budget)) != 0)
        goto out;
    if (f->resume && (rc = keep_budget(dir, &budget, resumed_budget, "this device has")) != 0)
        goto out;
    /* A backend that gets its arithmetic wrong is not measured: nothing is written. */
    if (!f->no_check && (rc = lb_quick_check(be, &s->model, &check)) != 0)
        goto out;
    if ((rc = stopped_before_first_cell()) != 0)
        goto out;
    /* This device's limits: skipped with the check, unless --breakdown wants its percentages. */
    LbCalibration calibration;
    char calibration_note[512] = "skipped with the check (--no-check)";
    int calibrated = 0;
    if ((!f->no_check || s->breakdown) &&
        (rc = lb_sweep_calibrate(be, budget, f->quiet, &calibration, &calibrated, calibration_note,
                                 sizeof calibration_note)) != 0)
        goto out;
    if ((rc = stopped_before_first_cell()) != 0)
        goto out;
    if (f->force && (rc = lb_outdir_clear_forced(dir)) != 0) /* before the first new row */
        goto out;
    created = 0; /* from here the directory holds results */

    command_line = lb_command_line(argc, argv);
    LbProgress progress;
    lb_progress_init(&progress, f->quiet);
    const LbSweepJob job = {
        s, dir, f->resume ? &meta : NULL, command_line ? command_line : "linbench sweep", budget,
        check, lb_progress_event, &progress,
        calibrated ? &calibration : NULL, calibration_note,
    };
    LbSweepOutcome outcome = LB_SWEEP_COMPLETE;
    int erc = lb_sweep_engine_run(&job, be, &stop_requested, &outcome, &grid);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    rc = finish(f, dir, &grid, outcome, NULL);
out:
    for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++)
        signal(stop_signals[i], SIG_DFL);
    if (rc != 0 && created)
        lb_outdir_abandon(); /* nothing was written: leave no empty folder */
    lb_backend_close(be);
    lb_grid_free(&grid);
    free(command_line);
    lb_meta_free(&meta);
    return rc;
}
