/* Output directories: see outdir.h. */
#include "cmd/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "reports/breakdown_csv.h"
#include "reports/grid.h"
#include "reports/plot_figure.h"
#include "reports/speedups.h"

/* The files a sweep writes: finding any of them means the directory holds results. --force
 * removes them in this order, raw.csv last, so what a killed --force leaves is never old grids
 * beside new rows. */
static const char *const result_files[] = {"time_speedup.csv", "memory_speedup.csv", LB_ENERGY_SPEEDUP_FILE, LB_SPEEDUPS_FILE,
                                           LB_BREAKDOWN_FILE, "meta.csv", "raw.csv"};
#define RESULT_COUNT (sizeof result_files / sizeof result_files[0])

#define LOCK_NAME ".linbench.lock"

int lb_outdir_check_length(const char *dir, const char *flag)
{
    size_t len = strlen(dir);
    if (len <= LB_DIR_MAX)
        return 0;
    return lb_usage_error("invalid argument \"%s\" for %s: should be a path of at most %d bytes (this one has %zu)",
                          dir, flag, LB_DIR_MAX, len);
}

/* What the last lb_outdir_prepare made, for lb_outdir_abandon: the directory ("": none), the
 * shortest prefix of it that did not exist before ("": none), and whether the lock file is ours. */
static char made_dir[4096], made_top[4096];
static int lock_fd = -1, lock_made;

void lb_outdir_abandon(void)
{
    if (!made_dir[0])
        return;
    char path[4096];
    if (lock_made) {
        (void)lb_path_join_buf(path, sizeof path, made_dir, LOCK_NAME);
        unlink(path); /* still locked by us: a racer that opened it fails its flock */
    }
    if (lock_fd >= 0)
        close(lock_fd);
    lock_fd = -1;
    lock_made = 0;
    if (made_top[0]) {
        snprintf(path, sizeof path, "%s", made_dir);
        size_t top = strlen(made_top);
        /* rmdir fails harmlessly once something is inside */
        while (strlen(path) >= top && rmdir(path) == 0) {
            char *slash = strrchr(path, '/');
            if (!slash)
                break;
            *slash = '\0';
        }
    }
    made_dir[0] = made_top[0] = '\0';
}

/* mkdir -p, the first directory it made into top (4096 bytes) when top is not NULL. Another process
 * making the same directory at the same moment is not an error: the lock decides who writes. 0, or
 * -1 with errno set. */
static int make_dirs(const char *dir, char *top)
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
        if (mkdir(path, 0777) == 0) {
            if (top && !top[0])
                snprintf(top, 4096, "%s", path);
        } else if (errno != EEXIST || stat(path, &st) != 0) {
            return -1;
        } else if (!S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        path[i] = saved;
    }
    return 0;
}

/* Take dir's lock. 0 when held; 1 when another process holds it (its pid in *holder, 0 when
 * not yet written); -1 with errno on failure. */
static int take_lock(const char *dir, long *holder)
{
    char path[4096];
    (void)lb_path_join_buf(path, sizeof path, dir, LOCK_NAME);
    *holder = 0;
    for (int attempt = 0; attempt < 16; attempt++) {
        int made = 0;
        int fd = lb_open_plain(path, O_RDWR | O_CREAT | O_EXCL, 0666);
        if (fd >= 0)
            made = 1;
        else if (errno == EEXIST)
            fd = lb_open_plain(path, O_RDWR, 0);
        if (fd < 0) {
            if (errno == ENOENT)
                continue; /* removed by a run abandoning the directory between our two opens */
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            char buf[32] = "";
            ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
            if (got > 0) {
                buf[got] = '\0';
                *holder = strtol(buf, NULL, 10);
            }
            close(fd);
            if (e == EWOULDBLOCK)
                return 1;
            errno = e;
            return -1;
        }
        /* The file may have been unlinked between open and flock (a run abandoning the
         * directory); a lock on it guards nothing, so only the file at the path counts. */
        struct stat held, now;
        if (fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino) {
            char pid[32];
            int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
                (void)0; /* the pid is only for the message of a process that loses the race */
            lock_fd = fd;
            lock_made = made;
            return 0;
        }
        close(fd);
    }
    errno = EAGAIN;
    return -1;
}

/* Take dir's lock for `flag`: 0, or an exit code after one line (another linbench holds it, or
 * the lock file cannot be made). */
static int lock_dir(const char *dir, const char *flag)
{
    long holder;
    const int locked = take_lock(dir, &holder);
    if (locked < 0 && errno == ELOOP)
        return lb_usage_error("invalid argument \"%s\" for %s: its lock file %s/%s is %s: remove it, or use another directory",
                              dir, flag, dir, LOCK_NAME, lb_open_plain_strerror(errno));
    if (locked < 0)
        return lb_usage_error("invalid argument \"%s\" for %s: should be a writable directory (%s)", dir, flag, strerror(errno));
    if (locked == 0)
        return 0;
    char pid[32] = "";
    if (holder > 0)
        snprintf(pid, sizeof pid, " (pid %ld)", holder);
    fprintf(stderr, "linbench: %s is in use by another linbench%s: wait for it to end, or use another directory\n", dir, pid);
    return LB_EXIT_FAILURE;
}

/* Temporary files (NAME.tmp.XXXXXX) that a run killed mid-write left: under the lock nobody
 * else is writing them. */
static void remove_stale_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        for (size_t i = 0; i < RESULT_COUNT; i++) {
            size_t len = strlen(result_files[i]);
            if (strncmp(e->d_name, result_files[i], len) == 0 && strncmp(e->d_name + len, ".tmp.", 5) == 0) {
                char path[4096];
                (void)lb_path_join_buf(path, sizeof path, dir, e->d_name);
                unlink(path);
            }
        }
    }
    closedir(d);
}

int lb_outdir_prepare(const char *dir, int force, const char *flag, int offer)
{
    struct stat st;
    lb_outdir_abandon();
    lock_made = 0;
    if (dir[0] == '\0')
        return lb_usage_error("invalid argument \"\" for %s: should be a directory path", flag);
    int rc = lb_outdir_check_length(dir, flag);
    if (rc != 0)
        return rc;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return lb_usage_error("invalid argument \"%s\" for %s: should be a directory, and this is a file", dir, flag);
    snprintf(made_dir, sizeof made_dir, "%s", dir);
    if (make_dirs(dir, made_top) != 0) {
        int e = errno;
        lb_outdir_abandon();
        return lb_usage_error("invalid argument \"%s\" for %s: should be a directory that can be created (%s)", dir, flag, strerror(e));
    }
    if ((rc = lock_dir(dir, flag)) != 0) {
        if (rc == LB_EXIT_FAILURE) /* the directory is the other process's now: leave it be */
            made_dir[0] = made_top[0] = '\0';
        lb_outdir_abandon();
        return rc;
    }
    for (size_t i = 0; i < RESULT_COUNT && !force; i++) {
        char path[4096], offered[LB_DIR_MAX + 64] = "";
        (void)lb_path_join_buf(path, sizeof path, dir, result_files[i]);
        if (lstat(path, &st) != 0) /* a name planted as a link counts too */
            continue;
        lb_outdir_abandon(); /* our lock file, if we made it: nothing written */
        const int resume = offer & LB_OUTDIR_OFFER_RESUME;
        if (offer & LB_OUTDIR_OFFER_FORCE)
            snprintf(offered, sizeof offered, "; pass --force to overwrite%s%s%s", resume ? " or --resume " : "",
                     resume ? dir : "", resume ? " to continue" : "");
        return lb_usage_error("%s %s already holds results (%s): should be a new or empty directory%s", flag, dir,
                              result_files[i], offered);
    }
    remove_stale_temporaries(dir);
    /* Writing a file is the only test that also holds for root and read-only mounts. */
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/.linbench-write-test-%ld", dir, (long)getpid());
    int fd = lb_open_plain(probe, O_WRONLY | O_CREAT | O_EXCL, 0666);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
        return 0;
    }
    lb_outdir_abandon();
    return lb_usage_error("invalid argument \"%s\" for %s: should be a writable directory (%s)", dir, flag,
                          lb_open_plain_strerror(e));
}

int lb_outdir_prepare_out(LbCommandFlags *f, int offer)
{
    static char name[64];
    int claimed = 0;
    if (!f->out) {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        /* claimed by mkdir, which fails where anything has the name (a dangling link too), so
         * that two runs started in one second take two names */
        for (int i = 1; i < 1000 && !claimed; i++) {
            if (i == 1)
                snprintf(name, sizeof name, "linbench-%s", stamp);
            else
                snprintf(name, sizeof name, "linbench-%s-%d", stamp, i);
            if (mkdir(name, 0777) == 0)
                claimed = 1;
            else if (errno != EEXIST)
                break; /* lb_outdir_prepare says why */
        }
        f->out = name;
    }
    const int rc = lb_outdir_prepare(f->out, f->force, "--out", LB_OUTDIR_OFFER_FORCE | offer);
    if (claimed && rc == 0) /* made here, not by lb_outdir_prepare: lb_outdir_abandon removes it all the same */
        snprintf(made_top, sizeof made_top, "%s", name);
    else if (claimed)
        rmdir(name);
    return rc;
}

int lb_outdir_lock_existing(const char *dir, const char *flag)
{
    int rc = lb_outdir_check_length(dir, flag);
    if (rc != 0)
        return rc;
    char path[4096];
    struct stat st;
    (void)lb_path_join_buf(path, sizeof path, dir, "meta.csv");
    if (stat(path, &st) != 0)
        return lb_usage_error("invalid argument \"%s\" for %s: should be a directory written by linbench sweep (cannot read %s: %s)",
                              dir, flag, path, strerror(errno));
    if ((rc = lock_dir(dir, flag)) != 0)
        return rc;
    remove_stale_temporaries(dir);
    return 0;
}

/* Whether NAME.gp in dir is a script linbench plot wrote (a plain file that begins with its mark). */
static int is_plot_script(const char *dir, const char *name)
{
    char path[4096 + 512], line[sizeof LB_PLOT_MARK] = "";
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    const int ours = fgets(line, sizeof line, f) && strcmp(line, LB_PLOT_MARK) == 0;
    fclose(f);
    return ours;
}

/* The figures linbench plot drew in dir (outdir.h, lb_outdir_clear_forced). */
static int clear_plots(const char *dir)
{
    static const char *const made[] = {".png", ".svg", ".plot.csv", ".gp"}; /* the script last */
    char **stems = NULL;
    size_t count = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) { /* the names first: nothing is removed while reading */
        const size_t len = strlen(e->d_name);
        char **more;
        if (len <= 3 || strcmp(e->d_name + len - 3, ".gp") != 0 || !is_plot_script(dir, e->d_name) ||
            !(more = realloc(stems, (count + 1) * sizeof *stems)))
            continue;
        stems = more;
        if ((stems[count] = strndup(e->d_name, len - 3)) != NULL)
            count++;
    }
    if (d)
        closedir(d);
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; j < sizeof made / sizeof made[0] && rc == 0; j++) {
            char path[4096 + 512];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s%s", dir, stems[i], made[j]);
            if (lstat(path, &st) != 0 || S_ISDIR(st.st_mode)) /* not linbench's: left as it is */
                continue;
            if (unlink(path) != 0 && errno != ENOENT) {
                fprintf(stderr, "linbench: cannot remove %s before overwriting the results (--force): %s\n", path,
                        strerror(errno));
                rc = LB_EXIT_FAILURE;
            }
        }
        free(stems[i]);
    }
    free(stems);
    return rc;
}

int lb_outdir_clear_results(const char *dir)
{
    for (size_t i = 0; i < RESULT_COUNT; i++) {
        char path[4096];
        (void)lb_path_join_buf(path, sizeof path, dir, result_files[i]);
        if (unlink(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "linbench: cannot remove %s before overwriting it (--force): %s\n", path, strerror(errno));
            return LB_EXIT_FAILURE;
        }
    }
    return 0;
}

int lb_outdir_clear_forced(const char *dir)
{
    return clear_plots(dir) != 0 ? LB_EXIT_FAILURE : lb_outdir_clear_results(dir);
}

int lb_outdir_create(const char *dir)
{
    if (make_dirs(dir, NULL) == 0) /* a plot does not abandon */
        return 0;
    fprintf(stderr, "linbench: cannot create %s: %s\n", dir, strerror(errno));
    return LB_EXIT_FAILURE;
}
