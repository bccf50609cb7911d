/* Whole numbers and byte sizes as flag values and in messages ("16G", "1.5GiB"). Base library:
 * pure functions returning 0 or -1; cmd/ turns a -1 into its one-line message. */
#ifndef LB_SIZES_H
#define LB_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* A whole decimal integer in [min, max]: no sign games, no trailing characters, no overflow. */
int lb_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out);
int lb_parse_int(const char *s, int min, int max, int *out);

/* A byte count: a number (decimal fraction allowed) and an optional unit. K, M, G, T and KiB,
 * MiB, GiB, TiB are binary (1024^i); KB, MB, GB, TB are decimal (1000^i); B or none is bytes.
 * Case-insensitive units. Must be >= 1 byte and fit in 64 bits. */
int lb_parse_size(const char *s, uint64_t *out);

/* "1.5 GiB", "512 MiB", "800 B": the shortest exact-looking binary form, for messages/headers. */
void lb_format_size(uint64_t bytes, char *buf, size_t size);

#endif
