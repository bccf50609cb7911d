/* See calibration.h. */
#include "cmd/calibration.h"

#include <stdio.h>

#include "attn/config.h"
#include "attn/base/sizes.h"
#include "attn/base/status.h"
#include "cmd/options.h"
#include "cmd/sweep/predict.h"

void lb_print_card_limits(FILE *out, const char *lead, const char *device_name, LbDtype storage, int tf32,
                          const LbCalibration *cal)
{
    const LbGpuSpec *g = lb_gpu_spec_for_device(device_name);
    LbPredictCard card;
    char why[256];
    if (!g || lb_predict_card_from_spec(g, storage, tf32, &card, why, sizeof why) != 0)
        return;
    const LbPredictParams p = lb_predict_defaults();
    fprintf(out, "%spredicted limit (linbench predict --gpu %s): %.4g TFLOP/s (%s %.4g x %.3g), %.4g GB/s (%.4g x %.3g)",
            lead, g->name, card.tflops * p.product_efficiency, card.rate_kind, card.tflops, p.product_efficiency,
            card.bandwidth_gb_s * p.copy_efficiency, card.bandwidth_gb_s, p.copy_efficiency);
    if (cal)
        fprintf(out, "; measured %.4g TFLOP/s (%.0f%% of the datasheet), %.4g GB/s (%.0f%%)", cal->tflop_per_s,
                100 * cal->tflop_per_s / card.tflops, cal->copy_gb_per_s, 100 * cal->copy_gb_per_s / card.bandwidth_gb_s);
    fputc('\n', out);
}

int lb_sweep_calibrate(LbBackend *be, uint64_t budget, int quiet, LbCalibration *cal, int *measured, char *note,
                       size_t note_size)
{
    LbCalibrateOptions opt = lb_calibrate_defaults();
    if (budget < opt.max_bytes) /* never more than the cells themselves may take */
        opt.max_bytes = (size_t)budget;
    *measured = 0;
    note[0] = '\0';
    const int rc = lb_calibrate(be, &opt, cal);
    if (rc == LB_ERR_NOMEM) {
        snprintf(note, note_size, "%s", lb_error_message());
        if (!quiet)
            fprintf(stderr, "linbench: calibration skipped: %s\n", note);
        return 0;
    }
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    *measured = 1;
    if (cal->limited_by_memory) {
        char have[32];
        lb_format_size(opt.max_bytes, have, sizeof have);
        snprintf(note, note_size, "sizes limited by the memory budget of %s: the rates may be below the device's best",
                 have);
    }
    if (!quiet) { /* and beside it, what linbench predict's table says of this card */
        fprintf(stderr, "calibration: %.3g TFLOP/s (%s%s product %lld), %.3g GB/s copy%s%s\n", cal->tflop_per_s,
                lb_dtype_name(be->storage), be->tf32 ? " tf32" : "", (long long)cal->dim, cal->copy_gb_per_s,
                note[0] ? "; " : "", note);
        LbDeviceInfo d = {0};
        if (be->ops->describe(be, &d) == LB_OK)
            lb_print_card_limits(stderr, "", d.name, be->storage, be->tf32, cal);
    }
    return 0;
}
