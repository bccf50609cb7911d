/* Counted checks for tests/reports/: each failure printed with where it happened, a closing
 * "N passed, M failed" line, and a scratch directory per test, removed when every check passed. */
#ifndef LB_TESTS_REPORT_CHECK_H
#define LB_TESTS_REPORT_CHECK_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int lb_rc_passed, lb_rc_failed;

static inline int lb_rc_check(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline int lb_rc_check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        lb_rc_passed++;
        return 1;
    }
    lb_rc_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 0;
}

/* CHECK(condition, "what, with %d", args) */
#define CHECK(ok, ...) lb_rc_check((ok) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* The closing line; 0 only when nothing failed and something was checked. */
static inline int lb_rc_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, lb_rc_passed, lb_rc_failed);
    return lb_rc_failed == 0 && lb_rc_passed > 0 ? 0 : 1;
}

/* A fresh directory for this test (mkdtemp under $TMPDIR or /tmp); exits on failure. */
static inline char *lb_rc_tempdir(const char *name)
{
    const char *base = getenv("TMPDIR");
    static char path[4096];
    snprintf(path, sizeof path, "%s/lb-%s-XXXXXX", base && *base ? base : "/tmp", name);
    if (!mkdtemp(path)) {
        printf("FAIL: cannot create a scratch directory %s\n", path);
        exit(1);
    }
    return path;
}

/* Remove path and everything under it (a test's scratch directory; symlinks are not followed). */
static inline void lb_rc_rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(len);
        if (!child)
            continue;
        snprintf(child, len, "%s/%s", path, e->d_name);
        lb_rc_rmtree(child);
        free(child);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

/* Remove the scratch directory when every check passed; keep it to look at otherwise. */
static inline void lb_rc_cleanup(const char *dir)
{
    if (lb_rc_failed == 0)
        lb_rc_rmtree(dir);
    else
        printf("scratch files kept in %s\n", dir);
}

#endif
