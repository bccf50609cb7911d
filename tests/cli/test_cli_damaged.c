/* A result directory damaged after the sweep, read by every command that reads one: compare,
 * plot, merge (as a part) and sweep --resume.
 * - meta.csv cut short (a copy cut off: no settings, no device) and meta.csv with a value that
 *   does not read: each command refuses it with exit 2, one line naming the file and the key,
 *   nothing written (merge's OUT not made, plot's --out not made, meta.csv not rewritten);
 * - raw.csv with a row that does not read: the same exit 2, naming the file and line, for each;
 * - raw.csv whose last row is cut short (no newline): compare, plot and merge go on (exit 0, the
 *   whole rows shown) with one warning naming the file, the line and sweep --resume DIR; the
 *   resume drops the line and measures the cell again, after which compare says nothing.
 * Usage: test_cli_damaged PATH-TO-LINBENCH */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/raw.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *bin;
static const char *scratch;

#define GRID "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--n", "32:64", "--k", "8,16", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "-q"
#define CELLS 6 /* n 32 and 64: 2 standard + 2 * 2 Linformer */

static int write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = fwrite(text, 1, len, f);
    return fclose(f) == 0 && put == len ? 0 : -1;
}

/* dir made anew holding the original's raw.csv and meta.csv; *raw_text / *meta_text their text. */
static void copy_result(const char *from, const char *to, char **raw_text, char **meta_text)
{
    char path[1024];
    mkdir(to, 0755);
    snprintf(path, sizeof path, "%s/raw.csv", from);
    *raw_text = lb_slurp(path);
    snprintf(path, sizeof path, "%s/meta.csv", from);
    *meta_text = lb_slurp(path);
    snprintf(path, sizeof path, "%s/raw.csv", to);
    lb_check(*raw_text && write_text(path, *raw_text, strlen(*raw_text)) == 0, "%s written", path);
    snprintf(path, sizeof path, "%s/meta.csv", to);
    lb_check(*meta_text && write_text(path, *meta_text, strlen(*meta_text)) == 0, "%s written", path);
}

static LbRun linbench(const char *cmd, const char *a, const char *b, const char *c, const char *d)
{
    char *argv[] = {(char *)bin, (char *)cmd, (char *)a, (char *)b, (char *)c, (char *)d, NULL};
    return lb_run(argv);
}

/* Each command that reads `dir` refuses it: exit 2, one line naming `file` (DIR/meta.csv) and
 * `key`, nothing written. */
static void refused_by_all(const char *dir, const char *file, const char *key, const char *what)
{
    char out[1024], plot_out[1024], path[1024];
    snprintf(out, sizeof out, "%s-merged", dir);
    snprintf(plot_out, sizeof plot_out, "%s-plots", dir);
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    char *meta_before = lb_slurp(path);
    LbRun r[4] = {linbench("compare", dir, NULL, NULL, NULL), linbench("plot", dir, "--no-render", "--out", plot_out),
                  linbench("merge", "-q", out, dir, NULL), linbench("sweep", "--resume", dir, "-q", NULL)};
    static const char *const name[4] = {"compare", "plot", "merge", "sweep --resume"};
    for (int i = 0; i < 4; i++) {
        lb_check(r[i].code == 2, "%s of %s: exit %d: should be 2 (%s)", name[i], what, r[i].code, r[i].err);
        lb_check(lb_lines(r[i].err) == 1 && strstr(r[i].err, file) && strstr(r[i].err, key) &&
                     strstr(r[i].err, dir),
                 "%s of %s: stderr should be one line naming %s and %s, got: %s", name[i], what, file, key, r[i].err);
        lb_check(r[i].out[0] == '\0', "%s of %s: nothing on stdout, got: %s", name[i], what, r[i].out);
        lb_run_free(&r[i]);
    }
    lb_check(!lb_exists(out), "merge of %s: %s not made", what, out);
    lb_check(!lb_exists(plot_out), "plot of %s: %s not made", what, plot_out);
    char *meta_after = lb_slurp(path);
    lb_check(meta_before && meta_after && strcmp(meta_before, meta_after) == 0,
             "sweep --resume of %s: meta.csv not rewritten", what);
    free(meta_before);
    free(meta_after);
}

int main(int argc, char **argv)
{
    lb_test_init("test_cli_damaged");
    if (argc < 2) {
        printf("usage: test_cli_damaged PATH-TO-LINBENCH\n");
        return 1;
    }
    bin = argv[1];
    scratch = lb_scratch_dir("cli-damaged");
    char whole[512], dir[512], file[600];
    snprintf(whole, sizeof whole, "%s/whole", scratch);
    char *sweep_argv[] = {(char *)bin, "sweep", GRID, "--out", whole, NULL};
    LbRun r = lb_run(sweep_argv);
    if (!lb_check(r.code == 0, "the sweep to damage: exit %d: %s", r.code, r.err)) {
        lb_run_free(&r);
        return lb_test_finish("test_cli_damaged");
    }
    lb_run_free(&r);
    char *raw_text, *meta_text;

    /* meta.csv cut after its status line: no device, no setting. */
    snprintf(dir, sizeof dir, "%s/meta-cut", scratch);
    copy_result(whole, dir, &raw_text, &meta_text);
    const char *status = meta_text ? strstr(meta_text, "\nstatus,") : NULL;
    const char *cut = status ? strchr(status + 1, '\n') : NULL;
    snprintf(file, sizeof file, "%s/meta.csv", dir);
    lb_check(cut && write_text(file, meta_text, (size_t)(cut + 1 - meta_text)) == 0, "meta.csv cut after status");
    refused_by_all(dir, file, "n_list", "a meta.csv cut short");
    free(raw_text);
    free(meta_text);

    /* meta.csv whole but for one value. */
    snprintf(dir, sizeof dir, "%s/meta-bad", scratch);
    copy_result(whole, dir, &raw_text, &meta_text);
    char *at = meta_text ? strstr(meta_text, "\nd_model,16\n") : NULL;
    if (lb_check(at != NULL, "meta.csv holds d_model,16")) {
        char bad[8192];
        snprintf(bad, sizeof bad, "%.*s\nd_model,banana\n%s", (int)(at - meta_text), meta_text, at + 12);
        snprintf(file, sizeof file, "%s/meta.csv", dir);
        lb_check(write_text(file, bad, strlen(bad)) == 0, "d_model set to banana");
        refused_by_all(dir, file, "d_model", "a meta.csv value that does not read");
    }
    free(raw_text);
    free(meta_text);

    /* raw.csv with a row that does not read (line 3: its batch). */
    snprintf(dir, sizeof dir, "%s/raw-bad", scratch);
    copy_result(whole, dir, &raw_text, &meta_text);
    char *line3 = raw_text ? strchr(strchr(raw_text, '\n') + 1, '\n') : NULL;
    if (lb_check(line3 != NULL, "raw.csv has a third line")) {
        /* model,n,k,sharing,order,dtype,batch: the seventh field */
        char *field = line3 + 1;
        for (int i = 0; i < 6 && field; i++)
            field = strchr(field, ',') + 1;
        char bad[65536];
        size_t end = strcspn(field, ",");
        snprintf(bad, sizeof bad, "%.*sbanana%s", (int)(field - raw_text), raw_text, field + end);
        snprintf(file, sizeof file, "%s/raw.csv", dir);
        lb_check(write_text(file, bad, strlen(bad)) == 0, "raw.csv line 3's batch set to banana");
        refused_by_all(dir, file, "line 3", "a raw.csv row that does not read");
    }
    free(raw_text);
    free(meta_text);

    /* raw.csv's last row cut short, without its newline: meta.csv still says complete. */
    snprintf(dir, sizeof dir, "%s/raw-cut", scratch);
    copy_result(whole, dir, &raw_text, &meta_text);
    size_t len = raw_text ? strlen(raw_text) : 0;
    if (lb_check(len > 2 && meta_text && strstr(meta_text, "\nstatus,complete\n"), "a complete sweep to cut")) {
        size_t last = len - 1;
        while (last > 0 && raw_text[last - 1] != '\n')
            last--;
        snprintf(file, sizeof file, "%s/raw.csv", dir);
        lb_check(write_text(file, raw_text, last + (len - last) / 2) == 0, "raw.csv's last row cut in half");
        char want[700];
        snprintf(want, sizeof want, "%s line %d is cut short", file, CELLS + 1);
        char resume_hint[700];
        snprintf(resume_hint, sizeof resume_hint, "linbench sweep --resume %s", dir);
        char out[600], plot_out[600];
        snprintf(out, sizeof out, "%s-merged", dir);
        snprintf(plot_out, sizeof plot_out, "%s-plots", dir);
        LbRun w[3] = {linbench("compare", dir, "--format", "csv", NULL),
                      linbench("plot", dir, "--no-render", "--out", plot_out), linbench("merge", "-q", out, dir, NULL)};
        static const char *const name[3] = {"compare", "plot", "merge"};
        for (int i = 0; i < 3; i++) {
            lb_check(w[i].code == 0, "%s of a cut raw.csv: exit %d: should be 0 (%s)", name[i], w[i].code, w[i].err);
            lb_check(strncmp(w[i].err, "linbench: warning: ", 19) == 0 && strstr(w[i].err, want) &&
                         strstr(w[i].err, resume_hint),
                     "%s of a cut raw.csv: a warning with \"%s\" and \"%s\", got: %s", name[i], want, resume_hint,
                     w[i].err);
        }
        /* what is whole is still shown: the cut cell is linformer n=64 k=16 (the sweep's last) */
        lb_check(strstr(w[0].out, "time,32,8,") && strstr(w[0].out, "time,64,8,") && strstr(w[0].out, "time,64,16,NA"),
                 "compare shows the whole rows, the cut cell NA:\n%s", w[0].out);
        for (int i = 0; i < 3; i++)
            lb_run_free(&w[i]);
        r = linbench("sweep", "--resume", dir, "-q", NULL);
        lb_check(r.code == 0, "sweep --resume of a cut raw.csv: exit %d: %s", r.code, r.err);
        lb_run_free(&r);
        LbCellResult *rows = NULL;
        size_t count = 0;
        lb_check(lb_raw_read(file, &rows, &count) == 0 && count == CELLS, "after the resume raw.csv has %d rows (%zu)",
                 CELLS, count);
        free(rows);
        r = linbench("compare", dir, "--format", "csv", NULL);
        lb_check(r.code == 0 && r.err[0] == '\0' && strstr(r.out, "time,64,16,") && !strstr(r.out, "time,64,16,NA"),
                 "compare after the resume: exit %d, no warning, the cell measured: %s%s", r.code, r.err, r.out);
        lb_run_free(&r);
    }
    free(raw_text);
    free(meta_text);

    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_damaged");
}
