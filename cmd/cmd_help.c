/* linbench help [CMD]: the command list generated from the table, or one command's help. */
#include <string.h>

#include "cmd/commands.h"

void lb_help_help(FILE *out)
{
    fputs("usage: linbench help [COMMAND]\n\nWith no COMMAND, lists the commands; with one, prints its flags.\n", out);
}

int lb_cmd_help(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        lb_help_help(stdout);
        return LB_EXIT_OK;
    }
    if (argc > 2)
        return lb_usage_error("unexpected argument \"%s\" for help: it takes one command", argv[2]);
    if (argc < 2) {
        lb_commands_help(stdout);
        return LB_EXIT_OK;
    }
    const LbCommand *c = lb_command_find(argv[1]);
    if (!c) {
        char names[256];
        lb_command_names(names, sizeof names);
        return lb_usage_error("unknown command \"%s\" for help: should be one of %s", argv[1], names);
    }
    c->help(stdout);
    return LB_EXIT_OK;
}
