/* The CPU reference's energy counter (attn/cpu/cpu_energy.c) on powercap files of the test's own
 * (LB_POWERCAP_ZONE): joules from the first reading, a wrap of energy_uj past
 * max_energy_range_uj unwrapped, no zone or no number read as unsupported with the file named;
 * and a measured cell on a counter that does not advance, or on none: NaN, and why. (A counter
 * that advances is tests/gpu/test_emu_nvml.c's, through the stand-in NVML.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/measure/measure.h"
#include "attn/ops.h"
#include "attn/base/status.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        printf("FAIL: cannot write %s\n", path);
        exit(1);
    }
}

int main(void)
{
    lb_test_init("test_cpu_energy");
    char *dir = lb_test_tempdir("cpu-energy");
    LbBackend *be = NULL;

    setenv("LB_POWERCAP_ZONE", dir, 1); /* empty: no counter */
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)64 << 20, &be) == LB_OK, "open"))
        return lb_test_finish("test_cpu_energy");
    double j = -1;
    lb_check(be->ops->energy_j(be, &j) == LB_ERR_UNSUPPORTED && strstr(lb_error_message(), "energy_uj") &&
                 strstr(lb_error_message(), "no energy counter"),
             "no zone: unsupported, naming the file: %s", lb_error_message());

    write_file(dir, "max_energy_range_uj", "1000000\n"); /* wraps at 1 J */
    write_file(dir, "energy_uj", "900000\n");
    lb_check(be->ops->energy_j(be, &j) == LB_OK && j == 0.0, "first reading: 0 J (got %g)", j);
    write_file(dir, "energy_uj", "950000\n");
    lb_check(be->ops->energy_j(be, &j) == LB_OK && fabs(j - 0.05) < 1e-12, "then 0.05 J (got %.17g)", j);
    write_file(dir, "energy_uj", "49999\n"); /* past the range: 50000 uj to the top, then 49999 + 1 */
    lb_check(be->ops->energy_j(be, &j) == LB_OK && fabs(j - 0.15) < 1e-12, "a wrap unwrapped: 0.15 J (got %.17g)", j);
    write_file(dir, "energy_uj", "not a number\n");
    lb_check(be->ops->energy_j(be, &j) == LB_ERR_UNSUPPORTED && strstr(lb_error_message(), "holds no number"),
             "a file without a number: %s", lb_error_message());

    /* A measured cell on a counter that does not move: no power, and why. */
    write_file(dir, "energy_uj", "123\n");
    LbModelConfig cfg = lb_test_model(16, 8);
    LbTimingOptions opt = lb_timing_defaults();
    opt.max_batch = 2;
    opt.cap_seconds = 0.05;
    LbCellResult r;
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && r.status == LB_CELL_OK,
             "a cell measured: %s", r.error);
    lb_check(isnan(r.power_w) && isnan(r.energy_j_per_seq) && strstr(r.energy_why, "did not advance"),
             "a still counter: power %g, energy %g, why \"%s\"", r.power_w, r.energy_j_per_seq, r.energy_why);
    lb_backend_close(be);

    /* No zone at all: NaN, and the reason is the counter's. */
    setenv("LB_POWERCAP_ZONE", "/nonexistent/powercap-zone", 1);
    lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)64 << 20, &be) == LB_OK, "open");
    lb_check(lb_measure_cell(be, &cfg, (size_t)64 << 20, &opt, 1, NULL, &r) == LB_OK && isnan(r.energy_j_per_seq) &&
                 strstr(r.energy_why, "/nonexistent/powercap-zone/energy_uj"),
             "no counter: energy %g, why \"%s\"", r.energy_j_per_seq, r.energy_why);
    lb_backend_close(be);
    lb_test_cleanup(dir);
    return lb_test_finish("test_cpu_energy");
}
