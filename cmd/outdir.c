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

/* The directories lb_outdir_prepare made, deepest last, for lb_outdir_abandon. */
static char created[16][4096];
static int created_count;

void lb_outdir_abandon(void)
{
    while (created_count > 0)
        rmdir(created[--created_count]); /* fails harmlessly once something is inside */
}

/* mkdir -p, remembering what it made. 0, or -1 with errno set. */
static int make_dirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    size_t len = strlen(path);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) != 0)
                return -1;
            if (created_count < 16)
                snprintf(created[created_count++], sizeof created[0], "%s", path);
        } else if (!S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        path[i] = saved;
    }
    return 0;
}

int lb_outdir_prepare(const char *dir, int force, const char *flag)
{
    struct stat st;
    created_count = 0;
    if (dir[0] == '\0')
        return lb_usage_error("invalid argument \"\" for --%s: should be a directory path", flag);
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return lb_usage_error("invalid argument \"%s\" for --%s: should be a directory, and this is a file", dir, flag);
    if (stat(dir, &st) == 0 && !force) {
        for (size_t i = 0; i < sizeof result_files / sizeof result_files[0]; i++) {
            char path[4096];
            lb_outdir_path(path, sizeof path, dir, result_files[i]);
            if (stat(path, &st) == 0)
                return lb_usage_error("--%s %s already holds results (%s): should be a new or empty directory; pass --force to overwrite or --resume %s to continue",
                                      flag, dir, result_files[i], dir);
        }
    }
    if (make_dirs(dir) != 0) {
        int e = errno;
        lb_outdir_abandon();
        return lb_usage_error("invalid argument \"%s\" for --%s: should be a directory that can be created (%s)", dir, flag, strerror(e));
    }
    /* Writing a file is the only test that also holds for root and read-only mounts. */
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/.linbench-write-test-%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "w");
    int e = errno;
    if (f) {
        fclose(f);
        unlink(probe);
        return 0;
    }
    lb_outdir_abandon();
    return lb_usage_error("invalid argument \"%s\" for --%s: should be a writable directory (%s)", dir, flag, strerror(e));
}

int lb_outdir_create(const char *dir)
{
    created_count = 0;
    if (make_dirs(dir) == 0)
        return 0;
    fprintf(stderr, "linbench: cannot create %s: %s\n", dir, strerror(errno));
    return LB_EXIT_FAILURE;
}
