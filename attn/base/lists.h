/* Lists of whole numbers, as flags and meta.csv spell them ("512,1024", "512:65536"), and the
 * sort-and-dedupe every grid axis goes through. Part of the base library (linbench_base). Pure
 * functions: nothing here prints. */
#ifndef LB_LISTS_H
#define LB_LISTS_H

#include <stddef.h>
#include <stdint.h>

/* Calls fn(item, len, ctx) on each item of the comma list s, in order, an item being the bytes
 * [item, item + len) between commas ("a,,b" has an empty second item, len 0; "" is one empty
 * item). Stops at, and returns, fn's first nonzero value; 0 when every item was taken. */
int lb_list_each(const char *s, int (*fn)(const char *item, size_t len, void *ctx), void *ctx);

/* A comma list of items, each a value or a doubling range "a:b" (a, 2a, 4a, ... up to b
 * inclusive; b need not be on the ladder). Every value in [min, max]. The result is sorted
 * ascending without duplicates, malloc'd (free it). 0, or -1 (nothing allocated). */
int lb_parse_list(const char *s, int64_t min, int64_t max, int64_t **values, size_t *count);

/* Sorts v[0..count) ascending and moves the distinct values to its front; returns how many. */
size_t lb_sort_unique_int64(int64_t *v, size_t count);

#endif
