/* linbench plot: being written. */
#include "cmd/commands.h"

int lb_cmd_plot(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return LB_EXIT_FAILURE;
}

void lb_help_plot(FILE *out) { fprintf(out, "linbench plot: not yet written\n"); }
