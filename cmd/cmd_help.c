/* linbench help [CMD | --markdown]: the command list, one command's help, or README's flag tables,
 * all generated from the command and option tables. */
#include <string.h>

#include "cmd/commands.h"
#include "cmd/options.h"

int lb_cmd_help(int argc, char **argv)
{
    LbRunSettings s;
    int rc = lb_options_parse(LB_FOR_HELP, argc, argv, &s);
    const int operands = argc - s.cmd.args;
    const char *name = operands > 0 ? argv[s.cmd.args] : NULL;
    const LbCommand *c = name ? lb_command_find(name) : NULL;
    char names[256];
    lb_command_names(names, sizeof names);
    if (rc == 0 && operands > 1)
        rc = lb_usage_error("unexpected argument \"%s\" for help: it takes one command", argv[s.cmd.args + 1]);
    else if (rc == 0 && name && !c)
        rc = lb_usage_error("unknown command \"%s\" for help: should be one of %s", name, names);
    else if (rc == 0 && s.cmd.markdown)
        lb_options_markdown(stdout);
    else if (rc == 0 && c)
        lb_options_help(stdout, 1u << (c - lb_commands));
    else if (rc == 0)
        lb_commands_help(stdout);
    lb_run_settings_free(&s);
    return rc < 0 ? LB_EXIT_OK : rc;
}
