/* The command table: every place that lists the commands (main's dispatch, `linbench help`,
 * `linbench --help`, the unknown-command messages) walks it. Also the one-line usage error that
 * every command prints. */
#include "cmd/commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lb_config.h"

static const LbCommand commands[] = {
    {"sweep", lb_cmd_sweep, lb_help_sweep, "measure the Table 3 grid: every model at its largest batch for every n and k"},
    {"run", lb_cmd_run, lb_help_run, "measure one cell: one model, one n, one k"},
    {"predict", lb_cmd_predict, lb_help_predict, "predict a sweep on a GPU that is not here, from its datasheet and the memory plan"},
    {"merge", lb_cmd_merge, lb_help_merge, "put the parts of a sharded sweep (sweep --shard I/N) together into one result"},
    {"slurm", lb_cmd_slurm, lb_help_slurm, "write (and --submit) Slurm jobs that run a sweep in shards and merge them"},
    {"compare", lb_cmd_compare, lb_help_compare, "set a sweep beside the paper's Table 3, or two sweeps side by side"},
    {"plot", lb_cmd_plot, lb_help_plot, "write gnuplot scripts (and PNG/SVG where gnuplot is installed) of a sweep"},
    {"check", lb_cmd_check, lb_help_check, "check every operation and forward pass of a backend against the CPU reference"},
    {"info", lb_cmd_info, lb_help_info, "what linbench sees: devices, memory, versions"},
    {"help", lb_cmd_help, lb_help_help, "help on linbench or on one command"},
};

const LbCommand *lb_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

void lb_command_names(char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < sizeof commands / sizeof commands[0] && used < size; i++) {
        int len = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", commands[i].name);
        used += len > 0 ? (size_t)len : 0;
    }
}

void lb_commands_help(FILE *out)
{
    fprintf(out, "linbench %s: does Linformer attention beat softmax attention on this GPU, and by how much?\n\n"
                 "usage: linbench COMMAND [FLAGS]\n       linbench --version\n\ncommands:\n",
            LB_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`linbench COMMAND --help` or `linbench help COMMAND` lists a command's flags.\n");
}

int lb_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("linbench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return LB_EXIT_USAGE;
}

void lb_warn_cut_row(const char *dir, size_t line)
{
    fprintf(stderr,
            "linbench: warning: %s%sraw.csv line %zu is cut short (no newline at its end): its cell is left out (NA); linbench sweep --resume %s drops the line and measures the cell again\n",
            dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", line, dir);
}
