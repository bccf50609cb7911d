/* speedups.csv against ratios computed here from the raw rows (random batches and times, OOM,
 * failed and missing cells), for every model kind the table has when the test is built: each
 * model against every exact baseline the table ranks (standard, chunked, flash), a baseline only
 * against those ranked before it; k empty for a model without a k
 * axis; cells a model lacks left out. Table 3's two files stay byte for byte what Linformer's and
 * the standard model's rows alone give (and what they gave before other models existed). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "reports/grid.h"
#include "reports/speedups.h"
#include "tests/lib/check.h"
#include "tests/reports/expect.h"
#include "tests/reports/fixture.h"

/* A random row: OOM or failed one time in twenty; energy on three ok rows in four, the fourth as a
 * device without a counter leaves it. */
static LbCellResult make_row(LbModelKind m, int64_t n, int64_t k)
{
    const uint64_t u = lb_test_u64() % 20;
    LbCellResult r = fx_row(m, n, k, (int64_t)(lb_test_u64() % 300) + 1, 0.01 + (double)(lb_test_u64() % 1000000) / 1e4,
                            u == 0 ? LB_CELL_OOM : u == 1 ? LB_CELL_ERROR : LB_CELL_OK);
    r.power_w = r.energy_j_per_seq = NAN;
    if (r.status == LB_CELL_OK && lb_test_u64() % 4 != 0) {
        r.power_w = 50 + (double)(lb_test_u64() % 6000) / 10;
        r.energy_j_per_seq = r.power_w * r.ms_per_seq / 1e3;
    }
    return r;
}

static void check_table3_unchanged(const LbCellResult *rows, size_t count, const char *dir)
{
    /* Fixed rows whose files were written by the two-model code before speedups.csv existed. */
    LbCellResult fixed[] = {FX_STD(512, 40, 2.0), FX_LIN(512, 128, 70, 1.25), FX_LIN(512, 256, 60, 1.6),
                            FX_STD(1024, 12, 8.0), fx_row(LB_MODEL_LINFORMER, 1024, 128, 0, 0, LB_CELL_OOM),
                            fx_row(LB_MODEL_LINFORMER, 1024, 256, 0, 0, LB_CELL_ERROR)};
    fixed[0].energy_j_per_seq = 4.0, fixed[1].energy_j_per_seq = 1.0, fixed[3].energy_j_per_seq = 16.0;
    fixed[2].energy_j_per_seq = NAN; /* no counter: the cell is NA, its time and memory still numbers */
    const int64_t n[] = {512, 1024}, k[] = {128, 256, 1024};
    LbGrid g;
    int rc = lb_grid_from_raw(fixed, 6, n, 2, k, 3, &g);
    if (rc == LB_OK)
        rc = lb_grids_write(dir, &g);
    lb_grid_free(&g);
    lb_check(rc == LB_OK, "Table 3 files of fixed rows: %s", lb_error_message());
    static const char *const files[3][2] = {
        {"time_speedup.csv", "n,k=128,k=256,k=1024\n512,1.6,1.25,\n1024,OOM,ERR,\n"},
        {"memory_speedup.csv", "n,k=128,k=256,k=1024\n512,1.75,1.5,\n1024,OOM,ERR,\n"},
        {"energy_speedup.csv", "n,k=128,k=256,k=1024\n512,4,NA,\n1024,OOM,ERR,\n"}};
    for (int f = 0; f < 3; f++) {
        char *text = lb_slurp_in(dir, files[f][0]);
        lb_check(text && strcmp(text, files[f][1]) == 0, "%s:\n%s", files[f][0], text ? text : "(none)");
        free(text);
    }

    /* The random rows of every model give the files the paper's two models' rows alone give. */
    LbCellResult *two = malloc(count * sizeof *two);
    size_t ntwo = 0;
    for (size_t i = 0; two && i < count; i++)
        if (rows[i].model == LB_MODEL_STANDARD || rows[i].model == LB_MODEL_LINFORMER)
            two[ntwo++] = rows[i];
    char *texts[2][2] = {{NULL, NULL}, {NULL, NULL}};
    for (int pass = 0; pass < 2; pass++) {
        rc = lb_grid_from_raw(pass ? two : rows, pass ? ntwo : count, NULL, 0, NULL, 0, &g);
        if (rc == LB_OK)
            rc = lb_grids_write(dir, &g);
        lb_grid_free(&g);
        lb_check(rc == LB_OK, "Table 3 files, pass %d: %s", pass, lb_error_message());
        texts[pass][0] = lb_slurp_in(dir, "time_speedup.csv");
        texts[pass][1] = lb_slurp_in(dir, "memory_speedup.csv");
    }
    for (int f = 0; f < 2; f++) {
        lb_check(texts[0][f] && texts[1][f] && strcmp(texts[0][f], texts[1][f]) == 0,
                 "%s with every model's rows differs from the paper's two models' rows alone:\n%s\n---\n%s",
                 f ? "memory_speedup.csv" : "time_speedup.csv", texts[0][f] ? texts[0][f] : "", texts[1][f] ? texts[1][f] : "");
        free(texts[0][f]);
        free(texts[1][f]);
    }
    free(two);
}

/* Whether speedups.csv compares model with baseline: baseline is one of the table's exact
 * baselines, model another model, and not a baseline ranked before it (that pair is the inverse
 * of one listed). */
static int compared(LbModelKind model, LbModelKind baseline)
{
    const int rb = lb_model_baseline(baseline), rm = lb_model_baseline(model);
    return rb > 0 && model != baseline && !(rm > 0 && rm < rb);
}

int main(void)
{
    lb_test_init("test_speedups");

    /* Rows for every kind at every n (and k), a second row for some cells (the last one counts)
     * and a few cells never measured. */
    const int64_t n[] = {64, 128, 256}, k[] = {32, 128, 512};
    LbCellResult rows[LB_MODEL_COUNT * 3 * 3 * 2 + 4];
    size_t count = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        for (size_t i = 0; i < 3; i++) {
            for (size_t j = 0; j < (lb_model_has_k((LbModelKind)m) ? 3u : 1u); j++) {
                if (!lb_model_cell_exists((LbModelKind)m, n[i], k[j]) || lb_test_u64() % 8 == 0)
                    continue;
                rows[count++] = make_row((LbModelKind)m, n[i], k[j]);
                if (lb_test_u64() % 6 == 0)
                    rows[count++] = make_row((LbModelKind)m, n[i], k[j]);
            }
        }
    }
    /* Last rows (the ones that count) that make the energy column hold both kinds whatever the
     * seed: a pair with both energies at n 64, a standard without one at n 128. */
    const LbCellResult last[] = {FX_STD(64, 10, 2.0), FX_LIN(64, 32, 20, 1.0), FX_STD(128, 10, 2.0), FX_LIN(128, 32, 20, 1.0)};
    for (size_t i = 0; i < 4; i++) {
        rows[count] = last[i];
        rows[count].power_w = i == 2 ? NAN : 100.0;
        rows[count].energy_j_per_seq = rows[count].power_w * rows[count].ms_per_seq / 1e3;
        count++;
    }

    char *dir = lb_test_tempdir("speedups");
    int rc = lb_speedups_write(dir, rows, count, n, 3, k, 3, NULL);
    lb_check(rc == LB_OK, "lb_speedups_write = %d: %s", rc, lb_error_message());
    char path[4200];
    snprintf(path, sizeof path, "%s/speedups.csv", dir);
    LbCsvTable t;
    memset(&t, 0, sizeof t);
    rc = lb_csv_read_file(path, 0, &t);
    lb_check(rc == LB_OK && t.rows >= 1, "speedups.csv read back: %d", rc);

    int measured[LB_MODEL_COUNT] = {0};
    for (size_t r = 0; r < count; r++)
        measured[rows[r].model] = 1;
    /* How many rows each (model, baseline) should give: every cell the model has. */
    size_t want_rows = 0;
    for (int b = 0; b < LB_MODEL_COUNT; b++) {
        for (int m = 0; measured[b] && m < LB_MODEL_COUNT; m++) {
            if (!compared((LbModelKind)m, (LbModelKind)b) || !measured[m])
                continue;
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < (lb_model_has_k((LbModelKind)m) ? 3u : 1u); j++)
                    want_rows += lb_model_cell_exists((LbModelKind)m, n[i], k[j]) != 0;
        }
    }
    if (rc == LB_OK && t.rows >= 1) {
        static const char header[] = "model,baseline,n,k,time_speedup,memory_speedup,energy_speedup\n";
        char *text = lb_slurp(path);
        lb_check(text && strncmp(text, header, sizeof header - 1) == 0, "header should be %s", header);
        free(text);
        lb_check(t.rows - 1 == want_rows, "%zu rows: should be %zu", t.rows - 1, want_rows);
        size_t values = 0, energy_values = 0;
        for (size_t r = 1; r < t.rows; r++) {
            char **f = t.row[r].fields;
            if (!lb_check(t.row[r].count == LB_SPEEDUPS_COLUMNS, "line %zu: %zu fields", t.line[r], t.row[r].count))
                continue;
            LbModelKind m, b;
            long long nv = 0, kv = 0;
            int ok = lb_check(lb_model_parse(f[0], &m) == 0 && lb_model_parse(f[1], &b) == 0 && m != b,
                              "line %zu: model \"%s\" baseline \"%s\"", t.line[r], f[0], f[1]);
            ok = ok && lb_check(compared(m, b), "line %zu: %s against %s: not a pair the file holds", t.line[r], f[0],
                                f[1]);
            ok = ok && lb_check(lb_csv_parse_int64(f[2], &nv) == 0, "line %zu: n \"%s\"", t.line[r], f[2]);
            ok = ok && lb_check(lb_model_has_k(m) ? lb_csv_parse_int64(f[3], &kv) == 0 : f[3][0] == '\0',
                                "line %zu: %s k \"%s\": should be %s", t.line[r], f[0], f[3],
                                lb_model_has_k(m) ? "a number" : "empty");
            if (!ok)
                continue;
            const LbCellResult *mr = ex_last(rows, count, m, nv, kv), *br = ex_last(rows, count, b, nv, kv);
            static const char *const what[3] = {"time", "memory", "energy"};
            for (int x = 0; x < 3; x++) {
                /* exactly the text the writer's number format gives the ratio worked out here */
                const ExCell c = ex_pair(br, mr, x);
                char want[64];
                if (c.num)
                    lb_csv_format_double(c.v, want, sizeof want);
                else
                    snprintf(want, sizeof want, "%s", c.mark);
                lb_check(strcmp(f[4 + x], want) == 0, "line %zu (%s/%s n=%lld k=%lld): %s \"%s\": should be %s",
                         t.line[r], f[0], f[1], nv, kv, what[x], f[4 + x], want);
            }
            values += strcmp(f[4], "NA") && strcmp(f[4], "OOM") && strcmp(f[4], "ERR");
            energy_values += strcmp(f[6], "NA") && strcmp(f[6], "OOM") && strcmp(f[6], "ERR");
        }
        lb_check(values > 0, "some rows hold numbers");
        lb_check(energy_values > 0 && energy_values < values, "%zu rows of %zu hold an energy ratio: should be some, not all",
                 energy_values, values);
    }
    lb_csv_table_free(&t);

    /* lb_speedup_pairs: never a model against itself nor a baseline against a later one, a
     * baseline only when measured. With every model of the table measured and B baselines, each
     * baseline takes the M - 1 others less the baselines ranked before it. */
    int all[LB_MODEL_COUNT], bases = 0;
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        all[m] = 1;
        bases += lb_model_baseline((LbModelKind)m) > 0;
    }
    LbSpeedupPair pairs[LB_SPEEDUP_PAIRS_MAX];
    size_t np = lb_speedup_pairs(all, pairs);
    lb_check(np == (size_t)(bases * (LB_MODEL_COUNT - 1) - bases * (bases - 1) / 2), "%zu pairs for %d models, %d baselines",
             np, (int)LB_MODEL_COUNT, bases);
    for (size_t p = 0; p < np; p++)
        lb_check(compared(pairs[p].model, pairs[p].baseline), "pair %zu: %s against %s", p, lb_model_name(pairs[p].model),
                 lb_model_name(pairs[p].baseline));
    LbModelKind chunked;
    if (lb_model_parse("chunked", &chunked) == 0 && lb_model_baseline(chunked) > 0) {
        all[chunked] = 0;
        np = lb_speedup_pairs(all, pairs);
        lb_check(np == (size_t)((bases - 1) * (LB_MODEL_COUNT - 2) - (bases - 1) * (bases - 2) / 2),
                 "without chunked measured: %zu pairs", np);
        for (size_t p = 0; p < np; p++)
            lb_check(pairs[p].model != chunked && pairs[p].baseline != chunked, "pair %zu names chunked", p);
    }

    /* meta.csv's models, or the paper's two for a sweep from before --models. */
    LbMeta meta = {0};
    int got[LB_MODEL_COUNT];
    lb_check(lb_models_measured(&meta, NULL, 0, got) == 0 && got[LB_MODEL_STANDARD] && got[LB_MODEL_LINFORMER],
             "no models key: the paper's two");
    lb_meta_set(&meta, "models", "%s", lb_model_name(LB_MODEL_LINFORMER));
    lb_check(lb_models_measured(&meta, NULL, 0, got) == 0 && !got[LB_MODEL_STANDARD] && got[LB_MODEL_LINFORMER],
             "models=linformer: linformer only");
    lb_meta_set(&meta, "models", "standard,nosuchmodel");
    lb_check(lb_models_measured(&meta, NULL, 0, got) == -1, "an unknown model in models is refused");
    lb_meta_free(&meta);

    check_table3_unchanged(rows, count, dir);
    lb_test_cleanup(dir);
    return lb_test_finish("test_speedups");
}
