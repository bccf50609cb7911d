/* The one test harness (every suite, C and C++): counted checks that print what failed with file
 * and line, a closing "N passed, M failed" line; random inputs from a seed each run prints (set
 * LB_TEST_SEED to replay one); array comparisons with a mixed tolerance
 * |out - ref| <= atol + rtol |ref| that print the first mismatches; NaN poison for outputs so an
 * unwritten element shows; files read back whole; and scratch directories, removed when every
 * check passed. */
#ifndef LB_TESTS_LIB_CHECK_H
#define LB_TESTS_LIB_CHECK_H

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attn/rng.h"

static int lb_test_passed, lb_test_failed;
static uint64_t lb_test_seed;
static uint64_t lb_test_stream; /* advanced by every random array, so each one is fresh */

/* The run's seed: LB_TEST_SEED if set, else the clock. Printed so a failure can be replayed. */
static inline void lb_test_init(const char *name)
{
    const char *env = getenv("LB_TEST_SEED");
    lb_test_seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    /* Line by line, so a test killed by a signal still shows how far it got. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("%s: seed %" PRIu64 " (replay with LB_TEST_SEED=%" PRIu64 ")\n", name, lb_test_seed,
           lb_test_seed);
}

/* Count one check; print the message with where it was made when it failed. Returns ok. */
static inline int lb_check_at(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline int lb_check_at(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        lb_test_passed++;
        return 1;
    }
    lb_test_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 0;
}

/* lb_check(condition, "what, with %d", args): one counted check, its failure naming this line. */
#define lb_check(ok, ...) lb_check_at((ok) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* The closing line; the exit status (0 only when nothing failed and something was checked). */
static inline int lb_test_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, lb_test_passed, lb_test_failed);
    return lb_test_failed == 0 && lb_test_passed > 0 ? 0 : 1;
}

/* x (count) uniform in [lo, hi] (attn/rng.h), a new stream each call. */
static inline void lb_test_random(float *x, int64_t count, float lo, float hi)
{
    uint64_t stream = lb_test_seed * 1000003u + ++lb_test_stream;
    for (int64_t i = 0; i < count; i++)
        x[i] = lb_rng_range(stream, (uint64_t)i, lo, hi);
}

/* 64 random bits, a new draw each call. */
static inline uint64_t lb_test_u64(void) { return lb_rng_mix(lb_test_seed * 1000003u + ++lb_test_stream, 0); }

/* An integer in [lo, hi], a new draw each call. */
static inline int64_t lb_test_randint(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(lb_test_u64() % (uint64_t)(hi - lo + 1));
}

static inline float *lb_test_alloc(int64_t count)
{
    float *p = (float *)malloc((size_t)(count > 0 ? count : 1) * sizeof *p);
    if (!p) {
        printf("FAIL: out of host memory for %" PRId64 " floats\n", count);
        exit(1);
    }
    return p;
}

static inline void lb_test_poison(float *x, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        x[i] = NAN;
}

/* lb_check_close(what, out, ref, count, atol, rtol): one check, out (count) against ref (count),
 * |out - ref| <= atol + rtol |ref| elementwise (NaN fails). Prints the first mismatches and the
 * worst relative error. */
#define lb_check_close(...) lb_check_close_at(__FILE__, __LINE__, __VA_ARGS__)
static inline int lb_check_close_at(const char *file, int line, const char *what, const float *out,
                                    const double *ref, int64_t count, double atol, double rtol)
{
    int64_t bad = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < count; i++) {
        double err = fabs((double)out[i] - ref[i]);
        int ok = err <= atol + rtol * fabs(ref[i]); /* false for NaN */
        double rel = err / (fabs(ref[i]) > 1e-30 ? fabs(ref[i]) : 1e-30);
        if (!(rel <= worst))
            worst = isnan(rel) ? INFINITY : rel;
        if (!ok) {
            if (bad < 5)
                printf("  %s[%" PRId64 "]: got %.9g, want %.9g (|diff| %.3g > %.3g + %.3g |ref|)\n",
                       what, i, (double)out[i], ref[i], err, atol, rtol);
            bad++;
        }
    }
    return lb_check_at(bad == 0, file, line, "%s: %" PRId64 " of %" PRId64 " elements off (worst relative error %.3g)",
                       what, bad, count, worst);
}

/* lb_check_same(what, a, b, count): one check, a and b (count) identical bit for bit. Prints the
 * first differences. */
#define lb_check_same(...) lb_check_same_at(__FILE__, __LINE__, __VA_ARGS__)
static inline int lb_check_same_at(const char *file, int line, const char *what, const float *a, const float *b,
                                   int64_t count)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < count; i++) {
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
            if (bad < 5)
                printf("  %s[%" PRId64 "]: %.9g != %.9g\n", what, i, (double)a[i], (double)b[i]);
            bad++;
        }
    }
    return lb_check_at(bad == 0, file, line, "%s: %" PRId64 " of %" PRId64 " elements differ", what, bad, count);
}

#ifdef LB_CHECK_H
/* Rows from `from` on of a check table (attn/check.h), printed, each one counted check. */
static inline void lb_check_rows(const LbCheckTable *t, size_t from)
{
    for (size_t i = from; i < t->count; i++) {
        const LbCheckRow *r = &t->rows[i];
        printf("  %-18s %-5s %-48s rel err %.3e (limit %.1e)%s%s\n", r->op, lb_dtype_name(r->dtype), r->shape,
               r->rel_error, r->threshold, r->ok ? "" : "  <-- FAIL ", r->error);
        lb_check(r->ok, "%s %s %s: relative error %.3e above %.1e %s", r->op, lb_dtype_name(r->dtype), r->shape,
                 r->rel_error, r->threshold, r->error);
    }
}

/* One counted check through the table's comparison and op's tolerance (lb_check_compare). */
static inline int lb_check_against(LbBackend *be, const char *op, const char *what, const float *out,
                                   const float *ref, int64_t count)
{
    LbCheckTable t = {0};
    const int failed = lb_test_failed;
    if (lb_check_compare(be, op, what, out, ref, count, &t) == 0)
        lb_check_rows(&t, 0);
    else
        lb_check(0, "%s: out of memory recording the check", what);
    lb_check_table_free(&t);
    return lb_test_failed == failed;
}
#endif

/* A file's bytes (malloc'd, with a NUL after them so that a text reads as a string) and, where
 * len is not NULL, their count; NULL when it cannot be read. */
static inline char *lb_slurp_len(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = (char *)malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = s ? fread(s, 1, (size_t)(n > 0 ? n : 0), f) : 0;
    if (s)
        s[got] = '\0';
    if (len)
        *len = got;
    fclose(f);
    return s;
}

static inline char *lb_slurp(const char *path) { return lb_slurp_len(path, NULL); }

/* The bytes of dir/name, as lb_slurp. */
static inline char *lb_slurp_in(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lb_slurp(path);
}

/* Whether a and b (malloc'd, as lb_slurp's, or NULL) hold the same text; frees both. */
static inline int lb_same_text(char *a, char *b)
{
    const int same = a && b && strcmp(a, b) == 0;
    free(a);
    free(b);
    return same;
}

/* A fresh directory for this test (mkdtemp under $TMPDIR or /tmp, named lb-NAME-XXXXXX); exits
 * on failure. The path is kept in a static buffer, which the next call overwrites; 256 bytes, so
 * that the tests' paths built under it fit their buffers. */
static inline char *lb_test_tempdir(const char *name)
{
    const char *base = getenv("TMPDIR");
    static char path[256];
    int len = snprintf(path, sizeof path, "%s/lb-%s-XXXXXX", base && *base ? base : "/tmp", name);
    if (len < 0 || (size_t)len >= sizeof path || !mkdtemp(path)) {
        printf("FAIL: cannot create a scratch directory %s\n", path);
        exit(1);
    }
    return path;
}

/* Remove path and everything under it (a test's scratch directory; symlinks are not followed). */
static inline void lb_test_rmtree(const char *path)
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
        char *child = (char *)malloc(len);
        if (!child)
            continue;
        snprintf(child, len, "%s/%s", path, e->d_name);
        lb_test_rmtree(child);
        free(child);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

/* Remove the scratch directory when every check passed; keep it to look at otherwise. */
static inline void lb_test_cleanup(const char *dir)
{
    if (lb_test_failed == 0)
        lb_test_rmtree(dir);
    else
        printf("scratch files kept in %s\n", dir);
}

#endif
