/* Parsing of flag values (attn/base/sizes.c, attn/base/lists.c): integers, sizes with units, size formatting
 * and lists with doubling ranges; both what is accepted (and its value) and what is refused; and the
 * list helpers under them (the comma walk, sort-and-dedupe on random values). */
#include "attn/base/lists.h"
#include "attn/base/sizes.h"
#include "tests/lib/check.h"

/* s as a list in [min, max]: the values want holds before its first 0 or, where want[0] is 0,
 * refused (-1, no array, count 0). */
static void list_case(const char *s, int64_t min, int64_t max, const int64_t *want)
{
    int64_t *v = (int64_t *)&min;
    size_t count = 99, n = 0;
    while (want[n] != 0)
        n++;
    const int rc = lb_parse_list(s, min, max, &v, &count);
    int same = n ? rc == 0 && count == n : rc == -1 && v == NULL && count == 0;
    for (size_t i = 0; n && same && i < n; i++)
        same = v[i] == want[i];
    if (!lb_check(same, "list \"%s\" in [%" PRId64 ", %" PRId64 "]: rc %d, %zu values, want %zu (0: refused)",
                  s ? s : "(null)", min, max, rc, count, n)) {
        printf("  got:");
        for (size_t i = 0; rc == 0 && i < count; i++)
            printf(" %" PRId64, v[i]);
        printf("\n");
    }
    if (rc == 0)
        free(v);
}

/* lb_list_each's items of s, joined by '|' into buf ("a,,b" -> "a||b"). */
static int lb_item_append(const char *item, size_t len, void *buf)
{
    char *b = (char *)buf;
    size_t used = strlen(b);
    if (used + len + 2 > 256)
        return 7; /* stops the walk: lb_list_each must hand this back */
    if (used)
        b[used++] = '|';
    memcpy(b + used, item, len);
    b[used + len] = '\0';
    return 0;
}

static void lb_each_ok(const char *s, const char *want)
{
    char buf[256] = "";
    int rc = lb_list_each(s, lb_item_append, buf);
    lb_check(rc == 0 && strcmp(buf, want) == 0, "lb_list_each \"%s\": rc %d, items \"%s\", want \"%s\"", s, rc, buf,
             want);
}

/* lb_sort_unique_int64 on random values with repeats against a count by brute force. */
static void lb_sort_unique_random(void)
{
    int64_t v[200];
    size_t n = (size_t)lb_test_randint(1, 200);
    for (size_t i = 0; i < n; i++)
        v[i] = lb_test_randint(-50, 50);
    int64_t copy[200];
    memcpy(copy, v, n * sizeof v[0]);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = copy[j] == copy[i];
        distinct += !seen;
    }
    size_t u = lb_sort_unique_int64(v, n);
    int ok = u == distinct;
    for (size_t i = 1; ok && i < u; i++)
        ok = v[i - 1] < v[i];
    for (size_t i = 0; ok && i < n; i++) { /* every input value kept */
        int found = 0;
        for (size_t j = 0; j < u && !found; j++)
            found = v[j] == copy[i];
        ok = found;
    }
    lb_check(ok, "lb_sort_unique_int64 of %zu random values: %zu kept, want %zu strictly ascending", n, u, distinct);
}

int main(void)
{
    lb_test_init("test_args");

    lb_each_ok("a", "a");
    lb_each_ok("a,bc,d", "a|bc|d");
    lb_each_ok("a,,b", "a||b");
    lb_each_ok("", "");
    {
        char buf[256] = "";
        char long_list[600];
        memset(long_list, 'x', sizeof long_list - 1);
        long_list[sizeof long_list - 1] = '\0';
        lb_check(lb_list_each(long_list, lb_item_append, buf) == 7, "lb_list_each stops at and returns the first nonzero");
    }
    for (int i = 0; i < 20; i++)
        lb_sort_unique_random();
    lb_check(lb_sort_unique_int64(NULL, 0) == 0, "lb_sort_unique_int64 of nothing");

    static const struct {
        const char *s;
        int64_t min, max, want;
        int ok;
    } ints[] = {
        {"0", 0, 10, 0, 1}, {"10", 0, 10, 10, 1}, {"-5", -10, 10, -5, 1}, {"007", 0, 10, 7, 1},
        {"9223372036854775807", 0, INT64_MAX, INT64_MAX, 1}, {"-9223372036854775808", INT64_MIN, 0, INT64_MIN, 1},
        {"11", 0, 10, 0, 0}, {"-1", 0, 10, 0, 0}, {"", 0, 10, 0, 0}, {NULL, 0, 10, 0, 0}, {"-", -10, 10, 0, 0},
        {"+5", 0, 10, 0, 0}, {" 5", 0, 10, 0, 0}, {"5 ", 0, 10, 0, 0}, {"5x", 0, 10, 0, 0}, {"0x10", 0, 100, 0, 0},
        {"1e3", 0, 10000, 0, 0}, {"1.0", 0, 10, 0, 0}, {"9223372036854775808", 0, INT64_MAX, 0, 0},
        {"99999999999999999999999", 0, INT64_MAX, 0, 0},
    };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) { /* refused: -1, and v left alone */
        int64_t v = -12345;
        const int rc = lb_parse_int64(ints[k].s, ints[k].min, ints[k].max, &v);
        lb_check(ints[k].ok ? rc == 0 && v == ints[k].want : rc == -1 && v == -12345,
                 "int \"%s\" in [%" PRId64 ", %" PRId64 "]: rc %d value %" PRId64 ", want %s %" PRId64,
                 ints[k].s ? ints[k].s : "(null)", ints[k].min, ints[k].max, rc, v,
                 ints[k].ok ? "rc 0 and value" : "rc -1, value untouched:", ints[k].ok ? ints[k].want : -12345);
    }
    int i = -1;
    lb_check(lb_parse_int("12", 1, 1024, &i) == 0 && i == 12, "lb_parse_int \"12\": %d", i);
    lb_check(lb_parse_int("2147483648", 1, 2147483647, &i) == -1, "lb_parse_int 2^31 accepted as %d", i);
    lb_check(lb_parse_int("0", 1, 1024, &i) == -1, "lb_parse_int \"0\" in [1, 1024] accepted");

    /* want 0: refused ("1.5": a fraction of a byte; "16777216T": 2^64) */
    static const struct {
        const char *s;
        uint64_t want;
    } sizes[] = {
        {"16G", 16ull << 30}, {"16GiB", 16ull << 30}, {"16gib", 16ull << 30}, {"16GB", 16000000000ull},
        {"512M", 512ull << 20}, {"512MiB", 512ull << 20}, {"512mb", 512000000ull}, {"1.5GiB", 3ull << 29},
        {"1.5G", 3ull << 29}, {"0.5K", 512}, {"1000KB", 1000000}, {"1000", 1000}, {"1000B", 1000}, {"1", 1},
        {"2T", 2ull << 40}, {"2TB", 2000000000000ull}, {"1.5 GiB", 3ull << 29}, /* what lb_format_size writes */
        {"18446744073709551615", UINT64_MAX}, {"16777215T", 16777215ull << 40}, {"0", 0}, {"0G", 0}, {"0.0001", 0},
        {"-1", 0}, {"-1G", 0}, {"+1G", 0}, {"1.5Q", 0}, {"", 0}, {NULL, 0}, {"G", 0}, {"GiB", 0}, {".5G", 0},
        {"1.G", 0}, {"1.5", 0}, {"1..5G", 0}, {"1G ", 0}, {" 1G", 0}, {"1GiBs", 0}, {"16777216T", 0},
        {"18446744073709551616", 0}, {"99999999999999999999999G", 0}, {"20000000000G", 0},
    };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint64_t v = 777;
        const int rc = lb_parse_size(sizes[k].s, &v);
        lb_check(sizes[k].want ? rc == 0 && v == sizes[k].want : rc == -1 && v == 777,
                 "size \"%s\": rc %d value %" PRIu64 ", want %" PRIu64 " (0: refused)", sizes[k].s ? sizes[k].s : "(null)",
                 rc, v, sizes[k].want);
    }

    static const struct {
        uint64_t bytes;
        const char *want;
    } formats[] = {{800, "800 B"},           {1, "1 B"},          {1023, "1023 B"},  {1024, "1 KiB"},
                   {3ull << 29, "1.5 GiB"},  {512ull << 20, "512 MiB"}, {16ull << 30, "16 GiB"},
                   {16000000000ull, "14.9 GiB"}, {5ull << 40, "5 TiB"}, {UINT64_MAX, "16 EiB"}};
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
        char buf[32];
        lb_format_size(formats[k].bytes, buf, sizeof buf);
        lb_check(strcmp(buf, formats[k].want) == 0, "format %" PRIu64 ": \"%s\", want \"%s\"", formats[k].bytes, buf,
                 formats[k].want);
    }
    char small[4] = "xyz";
    lb_format_size(3ull << 29, small, sizeof small);
    lb_check(strlen(small) == 3, "format into a 4-byte buffer is not truncated safely: \"%s\"", small);

    static const struct {
        const char *s;
        int64_t min, max, want[9]; /* ends at the first 0; none: refused */
    } lists[] = {
        {"512:65536", 1, 1048576, {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}},
        {"128,256:1024", 1, 1048576, {128, 256, 512, 1024}},
        {"300:1000,100:250,800", 1, 100000, {100, 200, 300, 600, 800}}, /* sorted, b off the ladder */
        {"256,64,128,128:256,64", 1, 1000, {64, 128, 256}},                /* duplicates merged */
        {"7", 1, 10, {7}}, {"7:7", 1, 10, {7}}, {"7:13", 1, 13, {7}}, {"1:8", 1, 8, {1, 2, 4, 8}},
        /* refused; in [1, 1024], "512:2048": b past max */
        {"0", 1, 1024, {0}}, {"a", 1, 1024, {0}}, {"", 1, 1024, {0}}, {NULL, 1, 1024, {0}}, {"5,,6", 1, 1024, {0}},
        {",5", 1, 1024, {0}}, {"5,", 1, 1024, {0}}, {"512:", 1, 1024, {0}}, {":512", 1, 1024, {0}},
        {"1:2:4", 1, 1024, {0}}, {"512:2048", 1, 1024, {0}}, {"2048", 1, 1024, {0}}, {"128, 256", 1, 1024, {0}},
        {"1024:512", 1, 4096, {0}}, {"0:8", 0, 1024, {0}} /* no ladder from 0 */, {"-4:4", -10, 10, {0}},
    };
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        list_case(lists[k].s, lists[k].min, lists[k].max, lists[k].want);
    static const int64_t top[] = {INT64_MAX / 2 + 1, 0};
    char big[64];
    snprintf(big, sizeof big, "%" PRId64 ":%" PRId64, INT64_MAX / 2 + 1, INT64_MAX);
    list_case(big, 1, INT64_MAX, top); /* the next rung would overflow */

    return lb_test_finish("test_args");
}
