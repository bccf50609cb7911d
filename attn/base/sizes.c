/* Whole numbers and byte sizes (see sizes.h). Strict on purpose: a value that is not exactly what
 * the help text says is refused, so a typo never silently becomes a different benchmark. */
#include "attn/base/sizes.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lb_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s)
        return -1;
    /* strtoll alone would accept " 12", "+12" and "": only [-]digits get that far */
    const char *digits = s[0] == '-' ? s + 1 : s;
    if (!isdigit((unsigned char)digits[0]))
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end != '\0')
        return -1;
    if (v < min || v > max)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int lb_parse_int(const char *s, int min, int max, int *out)
{
    int64_t v;
    if (lb_parse_int64(s, min, max, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* Bytes per `unit` (case-insensitive), or 0 for an unknown unit: "" or B; K, M, G, T alone or
 * with iB (1024^i); with B (1000^i). */
static uint64_t lb_size_unit(const char *unit)
{
    static const char prefixes[] = "kmgt";
    const char *p = *unit ? strchr(prefixes, tolower((unsigned char)*unit)) : NULL;
    if (!p)
        return !*unit || (tolower((unsigned char)unit[0]) == 'b' && !unit[1]);
    uint64_t binary = 1, decimal = 1;
    for (const char *q = prefixes; q <= p; q++) {
        binary *= 1024;
        decimal *= 1000;
    }
    const char *rest = unit + 1;
    if (!*rest || ((rest[0] == 'i' || rest[0] == 'I') && (rest[1] == 'b' || rest[1] == 'B') && !rest[2]))
        return binary;
    return (rest[0] == 'b' || rest[0] == 'B') && !rest[1] ? decimal : 0;
}

int lb_parse_size(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return -1; /* "", "G", "-1", "+1", " 1", ".5G" */
    const char *p = s;
    uint64_t whole = 0;
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (whole > (UINT64_MAX - digit) / 10)
            return -1;
        whole = whole * 10 + digit;
    }
    /* The fraction as num / den; digits past the 18th are below a millionth of a byte even in
     * terabytes and are only checked to be digits. */
    uint64_t num = 0, den = 1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1; /* "1.G" */
        for (; isdigit((unsigned char)*p); p++)
            if (den < 1000000000000000000ull) {
                num = num * 10 + (uint64_t)(*p - '0');
                den *= 10;
            }
    }
    while (*p == ' ')
        p++; /* "1.5 GiB", as lb_format_size writes it */
    uint64_t unit = lb_size_unit(p);
    if (unit == 0)
        return -1;
    if (unit == 1 && num != 0)
        return -1; /* a fraction of a byte */
    if (whole > UINT64_MAX / unit)
        return -1;
    uint64_t bytes = whole * unit;
    if (num != 0) {
        /* exact for the halves and quarters people write; otherwise to the nearest byte */
        double frac = floor((double)num / (double)den * (double)unit + 0.5);
        uint64_t extra = (uint64_t)frac;
        if (extra > UINT64_MAX - bytes)
            return -1;
        bytes += extra;
    }
    if (bytes < 1)
        return -1;
    *out = bytes;
    return 0;
}

void lb_format_size(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (!buf || size == 0)
        return;
    int u = 0;
    while (u < 6 && bytes >= (1ull << (10 * (u + 1))))
        u++;
    if (u == 0) {
        snprintf(buf, size, "%" PRIu64 " B", bytes);
        return;
    }
    char num[32];
    snprintf(num, sizeof num, "%.2f", (double)bytes / (double)(1ull << (10 * u)));
    /* "512.00" -> "512", "1.50" -> "1.5" */
    size_t len = strlen(num);
    while (len > 0 && num[len - 1] == '0')
        num[--len] = '\0';
    if (len > 0 && num[len - 1] == '.')
        num[--len] = '\0';
    snprintf(buf, size, "%s %s", num, units[u]);
}
