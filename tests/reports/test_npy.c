/* .npy files parsed back by hand (an independent reader, not the writer's own code): magic,
 * version 1.0, header length and 64-byte alignment, the dict NumPy writes, and the data bytes
 * little-endian. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/status.h"
#include "reports/npy.h"
#include "tests/lib/check.h"

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long s = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(s > 0 ? (size_t)s : 1);
    *len = b ? fread(b, 1, (size_t)s, f) : 0;
    fclose(f);
    return b;
}

/* Parse the file's header and check it says `dict` and is followed by `bytes` of data equal to
 * `data` read as little-endian 4-byte words. */
static void check_npy(const char *path, const char *dict, const uint32_t *data, size_t count)
{
    size_t len = 0;
    unsigned char *b = slurp(path, &len);
    if (!lb_check(b != NULL && len >= 10, "%s: cannot read it back", path)) {
        free(b);
        return;
    }
    lb_check(memcmp(b, "\x93NUMPY", 6) == 0, "%s: magic", path);
    lb_check(b[6] == 1 && b[7] == 0, "%s: version %d.%d: should be 1.0", path, b[6], b[7]);
    size_t hl = (size_t)b[8] | (size_t)b[9] << 8;
    lb_check((10 + hl) % 64 == 0, "%s: data starts at %zu: should be a multiple of 64", path, 10 + hl);
    if (!lb_check(10 + hl <= len, "%s: header length %zu past the end", path, hl)) {
        free(b);
        return;
    }
    lb_check(b[10 + hl - 1] == '\n', "%s: header should end with a newline", path);
    char *h = malloc(hl + 1);
    memcpy(h, b + 10, hl);
    h[hl] = '\0';
    size_t end = hl - 1; /* strip the newline and the padding */
    while (end > 0 && h[end - 1] == ' ')
        end--;
    h[end] = '\0';
    lb_check(strcmp(h, dict) == 0, "%s: header \"%s\": should be \"%s\"", path, h, dict);
    free(h);
    lb_check(len == 10 + hl + 4 * count, "%s: %zu bytes: should be %zu", path, len, 10 + hl + 4 * count);
    int same = len == 10 + hl + 4 * count;
    for (size_t i = 0; same && i < count; i++) {
        const unsigned char *p = b + 10 + hl + 4 * i;
        uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        same = v == data[i];
    }
    lb_check(same, "%s: data differs from what was written", path);
    free(b);
}

int main(void)
{
    char *dir = lb_test_tempdir("npy");
    char path[4200];

    float f[6] = {1.5f, -2.25f, 3.0f, 1e-20f, -0.0f, 65504.0f};
    uint32_t fw[6];
    memcpy(fw, f, sizeof f);
    int64_t s2[2] = {2, 3};
    snprintf(path, sizeof path, "%s/f.npy", dir);
    lb_check(lb_npy_write(path, LB_NPY_F32, s2, 2, f) == LB_OK, "write (2, 3) f4: %s", lb_error_message());
    check_npy(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", fw, 6);
    remove(path);

    int32_t ids[5] = {0, 1, 50264, -7, 123456};
    uint32_t iw[5];
    memcpy(iw, ids, sizeof ids);
    int64_t s1[1] = {5};
    snprintf(path, sizeof path, "%s/i.npy", dir);
    lb_check(lb_npy_write(path, LB_NPY_I32, s1, 1, ids) == LB_OK, "write (5,) i4");
    check_npy(path, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", iw, 5);
    remove(path);

    int64_t s4[4] = {1, 2, 1, 3};
    snprintf(path, sizeof path, "%s/four.npy", dir);
    lb_check(lb_npy_write(path, LB_NPY_F32, s4, 4, f) == LB_OK, "write (1, 2, 1, 3) f4");
    check_npy(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 1, 3), }", fw, 6);
    remove(path);

    int64_t s5[5] = {1, 1, 1, 1, 1};
    lb_error_clear();
    lb_check(lb_npy_write(path, LB_NPY_F32, s5, 5, f) == LB_ERR_INVALID, "5 dimensions should be refused");
    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", dir);
    lb_error_clear();
    lb_check(lb_npy_write(path, LB_NPY_F32, s2, 2, f) == LB_ERR_IO, "an unwritable path should be LB_ERR_IO");

    remove(dir);
    return lb_test_finish("test_npy");
}
