/* `linbench run --pass train --dump` end to end: for the Linformer (its own E and F) and Performer
 * (fixed random features), two layers, the binary's dump read back through libcsv and the tests'
 * .npy reader against a CPU step computed here from the same settings and seed
 * (lb_check_train_step): index.csv names grad.output (the upstream gradient) and one grad.NAME per
 * trained tensor, none for a fixed one; each file's shape is its tensor's and its values are the
 * CPU step's within the fp32 tolerance of a whole step; meta.csv says pass train. A forward dump
 * has no gradient. Usage: test_cli_train_dump PATH-TO-LINBENCH cpu|cuda (cuda: the emulated GPU
 * of the -Dcuda=disabled build). */
#include <stdlib.h>

#include "attn/base/status.h"
#include "attn/check.h"
#include "reports/csv_io.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/model.h"
#include "tests/lib/spawn.h"
#include "tests/reports/npy_read.h"

static const char *bin, *device;

/* index.csv's row named `name`, or -1. */
static long find_row(const LbCsvTable *t, const char *name)
{
    for (size_t i = 1; i < t->rows; i++)
        if (t->row[i].count == 4 && strcmp(t->row[i].fields[0], name) == 0)
            return (long)i;
    return -1;
}

/* The dumped array `name` against ref (count, shape rows x cols, cols 1 a vector; cols 0 (B, n, d)). */
static void against(LbBackend *cpu, const char *dir, const LbCsvTable *t, const char *name, const float *ref,
                    int64_t rows, int64_t cols, const char *what)
{
    const long i = find_row(t, name);
    if (!lb_check(i > 0, "%s: index.csv names %s", what, name))
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, t->row[i].fields[1]);
    NpyFile f;
    if (!lb_check(npy_read(path, &f) == 0, "%s: %s reads back", what, path))
        return;
    const int64_t count = rows * (cols ? cols : 1);
    int64_t elems = 1;
    for (int d = 0; d < f.ndim; d++)
        elems *= f.shape[d];
    const int ndim = cols == 0 ? 3 : cols == 1 ? 1 : 2;
    const int shaped = strcmp(f.descr, "<f4") == 0 && f.ndim == ndim && elems == count &&
                       (ndim == 3 || (f.shape[0] == rows && (ndim == 1 || f.shape[1] == cols)));
    char label[200];
    snprintf(label, sizeof label, "%s: %s", what, name);
    if (lb_check(shaped && f.bytes == (size_t)count * 4, "%s: '%s' of %d dimensions, %lld elements, as its tensor's",
                 label, f.descr, f.ndim, (long long)elems))
        lb_check_against(cpu, "train", label, (const float *)f.data, ref, count);
    npy_free(&f);
}

static void check_model(LbBackend *cpu, const char *model)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/dump-%s", lb_scratch, model);
    char *argv[] = {(char *)bin, "run", "--device", (char *)device, "--model", (char *)model, "--pass", "train",
                    "--layers", "2", "--d-model", "16", "--heads", "4", "--ffn", "24", "--vocab", "50", "--n", "32",
                    "--k", "8", "--dtype", "fp32", "--seed", "7", "--batch", "2", "--dump", dir, NULL};
    LbRun r = lb_run(argv);
    const int ran = lb_check(r.code == 0 && strstr(r.out, "wrote the training step"),
                             "run --pass train --dump %s on %s: exit %d\n%s%s", model, device, r.code, r.out, r.err);
    lb_run_free(&r);
    if (!ran)
        return;
    LbModelConfig cfg = lb_test_model(32, 8); /* the flags above */
    cfg.kind = strcmp(model, "performer") == 0 ? LB_MODEL_PERFORMER : LB_MODEL_LINFORMER;
    LbCheckGrads g;
    if (!lb_check(lb_check_train_step(cpu, cfg, 2, 7, &g) == LB_OK, "%s: the CPU's step ran: %s", model,
                  lb_error_where()))
        return;
    char path[700];
    snprintf(path, sizeof path, "%s/index.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0, "%s: index.csv reads back", model)) {
        int trained = 0, listed = 0;
        against(cpu, dir, &t, "grad.output", g.dy, 2 * cfg.n * cfg.d_model, 0, model);
        for (int64_t i = 0; i < g.count; i++) {
            const LbTensorRef *ref = &g.refs[i];
            char name[64];
            snprintf(name, sizeof name, "grad.%s", ref->name);
            trained += !ref->fixed;
            if (ref->fixed)
                lb_check(find_row(&t, name) < 0, "%s: no %s, a fixed tensor's", model, name);
            else
                against(cpu, dir, &t, name, ref->ptr, ref->rows, ref->cols, model);
        }
        for (size_t i = 1; i < t.rows; i++)
            listed += strncmp(t.row[i].fields[0], "grad.", 5) == 0;
        lb_check(listed == trained + 1 && trained > 0 && (cfg.kind != LB_MODEL_PERFORMER || trained < g.count),
                 "%s: %d gradients in index.csv, one per trained tensor (%d of %lld) and grad.output", model, listed,
                 trained, (long long)g.count);
        lb_csv_table_free(&t);
    }
    lb_check_grads_free(&g);
    sc_check_meta(dir, "pass", "train", model);
}

/* A forward pass's dump holds no gradient and says pass forward. */
static void check_forward(void)
{
    char dir[512], path[700];
    snprintf(dir, sizeof dir, "%s/dump-forward", lb_scratch);
    char *argv[] = {(char *)bin, "run", "--device", (char *)device, "--model", "linformer", "--layers", "1",
                    "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", "--n", "32", "--k", "8",
                    "--dump", dir, NULL};
    lb_run_ok(argv, "run --dump (forward)");
    snprintf(path, sizeof path, "%s/index.csv", dir);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0, "forward: index.csv reads back")) {
        lb_check(t.rows > 3 && find_row(&t, "output") > 0 && find_row(&t, "grad.output") < 0,
                 "a forward dump lists output and no gradient");
        lb_csv_table_free(&t);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "cpu") != 0 && strcmp(argv[2], "cuda") != 0)) {
        fprintf(stderr, "usage: test_cli_train_dump PATH-TO-LINBENCH cpu|cuda\n");
        return 2;
    }
    bin = lb_cli_start(argc, argv, "test_cli_train_dump");
    device = argv[2];
    LbBackend *cpu = NULL;
    if (!lb_check(lb_cpu_backend_open(LB_DTYPE_FP32, (size_t)1 << 30, &cpu) == LB_OK, "the CPU backend opens"))
        return lb_test_finish("test_cli_train_dump");
    check_model(cpu, "linformer");
    check_model(cpu, "performer");
    check_forward();
    lb_backend_close(cpu);
    return lb_test_finish("test_cli_train_dump");
}
