/* Running the linbench binary from a test: argv in, exit code out, stdout and stderr captured
 * in files under a scratch directory and read back as strings. */
#ifndef LB_TESTS_SPAWN_H
#define LB_TESTS_SPAWN_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct LbRun {
    int code;      /* exit code, or 128 + signal */
    char *out;     /* stdout */
    char *err;     /* stderr */
} LbRun;

static char lb_scratch[256];

/* A fresh scratch directory for this test's files. */
static inline const char *lb_scratch_dir(const char *name)
{
    snprintf(lb_scratch, sizeof lb_scratch, "/tmp/%s-XXXXXX", name);
    if (!mkdtemp(lb_scratch)) {
        perror("mkdtemp");
        exit(1);
    }
    return lb_scratch;
}

static inline char *lb_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* A resource limit the next children start under (RLIMIT_FSIZE for a write that fails part-way,
 * RLIMIT_AS for a machine with less memory); resource -1 for none. SIGXFSZ is ignored with
 * RLIMIT_FSIZE so an oversized write fails with EFBIG, as a full disk fails with ENOSPC. */
static int lb_child_resource = -1;
static rlim_t lb_child_limit;
/* Where the next children's stdout goes instead of the scratch file (e.g. /dev/full), or NULL. */
static const char *lb_child_stdout;

/* Start argv (argv[0] is the binary's path) with output to scratch files .stdout<tag> and
 * .stderr<tag>; returns the pid. */
static inline pid_t lb_start_tagged(char *const argv[], const char *tag)
{
    char out[300], err[300];
    snprintf(out, sizeof out, "%s/.stdout%s", lb_scratch, tag);
    snprintf(err, sizeof err, "%s/.stderr%s", lb_scratch, tag);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(lb_child_stdout ? lb_child_stdout : out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        dup2(o, 1);
        dup2(e, 2);
        dup2(in, 0);
        if (lb_child_resource >= 0) {
            struct rlimit rl = {lb_child_limit, lb_child_limit};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(lb_child_resource, &rl) != 0)
                _exit(126);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static inline pid_t lb_start(char *const argv[]) { return lb_start_tagged(argv, ""); }

static inline LbRun lb_wait_tagged(pid_t pid, const char *tag)
{
    LbRun r = {0, NULL, NULL};
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char out[300], err[300];
    snprintf(out, sizeof out, "%s/.stdout%s", lb_scratch, tag);
    snprintf(err, sizeof err, "%s/.stderr%s", lb_scratch, tag);
    r.out = lb_slurp(out);
    r.err = lb_slurp(err);
    if (!r.out)
        r.out = strdup("");
    if (!r.err)
        r.err = strdup("");
    return r;
}

static inline LbRun lb_wait(pid_t pid) { return lb_wait_tagged(pid, ""); }

static inline LbRun lb_run(char *const argv[]) { return lb_wait(lb_start(argv)); }

/* argv for `BIN CMD BASE... EXTRA...` (a test's fixed flags, then the case's), NULL-terminated in
 * argv[0 .. cap-1]; returns the index of that NULL, where a caller may append more and terminate
 * again. Exits the test when cap is too small, rather than write past it. */
static inline int lb_argv(char **argv, int cap, const char *bin, const char *cmd, char *const base[], int nbase,
                          char *const extra[], int nextra)
{
    if (nbase + nextra + 3 > cap) {
        fprintf(stderr, "lb_argv: %d arguments do not fit %d\n", nbase + nextra + 2, cap);
        exit(1);
    }
    int a = 0;
    argv[a++] = (char *)bin;
    argv[a++] = (char *)cmd;
    for (int i = 0; i < nbase; i++)
        argv[a++] = base[i];
    for (int i = 0; i < nextra; i++)
        argv[a++] = extra[i];
    argv[a] = NULL;
    return a;
}

static inline void lb_run_free(LbRun *r)
{
    free(r->out);
    free(r->err);
}

static inline int lb_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Lines in a string (the newline count). */
static inline int lb_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

#endif
