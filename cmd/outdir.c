/* Output directories: see outdir.h. */
#include "cmd/outdir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/commands.h"

/* The files a sweep writes: finding any of them means the directory holds results. */
static const char *const result_files[] = {"raw.csv", "meta.csv", "time_speedup.csv", "memory_speedup.csv"};

void lb_outdir_path(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

void lb_outdir_default(char *buf, size_t size)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, size, "linbench-%s", stamp);
    struct stat st;
    for (int i = 2; stat(buf, &st) == 0 && i < 1000; i++)
        snprintf(buf, size, "linbench-%s-%d", stamp, i);
}

/* The nearest existing ancestor of `dir` (the directory mkdir -p would create inside). */
static void existing_ancestor(const char *dir, char *buf, size_t size)
{
    snprintf(buf, size, "%s", dir);
    struct stat st;
    while (stat(buf, &st) != 0) {
        char *slash = strrchr(buf, '/');
        if (!slash) {
            snprintf(buf, size, ".");
            return;
        }
        if (slash == buf) {
            buf[1] = '\0';
            return;
        }
        *slash = '\0';
    }
}

int lb_outdir_check(const char *dir, int force, const char *flag)
{
    struct stat st;
    if (dir[0] == '\0')
        return lb_usage_error("invalid argument \"\" for --%s: should be a directory path", flag);
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return lb_usage_error("invalid argument \"%s\" for --%s: should be a directory, and this is a file", dir, flag);
        if (access(dir, W_OK | X_OK) != 0)
            return lb_usage_error("invalid argument \"%s\" for --%s: should be a writable directory (%s)", dir, flag, strerror(errno));
        for (size_t i = 0; i < sizeof result_files / sizeof result_files[0]; i++) {
            char path[4096];
            lb_outdir_path(path, sizeof path, dir, result_files[i]);
            if (!force && stat(path, &st) == 0)
                return lb_usage_error("--%s %s already holds results (%s): should be a new or empty directory; pass --force to overwrite or --resume %s to continue",
                                      flag, dir, result_files[i], dir);
        }
        return 0;
    }
    char parent[4096];
    existing_ancestor(dir, parent, sizeof parent);
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return lb_usage_error("invalid argument \"%s\" for --%s: should be a path whose parent is a directory", dir, flag);
    if (access(parent, W_OK | X_OK) != 0)
        return lb_usage_error("invalid argument \"%s\" for --%s: cannot be created in %s (%s)", dir, flag, parent, strerror(errno));
    return 0;
}

int lb_outdir_create(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "linbench: cannot create %s: %s\n", path, strerror(errno));
            return LB_EXIT_FAILURE;
        }
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "linbench: cannot create %s: %s\n", path, strerror(errno));
        return LB_EXIT_FAILURE;
    }
    return 0;
}
