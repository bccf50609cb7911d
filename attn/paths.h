/* Joining a directory and a file name, the one rule every layer writes paths by: one '/' between
 * them, none added after a directory that already ends in one (or is empty). Part of the base
 * library (linbench_base). */
#ifndef LB_PATHS_H
#define LB_PATHS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dir + "/" + name, malloc'd; NULL when out of memory. */
char *lb_path_join(const char *dir, const char *name);

/* The same into buf. 0; or -1 when it does not fit, leaving buf empty (so an open fails instead
 * of writing elsewhere). */
int lb_path_join_buf(char *buf, size_t size, const char *dir, const char *name);

#ifdef __cplusplus
}
#endif

#endif
