/* .npy version 1.0 writer (see npy.h). */
#include "reports/npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attn/base/paths.h"
#include "attn/base/status.h"

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

int lb_npy_write(const char *path, LbNpyType type, const int64_t *shape, int ndim,
                 const void *data)
{
    if (ndim < 0 || ndim > LB_NPY_MAX_DIMS)
        return LB_FAIL(LB_ERR_INVALID, "%s: %d dimensions: should be 0 to %d", path, ndim,
                       LB_NPY_MAX_DIMS);
    /* The header dict, as numpy.save writes it: (a,) for one dimension. */
    char dims[128] = "";
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return LB_FAIL(LB_ERR_INVALID, "%s: negative dimension", path);
        size_t used = strlen(dims);
        snprintf(dims + used, sizeof dims - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
        count *= (size_t)shape[i];
    }
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s%s), }",
                      type == LB_NPY_I32 ? "<i4" : "<f4", dims, ndim == 1 ? "," : "");
    /* magic (6) + version (2) + length (2) + dict + padding + '\n' = a multiple of 64 */
    size_t total = 10 + (size_t)dl + 1;
    size_t padded = (total + 63) / 64 * 64;
    size_t header_len = padded - 10;
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header_len & 0xff),
                              (unsigned char)(header_len >> 8)};

    FILE *f = lb_fopen_plain(path);
    if (!f)
        return LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, lb_open_plain_strerror(errno));
    int ok = fwrite(head, 1, sizeof head, f) == sizeof head &&
             fwrite(dict, 1, (size_t)dl, f) == (size_t)dl;
    for (size_t i = 10 + (size_t)dl; ok && i < padded - 1; i++)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    if (ok && host_is_little_endian()) {
        ok = count == 0 || fwrite(data, 4, count, f) == count;
    } else {
        const unsigned char *p = data;
        for (size_t i = 0; ok && i < count; i++) {
            unsigned char le[4] = {p[4 * i + 3], p[4 * i + 2], p[4 * i + 1], p[4 * i]};
            ok = fwrite(le, 1, 4, f) == 4;
        }
    }
    if (fclose(f) != 0)
        ok = 0;
    if (!ok) {
        remove(path);
        return LB_FAIL(LB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    return LB_OK;
}
