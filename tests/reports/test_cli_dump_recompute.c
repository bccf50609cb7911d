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
#include "tests/lib/naive_attention.h"
#include "tests/lib/naive_layers.h"
#include "tests/lib/spawn.h"

static const char *bin;

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

static const float *layer_t(const Dump *D, int l, const char *what)
{
    char name[48];
    snprintf(name, sizeof name, "layer%d.%s", l, what);
    return tensor(D, name);
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

/* The weight of a compression (E or F; the kernels of a convolution) for (layer, head, which),
 * by the sharing level: layerwise one, kv one per layer, headwise two per layer, none two per head
 * and layer; NULL for pooling. */
static const float *weights(const Dump *D, int l, int head, int which, int64_t *rows, int64_t *cols)
{
    const int conv = strcmp(D->model, "linformer-conv") == 0;
    if (!conv && strcmp(D->model, "linformer") != 0)
        return NULL;
    int64_t i = 0;
    if (strcmp(D->sharing, "kv") == 0)
        i = l;
    else if (strcmp(D->sharing, "headwise") == 0)
        i = 2 * l + which;
    else if (strcmp(D->sharing, "none") == 0)
        i = 2 * (l * D->h + head) + which;
    char name[48];
    snprintf(name, sizeof name, "%s%lld", conv ? "conv" : "proj", (long long)i);
    for (int t = 0; t < D->count; t++)
        if (strcmp(D->names[t], name) == 0) {
            *rows = D->files[t].shape[0];
            *cols = D->files[t].shape[1];
            return (const float *)D->files[t].data;
        }
    return NULL;
}

/* out (k, w) with row stride ldo = the compression of a (n, w), row stride lda, to k rows:
 * linformer E's first k rows times a; mean or max of each window of n / k rows; the convolution
 * sum of W[tap, channel] a[row, column], W (taps, channels) tap-major, column j on channel
 * j % channels. */
static void compress(const Dump *D, const float *W, int64_t wcols, int64_t k, const double *a, int64_t lda, int64_t w,
                     double *out, int64_t ldo)
{
    const int64_t n = D->n, win = n / k;
    for (int64_t r = 0; r < k; r++)
        for (int64_t j = 0; j < w; j++) {
            double s = strcmp(D->model, "linformer-max") == 0 ? -INFINITY : 0;
            if (strcmp(D->model, "linformer") == 0) {
                for (int64_t t = 0; t < n; t++)
                    s += (double)W[r * n + t] * a[t * lda + j];
            } else {
                for (int64_t t = 0; t < win; t++) {
                    const double v = a[(r * win + t) * lda + j];
                    if (strcmp(D->model, "linformer-max") == 0)
                        s = v > s ? v : s;
                    else if (strcmp(D->model, "linformer-conv") == 0)
                        s += (double)W[t * wcols + j % wcols] * v;
                    else
                        s += v / (double)win;
                }
            }
            out[r * ldo + j] = s;
        }
}

static void encode(const Dump *D, const int32_t *ids, double *x)
{
    const int64_t n = D->n, d = D->d, f = D->f, H = D->h, hd = d / H;
    double *q = calloc((size_t)(n * d), 8), *kf = calloc((size_t)(n * d), 8), *vf = calloc((size_t)(n * d), 8);
    double *ctx = calloc((size_t)(n * d), 8), *y = calloc((size_t)(n * d), 8), *hid = calloc((size_t)(n * f), 8);
    double *kc = calloc((size_t)(n * d), 8), *vc = calloc((size_t)(n * d), 8), *ex = calloc((size_t)(n * d), 8);
    double *s = calloc((size_t)n, 8);
    const float *tok = tensor(D, "tok_emb"), *pos = tensor(D, "pos_emb");
    for (int64_t t = 0; t < n; t++)
        for (int64_t i = 0; i < d; i++)
            x[t * d + i] = (double)tok[(int64_t)ids[t] * d + i] + pos[t * d + i];
    lb_naive_layernorm(x, NULL, n, d, tensor(D, "emb_ln_g"), tensor(D, "emb_ln_b"), 1e-5 /* METHOD.md */);
    const int early = strcmp(D->order, "early") == 0;
    for (int l = 0; l < D->L; l++) {
        const float *Wqkv = layer_t(D, l, "w_qkv"), *bqkv = layer_t(D, l, "b_qkv");
        const int64_t kl = D->kl[l];
        lb_naive_linear(x, n, d, Wqkv, bqkv, 0, d, q);
        lb_naive_linear(x, n, d, Wqkv, bqkv, d, d, kf);
        lb_naive_linear(x, n, d, Wqkv, bqkv, 2 * d, d, vf);
        for (int64_t head = 0; head < H; head++) {
            int64_t er = 0, ec = 0, fr = 0, fc = 0;
            const float *E = weights(D, l, (int)head, 0, &er, &ec), *F = weights(D, l, (int)head, 1, &fr, &fc);
            if (early) { /* K' = (E X) W_K^T + b_K, V' = (F X) W_V^T + b_V */
                compress(D, E, ec, kl, x, d, d, ex, d);
                lb_naive_linear(ex, kl, d, Wqkv, bqkv, d, d, kc);
                compress(D, F, fc, kl, x, d, d, ex, d);
                lb_naive_linear(ex, kl, d, Wqkv, bqkv, 2 * d, d, vc);
            } else if (strcmp(D->sharing, "none") == 0) { /* this head's own weights on its columns */
                compress(D, E, ec, kl, kf + head * hd, d, hd, kc + head * hd, d);
                compress(D, F, fc, kl, vf + head * hd, d, hd, vc + head * hd, d);
            } else { /* K' = E (X W_K^T + b_K) */
                compress(D, E, ec, kl, kf, d, d, kc, d);
                compress(D, F, fc, kl, vf, d, d, vc, d);
            }
            lb_naive_head_attention(q, kc, vc, n, kl, d, hd, head, s, ctx);
        }
        lb_naive_linear(ctx, n, d, layer_t(D, l, "w_o"), layer_t(D, l, "b_o"), 0, d, y);
        lb_naive_layernorm(x, y, n, d, layer_t(D, l, "ln1_g"), layer_t(D, l, "ln1_b"), 1e-5 /* METHOD.md */);
        lb_naive_linear(x, n, d, layer_t(D, l, "w_ff1"), layer_t(D, l, "b_ff1"), 0, f, hid);
        for (int64_t i = 0; i < n * f; i++)
            hid[i] = 0.5 * hid[i] * (1 + erf(hid[i] / sqrt(2.0)));
        lb_naive_linear(hid, n, f, layer_t(D, l, "w_ff2"), layer_t(D, l, "b_ff2"), 0, d, y);
        lb_naive_layernorm(x, y, n, d, layer_t(D, l, "ln2_g"), layer_t(D, l, "ln2_b"), 1e-5 /* METHOD.md */);
    }
    free(q), free(kf), free(vf), free(ctx), free(y), free(hid), free(kc), free(vc), free(ex), free(s);
}

static void check_case(const char *scratch, const char *model, const char *schedule, const char *sharing,
                       const char *order, const int64_t *want_kl)
{
    char dir[600], what[160];
    snprintf(dir, sizeof dir, "%s/%s-%s-%s-%s", scratch, model, schedule, sharing, order);
    snprintf(what, sizeof what, "%s --k-schedule %s --sharing %s --order %s", model, schedule, sharing, order);
    char *argv[] = {(char *)bin, "run", "--device", "cpu", "--layers", "2", "--d-model", "16", "--heads", "4",
                    "--ffn", "24", "--vocab", "50", "--n", "32", "--k", "16", "--batch", "2", "--model",
                    (char *)model, "--k-schedule", (char *)schedule, "--sharing", (char *)sharing, "--order",
                    (char *)order, "--seed", "7", "--dump", dir, NULL};
    lb_run_ok(argv, what);
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
    if (lb_check(out && ids && ref, "%s: ids and output dumped", what)) {
        for (int64_t b = 0; b < D.B; b++)
            encode(&D, ids + b * D.n, ref + b * D.n * D.d);
        double num = 0, den = 0;
        int64_t bad = -1;
        for (int64_t i = 0; i < count; i++) {
            const double e = out[i] - ref[i];
            num += e * e;
            den += ref[i] * ref[i];
            if (bad < 0 && !(fabs(e) <= 1e-4 + 1e-4 * fabs(ref[i])))
                bad = i;
        }
        const double rel = sqrt(num / den);
        lb_check(rel <= 1e-5 && bad < 0, "%s: recomputed from the dump in double, relative error %.3g (<= 1e-5)%s",
                 what, rel, bad >= 0 ? ", an element off" : "");
        printf("  %-70s rel err %.2e\n", what, rel);
    }
    free(ref);
    unload(&D);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_dump_recompute");
    const char *scratch = lb_scratch;
    static const char *const models[] = {"linformer", "linformer-mean", "linformer-max", "linformer-conv"};
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
