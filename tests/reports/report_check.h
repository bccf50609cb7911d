/* Counted checks for tests/reports/: each failure printed with where it happened, a closing
 * "N passed, M failed" line, and a scratch directory per test under the build tree. */
#ifndef LB_TESTS_REPORT_CHECK_H
#define LB_TESTS_REPORT_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
