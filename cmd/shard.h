/* --shard I/N: which cells of the n x k grid shard I of N measures. The split balances the
 * predicted cost of the cells, not their count: a standard cell costs ~ n^2 (its score matrix),
 * a Linformer cell ~ n*k; cells are taken longest first (ties: earlier in the sweep's order) and
 * each goes to the least loaded shard (ties: the lowest index). Deterministic, so every shard of
 * a Slurm job array computes the same split on its own. */
#ifndef LB_SHARD_H
#define LB_SHARD_H

#include <stddef.h>
#include <stdint.h>

#define LB_SHARDS_MAX 4096

/* "I/N" into index and count: 0, or -1 when it is not two integers with 0 <= I < N,
 * 1 <= N <= LB_SHARDS_MAX. */
int lb_shard_parse(const char *text, int *index, int *count);

/* The shard of every cell, in the sweep's order (for each n ascending: the standard model, then
 * the Linformer for each k < n ascending), into a malloc'd array of *cells entries. 0, or -1
 * when out of memory. */
int lb_shard_assign(const int64_t *n, size_t nn, const int64_t *k, size_t nk, int count,
                    int **shard_of, size_t *cells);

#endif
