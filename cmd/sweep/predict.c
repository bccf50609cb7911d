/* linbench predict's result directory (see predict.h). */
#define _POSIX_C_SOURCE 200809L

#include "cmd/sweep/predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn/plan.h"
#include "attn/base/status.h"
#include "cmd/sweep/engine.h"
#include "reports/breakdown_csv.h"

int lb_predict_run(const LbPredictJob *job, LbGrid *grid, double *sweep_s)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const LbRunSettings *s = job->settings;
    const LbPredictCard *card = job->card;
    const uint64_t budget = lb_predict_budget(s, card);
    LbSweepCell *cells = NULL;
    LbCellResult *rows = NULL;
    LbBreakdownRecord *recs = NULL;
    size_t ncells = 0, nrecs = 0;
    LbMeta extra = {0};
    *sweep_s = 0;
    int rc = lb_sweep_cells(s->models, s->n, s->nn, s->k, s->nk, &cells, &ncells);
    if (rc == LB_OK && !(rows = calloc(ncells ? ncells : 1, sizeof *rows)))
        rc = LB_FAIL(LB_ERR_NOMEM, "out of memory predicting %zu cells", ncells);
    /* breakdown.csv's percent_of_limit: the predicted time against the datasheet's roofline */
    const LbCalibration nominal = {.tflop_per_s = card->tflops, .copy_gb_per_s = card->bandwidth_gb_s};
    for (size_t i = 0; rc == LB_OK && i < ncells; i++) {
        const LbModelConfig cfg = lb_sweep_cell_config(s, &cells[i]);
        LbBreakdown bd;
        rc = lb_predict_cell(&cfg, card, job->params, budget, s->timing.max_batch, &rows[i], &bd);
        if (rc != LB_OK || rows[i].status != LB_CELL_OK)
            continue;
        *sweep_s += (1.0 + s->timing.min_passes) * rows[i].median_ms * 1e-3;
        LbBreakdownRecord *cell_recs = NULL;
        size_t cell_count = 0;
        rc = lb_breakdown_records(cfg.kind, cfg.n, cfg.k, &bd, &nominal, &cell_recs, &cell_count);
        if (rc == LB_OK)
            rc = lb_breakdown_append(&recs, &nrecs, cell_recs, cell_count, "out of memory for the predicted breakdown");
        free(cell_recs);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double predict_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
    /* meta.csv: what this is (source predicted), the card, and every parameter of the formula */
#define PUT(key, ...)                                    \
    do {                                                 \
        if (rc == LB_OK)                                 \
            rc = lb_meta_set(&extra, key, __VA_ARGS__);  \
    } while (0)
    PUT(LB_META_SOURCE, "%s", LB_SOURCE_PREDICTED);
    PUT("predict_gpu", "%s", card->name);
    PUT("predict_card", "%s", card->label);
    PUT("predict_card_source", "%s", card->source);
    PUT("predict_rate", "%s", card->rate_kind);
    PUT("predict_product_tflop_per_s", "%.6g", card->tflops);
    PUT("predict_bandwidth_gb_per_s", "%.6g", card->bandwidth_gb_s);
    PUT("predict_memory_bytes", "%llu", (unsigned long long)card->memory_bytes);
    PUT("predict_product_efficiency", "%.6g", job->params->product_efficiency);
    PUT("predict_copy_efficiency", "%.6g", job->params->copy_efficiency);
    PUT("predict_launch_us", "%.6g", job->params->launch_us);
    PUT("predict_formula", "%s",
        "ms of a pass = sum over its calls of max(flops / (product_tflop_per_s x product_efficiency), bytes / (bandwidth_gb_per_s x copy_efficiency)) + launch_us");
    PUT("predict_sweep_seconds", "%.6g", *sweep_s);
    PUT("predict_wall_ms", "%.6g", predict_ms);
#undef PUT
    if (rc == LB_OK) {
        LbSweepDevice dev;
        lb_sweep_device_describe(NULL, &dev); /* nothing known but what the card says */
        dev.info.total_bytes = (int64_t)card->memory_bytes;
        snprintf(dev.info.name, sizeof dev.info.name, "predicted: %.80s (roofline, not a measurement)", card->label);
        dev.storage = s->model.dtype;
        const LbSweepJob sj = {
            s, job->dir, NULL, job->command_line, budget, {0}, NULL, NULL,
            NULL, "predicted: nothing was measured",
        };
        rc = lb_sweep_write_rows(&sj, &dev, rows, &extra, grid);
        if (rc == LB_OK && nrecs > 0 && (rc = lb_breakdown_write(job->dir, recs, nrecs)) != LB_OK)
            lb_grid_free(grid);
    }
    lb_meta_free(&extra);
    free(cells);
    free(rows);
    free(recs);
    return rc;
}
