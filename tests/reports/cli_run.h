/* Running the linbench binary from a test: argv in; exit code, stdout and stderr out. The
 * environment can be replaced (PATH without gnuplot) and stdout sent to a given file
 * (/dev/full, to see a write failure reported). */
#ifndef LB_TESTS_CLI_RUN_H
#define LB_TESTS_CLI_RUN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct RcRun {
    int code;  /* exit code, or 128 + signal */
    char *out; /* stdout ("" when it went elsewhere) */
    char *err; /* stderr */
} RcRun;

static inline char *rc_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = s ? fread(s, 1, (size_t)(n > 0 ? n : 0), f) : 0;
    if (s)
        s[got] = '\0';
    fclose(f);
    return s;
}

/* Run argv (argv[0] the binary's path) with envp (NULL: ours); stdout into stdout_path, or
 * captured when NULL. scratch is a directory for the captures. */
static inline RcRun rc_run_env(const char *scratch, char *const argv[], char *const envp[],
                               const char *stdout_path)
{
    char out[4200], err[4200];
    snprintf(out, sizeof out, "%s/.stdout", scratch);
    snprintf(err, sizeof err, "%s/.stderr", scratch);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(stdout_path ? stdout_path : out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0)
            _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        dup2(in, 0);
        execve(argv[0], argv, envp ? envp : environ);
        _exit(127);
    }
    RcRun r = {-1, NULL, NULL};
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid)
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = stdout_path ? strdup("") : rc_slurp(out);
    r.err = rc_slurp(err);
    remove(out);
    remove(err);
    return r;
}

static inline RcRun rc_run(const char *scratch, char *const argv[])
{
    return rc_run_env(scratch, argv, NULL, NULL);
}

static inline void rc_free(RcRun *r)
{
    free(r->out);
    free(r->err);
}

/* Newlines in s. */
static inline int rc_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

#endif
