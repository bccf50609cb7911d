/* linbench: does Linformer attention really beat softmax attention on your GPU, and by how much?
 * The entry point: the subcommand table, --version, and top-level help generated from it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "lb_config.h"
#include "lb_revision.h"

static const LbCommand commands[] = {
    {"sweep", lb_cmd_sweep, lb_help_sweep, "measure the Table 3 grid: both models at their largest batch for every n and k"},
    {"run", lb_cmd_run, lb_help_run, "measure one cell: one model, one n, one k"},
    {"merge", lb_cmd_merge, lb_help_merge, "put the parts of a sharded sweep (sweep --shard I/N) together into one result"},
    {"slurm", lb_cmd_slurm, lb_help_slurm, "write (and --submit) Slurm jobs that run a sweep in shards and merge them"},
    {"compare", lb_cmd_compare, lb_help_compare, "set a sweep beside the paper's Table 3, or two sweeps side by side"},
    {"plot", lb_cmd_plot, lb_help_plot, "write gnuplot scripts (and PNG/SVG where gnuplot is installed) of a sweep"},
    {"check", lb_cmd_check, lb_help_check, "check every operation and forward pass of a backend against the CPU reference"},
    {"info", lb_cmd_info, lb_help_info, "what linbench sees: devices, memory, versions"},
    {"help", lb_cmd_help, lb_help_help, "help on linbench or on one command"},
};

const LbCommand *lb_commands(int *count)
{
    *count = (int)(sizeof commands / sizeof commands[0]);
    return commands;
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

/* What a command printed must have reached stdout: `linbench run > /dev/full` loses the
 * measurement, and exiting 0 would say it did not. */
static int finish_output(int code)
{
    if (code != LB_EXIT_OK || (fflush(stdout) == 0 && !ferror(stdout)))
        return code; /* a failed command has said why already */
    fprintf(stderr, "linbench: cannot write to standard output: %s\n", strerror(errno ? errno : EIO));
    return LB_EXIT_FAILURE;
}

int main(int argc, char **argv)
{
    /* CUDA loads kernel modules lazily by default, taking device memory at a kernel's first
     * launch; once the arena holds nearly all free memory that launch could fail mid-pass.
     * Loading every module when the context starts keeps all device memory in the arena's
     * accounting. A user's own setting wins. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    if (argc < 2) {
        char *help_argv[] = {"help", NULL};
        lb_cmd_help(1, help_argv);
        return LB_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("linbench %s (git %s)\n", LB_VERSION, LB_GIT_REVISION);
        return finish_output(LB_EXIT_OK);
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return finish_output(lb_cmd_help(1, argv + 1));
    int count;
    const LbCommand *cmds = lb_commands(&count);
    for (int i = 0; i < count; i++) {
        if (strcmp(name, cmds[i].name) == 0)
            return finish_output(cmds[i].run(argc - 1, argv + 1));
    }
    return lb_usage_error("unknown command \"%s\": should be one of sweep, run, merge, slurm, compare, plot, check, info, help (see linbench help)", name);
}
