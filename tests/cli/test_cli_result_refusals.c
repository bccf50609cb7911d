/* A result directory whose files say what no sweep of its settings wrote, refused before anything
 * is written: sweep --resume with meta.csv's memory_budget_bytes edited outside --mem-limit's range
 * (the missing cells were written as OOM rows, status complete), with a raw.csv it cannot write
 * (meta.csv was rewritten as failed first), with a row of another dtype, sharing or order (taken as
 * the cell's: only model, n and k were compared), with a breakdown.csv that does not read (a row
 * appended, then exit 1); compare, plot and merge on that breakdown.csv (bad input: exit 2); and plot's
 * render hint for a directory named -hd (gnuplot reads -hd/... as an option).
 * Usage: test_cli_result_refusals PATH-TO-LINBENCH */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/meta.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static char bin[PATH_MAX];
#define ARGV(...) LB_ARGV(bin, __VA_ARGS__)
/* 4 cells (standard and linformer at n 32 and 64), a breakdown.csv, in well under a second */
#define SWEEP "sweep", "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", \
              "--vocab", "100", "--n", "32,64", "--k", "8", "--mem-limit", "8M", "--max-batch", "2",        \
              "--cell-time", "1", "--no-check", "--breakdown", "-q"

/* dir/name cut to its first `lines` lines. */
static void keep_lines(const char *dir, const char *name, int lines)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *s = lb_slurp(path), *p = s;
    for (int i = 0; p && i < lines && (p = strchr(p, '\n')) != NULL; i++)
        p++;
    lb_check(p && truncate(path, p - s) == 0, "%s cut to %d lines", path, lines);
    free(s);
}

/* A sweep into dir with its last cell not measured yet: a resume would measure it. */
static void unfinished(const char *dir)
{
    lb_run_ok(ARGV(SWEEP, "--out", (char *)dir), "the sweep to resume");
    keep_lines(dir, "raw.csv", 4);
}

/* dir/name's line `line` with its first `from` replaced by `to`. */
static void edit_line(const char *dir, const char *name, int line, const char *from, const char *to)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *s = lb_slurp(path), *at = s;
    for (int i = 1; at && i < line; i++)
        at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
    char *hit = at ? strstr(at, from) : NULL;
    FILE *f = hit ? fopen(path, "w") : NULL;
    if (lb_check(f != NULL, "%s line %d holds \"%s\"", path, line, from)) {
        fprintf(f, "%.*s%s%s", (int)(hit - s), s, to, hit + strlen(from));
        fclose(f);
    }
    free(s);
}

static void set_meta(const char *dir, const char *key, const char *value)
{
    char path[600];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbMeta m = {0};
    lb_check(lb_meta_read(path, &m) == 0 && lb_meta_set(&m, key, "%s", value) == 0 && lb_meta_write(path, &m) == 0,
             "%s: %s set to %s", path, key, value);
    lb_meta_free(&m);
}

/* sweep --resume dir, refused (exit 2, one line naming every word), meta.csv and raw.csv as they were. */
static void resume_refused(const char *dir, const char *what, const char *word)
{
    char *meta = lb_slurp_in(dir, "meta.csv"), *raw = lb_slurp_in(dir, "raw.csv");
    lb_check_refusal(lb_run(ARGV("sweep", "--resume", (char *)dir, "-q")), what, "--resume", word);
    lb_check(lb_same_text(meta, lb_slurp_in(dir, "meta.csv")), "%s: meta.csv as it was", what);
    lb_check(lb_same_text(raw, lb_slurp_in(dir, "raw.csv")), "%s: raw.csv as it was", what);
}

static void budget_out_of_range(void)
{
    unfinished("budget");
    set_meta("budget", "memory_budget_bytes", "1");
    resume_refused("budget", "--resume with a memory_budget_bytes of 1", "memory_budget_bytes is \"1\"");
    set_meta("budget", "memory_budget_bytes", "16777216"); /* above its --mem-limit 8M */
    resume_refused("budget", "--resume with a budget above its mem_limit", "memory_budget_bytes is \"16777216\"");
    /* a sound directory resumed with another --mem-limit: the flag is named, not the budget */
    unfinished("budget-flag");
    LbRun r = lb_run(ARGV("sweep", "--resume", "budget-flag", "--mem-limit", "4M", "-q"));
    lb_check(r.code == 2 && strstr(r.err, "--mem-limit") && !strstr(r.err, "memory_budget_bytes"),
             "--resume --mem-limit 4M of an 8M sweep: exit %d, should be 2 naming --mem-limit, not the budget: %s", r.code,
             r.err);
    lb_run_free(&r);
}

static void raw_unwritable(void)
{
    unfinished("linked");
    lb_check(link("linked/raw.csv", "raw-link.csv") == 0, "raw.csv hard-linked");
    char *meta = lb_slurp_in("linked", "meta.csv");
    LbRun r = lb_run(ARGV("sweep", "--resume", "linked", "-q", "--no-check"));
    lb_check(r.code == 1 && strstr(r.err, "raw.csv"), "--resume with a hard-linked raw.csv: exit %d, should be 1 naming raw.csv: %s",
             r.code, r.err);
    lb_run_free(&r);
    lb_check(lb_same_text(meta, lb_slurp_in("linked", "meta.csv")), "the refused resume left meta.csv as it was");
    unlink("raw-link.csv");
}

static void rows_of_other_settings(void)
{
    static const struct {
        int line;
        const char *from, *to, *words;
    } cases[] = {{2, ",fp16,", ",fp32,", "line 2: dtype fp32 is not meta.csv's dtype (fp16)"},
                 {3, ",layerwise,early,", ",kv,late,", "line 3: sharing kv is not meta.csv's sharing (layerwise)"},
                 {3, ",early,", ",late,", "line 3: order late is not meta.csv's order (early)"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unfinished("other");
        edit_line("other", "raw.csv", cases[i].line, cases[i].from, cases[i].to);
        resume_refused("other", cases[i].words, cases[i].words);
        LbRun r = lb_run(ARGV("compare", "other"));
        lb_check(r.code == 0 && strstr(r.err, "note: ") && strstr(r.err, cases[i].words),
                 "compare notes a row of %s: exit %d: %s", cases[i].to, r.code, r.err);
        lb_run_free(&r);
        lb_test_rmtree("other");
    }
}

static void breakdown_unreadable(void)
{
    unfinished("broken");
    edit_line("broken", "breakdown.csv", 2, ",32,", ",abc,");
    resume_refused("broken", "--resume with a breakdown.csv that does not read", "breakdown.csv line 2");
    lb_run_refused(ARGV("compare", "broken"), "breakdown.csv line 2");
    lb_run_refused(ARGV("plot", "--no-render", "broken"), "breakdown.csv line 2");
    lb_run_refused(ARGV("merge", "merged", "broken"), "breakdown.csv line 2");
    lb_check(!lb_exists("merged"), "the refused merge made no directory");
}

static void plot_hint_dash(void)
{
    lb_run_ok(ARGV(SWEEP, "--out", "-hd"), "a sweep into -hd");
    LbRun r = lb_run(ARGV("plot", "--no-render", "--", "-hd"));
    lb_check(r.code == 0 && strstr(r.out, " ./-hd/time_speedup.gp") && !strstr(r.out, " -hd/"),
             "plot --no-render -- -hd: exit %d, should hint gnuplot ./-hd/time_speedup.gp: %s%s", r.code, r.out, r.err);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    const char *given = lb_cli_start(argc, argv, "test_cli_result_refusals");
    lb_check(realpath(given, bin) != NULL, "%s: its absolute path", given);
    char cwd[4200];
    snprintf(cwd, sizeof cwd, "%s/cwd", lb_scratch);
    lb_check(mkdir(cwd, 0755) == 0 && chdir(cwd) == 0, "working in %s", cwd);
    budget_out_of_range();
    raw_unwritable();
    rows_of_other_settings();
    breakdown_unreadable();
    plot_hint_dash();
    lb_check(chdir("/") == 0, "left %s", cwd);
    lb_test_cleanup(lb_scratch);
    return lb_test_finish("test_cli_result_refusals");
}
