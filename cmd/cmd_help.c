/* linbench help [CMD | --markdown]: the command list, one command's help, or README's flag tables,
 * all generated from the command and option tables. */
#include <string.h>

#include "cmd/commands.h"
#include "cmd/options.h"

int lb_cmd_help(LbRunSettings *s, int argc, char **argv)
{
    const int operands = argc - s->cmd.args;
    const char *name = operands > 0 ? argv[s->cmd.args] : NULL;
    const LbCommand *c = name ? lb_command_find(name) : NULL;
    char names[256];
    lb_command_names(names, sizeof names);
    if (operands > 1)
        return lb_usage_error("unexpected argument \"%s\" for help: it takes one command", argv[s->cmd.args + 1]);
    if (name && !c)
        return lb_usage_error("unknown command \"%s\" for help: should be one of %s", name, names);
    if (s->cmd.markdown && name) /* the usage's COMMAND | --markdown: the tables are every command's */
        return lb_usage_error("--markdown writes every command's flag tables, not one's: should be given without \"%s\" (or linbench help %s for its flags)",
                              name, name);
    if (s->cmd.markdown)
        lb_options_markdown(stdout);
    else if (c)
        lb_options_help(stdout, 1u << (c - lb_commands));
    else
        lb_commands_help(stdout);
    return LB_EXIT_OK;
}
