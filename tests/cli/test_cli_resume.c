/* linbench sweep --resume: a sweep stopped by Ctrl-C (exit 130, finished cells kept, grids
 * written) or by kill -9 (at most the cell in progress lost), then resumed, ends with the same set
 * of cells, each once, as an uninterrupted run; --resume refuses settings that contradict
 * meta.csv, and raw.csv rows they did not produce (exit 2). Usage: test_cli_resume PATH-TO-LINBENCH */
#include <string.h>

#include "reports/grid.h"
#include "reports/meta.h"
#include "reports/raw.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"
#include "tests/reports/fixture.h"

static const char *bin;

#define GRID "--device", "cpu", "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", \
             "--vocab", "500", "--n", "64:512", "--k", "16:64", "--mem-limit", "8M", "--cell-time", "1", "--quiet"
#define CELLS 15 /* n 64, 128, 256, 512: 4 standard + 2 + 3 + 3 + 3 Linformer */

/* A sweep of GRID into dir, stopped with `sig` once it has written `after` rows. */
static LbRun interrupted(const char *dir, int sig, int after)
{
    char *argv[] = {(char *)bin, "sweep", GRID, "--out", (char *)dir, NULL};
    return sc_stop_after(argv, dir, sig, after);
}

static LbRun resume(const char *dir, const char *flag, const char *value)
{
    char *argv[] = {(char *)bin, "sweep", "--resume", (char *)dir, "--quiet", (char *)flag, (char *)value, NULL};
    if (!flag)
        argv[4] = NULL;
    return lb_run(argv);
}

/* A resume with a setting that contradicts meta.csv: exit 2, one line naming the flag. */
static void refused(const char *dir, const char *flag, const char *value)
{
    lb_check_refusal(resume(dir, flag, value), flag, flag);
}

/* The reproduction: a sweep with --max-batch 2 --cell-time 1 cut to its first 4 rows,
 * then resumed with no flags, runs its cells with the same cap and time, keeps the grids the
 * uninterrupted run has, and keeps the first command line; --resume refuses another k list and
 * another version's directory, naming both versions. */
#define CAPPED "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
               "--n", "32:256", "--k", "8:16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "-q"

static void keep_lines(const char *path, int lines)
{
    char *s = lb_slurp(path);
    if (!s)
        return;
    char *p = s;
    for (int i = 0; i < lines && (p = strchr(p, '\n')) != NULL; i++)
        p++;
    if (p)
        *p = '\0';
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(s, f);
        fclose(f);
    }
    free(s);
}

static void resume_keeps_settings(const char *scratch)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/capped", scratch);
    char *first[] = {(char *)bin, "sweep", CAPPED, "--out", dir, NULL};
    lb_run_ok(first, "capped sweep");
    char *command = sc_meta(dir, "command_line");
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    keep_lines(path, 5);
    LbRun r = resume(dir, NULL, NULL);
    lb_check(r.code == 0, "resume of the capped sweep exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_check_meta(dir, "max_batch", "2", "the resumed sweep");
    sc_check_meta(dir, "cell_time_s", "1", "the resumed sweep");
    LbCellResult *rows = NULL;
    size_t count = 0;
    if (lb_check(sc_read_rows(dir, &rows, &count) == 0 && count == 12, "12 cells after the resume (%zu)", count))
        for (size_t i = 0; i < count; i++)
            lb_check(rows[i].batch <= 2, "row %zu: the resumed cells keep the cap (batch %lld)", i, (long long)rows[i].batch);
    free(rows);
    LbGrid g;
    if (lb_check(lb_grids_read(dir, &g) == 0, "grids after the resume")) {
        for (size_t c = 0; c < g.rows * g.cols; c++)
            if (g.memory[c].kind == LB_GRID_VALUE)
                lb_check(g.memory[c].value == 1.0, "memory speedup %g: 1.00x, as uninterrupted (both capped at 2)", g.memory[c].value);
        lb_grid_free(&g);
    }
    lb_check(command != NULL, "the first run records its command line");
    sc_check_meta(dir, "command_line", command ? command : "", "the first command line is kept");
    sc_check_meta_has(dir, "resume_1_command", "--resume", "the resume's command is appended");
    char *when = sc_meta(dir, "resume_1_time");
    lb_check(when && when[0], "the resume's time is appended");
    free(command);
    free(when);

    /* --k 4 would rewrite both grids without the measured columns: refused. */
    char *grid_before = lb_slurp_in(dir, "time_speedup.csv");
    refused(dir, "--k", "4");
    refused(dir, "--cell-time", "10");
    refused(dir, "--max-batch", "64");
    lb_check(lb_same_text(grid_before, lb_slurp_in(dir, "time_speedup.csv")), "refused resumes leave the grid as it was");

    /* Another version's directory: refused, naming both versions. */
    char *version[] = {(char *)bin, "--version", NULL};
    r = lb_run(version);
    char mine[64] = "";
    sscanf(r.out, "linbench %63s", mine);
    lb_run_free(&r);
    fx_set_meta(dir, "linbench_version", "0.0.1-old");
    char *meta_before = lb_slurp_in(dir, "meta.csv");
    r = resume(dir, NULL, NULL);
    lb_check(r.code == 2 && strstr(r.err, "0.0.1-old") && mine[0] && strstr(r.err, mine) && lb_lines(r.err) == 1,
             "--resume of another version's directory: exit 2 naming both versions (%d): %s", r.code, r.err);
    lb_run_free(&r);
    lb_check(lb_same_text(meta_before, lb_slurp_in(dir, "meta.csv")), "and meta.csv is not overwritten");
}

/* A copy of the first row of dir/raw.csv for `model`, its field `field` (1 n, 2 k) set to value,
 * appended to the file; returns the line it went on. */
static int append_changed(const char *dir, const char *model, int field, const char *value)
{
    char path[600], prefix[64];
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    snprintf(prefix, sizeof prefix, "\n%s,", model);
    char *s = lb_slurp(path), *row = s ? strstr(s, prefix) : NULL;
    if (!row)
        return -1;
    row++;
    *strchr(row, '\n') = '\0';
    char *at = row;
    for (int i = 0; i < field; i++)
        at = strchr(at, ',') + 1;
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%.*s%s%s\n", (int)(at - row), row, value, strchr(at, ','));
        fclose(f);
    }
    free(s);
    s = lb_slurp(path); /* the appended row is its last line */
    const int lines = s ? lb_lines(s) : -1;
    free(s);
    return lines;
}

/* raw.csv rows the resumed settings did not produce (an n or a k not in meta.csv's lists) are
 * not kept by a resume: exit 2, one line naming the file, the line and the setting, nothing
 * changed; compare still reads the directory and says so in a note. */
static void resume_refuses_foreign_rows(const char *scratch)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/foreign", scratch);
    snprintf(path, sizeof path, "%s/raw.csv", dir);
    char *first[] = {(char *)bin, "sweep", CAPPED, "--out", dir, NULL};
    lb_run_ok(first, "sweep to add rows to");
    keep_lines(path, 4);
    static const struct {
        const char *model;
        int field;
        const char *value, *words;
    } cases[] = {{"standard", 1, "48", "n 48 is not in meta.csv's n_list (32,64,128,256)"},
                 {"linformer", 2, "12", "k 12 is not in meta.csv's k_list (8,16)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        keep_lines(path, 4);
        const int line = append_changed(dir, cases[i].model, cases[i].field, cases[i].value);
        char where[700];
        snprintf(where, sizeof where, "%s line %d: %s", path, line, cases[i].words);
        char *before = lb_slurp(path);
        LbRun r = resume(dir, NULL, NULL);
        lb_check(r.code == 2 && strstr(r.err, where) && lb_lines(r.err) == 1,
                 "--resume of a raw.csv with a %s row of another %s: exit 2, one line naming \"%s\" (%d): %s",
                 cases[i].model, cases[i].field == 1 ? "n" : "k", where, r.code, r.err);
        lb_run_free(&r);
        lb_check(lb_same_text(before, lb_slurp(path)), "the refused resume left raw.csv as it was");
        char *cmp[] = {(char *)bin, "compare", dir, NULL};
        r = lb_run(cmp);
        lb_check(r.code == 0 && strstr(r.err, "linbench: note: ") && strstr(r.err, where) && lb_lines(r.err) == 1,
                 "compare of it: exit 0 and one note naming \"%s\" (%d): %s", where, r.code, r.err);
        lb_run_free(&r);
    }
    keep_lines(path, 4); /* without them the resume goes on */
    LbRun r = resume(dir, NULL, NULL);
    lb_check(r.code == 0 && sc_rows(dir) == 12, "the resume of its own rows exits 0 with 12 rows (%d, %d): %s", r.code,
             sc_rows(dir), r.err);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_resume");
    const char *scratch = lb_scratch;
    char full[512], ctrlc[512], killed[512];
    snprintf(full, sizeof full, "%s/full", scratch);
    snprintf(ctrlc, sizeof ctrlc, "%s/ctrlc", scratch);
    snprintf(killed, sizeof killed, "%s/killed", scratch);

    char *whole[] = {(char *)bin, "sweep", GRID, "--out", full, NULL};
    lb_run_ok(whole, "uninterrupted sweep");
    sc_each_once(full, CELLS, "uninterrupted");

    /* Ctrl-C: exit 130, the finished cells and the grids on disk, a hint to resume. */
    LbRun r = interrupted(ctrlc, SIGINT, 3);
    lb_check(r.code == 130, "Ctrl-C exits 130 (got %d): %s", r.code, r.err);
    lb_check(strstr(r.err, "--resume") != NULL, "Ctrl-C says how to resume: %s", r.err);
    lb_run_free(&r);
    int kept = sc_rows(ctrlc);
    lb_check(kept >= 3 && kept < CELLS, "Ctrl-C kept the finished cells (%d)", kept);
    lb_check(lb_exists_in(ctrlc, "time_speedup.csv"), "Ctrl-C still wrote the grids");
    sc_check_meta(ctrlc, "status", "interrupted", "Ctrl-C");

    /* Settings that contradict meta.csv are refused before anything runs. */
    refused(ctrlc, "--dtype", "fp32");
    refused(ctrlc, "--layers", "3");
    refused(ctrlc, "--mem-limit", "16M");
    lb_check(sc_rows(ctrlc) == kept, "refused resumes measured nothing");
    r = resume(scratch, NULL, NULL);
    lb_check(r.code == 2 && strstr(r.err, "--resume"), "--resume on a directory without a sweep: exit 2 (%d): %s", r.code, r.err);
    lb_run_free(&r);

    /* Resume finishes the rest: the same cells as the uninterrupted run, each once. */
    r = resume(ctrlc, "--d-model", "32"); /* a flag that agrees with meta.csv is fine */
    lb_check(r.code == 0, "resume after Ctrl-C exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_each_once(ctrlc, CELLS, "Ctrl-C then --resume");

    /* kill -9: at most the cell in progress is lost. */
    r = interrupted(killed, SIGKILL, 2);
    lb_check(r.code == 128 + SIGKILL, "kill -9 ends the sweep (%d)", r.code);
    lb_run_free(&r);
    lb_check(sc_rows(killed) >= 2, "kill -9 kept the finished cells (%d)", sc_rows(killed));
    r = resume(killed, NULL, NULL);
    lb_check(r.code == 0, "resume after kill -9 exits 0 (%d): %s", r.code, r.err);
    lb_run_free(&r);
    sc_each_once(killed, CELLS, "kill -9 then --resume");

    /* A mangled meta.csv is refused. */
    fx_set_meta(killed, "layers", "many");
    r = resume(killed, NULL, NULL);
    lb_check(r.code == 2 && strstr(r.err, "--resume") && strstr(r.err, "meta.csv") && strstr(r.err, "layers") &&
                 !strstr(r.err, "--layers") && lb_lines(r.err) == 1,
             "--resume with an unreadable meta.csv value: exit 2 naming the file and key, not a flag never given (%d): %s", r.code, r.err);
    lb_run_free(&r);

    resume_keeps_settings(scratch);
    resume_refuses_foreign_rows(scratch);
    return lb_test_finish("test_cli_resume");
}
