/* The one parser of every command's flags and their generated help (the option table is
 * reports/settings.h); and what sweep and run share around the settings: the host-memory check,
 * opening the backend, the message of a runtime failure. */
#ifndef LB_OPTIONS_H
#define LB_OPTIONS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS) || defined(LB_LAYER_SWEEP)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stdint.h>
#include <stdio.h>

#include "attn/config.h"
#include "attn/measure/measure.h"
#include "attn/ops.h"
#include "reports/settings.h"

/* Parse a command's argv (argv[0] its name) by the option table's rows for `command` (an LB_FOR_*
 * bit; slurm takes sweep's rows too, collected in s->cmd.passed). Free s with
 * lb_run_settings_free whatever it returns. 0; LB_OPTIONS_HELPED when --help was printed (exit
 * 0); or the exit code after the one-line message. */
#define LB_OPTIONS_HELPED (-1)
int lb_options_parse(unsigned command, int argc, char **argv, LbRunSettings *s);

/* A command's --help: usage, about, its flags under their headings, notes. */
void lb_options_help(FILE *out, unsigned command);

/* Every command's flags as the Markdown tables README.md holds (linbench help --markdown). */
void lb_options_markdown(FILE *out);

/* lb_run_settings_check_grid without the notes: 0, or LB_EXIT_USAGE after the one-line message. */
int lb_options_check_grid(LbRunSettings *s);

/* "linbench ARGS..." as meta.csv's command_line records it: an argument holding a blank or a
 * quote in single quotes (malloc'd; NULL when out of memory). */
char *lb_command_line(int argc, char **argv);

/* One note on stderr for each flag in `given` (bit 1 << LbSettingId) that no model of `models`
 * reads, though some model does. The flag is accepted (and recorded) all the same. */
void lb_options_note_unread(uint64_t given, unsigned models);

/* One note on stderr when `models` form no pair of speedups.csv, so every speedup grid is NA. */
void lb_options_note_no_ratio(unsigned models);

/* --device cpu: the budget must fit in the memory this process can still have, or the kernel
 * kills the run part-way. 0, or after one line LB_EXIT_USAGE (--mem-limit given) or
 * LB_EXIT_FAILURE (the default does not fit). */
int lb_options_check_host_memory(const LbRunSettings *o);

/* Open the chosen backend; the budget is the device's free memory less the headroom, or
 * --mem-limit if smaller (METHOD.md). On failure one line and LB_EXIT_FAILURE (LB_EXIT_USAGE for
 * a --gpu this machine does not have or a --mem-limit above the budget). */
int lb_options_open_backend(const LbRunSettings *o, LbBackend **be, uint64_t *budget);

/* A GPU's budget: its free memory less the headroom, or --mem-limit if smaller. 0, or after one
 * line naming `gpu` ("the GPU", "GPU 2") LB_EXIT_FAILURE (no room above the headroom), or
 * LB_EXIT_USAGE (a --mem-limit given above it; the refusal names `where`). */
int lb_options_gpu_budget(const LbRunSettings *o, uint64_t free_bytes, uint64_t total, const char *gpu,
                          const char *where, uint64_t *budget);

/* The one line refusing a --mem-limit above `room`, what a GPU (`where`: "this GPU", a card's
 * name) can give: its `memory` ("free memory", "memory") less the headroom. */
void lb_options_refuse_mem_limit(uint64_t mem_limit, uint64_t room, uint64_t memory, const char *memory_kind,
                                 uint64_t headroom, const char *where);

/* Exit code for a runtime failure status, after printing "linbench: <message>". */
int lb_runtime_error(int status);

/* The same for a backend that could not be opened: LB_ERR_INVALID is the user's input (a --gpu
 * index the machine does not have), exit 2; anything else lb_runtime_error's. */
int lb_open_error(int status);

#endif
