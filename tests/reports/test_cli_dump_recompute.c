/* `linbench run --dump` holds all a reader needs to recompute the pass: for every Linformer
 * projection (linear E, mean and max pooling, the depthwise convolution) under a uniform k and
 * --k-schedule halve, two layers, this test runs the binary on the CPU reference, reads back
 * meta.csv (the model, its shape, sharing, order, k_layers), index.csv and the .npy files through
 * libcsv and the test's own .npy reader, recomputes the encoder in double from those files alone
 * (METHOD.md written out, nothing of attn/ called) and holds the dumped output to fp32 rounding:
 * relative error <= 1e-5 and every element within 1e-4 + 1e-4 |ref|. Planted: reading the
 * windows' kernels channel-major instead of tap-major fails the convolution's cases.
 * usage: test_cli_dump_recompute LINBENCH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy_read.h"
#include "reports/csv_io.h"
#include "reports/meta.h"
#include "tests/lib/check.h"
#include "tests/lib/naive.h"
#include "tests/lib/spawn.h"

static const char *bin;

/* The models a dump is recomputed for, in LbNaiveCompress order from LB_NAIVE_LINEAR. */
static const char *const models[] = {"linformer", "linformer-mean", "linformer-max", "linformer-conv"};

/* Every tensor of a dump by name. */
typedef struct Dump {
    LbMeta meta;
    char names[128][48];
    NpyFile files[128];
    int count;
    int64_t n, k, B, L, d, h, f, kl[8];
    char model[32], sharing[16], order[16];
} Dump;

static const float *tensor(const Dump *D, const char *name)
{
    for (int i = 0; i < D->count; i++)
        if (strcmp(D->names[i], name) == 0)
            return (const float *)D->files[i].data;
    return NULL;
}

/* The encoder's weights by their names in index.csv (the order of tests/lib/naive.h's enums). */
static const float *dump_weight(const void *src, int layer, int which)
{
    static const char *const embeddings[] = {"tok_emb", "pos_emb", "emb_ln_g", "emb_ln_b"};
    static const char *const per_layer[] = {"w_qkv", "b_qkv", "w_o",   "b_o",   "ln1_g", "ln1_b",
                                            "w_ff1", "b_ff1", "w_ff2", "b_ff2", "ln2_g", "ln2_b"};
    char name[48];
    if (layer < 0)
        return tensor(src, embeddings[which]);
    snprintf(name, sizeof name, "layer%d.%s", layer, per_layer[which]);
    return tensor(src, name);
}

static int64_t meta_int(const Dump *D, const char *key)
{
    const char *v = lb_meta_get(&D->meta, key);
    return v ? strtoll(v, NULL, 10) : -1;
}

static int load(const char *dir, Dump *D)
{
    char path[1024];
    memset(D, 0, sizeof *D);
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    if (lb_meta_read(path, &D->meta) != 0)
        return -1;
    D->n = meta_int(D, "n"), D->k = meta_int(D, "k"), D->B = meta_int(D, "batch");
    D->L = meta_int(D, "layers"), D->d = meta_int(D, "d_model"), D->h = meta_int(D, "heads");
    D->f = meta_int(D, "ffn");
    const char *model = lb_meta_get(&D->meta, "model"), *sh = lb_meta_get(&D->meta, "sharing");
    const char *ord = lb_meta_get(&D->meta, "order"), *kls = lb_meta_get(&D->meta, "k_layers");
    if (!model || !sh || !ord || !kls || D->L < 1 || D->L > 8)
        return -1;
    snprintf(D->model, sizeof D->model, "%s", model);
    snprintf(D->sharing, sizeof D->sharing, "%s", sh);
    snprintf(D->order, sizeof D->order, "%s", ord);
    char *end = (char *)kls;
    for (int l = 0; l < D->L; l++)
        D->kl[l] = strtoll(end, &end, 10);
    snprintf(path, sizeof path, "%s/index.csv", dir);
    LbCsvTable t;
    if (lb_csv_read_file(path, 1, &t) != 0)
        return -1;
    for (size_t r = 1; r < t.rows && D->count < 128; r++) {
        snprintf(path, sizeof path, "%s/%s", dir, t.row[r].fields[1]);
        snprintf(D->names[D->count], sizeof D->names[0], "%s", t.row[r].fields[0]);
        if (npy_read(path, &D->files[D->count]) != 0)
            break;
        D->count++;
    }
    const int ok = D->count == (int)t.rows - 1;
    lb_csv_table_free(&t);
    return ok ? 0 : -1;
}

static void unload(Dump *D)
{
    for (int i = 0; i < D->count; i++)
        npy_free(&D->files[i]);
    lb_meta_free(&D->meta);
}

/* The weight of a compression (E or F; the kernels of a convolution, checked (taps, channels))
 * for (layer, head, which), by the sharing level: layerwise one, kv one per layer, headwise two
 * per layer, none two per head and layer; NULL for pooling. */
static const float *dump_proj(const void *src, int l, int head, int which)
{
    const Dump *D = src;
    const int conv = strcmp(D->model, "linformer-conv") == 0, none = strcmp(D->sharing, "none") == 0;
    if (!conv && strcmp(D->model, "linformer") != 0)
        return NULL;
    int64_t i = 0;
    if (strcmp(D->sharing, "kv") == 0)
        i = l;
    else if (strcmp(D->sharing, "headwise") == 0)
        i = 2 * l + which;
    else if (none)
        i = 2 * (l * D->h + head) + which;
    char name[48];
    snprintf(name, sizeof name, "%s%lld", conv ? "conv" : "proj", (long long)i);
    for (int t = 0; t < D->count; t++)
        if (strcmp(D->names[t], name) == 0) {
            const int64_t channels = none ? D->d / D->h : D->d;
            lb_check(!conv || D->files[t].shape[1] == channels, "%s: %lld channels, should be %lld", name,
                     (long long)D->files[t].shape[1], (long long)channels);
            return (const float *)D->files[t].data;
        }
    return NULL;
}

static void check_case(const char *scratch, const char *model, const char *schedule, const char *sharing,
                       const char *order, const int64_t *want_kl)
{
    char dir[600], what[160];
    snprintf(dir, sizeof dir, "%s/%s-%s-%s-%s", scratch, model, schedule, sharing, order);
    snprintf(what, sizeof what, "%s --k-schedule %s --sharing %s --order %s", model, schedule, sharing, order);
    lb_run_ok(LB_ARGV((char *)bin, "run", "--device", "cpu", "--layers", "2", "--d-model", "16", "--heads", "4",
                      "--ffn", "24", "--vocab", "50", "--n", "32", "--k", "16", "--batch", "2", "--model",
                      (char *)model, "--k-schedule", (char *)schedule, "--sharing", (char *)sharing, "--order",
                      (char *)order, "--seed", "7", "--dump", dir),
              what);
    Dump D;
    if (!lb_check(load(dir, &D) == 0, "%s: the dump reads back (meta.csv with k_layers, index.csv, .npy)", what))
        return;
    lb_check(strcmp(D.model, model) == 0 && D.L == 2 && D.kl[0] == want_kl[0] && D.kl[1] == want_kl[1],
             "%s: meta.csv model %s, k_layers %lld %lld: should be %lld %lld", what, D.model, (long long)D.kl[0],
             (long long)D.kl[1], (long long)want_kl[0], (long long)want_kl[1]);
    const float *out = tensor(&D, "output");
    const int32_t *ids = (const int32_t *)tensor(&D, "ids");
    const int64_t count = D.B * D.n * D.d;
    double *ref = calloc((size_t)count, 8);
    LbNaiveEncoder e = {D.n, D.d, D.h, D.f, D.L, {0}, LB_NAIVE_FULL, strcmp(D.order, "early") == 0,
                        strcmp(D.sharing, "none") == 0, 1e-5 /* METHOD.md */, &D, dump_weight, dump_proj, NULL};
    memcpy(e.k, D.kl, sizeof D.kl);
    for (int m = 0; m < 4; m++)
        if (strcmp(D.model, models[m]) == 0)
            e.compress = (LbNaiveCompress)(LB_NAIVE_LINEAR + m);
    if (lb_check(out && ids && ref && e.compress != LB_NAIVE_FULL, "%s: ids and output dumped", what)) {
        for (int64_t b = 0; b < D.B; b++)
            lb_naive_encode(&e, ids + b * D.n, ref + b * D.n * D.d);
        printf("  %-70s rel err %.2e\n", what, lb_naive_check(what, out, ref, count));
    }
    free(ref);
    unload(&D);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_dump_recompute");
    const char *scratch = lb_scratch;
    static const int64_t uniform[] = {16, 16}, halve[] = {16, 8};
    for (int m = 0; m < 4; m++) {
        check_case(scratch, models[m], "uniform", "layerwise", "early", uniform);
        check_case(scratch, models[m], "halve", "layerwise", "early", halve);
        check_case(scratch, models[m], "halve", "kv", "late", halve);
    }
    /* the weights that come per head and per key or value */
    check_case(scratch, "linformer", "halve", "none", "late", halve);
    check_case(scratch, "linformer-conv", "halve", "none", "late", halve);
    check_case(scratch, "linformer-conv", "uniform", "headwise", "early", uniform);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_dump_recompute");
}
