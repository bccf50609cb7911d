/* The one way a test runs the linbench binary: argv in; exit code, stdout and stderr out (captured
 * in the scratch directory, lb_scratch_dir). The next children's resource limit, stdout, environment
 * and process group can be set; children at once are told apart by a tag. The checks every CLI
 * test makes of a run: lb_run_ok, lb_run_refused and lb_check_refusal. */
#ifndef LB_TESTS_LIB_SPAWN_H
#define LB_TESTS_LIB_SPAWN_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/check.h"

extern char **environ;

typedef struct LbRun {
    int code;  /* exit code, 128 + signal, or -1 when the child could not be started or waited for */
    char *out; /* stdout ("" when it went elsewhere) */
    char *err; /* stderr */
} LbRun;

/* The scratch directory the captures go to; lb_scratch_dir sets it. */
static const char *lb_scratch;

/* A fresh scratch directory (lb_test_tempdir: lb-NAME-XXXXXX), where the runs capture their output. */
static inline const char *lb_scratch_dir(const char *name)
{
    lb_scratch = lb_test_tempdir(name);
    return lb_scratch;
}

/* lb_scratch_dir named after the test: test_cli_x's is lb-cli-x-XXXXXX. */
static inline const char *lb_scratch_named(const char *test)
{
    char dir[64];
    snprintf(dir, sizeof dir, "%s", strncmp(test, "test_", 5) == 0 ? test + 5 : test);
    for (char *c = dir; *c; c++)
        *c = *c == '_' ? '-' : *c;
    return lb_scratch_dir(dir);
}

/* The start of a test of the binary (name "test_cli_x"): the seed line and lb_scratch_named;
 * argv[1], linbench (without it, a usage line and exit 2). */
static inline char *lb_cli_start(int argc, char **argv, const char *name)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-LINBENCH\n", name);
        exit(2);
    }
    lb_test_init(name);
    lb_scratch_named(name);
    return argv[1];
}

/* The next children's resource limit (resource -1: none). SIGXFSZ stays at its default under
 * RLIMIT_FSIZE, as in a user's shell, so linbench itself must turn an oversized write into EFBIG. */
static int lb_child_resource = -1;
static rlim_t lb_child_limit;
/* Where their stdout goes instead of the capture (e.g. /dev/full), or NULL. */
static const char *lb_child_stdout;
/* Their PATH instead of ours (the rest of the environment kept), or NULL. */
static const char *lb_child_path;
/* Nonzero: each starts a process group of its own, so that kill(-pid, ...) reaches its workers. */
static int lb_child_group;

static inline void lb_capture_paths(const char *tag, char *out, char *err, size_t size)
{
    snprintf(out, size, "%s/.stdout%s", lb_scratch, tag);
    snprintf(err, size, "%s/.stderr%s", lb_scratch, tag);
}

/* Start argv with output to the captures .stdout<tag> and .stderr<tag>; returns the pid. */
static inline pid_t lb_start_tagged(char *const argv[], const char *tag)
{
    char out[4200], err[4200];
    lb_capture_paths(tag, out, err, sizeof out);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (lb_child_group)
            setpgid(0, 0);
        int o = open(lb_child_stdout ? lb_child_stdout : out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0)
            _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        dup2(in, 0);
        if (lb_child_resource >= 0) {
            struct rlimit rl = {lb_child_limit, lb_child_limit};
            signal(SIGXFSZ, SIG_DFL);
            if (setrlimit(lb_child_resource, &rl) != 0)
                _exit(126);
        }
        if (lb_child_path && setenv("PATH", lb_child_path, 1) != 0)
            _exit(126);
        execve(argv[0], argv, environ);
        _exit(127);
    }
    if (pid > 0 && lb_child_group)
        setpgid(pid, pid); /* here too, so a kill right after the fork finds the group */
    return pid;
}

static inline pid_t lb_start(char *const argv[]) { return lb_start_tagged(argv, ""); }

/* Wait for pid and read its captures (tag as started), then remove them, so the directory holds
 * only what the binary wrote; a capture that went elsewhere reads "". */
static inline LbRun lb_wait_tagged(pid_t pid, const char *tag)
{
    LbRun r = {-1, NULL, NULL};
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid)
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char out[4200], err[4200];
    lb_capture_paths(tag, out, err, sizeof out);
    r.out = lb_slurp(out);
    r.err = lb_slurp(err);
    remove(out);
    remove(err);
    if (!r.out)
        r.out = strdup("");
    if (!r.err)
        r.err = strdup("");
    return r;
}

static inline LbRun lb_wait(pid_t pid) { return lb_wait_tagged(pid, ""); }

static inline LbRun lb_run(char *const argv[]) { return lb_wait(lb_start(argv)); }

/* An argv in place, NULL-terminated, alive to the end of the enclosing block:
 * lb_run(LB_ARGV(bin, "compare", dir)). */
#define LB_ARGV(...) ((char *[]){__VA_ARGS__, NULL})

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

/* Whether dir/name exists. */
static inline int lb_exists_in(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lb_exists(path);
}

/* Lines in a string (the newline count). */
static inline int lb_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* The number after the first `text` in out, or -1. */
static inline double lb_number_after(const char *out, const char *text)
{
    const char *p = out ? strstr(out, text) : NULL;
    return p ? strtod(p + strlen(text), NULL) : -1;
}

/* The number of out's line "key: NUMBER", or -1. */
static inline double lb_key_number(const char *out, const char *key)
{
    char line[64];
    snprintf(line, sizeof line, "\n%s: ", key);
    if (out && strncmp(out, line + 1, strlen(line + 1)) == 0)
        return strtod(out + strlen(line + 1), NULL);
    return lb_number_after(out, line);
}

/* The command line of argv[1..], for a check's message. */
static inline const char *lb_argv_text(char *const argv[])
{
    static char text[512];
    text[0] = '\0';
    for (int i = 1; argv[i] && strlen(text) + strlen(argv[i]) + 2 < sizeof text; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i > 1 ? " " : "", argv[i]);
    return text;
}

/* lb_run_ok(argv, what): run argv, one check that it exited 0 (the command line and its stderr
 * shown when not). */
#define lb_run_ok(argv, what) lb_run_ok_at(__FILE__, __LINE__, argv, what)
static inline int lb_run_ok_at(const char *file, int line, char *const argv[], const char *what)
{
    LbRun r = lb_run(argv);
    int ok = lb_check_at(r.code == 0, file, line, "%s (linbench %s): exit %d, should be 0: %s", what, lb_argv_text(argv),
                         r.code, r.err);
    lb_run_free(&r);
    return ok;
}

/* lb_check_refusal(r, what, word, ...): r (freed here) is bad input refused as a user should see
 * it: exit 2, one line on stderr starting "linbench: " and holding every word, nothing on stdout.
 * lb_run_refused(argv, word, ...): the same of running argv. */
#define lb_check_refusal(r, what, ...) lb_check_refusal_at(__FILE__, __LINE__, r, what, __VA_ARGS__, (const char *)NULL)
#define lb_run_refused(argv, ...) lb_check_refusal(lb_run(argv), lb_argv_text(argv), __VA_ARGS__)
static inline int lb_check_refusal_at(const char *file, int line, LbRun r, const char *what, ...)
{
    int ok = r.code == 2 && lb_lines(r.err) == 1 && strncmp(r.err, "linbench: ", 10) == 0 && !r.out[0];
    char words[256] = "";
    va_list ap;
    va_start(ap, what);
    for (const char *w = va_arg(ap, const char *); w; w = va_arg(ap, const char *)) {
        ok &= strstr(r.err, w) != NULL;
        snprintf(words + strlen(words), sizeof words - strlen(words), " \"%s\"", w);
    }
    va_end(ap);
    lb_check_at(ok, file, line, "%s: exit %d, should be 2 with one line naming%s, nothing on stdout: %s%s", what,
                r.code, words, r.err, r.out);
    lb_run_free(&r);
    return ok;
}

#endif
