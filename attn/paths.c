/* Directory + file name (see paths.h). */
#include "attn/paths.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of the joined path, its NUL excluded, and whether a '/' goes between. */
static size_t joined_length(const char *dir, const char *name, int *slash)
{
    size_t dl = strlen(dir);
    *slash = dl > 0 && dir[dl - 1] != '/';
    return dl + (size_t)*slash + strlen(name);
}

static void join_into(char *p, const char *dir, const char *name, int slash)
{
    size_t dl = strlen(dir);
    memcpy(p, dir, dl);
    if (slash)
        p[dl] = '/';
    memcpy(p + dl + slash, name, strlen(name) + 1);
}

char *lb_path_join(const char *dir, const char *name)
{
    int slash;
    char *p = malloc(joined_length(dir, name, &slash) + 1);
    if (p)
        join_into(p, dir, name, slash);
    return p;
}

int lb_path_join_buf(char *buf, size_t size, const char *dir, const char *name)
{
    int slash;
    if (size == 0)
        return -1;
    if (joined_length(dir, name, &slash) >= size) {
        buf[0] = '\0';
        return -1;
    }
    join_into(buf, dir, name, slash);
    return 0;
}
