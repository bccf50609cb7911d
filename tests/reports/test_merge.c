/* Merging a sharded sweep's rows: every model at the same (n, k) is a cell of its own, a cell
 * measured differently in two parts is refused naming its model, a cell measured again within
 * one part is its last row, the rows come in the sweep's order, the missing cells are named per
 * model, parts from two GPUs are refused; and the shard split is the greedy longest-first one by
 * the predictor's time of each cell on an H100 SXM. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/base/status.h"
#include "reports/merge.h"
#include "cmd/sweep/predict.h"
#include "cmd/sweep/engine.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

static LbCellResult make_row(LbModelKind m, int64_t n, int64_t k)
{
    return fx_row(m, n, k, (int64_t)(lb_test_u64() % 300) + 1, 0.01 + (double)(lb_test_u64() % 1000000) / 1e4,
                  LB_CELL_OK);
}

/* lb_sweep_shard_assign against the split worked out here from lb_predict_cell: cells costliest
 * first, each to the least loaded shard; the same split on a second call. */
static void check_split(void)
{
    LbRunSettings s;
    char should[160];
    LbPredictCard card;
    lb_check(lb_run_settings_init(&s) == LB_OK && lb_setting_apply(&s, LB_SET_N, "512:16384", 0, should, sizeof should) == 0 &&
                 lb_setting_apply(&s, LB_SET_K, "64:1024", 0, should, sizeof should) == 0 &&
                 lb_predict_card_from_spec(lb_gpu_spec_find("h100-sxm"), s.model.dtype, 0, &card, should, sizeof should) == 0,
             "the split's settings and card");
    s.shard_count = 3;
    const LbPredictParams params = lb_predict_defaults();
    LbSweepCell *cells = NULL;
    size_t count = 0;
    int *got = NULL, *again = NULL;
    lb_check(lb_sweep_cells(s.models, s.n, s.nn, s.k, s.nk, &cells, &count) == LB_OK && lb_sweep_shard_assign(&s, cells, count, &got) == LB_OK &&
                 lb_sweep_shard_assign(&s, cells, count, &again) == LB_OK && count > 10,
             "%zu cells split", count);
    double cost[64], load[3] = {0, 0, 0};
    int done[64] = {0};
    for (size_t i = 0; i < count && i < 64; i++) {
        LbModelConfig cfg = s.model; /* built here, not by the engine's function, so a slip there shows */
        cfg.kind = cells[i].model;
        cfg.n = cells[i].n;
        cfg.k = cells[i].k;
        LbCellResult r;
        lb_predict_cell(&cfg, &card, &params, lb_predict_budget(&s, &card), 0, &r, NULL);
        cost[i] = r.status == LB_CELL_OK ? (1.0 + s.timing.min_passes) * r.median_ms : 0;
    }
    for (size_t t = 0; t < count && t < 64; t++) {
        size_t c = 0; /* the costliest left, the earliest of equals */
        while (done[c])
            c++;
        for (size_t i = c + 1; i < count; i++)
            if (!done[i] && cost[i] > cost[c])
                c = i;
        const int least = load[1] < load[0] ? (load[2] < load[1] ? 2 : 1) : (load[2] < load[0] ? 2 : 0);
        load[least] += cost[c];
        done[c] = 1;
        lb_check(got[c] == least && again[c] == got[c], "%s n=%lld k=%lld: shard %d (again %d): should be %d",
                 lb_model_name(cells[c].model), (long long)cells[c].n, (long long)cells[c].k, got[c], again[c], least);
    }
    free(cells);
    free(got);
    free(again);
    lb_run_settings_free(&s);
}

/* Parts measured on different GPUs (meta.csv's device_name) are refused, naming the setting; the
 * same parts on one GPU merge. */
static void check_devices(void)
{
    char *dir = lb_test_tempdir("merge-devices");
    char a[4200], b[4200];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    const LbCellResult ra[] = {FX_STD(256, 8, 1.0)}, rb[] = {FX_STD(512, 4, 3.0)};
    char *dirs[] = {a, b};
    LbMerge m;
    lb_check(fx_sweep_dir(a, ra, 1, "256,512", "64", "NVIDIA H100 80GB HBM3") == 0 &&
                 fx_sweep_dir(b, rb, 1, "256,512", "64", "NVIDIA H100 80GB HBM3") == 0,
             "two parts written");
    int rc = lb_merge_load(&m, dirs, 2);
    lb_check(rc == LB_OK && m.nrows == 2, "parts on one GPU merge: rc %d (%s), %zu rows", rc, lb_error_message(),
             m.nrows);
    lb_merge_free(&m);
    fx_set_meta(b, "device_name", "NVIDIA A100-SXM4-80GB");
    rc = lb_merge_load(&m, dirs, 2);
    lb_check(rc == LB_ERR_FORMAT && strstr(lb_error_message(), "device_name differs") &&
                 strstr(lb_error_message(), "A100"),
             "parts from two GPUs refused: rc %d, \"%s\"", rc, lb_error_message());
    lb_merge_free(&m);
    lb_test_cleanup(dir);
}

int main(void)
{
    lb_test_init("test_merge");

    /* Part 1 holds n = 256 of every model, part 2 n = 128; both hold the same k = 64 cells, so only
     * the model tells them apart. Part 2 lists its rows in reverse to check the merged order. */
    LbCellResult p1[LB_MODEL_COUNT], p2[LB_MODEL_COUNT];
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        p1[m] = make_row((LbModelKind)m, 256, 64);
        p2[LB_MODEL_COUNT - 1 - m] = make_row((LbModelKind)m, 128, 64);
    }
    LbSweepDir parts[2] = {{.dir = (char *)"part1", .rows = p1, .count = LB_MODEL_COUNT},
                           {.dir = (char *)"part2", .rows = p2, .count = LB_MODEL_COUNT}};

    LbCellResult *rows = NULL;
    size_t nrows = 0;
    char why[512] = "";
    int rc = lb_merge_rows(parts, 2, &rows, &nrows, why, sizeof why);
    lb_check(rc == 0 && nrows == 2 * (size_t)LB_MODEL_COUNT, "merge: rc %d, %zu rows: should be %d (%s)", rc, nrows,
             2 * (int)LB_MODEL_COUNT, why);
    for (size_t i = 0; rc == 0 && i < nrows; i++) {
        int64_t want_n = i < (size_t)LB_MODEL_COUNT ? 128 : 256;
        LbModelKind want_m = (LbModelKind)(i % LB_MODEL_COUNT);
        const LbCellResult *src = want_n == 256 ? &p1[want_m] : &p2[LB_MODEL_COUNT - 1 - want_m];
        lb_check(rows[i].n == want_n && rows[i].model == want_m && rows[i].batch == src->batch &&
                     rows[i].ms_per_seq == src->ms_per_seq,
                 "merged row %zu: %s n=%lld batch %lld: should be %s n=%lld batch %lld", i, lb_model_name(rows[i].model),
                 (long long)rows[i].n, (long long)rows[i].batch, lb_model_name(want_m), (long long)want_n,
                 (long long)src->batch);
    }

    /* Every model measured: n = 512 is missing for each, at each k it has. */
    int measured[LB_MODEL_COUNT];
    for (int m = 0; m < LB_MODEL_COUNT; m++)
        measured[m] = 1;
    const int64_t n[] = {128, 256, 512}, k[] = {64};
    char missing[1024];
    size_t nmissing = 0;
    lb_check(lb_merge_missing(rows, nrows, n, 3, k, 1, measured, &nmissing, missing, sizeof missing) == LB_OK, "missing cells listed");
    lb_check(nmissing == (size_t)LB_MODEL_COUNT, "%zu missing cells: should be %d (%s)", nmissing, (int)LB_MODEL_COUNT, missing);
    for (int m = 0; m < LB_MODEL_COUNT; m++) {
        char cell[96];
        snprintf(cell, sizeof cell, "%s n=512%s", lb_model_name((LbModelKind)m), lb_model_has_k((LbModelKind)m) ? " k=64" : "");
        lb_check(strstr(missing, cell) != NULL, "missing cells \"%s\" should name %s", missing, cell);
    }
    /* Only the models measured count. */
    for (int m = 1; m < LB_MODEL_COUNT; m++)
        measured[m] = 0;
    lb_merge_missing(rows, nrows, n, 3, k, 1, measured, &nmissing, missing, sizeof missing);
    lb_check(nmissing == 1, "one model measured: %zu missing: should be 1 (%s)", nmissing, missing);
    free(rows);

    /* The same cell of one model measured differently in both parts is refused, naming it. */
    LbModelKind last = (LbModelKind)(LB_MODEL_COUNT - 1);
    p2[0] = p1[last];
    p2[0].batch += 1;
    rc = lb_merge_rows(parts, 2, &rows, &nrows, why, sizeof why);
    lb_check(rc == -1 && strstr(why, lb_model_name(last)) && strstr(why, "n=256") && strstr(why, "part1") &&
                 strstr(why, "part2"),
             "a cell measured twice differently: rc %d, why \"%s\"", rc, why);
    if (rc == 0)
        free(rows);

    /* A cell twice in one part (a resumed sweep measured it again): its last row counts, as in the
     * part's own grids, with no refusal; and a second part agreeing with that last row merges. */
    LbCellResult again[2] = {make_row(LB_MODEL_STANDARD, 256, 0), make_row(LB_MODEL_STANDARD, 256, 0)};
    again[0].status = LB_CELL_ERROR;
    LbCellResult later[1] = {again[1]};
    LbSweepDir resumed[2] = {{.dir = (char *)"resumed", .rows = again, .count = 2},
                             {.dir = (char *)"other", .rows = later, .count = 1}};
    rc = lb_merge_rows(resumed, 2, &rows, &nrows, why, sizeof why);
    lb_check(rc == 0 && nrows == 1 && rows[0].status == LB_CELL_OK && rows[0].batch == again[1].batch &&
                 rows[0].ms_per_seq == again[1].ms_per_seq,
             "a cell measured again in one part: rc %d (%s), %zu rows, the last one's", rc, why, nrows);
    if (rc == 0)
        free(rows);
    check_devices();
    check_split();
    return lb_test_finish("test_merge");
}
