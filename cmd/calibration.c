/* See calibration.h. */
#include "cmd/calibration.h"

#include <stdio.h>

#include "attn/config.h"
#include "attn/sizes.h"
#include "attn/status.h"
#include "cmd/options.h"

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
    if (!quiet)
        fprintf(stderr, "calibration: %.3g TFLOP/s (%s%s product %lld), %.3g GB/s copy%s%s\n", cal->tflop_per_s,
                lb_dtype_name(be->storage), be->tf32 ? " tf32" : "", (long long)cal->dim, cal->copy_gb_per_s,
                note[0] ? "; " : "", note);
    return 0;
}
