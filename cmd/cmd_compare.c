/* linbench compare: being written. */
#include "cmd/commands.h"

int lb_cmd_compare(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return LB_EXIT_FAILURE;
}

void lb_help_compare(FILE *out) { fprintf(out, "linbench compare: not yet written\n"); }
