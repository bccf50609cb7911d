/* One forward pass or training step as .npy files plus index.csv (see dump.h). */
#include "reports/dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/base/status.h"
#include "reports/atomic_file.h"
#include "reports/csv_io.h"
#include "reports/meta.h"
#include "reports/npy.h"

/* A tensor name as a file name: anything but [A-Za-z0-9._-] becomes '_'. */
static void file_name(const char *name, char *buf, size_t size)
{
    size_t o = 0;
    for (const char *p = name; *p && o + 5 < size; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        buf[o++] = ok ? c : '_';
    }
    memcpy(buf + o, ".npy", 5);
}

static void shape_text(const int64_t *shape, int ndim, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < ndim; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%lld", i ? "x" : "", (long long)shape[i]);
    }
}

/* One array of backend storage at src (the int32 ids copied as they are, the others downloaded as
 * float32) as its .npy file, and its index.csv row. */
static int put(FILE *index, const char *dir, const LbModel *m, const char *name, LbNpyType type, const void *src,
               const int64_t *shape, int ndim)
{
    int64_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    void *buf = malloc((size_t)(count > 0 ? count : 1) * 4);
    if (!buf)
        return type == LB_NPY_I32 ? LB_FAIL(LB_ERR_NOMEM, "out of host memory for the token ids")
                                  : LB_FAIL(LB_ERR_NOMEM, "out of host memory for %lld floats", (long long)count);
    int rc = type == LB_NPY_I32 ? m->be->ops->copy_raw_to_host(m->be, buf, src, (size_t)count * 4)
                                : m->be->ops->download(m->be, buf, src, count);
    char file[128], shp[96];
    file_name(name, file, sizeof file);
    char *path = rc == LB_OK ? lb_path_join(dir, file) : NULL;
    if (rc == LB_OK)
        rc = path ? lb_npy_write(path, type, shape, ndim, buf) : LB_FAIL(LB_ERR_NOMEM, "out of memory");
    free(path);
    free(buf);
    if (rc != LB_OK)
        return rc;
    shape_text(shape, ndim, shp, sizeof shp);
    const char *row[4] = {name, file, type == LB_NPY_I32 ? "int32" : "float32", shp};
    return lb_csv_write_record(index, row, 4);
}

typedef struct Dump {
    const char *dir;
    const LbModel *m;
    const LbInputs *in;
    const LbTrain *train;
} Dump;

/* Every tensor of m, in allocation order, its name after prefix; fixed tensors left out where
 * trained_only (a gradient model's: never computed). */
static int put_tensors(FILE *f, const char *dir, const LbModel *m, const char *prefix, int trained_only)
{
    int64_t count = lb_model_tensors(m, NULL, 0);
    LbTensorRef *refs = calloc((size_t)(count > 0 ? count : 1), sizeof *refs);
    if (!refs)
        return LB_FAIL(LB_ERR_NOMEM, "out of host memory for the tensor list");
    count = lb_model_tensors(m, refs, count);
    int rc = LB_OK;
    for (int64_t t = 0; t < count && rc == LB_OK; t++) {
        const LbTensorRef *r = &refs[t];
        char name[64];
        const int64_t shape[2] = {r->rows, r->cols};
        if (trained_only && r->fixed)
            continue;
        snprintf(name, sizeof name, "%s%s", prefix, r->name);
        rc = put(f, dir, m, name, LB_NPY_F32, r->ptr, shape, r->cols == 1 ? 1 : 2);
    }
    free(refs);
    return rc;
}

/* index.csv into f, and beside it every array it names. */
static int write_all(FILE *f, const void *ctx)
{
    const Dump *dump = ctx;
    const LbModel *m = dump->m;
    const LbInputs *in = dump->in;
    int64_t B = in->batch, n = m->cfg.n, d = m->cfg.d_model;
    static const char *const header[4] = {"name", "file", "dtype", "shape"};
    LB_TRY(lb_csv_write_record(f, header, 4));

    /* ids (B, n) int32 */
    const int64_t ids_shape[2] = {B, n};
    int rc = put(f, dump->dir, m, "ids", LB_NPY_I32, in->ids, ids_shape, 2);
    if (rc != LB_OK)
        return rc;

    /* every weight, then output (B, n, d); after a step, their gradients */
    if ((rc = put_tensors(f, dump->dir, m, "", 0)) != LB_OK)
        return rc;
    const int64_t out_shape[3] = {B, n, d};
    rc = put(f, dump->dir, m, "output", LB_NPY_F32, in->x, out_shape, 3);
    if (rc != LB_OK || !dump->train)
        return rc;
    rc = put(f, dump->dir, m, "grad.output", LB_NPY_F32, dump->train->dy, out_shape, 3);
    return rc == LB_OK ? put_tensors(f, dump->dir, &dump->train->grads, "grad.", 1) : rc;
}

int lb_dump_write(const char *dir, const LbModel *m, const LbInputs *in, const LbTrain *train,
                  const LbRunSettings *settings)
{
    const Dump dump = {dir, m, in, train};
    LB_TRY(lb_atomic_write(dir, "index.csv", write_all, &dump));
    return lb_meta_write_dump(dir, m, in, settings);
}
