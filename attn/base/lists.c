/* Lists of whole numbers (see lists.h). */
#include "attn/base/lists.h"

#include <stdlib.h>
#include <string.h>

#include "attn/base/sizes.h"

int lb_list_each(const char *s, int (*fn)(const char *item, size_t len, void *ctx), void *ctx)
{
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int rc = fn(p, len, ctx);
        if (rc != 0)
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static int cmp_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

size_t lb_sort_unique_int64(int64_t *v, size_t count)
{
    if (count == 0)
        return 0;
    qsort(v, count, sizeof *v, cmp_int64);
    size_t unique = 1;
    for (size_t i = 1; i < count; i++)
        if (v[i] != v[unique - 1])
            v[unique++] = v[i];
    return unique;
}

typedef struct LbList {
    int64_t *v;
    size_t count, cap;
    int64_t min, max;
} LbList;

static int list_push(LbList *l, int64_t v)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        int64_t *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->count++] = v;
    return 0;
}

/* One item of a list, [item, item + len): "v" or "a:b" (a, 2a, 4a, ... <= b). */
static int list_item(const char *item, size_t len, void *ctx)
{
    LbList *l = ctx;
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, item, len);
    buf[len] = '\0';
    char *colon = strchr(buf, ':');
    int64_t a, b;
    if (!colon) {
        if (lb_parse_int64(buf, l->min, l->max, &a) != 0)
            return -1;
        return list_push(l, a);
    }
    *colon = '\0';
    if (lb_parse_int64(buf, l->min, l->max, &a) != 0 || lb_parse_int64(colon + 1, l->min, l->max, &b) != 0)
        return -1; /* a second ':' makes b unparsable */
    if (a > b || a <= 0)
        return -1; /* empty range, or no doubling ladder from a */
    for (int64_t v = a;; v *= 2) {
        if (list_push(l, v) != 0)
            return -1;
        if (v > b / 2)
            break; /* 2v > b, and 2v might overflow */
    }
    return 0;
}

int lb_parse_list(const char *s, int64_t min, int64_t max, int64_t **values, size_t *count)
{
    *values = NULL;
    *count = 0;
    if (!s)
        return -1;
    LbList l = {.min = min, .max = max};
    if (lb_list_each(s, list_item, &l) != 0) {
        free(l.v);
        return -1;
    }
    *values = l.v;
    *count = lb_sort_unique_int64(l.v, l.count);
    return 0;
}
