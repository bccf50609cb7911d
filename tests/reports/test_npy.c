/* .npy files read back by the tests' own reader (npy_read.h, not the writer's code): version 1.0,
 * 64-byte alignment, the dict NumPy writes, and the data bytes little-endian. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "npy_read.h"
#include "reports/npy.h"
#include "tests/lib/check.h"

/* The file at path has version 1.0, data at a multiple of 64, the header `dict` padded with blanks
 * to a newline, and then exactly `count` little-endian 4-byte words equal to `data`. */
static void check_npy(const char *path, const char *dict, const uint32_t *data, size_t count)
{
    NpyFile f;
    if (!lb_check(npy_read(path, &f) == 0, "%s: does not read back as a version 1.0 .npy", path))
        return;
    lb_check(f.offset % 64 == 0, "%s: data starts at %zu: should be a multiple of 64", path, f.offset);
    size_t end = strlen(f.header);
    lb_check(end > 0 && f.header[end - 1] == '\n', "%s: header should end with a newline", path);
    while (end > 0 && (f.header[end - 1] == ' ' || f.header[end - 1] == '\n'))
        f.header[--end] = '\0';
    lb_check(strcmp(f.header, dict) == 0, "%s: header \"%s\": should be \"%s\"", path, f.header, dict);
    int same = lb_check(f.bytes == 4 * count, "%s: %zu data bytes: should be %zu", path, f.bytes, 4 * count);
    for (size_t i = 0; same && i < count; i++) {
        const unsigned char *p = f.data + 4 * i;
        same = ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24) == data[i];
    }
    lb_check(same, "%s: data differs from what was written", path);
    npy_free(&f);
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

    int32_t ids[5] = {0, 1, 50264, -7, 123456};
    uint32_t iw[5];
    memcpy(iw, ids, sizeof ids);
    int64_t s1[1] = {5};
    snprintf(path, sizeof path, "%s/i.npy", dir);
    lb_check(lb_npy_write(path, LB_NPY_I32, s1, 1, ids) == LB_OK, "write (5,) i4");
    check_npy(path, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", iw, 5);

    int64_t s4[4] = {1, 2, 1, 3};
    snprintf(path, sizeof path, "%s/four.npy", dir);
    lb_check(lb_npy_write(path, LB_NPY_F32, s4, 4, f) == LB_OK, "write (1, 2, 1, 3) f4");
    check_npy(path, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 1, 3), }", fw, 6);

    int64_t s5[5] = {1, 1, 1, 1, 1};
    lb_error_clear();
    lb_check(lb_npy_write(path, LB_NPY_F32, s5, 5, f) == LB_ERR_INVALID, "5 dimensions should be refused");
    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", dir);
    lb_error_clear();
    lb_check(lb_npy_write(path, LB_NPY_F32, s2, 2, f) == LB_ERR_IO, "an unwritable path should be LB_ERR_IO");

    lb_test_cleanup(dir);
    return lb_test_finish("test_npy");
}
