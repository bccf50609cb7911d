/* What the tests that run bench/peer's linbench-peer share: the paths they run, and the start that
 * finds a Python with torch and numpy (tests/peer/find_python.sh) or skips. */
#ifndef LB_TESTS_PEER_TEST_H
#define LB_TESTS_PEER_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/spawn.h"

static char *bin, *python, peer[4200]; /* linbench, the Python found, linbench-peer */
static const char *scratch;

/* argv: NAME LINBENCH SOURCE_DIR FIND_PYTHON. -1 to go on; else the exit code (1 for a wrong
 * command line, 77 where no such Python is found). */
static inline int lb_peer_test_start(int argc, char **argv, const char *name)
{
    if (argc < 4) {
        printf("usage: %s PATH-TO-LINBENCH SOURCE_DIR FIND_PYTHON\n", name);
        return 1;
    }
    bin = argv[1];
    snprintf(peer, sizeof peer, "%s/bench/peer/linbench-peer", argv[2]);
    scratch = lb_scratch_named(name);
    char *find[] = {argv[3], NULL};
    LbRun found = lb_run(find);
    if (found.code != 0) {
        printf("%s", found.err);
        lb_run_free(&found);
        lb_test_rmtree(scratch);
        return 77;
    }
    found.out[strcspn(found.out, "\n")] = '\0';
    python = strdup(found.out);
    lb_run_free(&found);
    printf("Python: %s\n", python);
    return -1;
}

/* linbench-peer ARGS... (NULL-ended) started with the Python found, and run to its end. */
static inline pid_t lb_peer_start(char **args)
{
    char *argv[64] = {python, peer};
    int n = 2;
    for (; args[n - 2] && n < 63; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    return lb_start(argv);
}

static inline LbRun lb_peer_run(char **args) { return lb_wait(lb_peer_start(args)); }

/* linbench-peer ARGS... run, one check that it exited 0 (its stderr shown when not). */
static inline int lb_peer_ok(char **args, const char *what)
{
    LbRun r = lb_peer_run(args);
    const int ok = lb_check(r.code == 0, "%s: exit %d, should be 0: %s", what, r.code, r.err);
    lb_run_free(&r);
    return ok;
}

#endif
