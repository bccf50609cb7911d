/* The settings' flags as cmd/ uses them (the table is reports/settings.h): getopt entries, the
 * one-line message for bad input, --help lines; and what sweep and run share around them: the
 * host-memory check, opening the backend, the message of a runtime failure. */
#ifndef LB_OPTIONS_H
#define LB_OPTIONS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "attn/config.h"
#include "attn/measure.h"
#include "attn/ops.h"
#include "reports/settings.h"

/* getopt_long codes of the settings' flags: LB_OPT_SETTING + LbSettingId (above any character). */
#define LB_OPT_SETTING 256

/* Room for a command's own options, the settings' and the terminating zero entry. */
#define LB_OPTIONS_MAX (LB_SET_COUNT + 24)

/* Append the getopt_long entries of the settings `command` takes (LB_FOR_SWEEP, LB_FOR_RUN, LB_FOR_PREDICT)
 * after the `count` entries already in opts, then the terminating zero entry. */
void lb_options_fill(struct option *opts, size_t count, unsigned command);

/* Apply one setting's flag (a getopt code from lb_options_fill): marks it given and parses it.
 * Returns 0, or LB_EXIT_USAGE after printing the one-line message. */
int lb_options_apply(LbRunSettings *s, int code, const char *arg);

/* lb_run_settings_finish, printing its message: 0 or LB_EXIT_USAGE. */
int lb_options_finish(LbRunSettings *s);

/* A sweep's grid and model, whole (sweep and predict): each model with a k axis has some cell
 * (k_text: the k list as given, for the message), lb_options_finish, and each listed model's
 * settings checked at the largest n. 0, or LB_EXIT_USAGE after the one-line message. */
int lb_options_check_grid(LbRunSettings *s, const char *k_text);

/* "linbench ARGS..." as meta.csv's command_line records it: an argument holding a blank or a
 * quote in single quotes (malloc'd; NULL when out of memory). */
char *lb_command_line(int argc, char **argv);

/* The --help lines of the settings `command` takes, under their headings. */
void lb_options_help(FILE *out, unsigned command);

/* What --k is for each model of the table that has a k axis, one line each in the help's text
 * column ("linformer: projected length, 1 to n"), from the model table. */
void lb_options_help_k(FILE *out);

/* One note on stderr for each flag in `given` (bit 1 << LbSettingId) that only some models read
 * (--k, --sharing, --order, --chunk: the model table's) and no model in `models` (bit 1u << kind)
 * does: "linbench: note: --chunk has no effect on standard and linformer: only chunked reads it".
 * The flag is accepted all the same (and recorded); the note says it changed nothing. */
void lb_options_note_unread(uint64_t given, unsigned models);

/* One note on stderr when the models of `models` (bit 1u << kind) form no pair of speedups.csv
 * (a baseline and another model): the sweep still measures each cell, but every speedup grid
 * will be NA. */
void lb_options_note_no_ratio(unsigned models);

/* The memory this process can still have (bytes): the least of MemAvailable, the cgroup's
 * limit less its usage, and RLIMIT_AS / RLIMIT_DATA less what the process already maps; `what`
 * names the one that bound it. -1 when none can be read. */
int lb_host_memory_available(uint64_t *bytes, const char **what);

/* --device cpu: the budget (--mem-limit, or the default) must fit in the memory this process can
 * have, or the kernel kills the run part-way. Returns 0, or prints one line and returns
 * LB_EXIT_USAGE (--mem-limit given) or LB_EXIT_FAILURE (the default does not fit). */
int lb_options_check_host_memory(const LbRunSettings *o);

/* Open the chosen backend. On failure prints one line and returns LB_EXIT_FAILURE (LB_EXIT_USAGE
 * for a --gpu this machine does not have, or a --mem-limit given above its free memory less the
 * headroom). The memory budget is the device's free memory less the headroom, or --mem-limit if
 * smaller (METHOD.md). */
int lb_options_open_backend(const LbRunSettings *o, LbBackend **be, uint64_t *budget);

/* The one line refusing a --mem-limit above what a GPU (`where`: "this GPU", "GPU 2", a card's
 * name) can give, `room`: its `memory` ("free memory", or for a card predicted "memory") less the
 * headroom. */
void lb_options_refuse_mem_limit(uint64_t mem_limit, uint64_t room, uint64_t memory, const char *memory_kind,
                                 uint64_t headroom, const char *where);

/* Help text: the space-separated words on lines of at most `width` columns, the first line going
 * on from `column` (already reached), the next ones indented to `indent`. */
void lb_options_wrap(FILE *out, const char *words, int column, int indent, int width);

/* Exit code for a runtime failure status, after printing "linbench: <message>". */
int lb_runtime_error(int status);

/* The same for a backend that could not be opened: LB_ERR_INVALID is the user's input (a --gpu
 * index the machine does not have), exit 2; anything else lb_runtime_error's. */
int lb_open_error(int status);

#endif
