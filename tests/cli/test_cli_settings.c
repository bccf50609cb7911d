/* The settings table (reports/settings.h) and the command table end to end: each command's --help
 * and its refusals from them, every recorded setting through meta.csv and back by --resume, model
 * flags taken by every command that plans, and --models choosing and ordering the cells.
 * Usage: test_cli_settings PATH-TO-LINBENCH */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "reports/settings.h"
#include "tests/cli/sweep_check.h"

static const char *bin;
/* linbench's argv: ARGV("sweep", SMALL, "--out", dir) */
#define ARGV(...) LB_ARGV((char *)bin, __VA_ARGS__)

#define SMALL "--device", "cpu", "--no-check", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", \
              "--vocab", "100", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1", "--quiet"

/* A value other than the first run's for each recorded setting (NULL for a switch: the flag
 * alone). A setting added to the table without one here fails the test, so the round trip
 * covers it. The first run's values are in `first`. */
static const char *const other[LB_SET_RECORDED] = {
    [LB_SET_N] = "32", [LB_SET_K] = "4", [LB_SET_MODELS] = "standard", [LB_SET_SHARD] = "1/2",
    [LB_SET_LAYERS] = "2", [LB_SET_DMODEL] = "32", [LB_SET_HEADS] = "4", [LB_SET_FFN] = "64",
    [LB_SET_VOCAB] = "200", [LB_SET_DTYPE] = "fp16", [LB_SET_TF32] = "", [LB_SET_PASS] = "forward", [LB_SET_SHARING] = "layerwise",
    [LB_SET_ORDER] = "early", [LB_SET_CHUNK] = "32", [LB_SET_K_SCHEDULE] = "halve", [LB_SET_DEVICE] = "cuda", [LB_SET_MEM_LIMIT] = "16M",
    [LB_SET_MAX_BATCH] = "3", [LB_SET_HEADROOM] = "2M", [LB_SET_CELL_TIME] = "2", [LB_SET_SEED] = "6",
    [LB_SET_BREAKDOWN] = "", [LB_SET_AUTOTUNE] = "",
};

/* text with every run of white space made one space: help lines wrap where they like */
static char *squeezed(const char *text)
{
    char *out = malloc(strlen(text) + 1);
    size_t n = 0;
    for (const char *p = text; out && *p; p++) {
        if (!isspace((unsigned char)*p))
            out[n++] = *p;
        else if (n > 0 && out[n - 1] != ' ')
            out[n++] = ' ';
    }
    if (out)
        out[n] = '\0';
    return out;
}

/* Each command's --help lists the flags the table gives it and no other, names every model, and
 * says what k is and which k each model with a k axis takes, from the model table
 * (lb_model_k_meaning, lb_model_k_range): the Performer's m > n among them. */
static void help_lists_every_flag(void)
{
    static const char *const cmds[] = {"sweep", "run", "predict"};
    static const unsigned masks[] = {LB_FOR_SWEEP, LB_FOR_RUN, LB_FOR_PREDICT};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        const unsigned mask = masks[c];
        /* --help picks its rows by the command's place in the table, the parser by LB_FOR_*: one bit */
        lb_check(1u << (lb_command_find(cmds[c]) - lb_commands) == mask, "%s: table place vs LB_FOR_*", cmds[c]);
        LbRun r = lb_run(ARGV((char *)cmds[c], "--help"));
        lb_check(r.code == 0, "%s --help exits 0 (%d)", cmds[c], r.code);
        for (int id = 0; id < LB_SET_COUNT; id++) {
            char flag[64]; /* " --n LIST": run's own --n N is another flag */
            snprintf(flag, sizeof flag, " --%s%s%s", lb_settings[id].flag, lb_settings[id].arg ? " " : "",
                     lb_settings[id].arg ? lb_settings[id].arg : "");
            /* the flag and its argument as a whole word: predict's own --gpu NAME is not --gpu N */
            int listed = 0;
            for (const char *at = strstr(r.out, flag); at && !listed; at = strstr(at + 1, flag))
                listed = at[strlen(flag)] == ' ' || at[strlen(flag)] == '\n';
            int other_row = 0; /* another row of that flag for this command (each command's --quiet) */
            for (int j = 0; j < LB_SET_COUNT; j++)
                other_row |= j != id && (lb_settings[j].commands & mask) &&
                             strcmp(lb_settings[j].flag, lb_settings[id].flag) == 0 &&
                             !lb_settings[j].arg == !lb_settings[id].arg;
            if (lb_settings[id].commands & mask)
                lb_check(listed, "%s --help lists --%s", cmds[c], lb_settings[id].flag);
            else if (!other_row)
                lb_check(!listed, "%s --help does not list --%s, which it does not take", cmds[c], lb_settings[id].flag);
        }
        char *help = squeezed(r.out);
        for (int m = 0; help && m < LB_MODEL_COUNT; m++) {
            const LbModelKind kind = (LbModelKind)m;
            lb_check(strstr(r.out, lb_model_name(kind)) != NULL, "%s --help names model %s", cmds[c], lb_model_name(kind));
            if (!lb_model_has_k(kind))
                continue;
            char want[512];
            snprintf(want, sizeof want, "%s: %s, %s", lb_model_name(kind), lb_model_k_meaning(kind), lb_model_k_range(kind));
            char *w = squeezed(want);
            lb_check(w && lb_model_k_range(kind)[0] && strstr(help, w), "%s --help: no \"%s\" in\n%s", cmds[c],
                     w ? w : want, r.out);
            free(w);
        }
        free(help);
        lb_run_free(&r);
    }
}

/* Every model flag of sweep (a setting sweep takes outside the headings of the grid, the device
 * and the timing: the model's shape and each model's own) is taken by run, predict (whose help
 * promises the sweep's model) and slurm (whose tasks run the sweep): given with a value other
 * than its default, each exits 0, and slurm's script passes it on. */
static void model_flags_everywhere(const char *scratch)
{
    static const char *const unrecorded[LB_OPT_MODEL - LB_SET_RECORDED] = {
        [LB_SET_PROJECTION - LB_SET_RECORDED] = "mean",
    };
    for (int id = 0; id < LB_OPT_MODEL; id++) { /* the settings, not the commands' own flags */
        const LbSetting *e = &lb_settings[id];
        if (!(e->commands & LB_FOR_SWEEP) || strcmp(e->group, lb_settings[LB_SET_N].group) == 0 ||
            strcmp(e->group, lb_settings[LB_SET_DEVICE].group) == 0 || strcmp(e->group, lb_settings[LB_SET_SEED].group) == 0)
            continue;
        const char *value = id < LB_SET_RECORDED ? other[id] : unrecorded[id - LB_SET_RECORDED];
        char flag[64], dir[600], script[700];
        snprintf(flag, sizeof flag, "--%s", e->flag);
        if (!lb_check(value || !e->arg, "the test has a value for %s", flag))
            continue;
        char *v = e->arg ? (char *)value : NULL; /* a switch ends the command line */
        snprintf(dir, sizeof dir, "%s/model-flag-%s", scratch, e->flag);
#define SHAPE "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", "--dtype", "fp32", \
              "--n", "32", "--k", "8"
        char **cases[] = {ARGV("run", SHAPE, "--device", "cpu", "--no-check", "--model", "linformer", "--mem-limit", "8M",
                               "--max-batch", "1", "--cell-time", "1", flag, v),
                          ARGV("predict", SHAPE, "--spec", "tflops=100,bw=1000,mem=16G", "-q", "--out", dir, flag, v),
                          ARGV("slurm", SHAPE, "--device", "cpu", "--shards", "1", "--out", script, flag, v)};
#undef SHAPE
        snprintf(script, sizeof script, "%s-slurm", dir);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            lb_run_ok(cases[c], "a model flag of sweep");
        strcat(script, "/slurm/sweep.sbatch");
        char *text = lb_slurp(script), want[200];
        snprintf(want, sizeof want, " %s%s%s ", flag, v ? " " : "", v ? v : "");
        lb_check(text && strstr(text, want), "slurm's sweep.sbatch passes \"%s\" on", want);
        free(text);
    }
}

/* The one parser, for every command: an unknown flag, a flag without its value, and (a command
 * that takes flags only) an operand are each one line naming it, exit 2, nothing on stdout. */
static void every_command_refuses(void)
{
    for (size_t c = 0; c < lb_command_count; c++) {
        char *cmd = (char *)lb_commands[c].name, flag[64] = "";
        for (int id = 0; id < LB_SET_COUNT && !flag[0]; id++)
            if ((lb_settings[id].commands >> c & 1) && lb_settings[id].arg)
                snprintf(flag, sizeof flag, "--%s", lb_settings[id].flag);
        char **cases[] = {ARGV(cmd, "--frobnicate"), ARGV(cmd, flag), lb_commands[c].operands == 0 ? ARGV(cmd, "stray") : NULL};
        const char *named[] = {"--frobnicate", flag[0] ? flag : NULL, "stray"};
        const char *said[] = {"unknown flag", "needs a value", "unexpected argument"};
        for (size_t i = 0; i < 3; i++)
            if (cases[i] && named[i])
                lb_run_refused(cases[i], named[i], said[i]);
    }
}

static void commands_from_the_table(void)
{
    char names[256];
    lb_command_names(names, sizeof names);
    lb_run_refused(ARGV("frobnicate"), "frobnicate", names);
    lb_run_refused(ARGV("help", "frobnicate"), names);
    /* --version takes nothing after it */
    lb_run_refused(ARGV("--version", "extra"), "extra", "--version");
    /* --help COMMAND is help COMMAND: a command's help, or the same refusal */
    lb_run_refused(ARGV("--help", "extra"), "extra");
    LbRun r = lb_run(ARGV("--help", "sweep"));
    lb_check(r.code == 0 && strncmp(r.out, "usage: linbench sweep", 21) == 0, "--help sweep: sweep's help (%d): %.60s",
             r.code, r.out);
    lb_run_free(&r);
    r = lb_run(ARGV("--help"));
    char *copy = strdup(names), *save = NULL;
    for (char *name = strtok_r(copy, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", name);
        lb_check(r.code == 0 && strstr(r.out, line), "linbench --help lists %s", name);
        lb_check(lb_command_find(name) != NULL, "%s is found in the table", name);
    }
    free(copy);
    lb_run_free(&r);
}

/* Bad --models, --chunk and a k axis with no cell, and --gpu with --device cpu: each one line
 * naming the flag and what it accepts, nothing written. */
static void refusals(const char *scratch)
{
    char out[600];
    snprintf(out, sizeof out, "%s/never", scratch);
    static const char *const models[] = {"transformer", "standard,", ",linformer", "standard,,linformer", "", "STANDARD"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        LbRun r = lb_run(ARGV("sweep", SMALL, "--models", (char *)models[i], "--out", out));
        int names_all = 1;
        for (int m = 0; m < LB_MODEL_COUNT; m++)
            names_all &= strstr(r.err, lb_model_name((LbModelKind)m)) != NULL;
        lb_check(names_all, "--models \"%s\": names every model: %s", models[i], r.err);
        lb_check_refusal(r, models[i], "--models");
        lb_check(!lb_exists(out), "--models \"%s\": nothing written", models[i]);
    }
    /* --models whose k axis gets no cell: k below n that does not divide it is refused for that
     * reason, naming the model, not as a k that is no value below n */
    LbRun w = lb_run(ARGV("sweep", SMALL, "--models", "standard,linformer-mean", "--n", "96", "--k", "64", "--out", out));
    lb_check(!strstr(w.err, "no value below"), "--models linformer-mean --n 96 --k 64: not a k with no value below n");
    lb_check_refusal(w, "--models linformer-mean --n 96 --k 64", "--k", "linformer-mean", "divide");
    lb_check(!lb_exists(out), "--models linformer-mean --n 96 --k 64: nothing written");
    static const char *const chunks[] = {"0", "-1", "1048577", "12x", "1.5", ""};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        lb_run_refused(ARGV("sweep", SMALL, "--chunk", (char *)chunks[i], "--out", out), "--chunk", "1 to 1048576");
        lb_run_refused(ARGV("run", "--device", "cpu", "--chunk", (char *)chunks[i]), "--chunk", "1 to 1048576");
        lb_check(!lb_exists(out), "--chunk \"%s\": nothing written", chunks[i]);
    }
    /* --gpu picks a CUDA device: with --device cpu it means nothing, and is refused naming both */
    lb_run_refused(ARGV("run", "--gpu", "3", "--device", "cpu", "--n", "32"), "--gpu", "--device cpu");
    lb_run_refused(ARGV("sweep", SMALL, "--gpu", "3", "--n", "32", "--k", "8", "--out", out), "--gpu", "--device cpu");
    lb_check(!lb_exists(out), "sweep --gpu 3 --device cpu: nothing written");
}

/* Every recorded setting given (none at its default), written to meta.csv as the table prints
 * it, and each contradicted in turn on --resume. */
static void round_trip(const char *scratch)
{
    char dir[600], seed[32], chunk[32];
    snprintf(dir, sizeof dir, "%s/round", scratch);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(lb_test_seed % 100000 + 7));
    snprintf(chunk, sizeof chunk, "%d", (int)(lb_test_seed % 28) + 3); /* 3 to 30: never other[]'s 32 */
    char *first[] = {(char *)bin, "sweep", "--device", "cpu", "--no-check", "--layers", "1", "--d-model", "16",
                     "--heads", "2", "--ffn", "32", "--vocab", "100", "--dtype", "fp32", "--pass", "train", "--sharing", "kv",
                     "--order", "late", "--chunk", chunk, "--k-schedule", "0.5", "--n", "16,32", "--k", "8", "--models", "linformer,standard",
                     "--shard", "0/1", "--mem-limit", "8M", "--max-batch", "2", "--cell-time", "1",
                     "--seed", seed, "--quiet", "--out", dir, NULL};
    lb_run_ok(first, "the first sweep");

    /* What the flags mean, through the table's own parsers and printers. */
    LbRunSettings want;
    lb_run_settings_init(&want);
    for (int i = 2; first[i + 1] && strcmp(first[i], "--quiet") != 0; i++) {
        int id = 0;
        while (id < LB_OPT_MODEL && strcmp(lb_settings[id].flag, first[i] + 2) != 0)
            id++;
        if (id == LB_OPT_MODEL)
            continue; /* --no-check */
        char should[160];
        lb_check(lb_setting_apply(&want, (LbSettingId)id, first[i + 1], 0, should, sizeof should) == 0, "%s %s parses",
                 first[i], first[i + 1]);
        want.given |= UINT64_C(1) << id;
        i++;
    }
    char path[700];
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbMeta meta = {0};
    if (!lb_check(lb_meta_read(path, &meta) == 0, "meta.csv reads back")) {
        lb_run_settings_free(&want);
        return;
    }
    LbRunSettings defaults;
    lb_run_settings_init(&defaults);
    for (int id = 0; id < LB_SET_RECORDED; id++) {
        char *v = lb_setting_text(&want, (LbSettingId)id), *d = lb_setting_text(&defaults, (LbSettingId)id);
        const char *got = lb_meta_get(&meta, lb_settings[id].key);
        lb_check(v && got && strcmp(v, got) == 0, "meta.csv %s is \"%s\" (want \"%s\")", lb_settings[id].key, got ? got : "(none)",
                 v ? v : "?");
        /* models: given as the default set in another order, to see it recorded in the table's;
         * the switches (tf32, breakdown; autotuning on) stay at their defaults so the resume can contradict them;
         * --headroom is --device cuda's (the resume's is refused for that) */
        lb_check(id == LB_SET_TF32 || id == LB_SET_BREAKDOWN || id == LB_SET_AUTOTUNE || id == LB_SET_MODELS ||
                     id == LB_SET_HEADROOM ||
                     (v && d && strcmp(v, d) != 0),
                 "the first run sets %s away from its default (%s)", lb_settings[id].key, d ? d : "?");
        free(v);
        free(d);
    }
    const char *models = lb_meta_get(&meta, "models");
    lb_check(models && strcmp(models, "standard,linformer") == 0, "--models is recorded in the table's order (%s)",
             models ? models : "none");

    /* Taken back: a fresh settings struct filled from meta.csv prints the same. */
    LbRunSettings back;
    lb_run_settings_init(&back);
    lb_check(lb_run_settings_take(&back, &meta, dir) == LB_OK, "meta.csv's settings are taken back");
    lb_check(lb_run_settings_compare(&back, &meta, dir) == LB_OK, "and compare equal to it");
    lb_run_settings_free(&back);
    lb_run_settings_free(&defaults);
    lb_run_settings_free(&want);
    lb_meta_free(&meta);

    char *before = lb_slurp(path);
    for (int id = 0; id < LB_SET_RECORDED; id++) {
        if (!lb_check(other[id] != NULL, "the test has another value for %s", lb_settings[id].key))
            continue;
        char flag[64];
        snprintf(flag, sizeof flag, "--%s", lb_settings[id].flag);
        lb_run_refused(ARGV("sweep", "--resume", dir, "--quiet", flag, lb_settings[id].arg ? (char *)other[id] : NULL), flag,
                       lb_settings[id].key);
    }
    lb_check(lb_same_text(before, lb_slurp(path)), "refused resumes leave meta.csv as it was");

    lb_run_ok(ARGV("sweep", "--resume", dir, "--quiet"), "a resume with no flags");
    sc_files_parse(dir, 1, "resumed");
}

/* The cells of a sweep of `models` over n 16,32 and k 8,16: each expected cell once, in the
 * sweep's order (for each n, each model in the table's order, each k). */
static void sweep_of(const char *scratch, const char *models, const char *name)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", scratch, name);
    lb_run_ok(ARGV("sweep", SMALL, "--n", "16,32", "--k", "8,16", "--chunk", "5", "--models", (char *)models, "--out", dir),
              "a --models sweep");
    unsigned set = 0;
    lb_check(lb_settings_parse_models(models, &set) == 0, "%s parses", models);
    static const int64_t n[] = {16, 32}, k[] = {8, 16};
    LbCellResult *rows = NULL;
    size_t got = 0, count = 0;
    lb_check(sc_read_rows(dir, &rows, &got) == 0, "%s: raw.csv reads", name);
    for (int i = 0; i < 2; i++)
        for (int m = 0; m < LB_MODEL_COUNT; m++)
            for (int j = 0; (set >> m & 1) && j < (lb_model_has_k((LbModelKind)m) ? 2 : 1); j++) {
                const int64_t kk = lb_model_has_k((LbModelKind)m) ? k[j] : 0;
                if (!lb_model_cell_exists((LbModelKind)m, n[i], kk))
                    continue;
                const LbCellResult *r = count < got ? &rows[count] : NULL;
                lb_check(r && r->model == (LbModelKind)m && r->n == n[i] && r->k == kk && r->status == LB_CELL_OK,
                         "%s: cell %zu is %s n=%lld k=%lld, ok", name, count, lb_model_name((LbModelKind)m),
                         (long long)n[i], (long long)kk);
                count++;
            }
    lb_check(got == count, "%s: %zu cells (want %zu)", name, got, count);
    free(rows);
    char *speedups = lb_slurp_in(dir, "speedups.csv");
    lb_check(speedups && strncmp(speedups, "model,baseline,n,k,", 19) == 0, "%s: speedups.csv written", name);
    free(speedups);
    sc_check_meta(dir, "models", models, name);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_settings");
    const char *scratch = lb_scratch;
    help_lists_every_flag();
    commands_from_the_table();
    every_command_refuses();
    model_flags_everywhere(scratch);
    refusals(scratch);
    round_trip(scratch);
    sweep_of(scratch, "standard", "standard-only");
    sweep_of(scratch, "standard,linformer", "paper");
    sweep_of(scratch, "standard,linformer,chunked", "with-chunked");
    lb_test_cleanup(scratch);
    return lb_test_finish("test_cli_settings");
}
