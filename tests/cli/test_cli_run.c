/* linbench run end to end on the CPU reference: a cell printed as key: value lines whose numbers
 * agree; its flags and refusals; stdout that cannot be written; --dump's files and meta.csv; help
 * and info; the notes on flags no measured model reads. Usage: test_cli_run PATH-TO-LINBENCH */
#include <stdlib.h>

#include "attn/base/status.h"
#include "attn/config.h"
#include "reports/csv_io.h"
#include "tests/cli/sweep_check.h"

static const char *bin;

#define TINY "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--mem-limit", "8M", "--cell-time", "1"

/* `linbench run` of the tiny model with the flags given; RUN_REFUSED: the same refused naming flag */
#define RUN(...) lb_run(LB_ARGV((char *)bin, "run", TINY, __VA_ARGS__))
#define RUN_REFUSED(flag, ...) lb_run_refused(LB_ARGV((char *)bin, "run", TINY, __VA_ARGS__), flag)

/* run --dump records what it ran with: a dump can be checked later without its command line
 * (meta: the key, value pairs its meta.csv must hold). */
static void check_dump_settings(const char *scratch)
{
    static const struct {
        const char *model, *args[14], *meta[40];
    } dumps[] = {
        {"linformer",
         {"--n", "32", "--k", "8", "--sharing", "kv", "--order", "late", "--seed", "7", "--batch", "2"},
         {"model", "linformer", "n", "32", "k", "8", "batch", "2", "chunk", "", "sharing", "kv", "order", "late",
          "dtype", "fp16", "storage_dtype", "fp32", "seed", "7", "layers", "1", "d_model", "16", "heads", "2", "ffn",
          "32", "vocab", "100", "device", "cpu", "tf32", "0"}},
        {"performer", /* m > n */
         {"--n", "32", "--k", "48", "--dtype", "fp32"},
         {"model", "performer", "n", "32", "k", "48", "batch", "1", "chunk", "", "sharing", "", "order", "", "dtype",
          "fp32", "seed", "1"}},
        {"chunked", {"--n", "32", "--chunk", "8"},
         {"model", "chunked", "n", "32", "k", "", "chunk", "8", "sharing", "", "order", ""}},
    };
    for (size_t i = 0; i < sizeof dumps / sizeof dumps[0]; i++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/dump-%s", scratch, dumps[i].model);
        char *argv[40], *tiny[] = {TINY, "--model", (char *)dumps[i].model, "--dump", dir};
        int nargs = 0;
        while (dumps[i].args[nargs])
            nargs++;
        lb_argv(argv, 40, bin, "run", tiny, (int)(sizeof tiny / sizeof tiny[0]), (char *const *)dumps[i].args, nargs);
        lb_run_ok(argv, dumps[i].model);
        for (int j = 0; dumps[i].meta[j]; j += 2)
            sc_check_meta(dir, dumps[i].meta[j], dumps[i].meta[j + 1], dumps[i].model);
    }
}

/* `run` (name NULL) or `sweep` into scratch/name with args: exit 0, and one note naming every word of
 * want, or none when want is NULL. */
static void check_notes(const char *scratch, const char *name, const char *const *args, const char *const *want)
{
    char out[512], *argv[64], *tiny[] = {TINY, "--max-batch", "1", "--no-check", "-q", "--out", out};
    int nargs = 0;
    while (args[nargs])
        nargs++;
    snprintf(out, sizeof out, "%s/%s", scratch, name ? name : "");
    const int ntiny = (int)(sizeof tiny / sizeof tiny[0]) - (name ? 0 : 3); /* run: no -q --out */
    lb_argv(argv, 64, bin, name ? "sweep" : "run", tiny, ntiny, (char *const *)args, nargs);
    LbRun r = lb_run(argv);
    /* the notes: lines that start "linbench: note: ", and whether one names every word of want */
    int count = 0, matched = 0;
    for (const char *p = strstr(r.err, "linbench: note: "); p; p = strstr(p + 1, "linbench: note: ")) {
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
        int all = p == r.err || p[-1] == '\n';
        count += all;
        for (int i = 0; want && want[i]; i++)
            all &= strstr(line, want[i]) != NULL;
        matched |= all;
    }
    const int want_notes = want != NULL;
    const char *what = name ? name : args[1];
    lb_check(r.code == 0 && (name ? sc_rows(out) > 0 : strstr(r.out, "status: ok") != NULL), "%s: exit %d\n%s", what,
             r.code, r.err);
    lb_check(count == want_notes && (want_notes == 0 || matched), "%s: %d notes (want %d%s%s)\n%s", what, count,
             want_notes, want ? ", one naming " : "", want ? want[0] : "", r.err);
    lb_run_free(&r);
}

/* Flags only some models read (the model table's: --k for a model with a k axis, --sharing and
 * --order the Linformer's, --chunk the chunked model's), given to a run or sweep where no model
 * reads them: accepted (exit 0) with one note naming the flag, the models it did not change and
 * the ones that read it; none where a model reads it. A sweep of models that form no ratio runs
 * with one note that every speedup grid will be NA. */
static void check_unread_flags(const char *scratch)
{
    static const struct {
        const char *sweep; /* the sweep's directory, or NULL for a run */
        const char *args[11];
        const char *note[3]; /* the words of the one note, or none */
    } cases[] = {
        {NULL, {"--model", "standard", "--n", "32", "--k", "8"},
         {"--k has no effect on standard", "only linformer, performer, linformer-mean, linformer-max and linformer-conv"}},
        {NULL, {"--model", "linformer", "--n", "32", "--k", "8", "--chunk", "16"},
         {"--chunk has no effect on linformer", "only chunked"}},
        {NULL, {"--model", "chunked", "--n", "32", "--chunk", "16", "--sharing", "kv"},
         {"--sharing has no effect on chunked", "only linformer"}},
        {NULL, {"--model", "linformer", "--n", "32", "--k", "8", "--sharing", "kv", "--order", "late"}, {NULL}},
        {NULL, {"--model", "performer", "--n", "32", "--k", "48"}, {NULL}}, /* m > n: the Performer takes it */
        {"chunk-unread", {"--models", "standard,linformer", "--n", "32", "--k", "8", "--chunk", "16"},
         {"--chunk has no effect on standard and linformer", "only chunked"}},
        {"k-unread", {"--models", "standard,chunked", "--n", "32", "--k", "8"}, {"--k has no effect on standard and chunked"}},
        {"all-read", {"--models", "standard,chunked,performer", "--n", "32", "--k", "8", "--chunk", "16"}, {NULL}},
        /* models that form no ratio: measured all the same, with one note that every speedup is NA */
        {"standard-alone", {"--models", "standard", "--n", "32"}, {"--models standard forms no ratio", "NA"}},
        {"no-baseline", {"--models", "linformer", "--n", "32", "--k", "8"}, {"--models linformer forms no ratio", "NA"}},
        /* a grid's cells that a model skips, and the model --projection measures instead */
        {"skipped", {"--models", "standard,linformer-mean", "--n", "32", "--k", "7,8"},
         {"linformer-mean skips 1 cell with k < n (the first: n 32, k 7)", "k must divide n"}},
        {"projection", {"--models", "standard,linformer", "--n", "32", "--k", "8", "--projection", "mean"},
         {"--projection mean measures linformer-mean in linformer's place", "are linformer-mean's against standard"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_notes(scratch, cases[i].sweep, cases[i].args, cases[i].note[0] ? cases[i].note : NULL);
    char path[600];
    snprintf(path, sizeof path, "%s/chunk-unread", scratch);
    sc_check_meta(path, "chunk", "16", "the unread --chunk is recorded all the same");
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_run");
    const char *scratch = lb_scratch;

    /* The standard model: every line, and numbers that agree with each other. */
    LbRun r = RUN("--n", "64");
    lb_check(r.code == 0 && r.err[0] == '\0', "run standard exits 0, quiet on stderr (%d): %s", r.code, r.err);
    const char *keys[] = {"model: standard", "n: 64", "dtype: fp16", "memory budget: 8 MiB", "status: ok", "batch: ",
                          "planned bytes: ", "peak bytes: ", "ms per forward: median ", "ms per sequence: ",
                          "tokens per second: ", "TFLOP/s: "};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        lb_check(strstr(r.out, keys[i]) != NULL, "run prints \"%s\"", keys[i]);
    lb_check(strstr(r.out, "k: ") == NULL, "the standard model prints no k");
    double batch = lb_key_number(r.out, "batch"), planned = lb_key_number(r.out, "planned bytes"), peak = lb_key_number(r.out, "peak bytes");
    double per_seq = lb_key_number(r.out, "ms per sequence"), tokens = lb_key_number(r.out, "tokens per second");
    lb_check(batch >= 1 && planned > 0 && planned == peak && planned <= 8 << 20, "batch %g, planned %g = peak %g within 8 MiB", batch,
             planned, peak);
    lb_check(per_seq > 0 && tokens > 0 && fabs(tokens - 64 * 1000 / per_seq) <= 1e-2 * tokens,
             "tokens per second %g = n / ms per sequence %g", tokens, per_seq);
    printf("%s", r.out);
    lb_run_free(&r);

    /* Linformer: its k and variant; --max-batch caps the batch. */
    r = RUN("--model", "linformer", "--n", "128", "--k", "16", "--sharing", "kv", "--max-batch", "3");
    lb_check(lb_key_number(r.out, "batch") == 3, "run linformer: --max-batch 3 caps the batch:\n%s", r.out);
    sc_says(r, 0, "run linformer prints k, sharing, order", "model: linformer", "k: 16", "sharing: kv", "order: early");
    /* What a model's own settings are comes from the model table: chunked prints its chunk and
     * no Linformer setting */
    r = RUN("--model", "chunked", "--n", "64", "--chunk", "16", "--max-batch", "1");
    lb_check(r.code == 0 && strstr(r.out, "chunk: 16") && !strstr(r.out, "sharing:") && !strstr(r.out, "order:"),
             "run chunked prints its chunk and no sharing or order (%d):\n%s%s", r.code, r.out, r.err);
    lb_run_free(&r);
    r = RUN("--n", "64", "--max-batch", "1", "--dtype", "fp32");
    lb_check(lb_key_number(r.out, "batch") == 1, "--max-batch 1: batch 1:\n%s", r.out);
    sc_says(r, 0, "--max-batch 1 and --dtype fp32", "dtype: fp32");
    /* A budget too small for batch 1: status OOM, exit 1. */
    sc_says(RUN("--n", "2048", "--vocab", "100", "--mem-limit", "1M"), 1, "a cell that does not fit", "status: OOM");

    /* Bad input (an unknown flag or an operand: test_cli_settings, for every command). */
    RUN_REFUSED("--model", "--model", "big");
    RUN_REFUSED("--n", "--n", "1");
    RUN_REFUSED("--n", "--n", "64x");
    RUN_REFUSED("--k", "--k", "0");
    RUN_REFUSED("--batch", "--batch", "0");
    /* the general projections: windows of n/k, so k must divide n and k > n leaves none */
    RUN_REFUSED("--k", "--model", "linformer-mean", "--n", "100", "--k", "32");
    RUN_REFUSED("--k", "--model", "linformer-conv", "--n", "64", "--k", "128");
    RUN_REFUSED("--projection", "--model", "linformer", "--projection", "sum");
    RUN_REFUSED("--k-schedule", "--model", "linformer", "--k-schedule", "1,2");
    RUN_REFUSED("--batch", "--batch", "65537");
    RUN_REFUSED("--heads", "--heads", "3");
    RUN_REFUSED("--max-batch", "--max-batch", "0");
    RUN_REFUSED("--cell-time", "--cell-time", "x");
    RUN_REFUSED("--dump", "--dump");
    /* more than any machine this runs on */
    RUN_REFUSED("--mem-limit", "--mem-limit", "64T", "--max-batch", "2", "--n", "32");

    /* stdout that cannot take the measurement: exit 1 and one line, not a silent 0. */
    lb_child_stdout = "/dev/full";
    sc_expect(RUN("--n", "64"), 1, 1, "run > /dev/full", "standard output");
    lb_child_stdout = NULL;

    /* --dump: the files, listed in index.csv. */
    char dump[512], path[700];
    snprintf(dump, sizeof dump, "%s/dump", scratch);
    sc_says(RUN("--model", "linformer", "--n", "32", "--k", "8", "--batch", "2", "--dump", dump), 0, "run --dump", "wrote");
    snprintf(path, sizeof path, "%s/index.csv", dump);
    LbCsvTable t;
    if (lb_check(lb_csv_read_file(path, 0, &t) == 0, "index.csv reads back")) {
        lb_check(t.rows > 3 && t.row[0].count == 4, "index.csv: a header and a row per file (%zu rows)", t.rows);
        for (size_t i = 1; i < t.rows; i++) {
            snprintf(path, sizeof path, "%s/%s", dump, t.row[i].fields[1]);
            lb_check(lb_exists(path), "dumped %s exists", t.row[i].fields[1]);
        }
        lb_csv_table_free(&t);
    }
    lb_check(lb_exists_in(dump, "output.npy"), "output.npy written");
    check_dump_settings(scratch);
    /* Into a directory holding a sweep's results: refused, and without suggesting --force,
     * which run does not take. */
    snprintf(path, sizeof path, "%s/raw.csv", dump);
    close(open(path, O_WRONLY | O_CREAT, 0644)); /* an empty raw.csv */
    r = RUN("--n", "32", "--dump", dump);
    lb_check(!strstr(r.err, "--force"), "--dump into results: no --force hint: %s", r.err);
    sc_expect(r, 2, 1, "--dump into results", "--dump");
    /* A dump that does not fit the budget: exit 1, and no directory left behind. */
    char big[512];
    snprintf(big, sizeof big, "%s/big/dump", scratch);
    sc_expect(RUN("--n", "2048", "--batch", "65536", "--dump", big), 1, 1, "--dump too big", "out of memory");
    lb_check(!lb_exists_in(scratch, "big"), "--dump too big: nothing left behind");

    /* help and info (an unknown command or flag, an operand and a flag without its value:
     * test_cli_settings, for every command). */
    sc_run_says(LB_ARGV((char *)bin, "help", "--help"), 0, "usage: linbench help");
    sc_run_says(LB_ARGV((char *)bin, "help", "run"), 0, "--dump", "--batch", "--model");
    sc_run_says(LB_ARGV((char *)bin, "info", "--help"), 0, "--gpu");
    lb_run_refused(LB_ARGV((char *)bin, "info", "--gpu", "x"), "--gpu");
    lb_run_refused(LB_ARGV((char *)bin, "info", "--gpu", "1024"), "--gpu");
    r = lb_run(LB_ARGV((char *)bin, "info", "--gpu", "0"));
    lb_check(r.code == 0 && strstr(r.out, "cpu:") && (strstr(r.out, "no CUDA device") || strstr(r.out, "cuda:0")),
             "info --gpu 0: exit 0, says what it sees (%d): %s", r.code, r.out);
    lb_run_free(&r);
    check_unread_flags(scratch);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_run");
}
