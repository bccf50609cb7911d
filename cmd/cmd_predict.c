/* linbench predict: what a sweep would show on a GPU that is not here, from the roofline
 * (cmd/sweep/predict.h). Opens no backend: it runs the same on a machine without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/outdir.h"
#include "reports/grid.h"
#include "cmd/sweep/predict.h"
#include "reports/settings.h"

/* The card: --gpu NAME from the table, or --spec; exactly one of them. */
static int pick_card(const LbRunSettings *s, LbPredictCard *card)
{
    const LbCommandFlags *f = &s->cmd;
    char names[512], why[256];
    lb_gpu_spec_names(names, sizeof names);
    if (f->card && f->spec)
        return lb_usage_error("--gpu and --spec cannot be used together: should be one card, a name of the table or its figures");
    if (!f->card && !f->spec)
        return lb_usage_error("predict needs a card: should be --gpu NAME (one of %s) or --spec tflops=T,bw=B,mem=SIZE", names);
    if (f->spec) {
        if (lb_predict_card_parse(f->spec, card, why, sizeof why) != 0)
            return lb_usage_error("invalid argument \"%s\" for --spec: should be %s", f->spec, why);
        return 0;
    }
    const LbGpuSpec *g = lb_gpu_spec_find(f->card);
    if (!g)
        return lb_usage_error("invalid argument \"%s\" for --gpu: should be one of %s (or --spec tflops=T,bw=B,mem=SIZE)",
                              f->card, names);
    if (lb_predict_card_from_spec(g, s->model.dtype, s->tf32, card, why, sizeof why) != 0)
        return lb_usage_error("invalid argument \"%s\" for --gpu: %s: should be another --dtype%s, or --spec", f->card, why,
                              s->tf32 ? " or no --tf32" : "");
    return 0;
}

int lb_cmd_predict(LbRunSettings *s, int argc, char **argv)
{
    LbCommandFlags *f = &s->cmd;
    const LbPredictParams params = {f->product_efficiency, f->copy_efficiency, f->launch_us};
    LbPredictCard card;
    int rc = lb_options_check_grid(s);
    if (rc == 0)
        rc = pick_card(s, &card);
    if (rc != 0)
        return rc;
    const uint64_t headroom = lb_run_settings_headroom(s, card.memory_bytes);
    if (card.memory_bytes <= headroom) { /* a sweep on such a card stops before its first cell */
        char mem[32], h[32];
        lb_format_size(card.memory_bytes, mem, sizeof mem);
        lb_format_size(headroom, h, sizeof h);
        return lb_usage_error("--headroom %s%s leaves no memory of the %s of %s: should be below %s", h,
                              s->given & (UINT64_C(1) << LB_SET_HEADROOM) ? "" : " (its default)", mem, card.label, mem);
    }
    if (s->given & (UINT64_C(1) << LB_SET_MEM_LIMIT)) { /* refused as a sweep on the card refuses it */
        const uint64_t room = card.memory_bytes - headroom;
        if (s->mem_limit > room) {
            lb_options_refuse_mem_limit(s->mem_limit, room, card.memory_bytes, "memory", headroom, card.label);
            return LB_EXIT_USAGE;
        }
    }
    lb_options_note_unread(s->given, s->models); /* --chunk without the chunked model ... */
    lb_options_note_no_ratio(s->models); /* --models standard alone */
    if ((rc = lb_outdir_prepare_out(f, 0)) != 0)
        return rc;
    LbGrid grid = {0};
    char *command_line = NULL;
    int created = 1;
    if (f->force && (rc = lb_outdir_clear_forced(f->out)) != 0)
        goto out;
    command_line = lb_command_line(argc, argv);
    const LbPredictJob job = {s, &card, &params, f->out, command_line ? command_line : "linbench predict"};
    double sweep_s = 0;
    lb_error_clear();
    int erc = lb_predict_run(&job, &grid, &sweep_s);
    if (erc != LB_OK) {
        rc = lb_runtime_error(erc);
        goto out;
    }
    created = 0;
    lb_grid_print(stdout, &grid, (LbFormat)f->format);
    fflush(stdout);
    if (!f->quiet) {
        char budget[32];
        lb_format_size(lb_predict_budget(s, &card), budget, sizeof budget);
        fprintf(stderr, "linbench: predicted for %s (%s %.4g TFLOP/s x %.3g, %.4g GB/s x %.3g, %.3g us per kernel, memory budget %s): a sweep of these cells would take about %.0f s at its fewest passes; results in %s\n",
                card.label, card.rate_kind, card.tflops, params.product_efficiency, card.bandwidth_gb_s,
                params.copy_efficiency, params.launch_us, budget, sweep_s, f->out);
    }
out:
    if (rc != 0 && created) {
        /* this prediction's cut-short files would read as a result nothing will finish, since
         * --resume refuses a prediction */
        (void)lb_outdir_clear_results(f->out);
        lb_outdir_abandon();
    }
    lb_grid_free(&grid);
    free(command_line);
    return rc;
}
