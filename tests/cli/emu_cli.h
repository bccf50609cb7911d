/* What the CLI tests of the binary built on the emulated GPU (test_cli_emu, test_cli_gpus) share:
 * their start (usage, seed line, scratch directory, the emulator as a first run finds it whatever
 * the caller's environment), a model small enough for the emulator, and meta.csv read back
 * through libcsv. */
#ifndef LB_TESTS_CLI_EMU_CLI_H
#define LB_TESTS_CLI_EMU_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/csv_io.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

/* The emulator is slow: one layer, d_model 32, 2 heads, ffn 64, vocab 100. */
#define LB_EMU_TINY_MODEL "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"

/* The binary under test (argv[1]) after the usage check (exit 2 without one); the seed line, the
 * scratch directory (lb_scratch), and one emulated device with the default memory, of one model:
 * LB_EMU_MEMORY, LB_EMU_DEVICES and LB_EMU_OTHER_MODEL unset, for a test to set where it means to. */
static inline const char *lb_emu_cli_start(int argc, char **argv, const char *name)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-LINBENCH\n", name);
        exit(2);
    }
    lb_test_init(name);
    lb_scratch_dir(name);
    unsetenv("LB_EMU_MEMORY");
    unsetenv("LB_EMU_DEVICES");
    unsetenv("LB_EMU_OTHER_MODEL");
    return argv[1];
}

/* The value of `key` in DIR/meta.csv ("" when absent), through libcsv; malloc'd. */
static inline char *lb_emu_meta_value(const char *dir, const char *key)
{
    char path[600]; /* the callers' directories are up to 512 bytes */
    snprintf(path, sizeof path, "%s/meta.csv", dir);
    LbCsvTable t;
    char *v = strdup("");
    if (lb_csv_read_file(path, 1, &t) != 0)
        return v;
    for (size_t r = 0; r < t.rows; r++)
        if (t.row[r].count >= 2 && strcmp(t.row[r].fields[0], key) == 0) {
            free(v);
            v = strdup(t.row[r].fields[1]);
        }
    lb_csv_table_free(&t);
    return v;
}

#endif
