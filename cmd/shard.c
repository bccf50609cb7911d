/* The split of a sweep's cells between shards: see shard.h. */
#include "cmd/shard.h"

#include <errno.h>
#include <stdlib.h>

typedef struct {
    double cost;
    size_t index; /* in the sweep's order */
} Cell;

static int by_cost_desc(const void *a, const void *b)
{
    const Cell *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

static int parse_int(const char *s, const char *end, long *v)
{
    if (s == end || *s < '0' || *s > '9')
        return -1;
    char *stop;
    errno = 0;
    *v = strtol(s, &stop, 10);
    return errno || stop != end ? -1 : 0;
}

int lb_shard_parse(const char *text, int *index, int *count)
{
    const char *slash = text;
    while (*slash && *slash != '/')
        slash++;
    if (*slash != '/')
        return -1;
    const char *end = slash + 1;
    while (*end)
        end++;
    long i, n;
    if (parse_int(text, slash, &i) || parse_int(slash + 1, end, &n))
        return -1;
    if (n < 1 || n > LB_SHARDS_MAX || i < 0 || i >= n)
        return -1;
    *index = (int)i;
    *count = (int)n;
    return 0;
}

int lb_shard_assign(const int64_t *n, size_t nn, const int64_t *k, size_t nk, int count,
                    int **shard_of, size_t *cells)
{
    size_t total = 0;
    for (size_t i = 0; i < nn; i++) {
        total++;
        for (size_t j = 0; j < nk; j++)
            total += k[j] < n[i];
    }
    Cell *c = malloc((total ? total : 1) * sizeof *c);
    int *out = malloc((total ? total : 1) * sizeof *out);
    double *load = calloc((size_t)(count > 0 ? count : 1), sizeof *load);
    if (!c || !out || !load) {
        free(c);
        free(out);
        free(load);
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < nn; i++) {
        c[at].cost = (double)n[i] * (double)n[i];
        c[at].index = at;
        at++;
        for (size_t j = 0; j < nk; j++) {
            if (k[j] >= n[i])
                continue;
            c[at].cost = (double)n[i] * (double)k[j];
            c[at].index = at;
            at++;
        }
    }
    qsort(c, total, sizeof *c, by_cost_desc);
    for (size_t i = 0; i < total; i++) {
        int least = 0;
        for (int s = 1; s < count; s++)
            if (load[s] < load[least])
                least = s;
        load[least] += c[i].cost;
        out[c[i].index] = least;
    }
    free(c);
    free(load);
    *shard_of = out;
    *cells = total;
    return 0;
}
