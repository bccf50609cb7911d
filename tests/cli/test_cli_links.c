/* No write through a name planted in a directory linbench writes into. A symbolic link (dangling
 * or not), a hard link or a FIFO put where linbench keeps its lock, raw.csv, a result file, a
 * dumped array, a plot or a job script must never send a write to another file: each command
 * either refuses with one line or replaces the planted name, and the file it pointed at keeps
 * every byte. The lock is tried for each command that takes one (sweep, --resume, merge, predict,
 * run --dump); the breakdown's lock through its function.
 * Usage: test_cli_links PATH-TO-LINBENCH */
#include <errno.h>
#include <time.h>

#include "reports/breakdown_csv.h"
#include "tests/cli/sweep_check.h"

static const char *bin, *scratch;

#define MODEL "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100"
#define GRID MODEL, "--n", "32", "--k", "8", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "--quiet"

static const char victim_text[] = "the user's own file: not linbench's to write\n";

/* A fresh file outside every result directory, holding victim_text. */
static void make_victim(char *path, size_t size, const char *name)
{
    snprintf(path, size, "%s/%s", scratch, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(victim_text, f);
        fclose(f);
    }
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
    char *argv[] = {(char *)bin, "sweep", GRID, "--out", (char *)dir, NULL};
    LbRun r = lb_run(argv);
    lb_check(r.code == 0, "a sweep into %s runs (%d): %s", dir, r.code, r.err);
    lb_run_free(&r);
}

/* The command refused with exit `code` and one line that contains `says`. */
static void refused(LbRun *r, int code, const char *says, const char *what)
{
    lb_check(r->code == code && lb_lines(r->err) == 1 && strstr(r->err, says),
             "%s: refused with exit %d and one line saying \"%s\" (exit %d): %s", what, code, says, r->code, r->err);
    lb_run_free(r);
}

/* The lock of every command that takes one, planted each way. */
static void planted_locks(void)
{
    const Plant plants[] = {PLANT_SYMLINK, PLANT_DANGLING, PLANT_HARDLINK, PLANT_FIFO};
    for (size_t p = 0; p < sizeof plants / sizeof plants[0]; p++) {
        char victim[600], dir[600], what[200];
        make_victim(victim, sizeof victim, "victim-lock");
        /* sweep --out */
        snprintf(dir, sizeof dir, "%s/lock-sweep-%zu", scratch, p);
        plant(dir, ".linbench.lock", plants[p], victim);
        char *sweep[] = {(char *)bin, "sweep", GRID, "--out", dir, NULL};
        LbRun r = lb_run(sweep);
        snprintf(what, sizeof what, "sweep --out, its lock %s", plant_name[plants[p]]);
        refused(&r, 2, ".linbench.lock", what);
        victim_intact(victim, what);
        char meta[700];
        snprintf(meta, sizeof meta, "%s/meta.csv", dir);
        lb_check(!lb_exists(meta), "%s: no result written", what);
        /* sweep --resume of a finished sweep */
        snprintf(dir, sizeof dir, "%s/lock-resume-%zu", scratch, p);
        sweep_into(dir);
        plant(dir, ".linbench.lock", plants[p], victim);
        char *resume[] = {(char *)bin, "sweep", "--resume", dir, "--quiet", NULL};
        r = lb_run(resume);
        snprintf(what, sizeof what, "sweep --resume, its lock %s", plant_name[plants[p]]);
        refused(&r, 2, ".linbench.lock", what);
        victim_intact(victim, what);
        /* merge OUT PART */
        char out[600];
        snprintf(out, sizeof out, "%s/lock-merge-%zu", scratch, p);
        plant(out, ".linbench.lock", plants[p], victim);
        char *merge[] = {(char *)bin, "merge", out, dir, NULL};
        r = lb_run(merge);
        snprintf(what, sizeof what, "merge, its lock %s", plant_name[plants[p]]);
        refused(&r, 2, ".linbench.lock", what);
        victim_intact(victim, what);
        /* predict --out */
        snprintf(out, sizeof out, "%s/lock-predict-%zu", scratch, p);
        plant(out, ".linbench.lock", plants[p], victim);
        char *predict[] = {(char *)bin, "predict", "--gpu", "h100-sxm", "--n", "512", "--k", "128", "--out", out, NULL};
        r = lb_run(predict);
        snprintf(what, sizeof what, "predict, its lock %s", plant_name[plants[p]]);
        refused(&r, 2, ".linbench.lock", what);
        victim_intact(victim, what);
        /* run --dump */
        snprintf(out, sizeof out, "%s/lock-dump-%zu", scratch, p);
        plant(out, ".linbench.lock", plants[p], victim);
        char *dump[] = {(char *)bin, "run", MODEL, "--n", "32", "--dump", out, NULL};
        r = lb_run(dump);
        snprintf(what, sizeof what, "run --dump, its lock %s", plant_name[plants[p]]);
        refused(&r, 2, ".linbench.lock", what);
        victim_intact(victim, what);
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
        char *before = lb_slurp(victim);
        /* a partial last line, which a resume cuts */
        FILE *f = fopen(victim, "a");
        if (f) {
            fputs("standard,64", f);
            fclose(f);
        }
        free(before);
        before = lb_slurp(victim);
        plant(dir, "raw.csv", plants[p], victim);
        char *resume[] = {(char *)bin, "sweep", "--resume", dir, "--quiet", NULL};
        LbRun r = lb_run(resume);
        snprintf(what, sizeof what, "sweep --resume, raw.csv %s", plant_name[plants[p]]);
        lb_check(r.code != 0 && strstr(r.err, "raw.csv") && strstr(r.err, "not a plain file"),
                 "%s: refused, naming raw.csv (%d): %s", what, r.code, r.err);
        lb_run_free(&r);
        char *after = lb_slurp(victim);
        lb_check(before && after && strcmp(before, after) == 0, "%s: the file it pointed at is unchanged", what);
        free(before);
        free(after);
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
        char *sweep[] = {(char *)bin, "sweep", GRID, "--out", dir, NULL};
        LbRun r = lb_run(sweep);
        snprintf(what, sizeof what, "sweep --out, %s a dangling link", names[i]);
        refused(&r, 2, "already holds results", what);
        plant(dir, names[i], PLANT_SYMLINK, victim);
        char *force[] = {(char *)bin, "sweep", GRID, "--out", dir, "--force", NULL};
        r = lb_run(force);
        snprintf(what, sizeof what, "sweep --force, %s a link", names[i]);
        lb_check(r.code == 0, "%s: runs (%d): %s", what, r.code, r.err);
        lb_run_free(&r);
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
    char *dump[] = {(char *)bin, "run", MODEL, "--n", "32", "--dump", dir, NULL};
    LbRun r = lb_run(dump);
    lb_check(r.code == 1 && strstr(r.err, "ids.npy") && strstr(r.err, "not a plain file"),
             "run --dump, ids.npy a link: refused, naming it (%d): %s", r.code, r.err);
    lb_run_free(&r);
    victim_intact(victim, "run --dump, ids.npy a link");

    snprintf(dir, sizeof dir, "%s/plot", scratch);
    sweep_into(dir);
    plant(dir, "time_speedup.png", PLANT_SYMLINK, victim);
    plant(dir, "time_per_seq.svg", PLANT_SYMLINK, victim);
    char *plot[] = {(char *)bin, "plot", dir, NULL};
    r = lb_run(plot);
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
    char *slurm[] = {(char *)bin, "slurm", GRID, "--shards", "2", "--out", dir, NULL};
    r = lb_run(slurm);
    lb_check(r.code != 0 && strstr(r.err, "sweep.sbatch") && strstr(r.err, "not a plain file"),
             "slurm, sweep.sbatch a link: refused, naming it (%d): %s", r.code, r.err);
    lb_run_free(&r);
    victim_intact(victim, "slurm, sweep.sbatch a link");
}

/* The breakdown's lock, which concurrent adders take inside the directory. */
static void planted_worker_locks(void)
{
    char dir[600], victim[600];
    make_victim(victim, sizeof victim, "victim-worker");
    snprintf(dir, sizeof dir, "%s/workers", scratch);
    plant(dir, ".breakdown.lock", PLANT_SYMLINK, victim);
    LbBreakdownRecord rec;
    memset(&rec, 0, sizeof rec);
    lb_check(lb_breakdown_add(dir, &rec, 1) != LB_OK, "the breakdown's lock planted as a link: refused");
    lb_check(strstr(lb_error_message(), "not a plain file") != NULL, "  saying why: %s", lb_error_message());
    victim_intact(victim, "the breakdown's lock a link");
}

int main(int argc, char **argv)
{
    lb_test_init("test_cli_links");
    if (argc < 2)
        return 1;
    bin = argv[1];
    scratch = lb_scratch_dir("cli-links");
    planted_locks();
    planted_raw();
    planted_results();
    planted_outputs();
    planted_worker_locks();
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_links");
}
