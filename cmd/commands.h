/* The subcommand table and the exit codes. One file per subcommand (cmd/cmd_<name>.c); main.c
 * dispatches through the table, and the command lists and --help are generated from it. */
#ifndef LB_COMMANDS_H
#define LB_COMMANDS_H

#if defined(LB_LAYER_BASE) || defined(LB_LAYER_ATTN) || defined(LB_LAYER_GPU) || defined(LB_LAYER_REPORTS) || defined(LB_LAYER_SWEEP)
#error "reports/ and attn/ may not include cmd/ headers"
#endif

#include <stdio.h>

#include "reports/settings.h"

#define LB_EXIT_OK 0
#define LB_EXIT_FAILURE 1     /* runtime failure: no GPU, out of memory, unwritable output */
#define LB_EXIT_USAGE 2       /* bad input: nothing computed, nothing written; a result directory
                               * named on the command line whose raw.csv or meta.csv does not read
                               * is bad input too, for every command that reads one */
#define LB_EXIT_INTERRUPTED 130

/* A command: its --help is usage, about, the flags the option table gives it (reports/settings.h,
 * bit 1u << its index here), then notes. main.c parses those flags into s (freed after), so run
 * starts from valid settings; its operands are argv[s->cmd.args ...]. */
typedef struct LbCommand {
    const char *name;
    int (*run)(LbRunSettings *s, int argc, char **argv); /* argv[0] is the subcommand's name */
    const char *summary; /* one line for `linbench help` */
    const char *usage, *about, *notes;
    int operands; /* the most operands it takes (DIR ...); -1: any number */
} LbCommand;

int lb_cmd_sweep(LbRunSettings *s, int argc, char **argv);
int lb_cmd_run(LbRunSettings *s, int argc, char **argv);
int lb_cmd_check(LbRunSettings *s, int argc, char **argv);
int lb_cmd_info(LbRunSettings *s, int argc, char **argv);
int lb_cmd_compare(LbRunSettings *s, int argc, char **argv);
int lb_cmd_plot(LbRunSettings *s, int argc, char **argv);
int lb_cmd_predict(LbRunSettings *s, int argc, char **argv);
int lb_cmd_merge(LbRunSettings *s, int argc, char **argv);
int lb_cmd_slurm(LbRunSettings *s, int argc, char **argv);
int lb_cmd_help(LbRunSettings *s, int argc, char **argv);

/* The command table, in the order of the LB_FOR_* bits. */
extern const LbCommand lb_commands[];
extern const size_t lb_command_count;

/* The command called `name`, or NULL. */
const LbCommand *lb_command_find(const char *name);
/* "sweep, run, ...": every command's name, for the messages that list them. */
void lb_command_names(char *buf, size_t size);
/* The top-level help: what linbench is, and each command with its summary. */
void lb_commands_help(FILE *out);

/* Print "linbench: <message>" on stderr (one line) and return LB_EXIT_USAGE. */
int lb_usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* s as a word a POSIX shell reads back as itself: bare when it is plain, else in single quotes. */
void lb_put_shell_word(FILE *f, const char *s);

/* The one line on stderr with which compare, plot and merge go on past a raw.csv whose last row
 * has no newline (a sweep killed mid-row, a copy cut off): its cell is NA, and sweep --resume
 * measures it again. */
void lb_warn_cut_row(const char *dir, size_t line);

/* lb_result_load of a directory on `command`'s command line, warning of a cut row:
 * LB_EXIT_OK, or the exit code after one line (2 for a directory that is not a result). */
struct LbSweepDir;
int lb_load_result(const char *command, const char *dir, struct LbSweepDir *s);

#endif
