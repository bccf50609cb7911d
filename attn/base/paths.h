/* Paths, the one rule every layer writes them by: a directory and a file name joined with one
 * '/' between them, none added after a directory that already ends in one (or is empty); and a
 * file in such a directory opened for writing only where it is linbench's own plain file. Part of
 * the base library (linbench_base). */
#ifndef LB_PATHS_H
#define LB_PATHS_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* dir + "/" + name, malloc'd; NULL when out of memory. */
char *lb_path_join(const char *dir, const char *name);

/* The same into buf. 0; or -1 when it does not fit, leaving buf empty (so an open fails instead
 * of writing elsewhere). */
int lb_path_join_buf(char *buf, size_t size, const char *dir, const char *name);

/* The executable file `name` on PATH (an empty entry is the current directory) into buf: 0, or
 * -1 when there is none. */
int lb_find_on_path(const char *name, char *buf, size_t size);

/* open(2) for a file linbench writes where others may write too: never through a symbolic link,
 * only into a plain file with one name (a planted link, FIFO or device would send the write
 * elsewhere); O_CLOEXEC added, O_TRUNC applied once the file is known plain. -1 with errno: ELOOP
 * where the name is not such a file (lb_open_plain_strerror words it). */
int lb_open_plain(const char *path, int flags, mode_t mode);

/* fopen(path, "w") through lb_open_plain: NULL with errno as it sets it. */
FILE *lb_fopen_plain(const char *path);

/* strerror, except that ELOOP says why lb_open_plain refused the name. */
const char *lb_open_plain_strerror(int err);

#endif
