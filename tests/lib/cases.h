/* One test program, several cases (dav1d's checkasm): a table of {name, function} run in order,
 * or only the case LB_TEST_CASE names, to replay one. */
#ifndef LB_TESTS_LIB_CASES_H
#define LB_TESTS_LIB_CASES_H

#include <stdlib.h>
#include <string.h>

#include "tests/lib/check.h"

typedef struct LbTestCase {
    const char *name;
    void (*run)(void);
} LbTestCase;

/* Runs the cases after lb_test_init(prog); the exit code. */
static inline int lb_test_cases(const char *prog, const LbTestCase *cases, size_t count)
{
    const char *only = getenv("LB_TEST_CASE");
    for (size_t i = 0; i < count; i++)
        if (!only || !*only || strcmp(only, cases[i].name) == 0) {
            printf("-- %s\n", cases[i].name);
            cases[i].run();
        }
    return lb_test_finish(prog);
}
#define LB_TEST_CASES(prog, table) lb_test_cases(prog, table, sizeof table / sizeof table[0])

#endif
