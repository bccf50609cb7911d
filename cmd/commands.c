/* The command table, which every list of the commands walks, and the one-line usage error. */
#include "cmd/commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lb_config.h"
#include "attn/base/status.h"
#include "cmd/options.h"
#include "reports/sweep_dir.h"

const LbCommand lb_commands[] = {
    {"sweep", lb_cmd_sweep, "measure the Table 3 grid: every model at its largest batch for every n and k",
     "linbench sweep [FLAGS]",
     "Measures Table 3 of the Linformer paper on this machine: for every n, each model of\n"
     "--models at its largest batch (the standard Transformer once per n, the Linformer for\n"
     "every k < n). Writes raw.csv (a row per cell, as it finishes), time_speedup.csv and\n"
     "memory_speedup.csv (Linformer against standard) and meta.csv, then prints both grids.",
     "A directory is written by one linbench at a time (a lock held for the whole run).\n\n"
     "Exit codes: 0 done; 1 runtime failure (no GPU, a cell failed, a file not written, the\n"
     "directory in use); 2 bad input; 130 interrupted by Ctrl-C, SIGTERM or SIGHUP (finished\n"
     "cells kept; continue with --resume).",
     0},
    {"run", lb_cmd_run, "measure one cell: one model, one n, one k", "linbench run [FLAGS]",
     "Measures one cell as the sweep does (largest batch that fits, warm-up, median of at least\n"
     "5 timed passes) and prints it. With --dump, runs one forward pass instead and writes its\n"
     "inputs, weights and output as .npy files.",
     "Exit codes: 0 done; 1 runtime failure (no GPU, the cell out of memory at batch 1 or\n"
     "failed, standard output or a dumped file not written, the --dump directory in use);\n"
     "2 bad input, nothing run or written.",
     0},
    {"predict", lb_cmd_predict, "predict a sweep on a GPU that is not here, from its datasheet and the memory plan",
     "linbench predict (--gpu NAME | --spec tflops=T,bw=B,mem=SIZE) [FLAGS]",
     "Predicts what linbench sweep would write on a GPU, without one: for every cell of the\n"
     "sweep's grid, the largest batch from the memory plan for the card's memory less the\n"
     "sweep's headroom (--mem-limit's default here), and the time of a pass as the sum over\n"
     "its operations of max(FLOPs / (rate x product efficiency), bytes / (bandwidth x copy\n"
     "efficiency)) plus a launch overhead per kernel. Writes raw.csv, time_speedup.csv,\n"
     "memory_speedup.csv, speedups.csv, breakdown.csv (predicted shares) and meta.csv (source\n"
     "predicted, every parameter), which compare and plot read as they read a sweep; prints\n"
     "both grids.",
     "Exit codes: 0 done; 1 a file not written, or the directory in use; 2 bad input.", 0},
    {"merge", lb_cmd_merge, "put the parts of a sharded sweep (sweep --shard I/N) together into one result",
     "linbench merge OUT DIR...",
     "Puts the parts of a sharded sweep (linbench sweep --shard I/N --out DIR, one per shard)\n"
     "together into OUT: raw.csv with every part's cells, the two grids, speedups.csv (each\n"
     "model against standard, and chunked where measured), breakdown.csv where the parts\n"
     "have one, and meta.csv with the settings they share, each part's matmul_tuning,\n"
     "parts (their count) and part_1, part_2 ... (the directories as given). Status is\n"
     "complete when every part is and together they hold every cell of the grid;\n"
     "otherwise incomplete, and the missing cells are named on stderr.\n\n"
     "The parts must share every sweep setting but --shard, the device (device_name) and\n"
     "the linbench version (linbench_version); a cell in two parts must have the same row\n"
     "in both (it is kept once). OUT follows the rules of sweep's --out: new or empty,\n"
     "locked while it is written.",
     "Exit codes: 0 done (complete or not); 1 a file could not be written, or OUT is in use;\n"
     "2 bad input (a part that is missing or not a sweep's, or whose raw.csv or meta.csv\n"
     "does not read, a part given twice, parts that disagree, OUT not usable), nothing\n"
     "written.",
     -1},
    {"slurm", lb_cmd_slurm, "write (and --submit) Slurm jobs that run a sweep in shards and merge them",
     "linbench slurm [SWEEP FLAGS] --shards N --out DIR [--partition P] [--time T]\n"
     "                      [--account A] [--submit]",
     "Writes a Slurm job array that runs a sweep in N shards, one GPU each, and a job that\n"
     "merges them once all have succeeded:\n"
     "  DIR/slurm/sweep.sbatch   task I: linbench sweep SWEEP FLAGS --shard I/N --out DIR/shard-I\n"
     "                           (resumes DIR/shard-I when a requeued task finds it)\n"
     "  DIR/slurm/merge.sbatch   linbench merge DIR/merged DIR/shard-0 ... DIR/shard-(N-1)\n"
     "and prints the commands that submit them. SWEEP FLAGS are passed on as given (see\n"
     "linbench sweep --help; not --out, --resume, --force or --shard), once sweep's own\n"
     "checks accept them.",
     "Exit codes: 0 done; 1 a script could not be written, sbatch missing or failed; 2 bad\n"
     "input, nothing written.",
     0},
    {"compare", lb_cmd_compare, "set a sweep beside the paper's Table 3, or two sweeps side by side",
     "linbench compare DIR [DIR_B] [--format text|md|csv]",
     "With one directory: the sweep's time and memory grids beside Table 3 of the Linformer\n"
     "paper (16 GB Tesla V100), and per cell the ratio measured / paper. With two: both\n"
     "sweeps side by side, and per cell the ratio B / A. DIR is what linbench sweep wrote\n"
     "(raw.csv and meta.csv); a sweep still running or interrupted shows NA where a cell is\n"
     "not measured yet. Cells with k >= n show -, out of memory OOM, failed cells ERR.\n\n"
     "One of the two may be what bench/peer wrote (the same encoder in PyTorch, same grid\n"
     "and protocol; its meta.csv's tool is peer): then each linbench model against the\n"
     "peer's models of the same work (standard with torch-standard, linformer with\n"
     "torch-linformer, each exact model with torch-sdpa-*), per cell linbench's ms per\n"
     "sequence and largest batch (and J per sequence, where either side has energy) over the\n"
     "peer's; and every linbench model's time, memory (and energy) saved against torch-sdpa-*.\n"
     "One of the two may be what linbench predict wrote (meta.csv's source is predicted):\n"
     "then per cell the largest batch and ms per sequence measured, predicted and measured /\n"
     "predicted, and with breakdown.csv in both, each operation's measured / predicted ms per\n"
     "sequence (csv: model,n,k,op,measured_batch,predicted_batch,batch_ratio,\n"
     "measured_ms_per_seq,predicted_ms_per_seq,time_ratio).\n"
     "The header says what differs between the two runs; a peer that ran another model shape\n"
     "or storage type, or a prediction of another model, is refused (exit 2).",
     "Exit codes: 0 done; 1 the report could not be written; 2 bad input (a flag, or a\n"
     "directory without linbench's raw.csv and meta.csv, or with one that does not read).\n"
     "A raw.csv whose last row is cut short is read without it, with a warning on stderr.",
     -1},
    {"plot", lb_cmd_plot, "write gnuplot scripts (and PNG/SVG where gnuplot is installed) of a sweep",
     "linbench plot DIR [PEER_DIR] [--out DIR] [--no-render]",
     "Writes gnuplot scripts of the sweep in DIR (from its raw.csv and meta.csv):\n"
     "  time_speedup.gp     heatmap of the time grid (Linformer against standard), n\n"
     "                      against k, the value in each cell\n"
     "  memory_speedup.gp   the same for the memory grid\n"
     "  time_per_seq.gp     ms per sequence against n, log-log, one line per model and k\n"
     "and for each other model measured, against standard:\n"
     "  time_speedup_MODEL.gp, memory_speedup_MODEL.gp   its heatmaps, for a model with a k\n"
     "                      axis (performer)\n"
     "  speedup_MODEL.gp    time and memory saved against n, for one without (chunked)\n"
     "and the same against the other exact baselines measured (chunked, flash), named\n"
     "MODEL_vs_BASELINE: time_speedup_linformer_vs_flash.gp, speedup_standard_vs_flash.gp\n"
     "and, for a sweep run with --breakdown, per model of its breakdown.csv:\n"
     "  breakdown_MODEL.gp  a stacked bar per cell, one segment per operation's share\n"
     "each with its data (NAME.plot.csv), and where gnuplot is on PATH renders NAME.png and\n"
     "NAME.svg. A script works from any directory: gnuplot DIR/time_speedup.gp.\n\n"
     "With PEER_DIR, what bench/peer wrote (the same encoder in PyTorch; either order), these\n"
     "instead, into PEER_DIR by default:\n"
     "  versus_time_per_seq.gp  ms per sequence against n of every linbench model and every\n"
     "                      peer model (its work's colour, open points; torch-sdpa near-black)\n"
     "  versus_time_ratio.gp    linbench / peer ms per sequence against n, per pair of the\n"
     "                      same work (as linbench compare DIR PEER_DIR pairs them)\n"
     "  versus_batch_ratio.gp   the same for the largest batch\n"
     "  versus_energy_ratio.gp  the same for J per sequence, where both sides have energy",
     "Exit codes: 0 done (also when gnuplot is missing: the scripts are written); 1 a file\n"
     "could not be written or gnuplot failed; 2 bad input (a flag, or a directory without\n"
     "linbench's raw.csv and meta.csv, or with one that does not read). A raw.csv whose\n"
     "last row is cut short is read without it, with a warning on stderr.",
     -1},
    {"check", lb_cmd_check, "check every operation and forward pass of a backend against the CPU reference",
     "linbench check [FLAGS]",
     "Checks the chosen backend on fresh random data: every operation of the ops table (linear,\n"
     "bmm, softmax, layernorm, embed, split/merge heads, the seeded fills, ...) at several\n"
     "shapes against its reference in double, and a small forward pass of every model (the\n"
     "Linformers at every sharing level and order, and once more with a k per layer,\n"
     "--k-schedule halve) against the CPU backend's, in fp32, fp16 and bf16 (--device cpu:\n"
     "the operations only). Prints the environment, then one row per check: operation, dtype,\n"
     "shape, relative error ||out - ref|| / ||ref||, threshold, ok or FAIL. sweep and run do a\n"
     "quick part of this first (skip it with --no-check).",
     "Exit codes: 0 every check passed; 1 a check failed or the device could not be opened;\n"
     "2 bad input.",
     0},
    {"info", lb_cmd_info, "what linbench sees: devices, memory, versions", "linbench info [--gpu N]",
     "Prints linbench's version and build, then each CUDA device's name, compute capability,\n"
     "SM count, total and free memory, clocks, driver, runtime and cuBLAS versions. On a\n"
     "machine without a CUDA device it says so and exits 0.",
     NULL, 0},
    {"help", lb_cmd_help, "help on linbench or on one command", "linbench help [COMMAND | --markdown]",
     "With no COMMAND, lists the commands; with one, prints its flags.", NULL, 1},
};
const size_t lb_command_count = sizeof lb_commands / sizeof lb_commands[0];

const LbCommand *lb_command_find(const char *name)
{
    for (size_t i = 0; i < lb_command_count; i++)
        if (strcmp(name, lb_commands[i].name) == 0)
            return &lb_commands[i];
    return NULL;
}

void lb_command_names(char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < lb_command_count && used < size; i++) {
        int len = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", lb_commands[i].name);
        used += len > 0 ? (size_t)len : 0;
    }
}

void lb_commands_help(FILE *out)
{
    fprintf(out, "linbench %s: does Linformer attention beat softmax attention on this GPU, and by how much?\n\n"
                 "usage: linbench COMMAND [FLAGS]\n       linbench --version\n\ncommands:\n",
            LB_VERSION);
    for (size_t i = 0; i < lb_command_count; i++)
        fprintf(out, "  %-8s %s\n", lb_commands[i].name, lb_commands[i].summary);
    fprintf(out, "\n`linbench COMMAND --help` or `linbench help COMMAND` lists a command's flags.\n");
}

int lb_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("linbench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return LB_EXIT_USAGE;
}

void lb_put_shell_word(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,=+@%", *p) != NULL;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

void lb_warn_cut_row(const char *dir, size_t line)
{
    fprintf(stderr,
            "linbench: warning: %s%sraw.csv line %zu is cut short (no newline at its end): its cell is left out (NA); linbench sweep --resume %s drops the line and measures the cell again\n",
            dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", line, dir);
}

int lb_load_result(const char *command, const char *dir, LbSweepDir *s)
{
    char why[256];
    if (lb_sweep_dir_check(dir, why, sizeof why))
        return lb_usage_error("invalid argument \"%s\" for %s: %s: should be a directory written by linbench sweep", dir,
                              command, why);
    lb_error_clear();
    const int rc = lb_result_load(dir, s);
    if (rc == LB_ERR_FORMAT) /* the user's input (exit 2); anything else is a runtime failure (exit 1) */
        return lb_usage_error("invalid argument \"%s\" for %s: %s", dir, command, lb_error_message());
    if (rc != LB_OK)
        return lb_runtime_error(rc);
    if (s->raw_cut_line)
        lb_warn_cut_row(dir, s->raw_cut_line);
    return LB_EXIT_OK;
}
