/* Directory + file name (see paths.h). */
#include "attn/base/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *lb_path_join(const char *dir, const char *name)
{
    const size_t size = strlen(dir) + strlen(name) + 2; /* a '/' and the NUL at most */
    char *p = malloc(size);
    if (p)
        lb_path_join_buf(p, size, dir, name);
    return p;
}

int lb_find_on_path(const char *name, char *buf, size_t size)
{
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *end = strchr(p, ':');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        const int n = snprintf(buf, size, "%.*s/%s", (int)len, len ? p : ".", name);
        struct stat st;
        if (n > 0 && (size_t)n < size && stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        p = end ? end + 1 : NULL;
    }
    return -1;
}

int lb_path_join_buf(char *buf, size_t size, const char *dir, const char *name)
{
    const size_t dl = strlen(dir);
    const int n = snprintf(buf, size, "%s%s%s", dir, dl > 0 && dir[dl - 1] != '/' ? "/" : "", name);
    if (n >= 0 && (size_t)n < size)
        return 0;
    if (size > 0)
        buf[0] = '\0';
    return -1;
}

/* What lb_open_plain writes into: a regular file with one name. */
static int is_plain(const struct stat *st) { return S_ISREG(st->st_mode) && st->st_nlink == 1; }

/* Whether something is at path that lb_open_plain refuses: a link, even a dangling one, a hard
 * link, a FIFO ... */
static int is_foreign(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && !is_plain(&st);
}

int lb_open_plain(const char *path, int flags, mode_t mode)
{
    /* Refused before open where it can be: opening a device or a FIFO can itself have effects. */
    if (is_foreign(path)) {
        errno = ELOOP;
        return -1;
    }
    /* O_NONBLOCK so that a FIFO swapped in after the check cannot hang the open. */
    int fd = open(path, (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (!is_plain(&st))
        e = ELOOP;
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        e = errno;
    else if ((flags & O_TRUNC) && ftruncate(fd, 0) != 0)
        e = errno;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

FILE *lb_fopen_plain(const char *path)
{
    int fd = lb_open_plain(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

const char *lb_open_plain_strerror(int err)
{
    if (err == ELOOP)
        return "not a plain file of its own (a symbolic link, a hard link or a special file), which linbench does not write through";
    return strerror(err);
}
