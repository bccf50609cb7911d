/* `linbench run --dump` files from lb_dump_write: a small Linformer (kv sharing, so several
 * projections) run once on the CPU reference and dumped; index.csv read back through libcsv
 * lists ids, every weight lb_model_tensors names, and output; each file parses as .npy with the
 * listed dtype and shape, and holds exactly what the backend holds (the ids as copied raw, the
 * weights and the output as downloaded to float32); meta.csv, read back, holds the settings the
 * pass ran with (tests/cli/test_cli_run.c reads the same through the binary); and the .npy
 * writer alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/arena.h"
#include "attn/forward.h"
#include "attn/model.h"
#include "attn/plan.h"
#include "attn/base/status.h"
#include "npy_read.h"
#include "reports/csv_io.h"
#include "reports/dump.h"
#include "reports/npy.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"

static void shape_text(const NpyFile *f, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 0; i < f->ndim; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%lld", i ? "x" : "", (long long)f->shape[i]);
    }
}

/* The file named by an index row matches `want` (count 4-byte elements). */
static void check_file(const char *dir, const LbCsvRow *row, const char *descr, const void *want,
                       size_t count)
{
    char path[4400], shp[96];
    snprintf(path, sizeof path, "%s/%s", dir, row->fields[1]);
    NpyFile f;
    if (!lb_check(npy_read(path, &f) == 0, "%s: not a readable .npy file", path))
        return;
    shape_text(&f, shp, sizeof shp);
    size_t elems = 1;
    for (int i = 0; i < f.ndim; i++)
        elems *= (size_t)f.shape[i];
    lb_check(strcmp(f.descr, descr) == 0, "%s: descr %s: should be %s", row->fields[0], f.descr, descr);
    lb_check(strcmp(shp, row->fields[3]) == 0, "%s: shape %s, index.csv says %s", row->fields[0], shp, row->fields[3]);
    lb_check(elems == count && f.bytes == 4 * count, "%s: %zu elements, %zu bytes: should be %zu", row->fields[0],
             elems, f.bytes, count);
    lb_check(f.bytes == 4 * count && memcmp(f.data, want, 4 * count) == 0, "%s: data differs from the backend's",
             row->fields[0]);
    npy_free(&f);
}

/* The file at path has version 1.0, data at a multiple of 64, the header `dict` padded with blanks
 * to a newline, and then exactly `count` little-endian 4-byte words equal to those at `data`. */
static void check_npy(const char *path, const char *dict, const void *data, size_t count)
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
        uint32_t word;
        memcpy(&word, (const char *)data + 4 * i, 4);
        same = ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24) == word;
    }
    lb_check(same, "%s: data differs from what was written", path);
    npy_free(&f);
}

/* .npy files read back by the tests' own reader (npy_read.h, not the writer's code): version 1.0,
 * 64-byte alignment, the dict NumPy writes, and the data bytes little-endian. */
static void check_npy_writer(void)
{
    static const float f[6] = {1.5f, -2.25f, 3.0f, 1e-20f, -0.0f, 65504.0f};
    static const int32_t ids[5] = {0, 1, 50264, -7, 123456};
    static const struct {
        LbNpyType type;
        int ndim;
        int64_t shape[5];
        const char *dict;
    } cases[] = {
        {LB_NPY_F32, 2, {2, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
        {LB_NPY_I32, 1, {5}, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }"},
        {LB_NPY_F32, 4, {1, 2, 1, 3}, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 1, 3), }"},
        {LB_NPY_F32, 5, {1, 1, 1, 1, 1}, NULL}, /* refused */
    };
    char *dir = lb_test_tempdir("npy");
    char path[4200];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int ints = cases[i].type == LB_NPY_I32;
        const void *data = ints ? (const void *)ids : f;
        snprintf(path, sizeof path, "%s/%zu.npy", dir, i);
        lb_error_clear();
        const int rc = lb_npy_write(path, cases[i].type, cases[i].shape, cases[i].ndim, data);
        lb_check(rc == (cases[i].dict ? LB_OK : LB_ERR_INVALID), "write %d dimensions: %s", cases[i].ndim,
                 lb_error_message());
        if (cases[i].dict)
            check_npy(path, cases[i].dict, data, ints ? 5 : 6);
    }
    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", dir);
    lb_error_clear();
    lb_check(lb_npy_write(path, LB_NPY_F32, cases[0].shape, 2, f) == LB_ERR_IO, "an unwritable path should be LB_ERR_IO");
    lb_test_cleanup(dir);
}

int main(void)
{
    check_npy_writer();
    LbModelConfig cfg = lb_test_model(32, 8);
    cfg.kind = LB_MODEL_LINFORMER;
    cfg.sharing = LB_SHARE_KV;
    const int64_t batch = 2;

    LbBackend *be = NULL;
    int rc = lb_cpu_backend_open(cfg.dtype, (size_t)64 << 20, &be);
    if (!lb_check(rc == LB_OK, "CPU backend: %s", lb_error_message()))
        return lb_test_finish("test_dump");
    const LbPlanParams pp = {be->elem_bytes, be->alignment, be->workspace_bytes};
    LbPlan plan;
    LbArena arena;
    LbModel model;
    LbInputs in;
    rc = lb_plan_compute(&cfg, &pp, batch, &plan);
    if (rc == LB_OK)
        rc = lb_arena_open(&arena, be, plan.total);
    if (rc == LB_OK)
        rc = lb_forward_setup(&model, &in, &cfg, be, &arena, batch, 7);
    if (rc == LB_OK)
        rc = lb_forward(&model, &arena, &in);
    if (!lb_check(rc == LB_OK, "plan, arena, model, inputs, forward: %s", lb_error_message()))
        return lb_test_finish("test_dump");

    LbRunSettings settings;
    if (!lb_check(lb_run_settings_init(&settings) == LB_OK, "settings: %s", lb_error_message()))
        return lb_test_finish("test_dump");
    settings.model = cfg;
    settings.device = LB_DEVICE_CPU;
    settings.seed = 7;
    char *dir = lb_test_tempdir("dump");
    rc = lb_dump_write(dir, &model, &in, NULL, &settings);
    lb_check(rc == LB_OK, "lb_dump_write: %s", lb_error_message());

    int64_t tensors = lb_model_tensors(&model, NULL, 0);
    LbTensorRef *refs = calloc((size_t)tensors, sizeof *refs);
    lb_model_tensors(&model, refs, tensors);
    lb_check(tensors == 4 + 12 * cfg.layers + cfg.layers, "%lld tensors: should be 4 + 12 L + L projections",
             (long long)tensors);

    char path[4400];
    snprintf(path, sizeof path, "%s/index.csv", dir);
    LbCsvTable t;
    rc = lb_csv_read_file(path, 0, &t);
    if (lb_check(rc == LB_OK && t.rows == (size_t)tensors + 3, "index.csv: %zu records: should be %lld", t.rows,
                 (long long)tensors + 3)) {
        lb_check(t.row[0].count == 4 && strcmp(t.row[0].fields[0], "name") == 0 &&
                     strcmp(t.row[0].fields[1], "file") == 0 && strcmp(t.row[0].fields[2], "dtype") == 0 &&
                     strcmp(t.row[0].fields[3], "shape") == 0,
                 "index.csv header should be name,file,dtype,shape");
        /* ids (B, n) int32 */
        size_t nid = (size_t)(batch * cfg.n);
        int32_t *ids = malloc(nid * sizeof *ids);
        be->ops->copy_raw_to_host(be, ids, in.ids, nid * sizeof *ids);
        lb_check(strcmp(t.row[1].fields[0], "ids") == 0 && strcmp(t.row[1].fields[2], "int32") == 0 &&
                     strcmp(t.row[1].fields[3], "2x32") == 0,
                 "index.csv row 1: %s %s %s: should be ids int32 2x32", t.row[1].fields[0], t.row[1].fields[2],
                 t.row[1].fields[3]);
        check_file(dir, &t.row[1], "<i4", ids, nid);
        free(ids);
        /* every weight, in order */
        for (int64_t i = 0; i < tensors; i++) {
            const LbCsvRow *row = &t.row[2 + i];
            if (!lb_check(row->count == 4 && strcmp(row->fields[0], refs[i].name) == 0,
                          "index.csv row %lld: %s: should be %s", (long long)i + 2, row->fields[0], refs[i].name))
                continue;
            size_t count = (size_t)(refs[i].rows * refs[i].cols);
            float *w = malloc(count * sizeof *w);
            be->ops->download(be, w, refs[i].ptr, (int64_t)count);
            lb_check(strcmp(row->fields[2], "float32") == 0, "%s: dtype %s", row->fields[0], row->fields[2]);
            check_file(dir, row, "<f4", w, count);
            free(w);
        }
        /* output (B, n, d) */
        const LbCsvRow *last = &t.row[t.rows - 1];
        size_t nout = (size_t)(batch * cfg.n * cfg.d_model);
        float *x = malloc(nout * sizeof *x);
        be->ops->download(be, x, in.x, (int64_t)nout);
        lb_check(strcmp(last->fields[0], "output") == 0 && strcmp(last->fields[3], "2x32x16") == 0,
                 "last index row %s %s: should be output 2x32x16", last->fields[0], last->fields[3]);
        check_file(dir, last, "<f4", x, nout);
        free(x);
    }
    lb_csv_table_free(&t);
    /* meta.csv: the pass's settings under the sweep's keys; chunk is no setting of a Linformer */
    static const char *const want[] = {"model", "linformer", "n", "32", "k", "8", "batch", "2", "layers", "2",
                                       "d_model", "16", "heads", "4", "ffn", "24", "vocab", "50", "dtype", "fp32",
                                       "sharing", "kv", "order", "early", "chunk", "", "device", "cpu", "seed", "7",
                                       "storage_dtype", "fp32", NULL};
    for (int i = 0; want[i]; i += 2)
        sc_check_meta(dir, want[i], want[i + 1], "the dump");
    lb_test_cleanup(dir);

    /* An unwritable directory: LB_ERR_IO, nothing half-written claimed. */
    lb_error_clear();
    rc = lb_dump_write("/nonexistent/linbench-dump", &model, &in, NULL, &settings);
    lb_check(rc == LB_ERR_IO, "dump into a missing directory: rc %d: should be LB_ERR_IO", rc);

    free(refs);
    lb_run_settings_free(&settings);
    lb_model_release(&model);
    lb_arena_close(&arena);
    lb_backend_close(be);
    return lb_test_finish("test_dump");
}
