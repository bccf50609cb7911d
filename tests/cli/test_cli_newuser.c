/* What a new user meets following README.md on the CPU: a flag the documentation ties to another
 * must not be dropped without a word; --dump must not overwrite the user's files, nor --force leave
 * the previous results' figures beside the new results; --resume takes its directory however it is
 * spelt; a flag counts by its whole name; run --help gives its exit codes; plot says when stdout
 * fails; predict refuses a card with no memory to plan in; --projection beside a model of another
 * projection, --headroom on the CPU, and help --markdown with a command are refused; merge counts
 * one part as one. Usage: test_cli_newuser PATH-TO-LINBENCH */
#include <stdlib.h>
#include <sys/stat.h>

#include "tests/cli/sweep_check.h"

static const char *bin;

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    return f && fputs(text, f) >= 0 && fclose(f) == 0 ? 0 : -1;
}

#define TINY "--device", "cpu", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--vocab", "100", \
             "--mem-limit", "8M", "--cell-time", "1", "--no-check"

/* run --help said nothing of its exit codes, where every other command that writes says them: a
 * script needs 1 for a cell out of memory (its status: OOM on stdout) apart from 2 for bad input. */
static void run_help_says_exit_codes(void)
{
    sc_run_says(LB_ARGV((char *)bin, "run", "--help"), 0, "Exit codes: 0 done; 1 runtime failure", "out of memory",
                "2 bad input");
    sc_says(lb_run(LB_ARGV((char *)bin, "run", TINY, "--n", "2048", "--mem-limit", "1M")), 1, "status: OOM");
}

/* run --batch is "batch of the dumped pass": a measured run finds its largest batch, so --batch
 * without --dump was measured at another batch than asked, exit 0. */
static void batch_needs_dump(void)
{
    lb_run_refused(LB_ARGV((char *)bin, "run", TINY, "--n", "64", "--batch", "2"), "--batch", "--dump", "--max-batch");
    /* its own use still runs */
    char dump[600];
    snprintf(dump, sizeof dump, "%s/dump", lb_scratch);
    sc_run_says(LB_ARGV((char *)bin, "run", TINY, "--n", "64", "--batch", "2", "--dump", dump), 0, "batch 2");
}

/* A flag counts by its whole name: getopt_long's prefixes made check's --n 64 into --no-autotune
 * and an operand "64" (the refusal naming "64", not --n), plot's --n into --no-render, and
 * sweep's --model (run's flag) into --models. --NAME=VALUE stays. */
static void whole_flag_names(void)
{
    lb_run_refused(LB_ARGV((char *)bin, "check", "--device", "cpu", "--quick", "--n", "64"), "unknown flag \"--n\" for check");
    lb_run_refused(LB_ARGV((char *)bin, "check", "--device", "cpu", "--quick", "--n"), "unknown flag \"--n\" for check");
    lb_run_refused(LB_ARGV((char *)bin, "plot", (char *)lb_scratch, "--n", "512"), "unknown flag \"--n\" for plot");
    lb_run_refused(LB_ARGV((char *)bin, "sweep", "--model", "standard"), "unknown flag \"--model\" for sweep");
    lb_run_refused(LB_ARGV((char *)bin, "sweep", "--mem=1G"), "unknown flag \"--mem\" for sweep");
    lb_run_refused(LB_ARGV((char *)bin, "sweep", "--ou"), "unknown flag \"--ou\" for sweep"); /* last, no value */
    lb_run_refused(LB_ARGV((char *)bin, "sweep", "--out"), "flag --out needs a value");
    char dump[600];
    snprintf(dump, sizeof dump, "%s/equals", lb_scratch);
    lb_run_ok(LB_ARGV((char *)bin, "run", TINY, "--n=64", "--model=linformer", "--k=16", "--dump", dump), "--NAME=VALUE");
}

/* run --dump DIR is "a new or empty directory": beside the user's own arrays (what a dump is
 * compared with) it overwrote their output.npy, exit 0. */
static void dump_keeps_the_users_files(void)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/mine", lb_scratch);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/output.npy", dir);
    lb_check(write_text(path, "the user's array\n") == 0, "plant output.npy");
    lb_run_refused(LB_ARGV((char *)bin, "run", TINY, "--n", "64", "--dump", dir), "--dump", "output.npy", "empty");
    char *text = lb_slurp(path);
    lb_check(text && strcmp(text, "the user's array\n") == 0, "the user's output.npy is untouched");
    free(text);
    lb_check(!lb_exists_in(dir, "ids.npy") && !lb_exists_in(dir, ".linbench.lock"), "nothing of the dump is left there");
    /* an empty directory that exists is taken */
    snprintf(dir, sizeof dir, "%s/empty", lb_scratch);
    mkdir(dir, 0777);
    lb_run_ok(LB_ARGV((char *)bin, "run", TINY, "--n", "64", "--dump", dir), "run --dump into an empty directory");
}

/* The figures of a plot drawn into a sweep's directory (its default --out) are of that sweep's
 * results: sweep --force over them must take them away with the results, and nothing else. */
static void force_takes_the_plots(void)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/forced", lb_scratch);
#define SWEEP(...) LB_ARGV((char *)bin, "sweep", TINY, "--n", "32,64", "--k", "8", "-q", "--out", dir, __VA_ARGS__)
    lb_run_ok(SWEEP("--seed", "1"), "first sweep");
    lb_run_ok(LB_ARGV((char *)bin, "plot", dir, "--no-render"), "plot --no-render");
    /* what gnuplot would have rendered (it need not be installed here), and a file of the user's */
    static const char *const figures[] = {"time_speedup.png", "time_speedup.svg", "time_per_seq.png"};
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, figures[i]);
        lb_check(write_text(path, "old figure\n") == 0, "plant %s", figures[i]);
    }
    /* the user's: a file, a figure of another program's (its script not plot's), a directory named like a figure */
    static const char *const mine[] = {"notes.txt", "mine.gp", "mine.plot.csv", "mine.png"};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, mine[i]);
        lb_check(write_text(path, "# mine\n") == 0, "plant %s", mine[i]);
    }
    snprintf(path, sizeof path, "%s/memory_speedup.png", dir);
    lb_check(mkdir(path, 0755) == 0, "plant a directory memory_speedup.png");
    lb_run_ok(SWEEP("--seed", "2", "--force"), "sweep --force");
    static const char *const gone[] = {"time_speedup.png", "time_speedup.svg", "time_per_seq.png", "time_speedup.gp",
                                       "time_speedup.plot.csv", "memory_speedup.gp", "memory_speedup.plot.csv",
                                       "time_per_seq.gp", "time_per_seq.plot.csv"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, gone[i]);
        lb_check(!lb_exists(path), "sweep --force removed the old figure %s", gone[i]);
    }
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, mine[i]);
        lb_check(lb_exists(path), "sweep --force kept %s, not linbench's", mine[i]);
    }
    snprintf(path, sizeof path, "%s/memory_speedup.png", dir);
    lb_check(lb_exists(path) && rmdir(path) == 0, "sweep --force kept the directory memory_speedup.png");
    sc_check_meta(dir, "seed", "2", "the forced sweep's results");
#undef SWEEP
    /* plot's own lines lost to a full stdout: exit 1 with one line, not 1 without a word */
    char plots[600];
    snprintf(plots, sizeof plots, "%s/plots", lb_scratch);
    lb_child_stdout = "/dev/full";
    sc_expect(lb_run(LB_ARGV((char *)bin, "plot", dir, "--no-render", "--out", plots)), 1, 1, "plot > /dev/full",
              "standard output");
    lb_child_stdout = NULL;
}

/* --resume DIR --out DIR/ (a shell's completion adds the slash) names one directory, not two that
 * differ; another directory is still refused. Resumes the finished sweep of force_takes_the_plots. */
static void resume_with_slash(void)
{
    char dir[600], slash[610], other[610];
    snprintf(dir, sizeof dir, "%s/forced", lb_scratch);
    snprintf(slash, sizeof slash, "%s/", dir);
    snprintf(other, sizeof other, "%s/other", lb_scratch);
    lb_check(mkdir(other, 0755) == 0, "another directory, there: only its name may tell it apart");
    lb_run_ok(LB_ARGV((char *)bin, "sweep", "--resume", dir, "--out", slash, "-q"), "--resume DIR --out DIR/");
    lb_run_refused(LB_ARGV((char *)bin, "sweep", "--resume", dir, "--out", other, "-q"), "--out", "differ");
}

/* predict: --spec's mem is a size "as --mem-limit takes it" (at least 1M), so mem=16 (meant as
 * 16 GB) is bad input, not a 16-byte card; and a headroom that leaves the card no memory stops a
 * sweep before its first cell, so its prediction is refused too, not a grid of OOM with exit 0. */
static void predict_card_memory(void)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/predicted", lb_scratch);
#define PREDICT(...) LB_ARGV((char *)bin, "predict", "--n", "512", "--k", "128", "-q", "--out", dir, __VA_ARGS__)
    lb_run_refused(PREDICT("--spec", "tflops=100,bw=900,mem=16"), "--spec", "at least 1M");
    lb_run_refused(PREDICT("--spec", "tflops=100,bw=900,mem=200M"), "--headroom", "256 MiB", "200 MiB");
    lb_run_refused(PREDICT("--gpu", "a10", "--headroom", "24G"), "--headroom", "24 GiB");
    /* rates whose pass time rounds to 0 or overflows: the predicted raw.csv would not read back */
    lb_run_refused(PREDICT("--spec", "tflops=1e13,bw=1e300,mem=80G", "--launch-us", "0"), "--spec", "1e-12 to 1e12");
    lb_run_refused(PREDICT("--spec", "tflops=1e-13,bw=900,mem=80G"), "--spec", "1e-12 to 1e12");
    lb_check(!lb_exists(dir), "a refused prediction writes nothing");
    /* the edges that stay: a card of 1M with no headroom (its cells OOM), and a headroom below the memory */
    lb_run_ok(PREDICT("--spec", "tflops=100,bw=900,mem=1M", "--headroom", "0"), "--spec mem=1M --headroom 0");
    lb_run_ok(PREDICT("--spec", "tflops=1e12,bw=1e12,mem=80G", "--launch-us", "0", "--force"), "--spec at the top of its rates");
    lb_run_ok(PREDICT("--spec", "tflops=1e-12,bw=1e-12,mem=80G", "--force"), "--spec at the bottom of its rates");
    lb_run_ok(PREDICT("--gpu", "a10", "--headroom", "23G", "--force"), "--gpu a10 --headroom 23G");
#undef PREDICT
}

/* --projection P measures linformer-P in linformer's place; beside linformer-Q, whose projection
 * is Q, it asks for another one: the sweep said linformer-mean was measured and Table 3 was its,
 * and measured linformer-conv; run measured linformer-conv, exit 0. Both refused, naming the flags. */
static void projection_beside_its_model(void)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/projected", lb_scratch);
    lb_run_refused(LB_ARGV((char *)bin, "sweep", TINY, "--models", "standard,linformer-conv", "--projection", "mean",
                           "--n", "64", "--k", "16", "--out", dir),
                   "--projection mean", "--models", "linformer-conv");
    lb_check(!lb_exists(dir), "sweep --projection mean --models standard,linformer-conv: nothing written");
    lb_run_refused(LB_ARGV((char *)bin, "run", TINY, "--model", "linformer-conv", "--projection", "mean", "--n", "64", "--k", "16"),
                   "--projection mean", "--model linformer-conv");
    lb_run_refused(LB_ARGV((char *)bin, "run", TINY, "--model", "linformer-max", "--projection", "linear", "--n", "64", "--k", "16"),
                   "--projection linear", "--model linformer-max");
    /* what agrees still runs: P beside linformer-P, P in linformer's place, beside other linformer-Q too */
    snprintf(dir, sizeof dir, "%s/projected-all", lb_scratch);
    lb_run_ok(LB_ARGV((char *)bin, "predict", "--gpu", "a10", "--n", "64", "--k", "16", "-q", "--models",
                      "standard,linformer,linformer-conv", "--projection", "mean", "--out", dir),
              "predict --models standard,linformer,linformer-conv --projection mean");
    lb_run_ok(LB_ARGV((char *)bin, "predict", "--gpu", "a10", "--n", "64", "--k", "16", "-q", "--models",
                      "standard,linformer,linformer-mean,linformer-conv", "--projection", "linear", "--out", dir, "--force"),
              "predict --models (all four) --projection linear");
    sc_run_says(LB_ARGV((char *)bin, "run", TINY, "--model", "linformer-conv", "--projection", "conv", "--n", "64", "--k", "16"),
                0, "model: linformer-conv");
    sc_run_says(LB_ARGV((char *)bin, "run", TINY, "--model", "linformer", "--projection", "mean", "--n", "64", "--k", "16"),
                0, "model: linformer-mean");
    /* with no linformer to replace, no note that Table 3 is linformer-mean's */
    snprintf(dir, sizeof dir, "%s/projected-standard", lb_scratch);
    LbRun r = lb_run(LB_ARGV((char *)bin, "sweep", TINY, "--models", "standard", "--projection", "mean", "--n", "64", "--out", dir));
    lb_check(r.code == 0 && !strstr(r.err, "in linformer's place") && strstr(r.err, "--projection has no effect on standard"),
             "sweep --models standard --projection mean: exit %d, a note that it changes nothing, none of linformer's place: %s",
             r.code, r.err);
    lb_run_free(&r);
    /* a resume's models are its meta.csv's, not a --models the user could change */
    snprintf(dir, sizeof dir, "%s/projected-mean", lb_scratch);
    lb_run_ok(LB_ARGV((char *)bin, "sweep", TINY, "--n", "32", "--k", "8", "--projection", "mean", "-q", "--out", dir),
              "sweep --projection mean");
    lb_run_refused(LB_ARGV((char *)bin, "sweep", "--resume", dir, "--projection", "conv", "-q"), "--projection conv",
                   "linformer-mean, a model of the run");
    /* a resume's models changed by --projection are its doing, not the directory's: that refusal
     * blamed DIR/meta.csv ("should be as linbench sweep wrote it"). Resumes force_takes_the_plots' sweep. */
    snprintf(dir, sizeof dir, "%s/forced", lb_scratch);
    r = lb_run(LB_ARGV((char *)bin, "sweep", "--resume", dir, "--projection", "mean", "-q"));
    lb_check(r.code == 2 && strstr(r.err, "--projection mean makes the models standard,linformer-mean") &&
                 strstr(r.err, "resumed run's") && !strstr(r.err, "as linbench sweep wrote it"),
             "sweep --resume (linear) --projection mean: exit %d, should be 2 blaming --projection: %s", r.code, r.err);
    lb_run_free(&r);
}

/* --headroom is GPU memory kept outside the budget: with --device cpu, whose budget is --mem-limit
 * whole, it was recorded in meta.csv and kept nowhere. Refused as --gpu is. */
static void headroom_needs_cuda(void)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/headroom", lb_scratch);
    lb_run_refused(LB_ARGV((char *)bin, "sweep", TINY, "--headroom", "1G", "--n", "64", "--k", "16", "--out", dir),
                   "--headroom", "--device cuda");
    lb_check(!lb_exists(dir), "sweep --device cpu --headroom 1G: nothing written");
    lb_run_refused(LB_ARGV((char *)bin, "run", TINY, "--headroom", "0", "--n", "64"), "--headroom", "--device cuda");
}

/* help's usage is COMMAND | --markdown: help --markdown sweep printed every command's tables with
 * exit 0, the operand dropped without a word. And merge of one part said "merged 1 parts". Merges
 * the finished sweep of force_takes_the_plots. */
static void help_and_merge_words(void)
{
    lb_run_refused(LB_ARGV((char *)bin, "help", "--markdown", "sweep"), "--markdown", "\"sweep\"");
    lb_run_refused(LB_ARGV((char *)bin, "help", "sweep", "--markdown"), "--markdown", "\"sweep\"");
    char dir[600], merged[600];
    snprintf(dir, sizeof dir, "%s/forced", lb_scratch);
    snprintf(merged, sizeof merged, "%s/merged-one", lb_scratch);
    LbRun r = lb_run(LB_ARGV((char *)bin, "merge", merged, dir));
    lb_check(r.code == 0 && strstr(r.err, "merged 1 part into") && !strstr(r.err, "1 parts"),
             "merge of one part: exit %d, \"merged 1 part into\": %s", r.code, r.err);
    lb_run_free(&r);
}

int main(int argc, char **argv)
{
    bin = lb_cli_start(argc, argv, "test_cli_newuser");
    whole_flag_names();
    batch_needs_dump();
    run_help_says_exit_codes();
    dump_keeps_the_users_files();
    force_takes_the_plots();
    resume_with_slash();
    predict_card_memory();
    projection_beside_its_model();
    headroom_needs_cuda();
    help_and_merge_words();
    lb_test_cleanup(lb_scratch);
    return lb_test_finish("test_cli_newuser");
}
