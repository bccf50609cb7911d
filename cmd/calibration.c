/* See calibration.h. */
#include "cmd/calibration.h"

#include <stdio.h>

#include "attn/config.h"
#include "attn/status.h"
#include "cmd/options.h"

int lb_sweep_calibrate(LbBackend *be, uint64_t budget, int quiet, LbCalibration *cal)
{
    LbCalibrateOptions opt = lb_calibrate_defaults();
    if (budget < opt.max_bytes) /* never more than the cells themselves may take */
        opt.max_bytes = (size_t)budget;
    const int rc = lb_calibrate(be, &opt, cal);
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    if (!quiet)
        fprintf(stderr, "calibration: %.3g TFLOP/s (%s%s product %lld), %.3g GB/s copy\n", cal->tflop_per_s,
                lb_dtype_name(be->storage), be->tf32 ? " tf32" : "", (long long)cal->dim, cal->copy_gb_per_s);
    return 0;
}
