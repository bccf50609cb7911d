/* linbench: does Linformer attention really beat softmax attention on your GPU, and by how much?
 * The entry point: --version, top-level help, and dispatch through the command table
 * (cmd/commands.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "lb_config.h"
#include "lb_revision.h"

/* What a command printed must have reached stdout: `linbench run > /dev/full` loses the
 * measurement, and exiting 0 would say it did not. */
static int finish_output(int code)
{
    if (code != LB_EXIT_OK || (fflush(stdout) == 0 && !ferror(stdout)))
        return code; /* a failed command has said why already */
    fprintf(stderr, "linbench: cannot write to standard output: %s\n", strerror(errno ? errno : EIO));
    return LB_EXIT_FAILURE;
}

/* c with its flags parsed (the bit of its index in the command table) and freed after. */
static int dispatch(const LbCommand *c, int argc, char **argv)
{
    LbRunSettings s;
    int rc = lb_options_parse(1u << (c - lb_commands), argc, argv, &s);
    if (rc == 0)
        rc = c->run(&s, argc, argv);
    else if (rc == LB_OPTIONS_HELPED)
        rc = LB_EXIT_OK;
    lb_run_settings_free(&s);
    return finish_output(rc);
}

int main(int argc, char **argv)
{
    /* CUDA loads kernel modules lazily by default, taking device memory at a kernel's first
     * launch; once the arena holds nearly all free memory that launch could fail mid-pass.
     * Loading every module when the context starts keeps all device memory in the arena's
     * accounting. A user's own setting wins. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    /* Under a file-size limit (ulimit -f, a batch system's RLIMIT_FSIZE) a write past it would
     * kill linbench with SIGXFSZ and a core dump, mid-file. Ignored, the write fails with EFBIG
     * as a full disk fails with ENOSPC, and every writer's own error path says which file. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        lb_commands_help(stdout);
        return LB_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        if (argc > 2)
            return lb_usage_error("unexpected argument \"%s\" for %s: it takes none", argv[2], name);
        printf("linbench %s (git %s)\n", LB_VERSION, LB_GIT_REVISION);
        return finish_output(LB_EXIT_OK);
    }
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) /* --help [COMMAND] is `help [COMMAND]` */
        return dispatch(lb_command_find("help"), argc - 1, argv + 1);
    const LbCommand *c = lb_command_find(name);
    if (c)
        return dispatch(c, argc - 1, argv + 1);
    char names[256];
    lb_command_names(names, sizeof names);
    return lb_usage_error("unknown command \"%s\": should be one of %s (see linbench help)", name, names);
}
