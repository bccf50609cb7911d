/* What the CLI tests of the binary built on the emulated GPU (test_cli_emu, test_cli_gpus) share:
 * their start (usage, seed line, scratch directory, the emulator as a first run finds it whatever
 * the caller's environment), a model small enough for the emulator, and meta.csv's values. */
#ifndef LB_TESTS_CLI_EMU_CLI_H
#define LB_TESTS_CLI_EMU_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cli/sweep_check.h"
#include "tests/lib/check.h"
#include "tests/lib/spawn.h"

/* The emulator is slow: one layer, d_model 32, 2 heads, ffn 64, vocab 100. */
#define LB_EMU_TINY_MODEL "--layers", "1", "--d-model", "32", "--heads", "2", "--ffn", "64", "--vocab", "100"

/* lb_cli_start, with one emulated device with the default memory, of one model: LB_EMU_MEMORY,
 * LB_EMU_DEVICES and LB_EMU_OTHER_MODEL unset, for a test to set where it means to. */
static inline const char *lb_emu_cli_start(int argc, char **argv, const char *name)
{
    const char *bin = lb_cli_start(argc, argv, name);
    unsetenv("LB_EMU_MEMORY");
    unsetenv("LB_EMU_DEVICES");
    unsetenv("LB_EMU_OTHER_MODEL");
    return bin;
}

/* The value of `key` in DIR/meta.csv, "" when absent (sc_meta); malloc'd. */
static inline char *lb_emu_meta_value(const char *dir, const char *key)
{
    char *v = sc_meta(dir, key);
    return v ? v : strdup("");
}

#endif
