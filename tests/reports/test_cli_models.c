/* compare and plot on a sweep of every model kind the table has (meta.csv's models lists them
 * all): compare keeps Table 3 and adds each other model against standard (and chunked where the
 * table has it), for one sweep and for two; plot keeps its three figures, draws one time line per
 * model and k, and adds a heatmap pair per other model with a k axis and a line figure per other
 * model without. With only the paper's two models nothing is added. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"
#include "reports/csv_io.h"
#include "reports/speedups.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static int exists(const char *dir, const char *name)
{
    char path[8400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_cli_models LINBENCH\n");
        return 1;
    }
    char *exe = argv[1];
    const char *scratch = lb_scratch_dir("cli-models");
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/sweep", scratch);

    /* Every model at n = 256, 512 and k = 128 where it has one (times and batches that differ per
     * model, so each ratio is a number). */
    LbCellResult rows[2 * LB_MODEL_COUNT];
    size_t count = 0;
    const int64_t ns[2] = {256, 512};
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        for (int i = 0; i < 2; i++)
            rows[count++] = fx_row((LbModelKind)m, ns[i], 128, 10 + 7 * m + i, 1.0 + 0.37 * m + 0.11 * i, LB_CELL_OK);
    lb_check(fx_sweep_dir(dir, rows, count, "256,512", "128", "Tesla V100-SXM2-16GB") == 0, "made a sweep directory");
    char list[512] = "", meta_path[4300];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", m ? "," : "", lb_model_name((LbModelKind)m));
    snprintf(meta_path, sizeof meta_path, "%s/meta.csv", dir);
    LbMeta meta = {0};
    lb_check(lb_meta_read(meta_path, &meta) == LB_OK && lb_meta_set(&meta, "models", "%s", list) == LB_OK &&
                 lb_meta_write(meta_path, &meta) == LB_OK,
             "meta.csv's models set to %s", list);
    lb_meta_free(&meta);

    int all[LB_MODEL_COUNT];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        all[m] = 1;
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    size_t np = lb_speedup_pairs(all, pairs);

    /* compare: one sweep. */
    char *one[] = {exe, "compare", dir, NULL};
    LbRun r = lb_run(one);
    lb_check(r.code == 0, "compare: exit %d: %s", r.code, r.err);
    lb_check(strstr(r.out, "Time saved (ms per sequence, standard / Linformer)") != NULL, "compare keeps Table 3:\n%s", r.out);
    int others = 0;
    for (size_t p = 0; p < np; p++) {
        if (pairs[p].model == LB_MODEL_LINFORMER && pairs[p].baseline == LB_MODEL_STANDARD)
            continue;
        others++;
        char want[128];
        snprintf(want, sizeof want, "%s against %s", lb_model_name(pairs[p].model), lb_model_name(pairs[p].baseline));
        lb_check(strstr(r.out, want) != NULL, "compare shows \"%s\":\n%s", want, r.out);
    }
    lb_check((strstr(r.out, "Every other model") != NULL) == (others > 0), "the other models' section %s:\n%s",
             others ? "shown" : "absent with only the paper's two", r.out);
    lb_run_free(&r);

    /* compare: two sweeps, B / A for every comparison. */
    char *two[] = {exe, "compare", dir, dir, NULL};
    r = lb_run(two);
    lb_check(r.code == 0, "compare A B: exit %d: %s", r.code, r.err);
    for (size_t p = 0; p < np; p++) {
        char want[160];
        const char *mname = pairs[p].model == LB_MODEL_LINFORMER && pairs[p].baseline == LB_MODEL_STANDARD
                                ? "Linformer"
                                : lb_model_name(pairs[p].model);
        snprintf(want, sizeof want, "Time saved (ms per sequence, %s / %s)", lb_model_name(pairs[p].baseline), mname);
        lb_check(strstr(r.out, want) != NULL, "compare A B shows \"%s\"", want);
    }
    lb_run_free(&r);

    /* plot: the paper's three figures, then one per other model. */
    char *plot[] = {exe, "plot", dir, "--no-render", NULL};
    r = lb_run(plot);
    lb_check(r.code == 0, "plot: exit %d: %s", r.code, r.err);
    const char *paper[] = {"time_speedup.gp", "memory_speedup.gp", "time_per_seq.gp"};
    for (int i = 0; i < 3; i++)
        lb_check(exists(dir, paper[i]) && strstr(r.out, paper[i]), "plot wrote and named %s: %s", paper[i], r.out);
    size_t columns = 1 + (size_t)LB_MODEL_COUNT; /* n, then one line per model: one k in the list */
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        if (m == LB_MODEL_STANDARD || m == LB_MODEL_LINFORMER)
            continue;
        char name[2][96];
        const char *mn = lb_model_name((LbModelKind)m);
        int figs = lb_model_has_k((LbModelKind)m) ? 2 : 1;
        if (figs == 2) {
            snprintf(name[0], sizeof name[0], "time_speedup_%s.gp", mn);
            snprintf(name[1], sizeof name[1], "memory_speedup_%s.gp", mn);
        } else {
            snprintf(name[0], sizeof name[0], "speedup_%s.gp", mn);
        }
        for (int f = 0; f < figs; f++)
            lb_check(exists(dir, name[f]) && strstr(r.out, name[f]), "plot wrote and named %s: %s", name[f], r.out);
    }
    lb_run_free(&r);

    /* The time figure's data: a column per model and k, the paper's two first. */
    char path[4300];
    snprintf(path, sizeof path, "%s/time_per_seq.plot.csv", dir);
    LbCsvTable t;
    int rc = lb_csv_read_file(path, 0, &t);
    if (lb_check(rc == LB_OK && t.rows == 3, "time_per_seq.plot.csv: %zu records: should be 3", t.rows)) {
        lb_check(t.row[0].count == columns, "time_per_seq.plot.csv: %zu columns: should be %zu", t.row[0].count, columns);
        lb_check(t.row[0].count > 2 && strcmp(t.row[0].fields[1], "standard") == 0 &&
                     strcmp(t.row[0].fields[2], "linformer k=128") == 0,
                 "the paper's two first, each column naming its model");
        /* Each model's time at n = 512, in table order. */
        for (size_t c = 1; c < t.row[2].count && c <= (size_t)LB_MODEL_COUNT; c++) {
            double v = 0, want = 1.0 + 0.37 * (double)(c - 1) + 0.11;
            lb_check(lb_csv_parse_double(t.row[2].fields[c], &v) == 0 && v > want * (1 - 1e-5) && v < want * (1 + 1e-5),
                     "time_per_seq n=512 column %zu: \"%s\": should be %.6g", c, t.row[2].fields[c], want);
        }
    }
    lb_csv_table_free(&t);

    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_models");
}
