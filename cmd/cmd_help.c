/* linbench help [CMD]: the command list generated from the table, or one command's help. */
#include <string.h>

#include "cmd/commands.h"
#include "lb_config.h"

void lb_help_help(FILE *out)
{
    fputs("usage: linbench help [COMMAND]\n\nWith no COMMAND, lists the commands; with one, prints its flags.\n", out);
}

int lb_cmd_help(int argc, char **argv)
{
    int count;
    const LbCommand *cmds = lb_commands(&count);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        lb_help_help(stdout);
        return LB_EXIT_OK;
    }
    if (argc > 2)
        return lb_usage_error("unexpected argument \"%s\" for help: it takes one command", argv[2]);
    if (argc >= 2) {
        for (int i = 0; i < count; i++) {
            if (strcmp(argv[1], cmds[i].name) == 0) {
                cmds[i].help(stdout);
                return LB_EXIT_OK;
            }
        }
        return lb_usage_error("unknown command \"%s\" for help: should be one of sweep, run, compare, plot, info, help", argv[1]);
    }
    printf("linbench %s: does Linformer attention beat softmax attention on this GPU, and by how much?\n\n"
           "usage: linbench COMMAND [FLAGS]\n       linbench --version\n\ncommands:\n",
           LB_VERSION);
    for (int i = 0; i < count; i++)
        printf("  %-8s %s\n", cmds[i].name, cmds[i].summary);
    printf("\n`linbench COMMAND --help` or `linbench help COMMAND` lists a command's flags.\n");
    return LB_EXIT_OK;
}
