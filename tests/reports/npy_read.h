/* A small .npy reader for the tests, written apart from reports/npy.c: version 1.0 headers
 * only, the descr and shape out of the dict, and the data bytes. */
#ifndef LB_TESTS_NPY_READ_H
#define LB_TESTS_NPY_READ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/check.h"

typedef struct NpyFile {
    char descr[8];
    int ndim;
    int64_t shape[8];
    unsigned char *data;
    size_t bytes;
    size_t offset;   /* where the data starts */
    char header[256]; /* the header as written (dict, padding, newline), cut to fit */
} NpyFile;

/* 0 on success. */
static inline int npy_read(const char *path, NpyFile *out)
{
    memset(out, 0, sizeof *out);
    size_t len = 0;
    unsigned char *b = (unsigned char *)lb_slurp_len(path, &len);
    const size_t hl = b && len >= 10 ? (size_t)b[8] | (size_t)b[9] << 8 : 0;
    if (!b || len < 10 || memcmp(b, "\x93NUMPY\x01\x00", 8) != 0 || 10 + hl > len) {
        free(b);
        return -1;
    }
    char *h = malloc(hl + 1);
    memcpy(h, b + 10, hl);
    h[hl] = '\0';
    snprintf(out->header, sizeof out->header, "%s", h);
    out->offset = 10 + hl;
    const char *d = strstr(h, "'descr': '"), *s = strstr(h, "'shape': (");
    int ok = d && s && strstr(h, "'fortran_order': False") && sscanf(d, "'descr': '%7[^']'", out->descr) == 1;
    if (ok)
        s += strlen("'shape': (");
    while (ok && *s != ')') {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || out->ndim == 8) {
            ok = 0;
            break;
        }
        out->shape[out->ndim++] = v;
        s = end;
        while (*s == ',' || *s == ' ')
            s++;
    }
    free(h);
    if (!ok) {
        free(b);
        return -1;
    }
    out->bytes = len - 10 - hl;
    out->data = malloc(out->bytes ? out->bytes : 1);
    memcpy(out->data, b + 10 + hl, out->bytes);
    free(b);
    return 0;
}

static inline void npy_free(NpyFile *f)
{
    free(f->data);
    f->data = NULL;
}

#endif
