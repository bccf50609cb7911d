/* lb_plot_render on a script whose relative path starts with '-' (linbench plot -- -figs, or
 * --out -figs): gnuplot took it for an option ("unrecognized option") and no image was made.
 * Skipped where gnuplot is not on PATH. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"
#include "reports/plot_figure.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

int main(void)
{
    lb_test_init("test_plot_dash");
    char gnuplot[4096];
    if (lb_find_on_path("gnuplot", gnuplot, sizeof gnuplot) != 0) {
        printf("test_plot_dash: gnuplot is not on PATH: rendering not tested (skipped)\n");
        return lb_test_finish("test_plot_dash");
    }
    char *scratch = lb_test_tempdir("plot_dash");
    lb_check(chdir(scratch) == 0 && mkdir("-figs", 0755) == 0, "made %s/-figs", scratch);
    /* the shape of linbench's scripts: both images into linbench_out */
    fx_write("-figs/fig.gp", "w",
             "set terminal png size 64,64\nset output linbench_out.'/fig.png'\nplot x\n"
             "set terminal svg size 64,64\nset output linbench_out.'/fig.svg'\nreplot\nset output\n");
    lb_error_clear();
    const int rc = lb_plot_render(gnuplot, "-figs/fig.gp", 30);
    struct stat png, svg;
    lb_check(rc == LB_OK && stat("-figs/fig.png", &png) == 0 && png.st_size > 0 && stat("-figs/fig.svg", &svg) == 0 &&
                 svg.st_size > 0,
             "render of -figs/fig.gp: rc %d (%s): should write -figs/fig.png and -figs/fig.svg", rc, lb_error_message());
    lb_check(chdir("/") == 0, "left the scratch directory");
    lb_test_cleanup(scratch);
    return lb_test_finish("test_plot_dash");
}
