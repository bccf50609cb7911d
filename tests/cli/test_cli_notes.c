/* Flags that only some models read (the model table's: --k for a model with a k axis, --sharing
 * and --order the Linformer's, --chunk the chunked model's), end to end on the CPU reference:
 *   - given to a run or sweep where no model reads them, each is still accepted (exit 0) and
 *     one note on stderr names the flag, the models it did not change and the ones that read it;
 *     a flag some model of the sweep reads gets none;
 *   - a sweep of models that form no ratio (standard alone, or no baseline) runs (exit 0) with one
 *     note that every speedup grid will be NA.
 * Usage: test_cli_notes PATH-TO-LINBENCH */
#include <stdlib.h>

#include "attn/config.h"
#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

static const char *bin;

#define TINY "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--mem-limit", "8M", "--cell-time", "1", "--max-batch", "1", "--no-check"

/* Lines of err that are notes, and whether one names every word of want (NULL-ended). */
static int notes(const char *err, const char *const *want, int *matched)
{
    int count = 0;
    *matched = 0;
    for (const char *p = err; p && *p;) {
        const char *end = strchr(p, '\n');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (strncmp(line, "linbench: note: ", 16) == 0) {
            count++;
            int all = 1;
            for (int i = 0; want && want[i]; i++)
                all &= strstr(line, want[i]) != NULL;
            *matched |= all;
        }
        p = end ? end + 1 : NULL;
    }
    return count;
}

/* `run` (name NULL) or `sweep` into scratch/name with args: exit 0, and one note naming every word of
 * want, or none when want is NULL. */
static void check_notes(const char *scratch, const char *name, const char *const *args, const char *const *want)
{
    char out[512], *argv[64], *tiny[] = {TINY}, *extra[16];
    int nextra = 0;
    while (args[nextra])
        extra[nextra] = (char *)args[nextra], nextra++;
    int a = lb_argv(argv, 60, bin, name ? "sweep" : "run", tiny, (int)(sizeof tiny / sizeof tiny[0]), extra, nextra);
    if (name) {
        snprintf(out, sizeof out, "%s/%s", scratch, name);
        argv[a++] = "-q";
        argv[a++] = "--out";
        argv[a++] = out;
        argv[a] = NULL;
    }
    LbRun r = lb_run(argv);
    int matched = 0;
    const int count = notes(r.err, want, &matched), want_notes = want != NULL;
    const char *what = name ? name : args[1];
    lb_check(r.code == 0 && (name ? sc_rows(out) > 0 : strstr(r.out, "status: ok") != NULL), "%s: exit %d\n%s", what,
             r.code, r.err);
    lb_check(count == want_notes && (want_notes == 0 || matched), "%s: %d notes (want %d%s%s)\n%s", what, count,
             want_notes, want ? ", one naming " : "", want ? want[0] : "", r.err);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_notes");
    const char *scratch = lb_scratch;

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

    return lb_test_finish("test_cli_notes");
}
