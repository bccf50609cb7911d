/* Checking a backend before trusting its numbers (linbench check, and the quick check sweep and
 * run do first): every operation of the ops table, and small forward passes of every model of
 * the table, on fresh random data against a reference computed in double, one row per check. Nothing is
 * printed here: cmd/ prints the rows and picks the exit code.
 *
 * The reference: for the CUDA backend, the CPU reference of attn/cpu/cpu_ref.h on the values the
 * device stored (inputs are drawn on the device and read back, so both see the same rounded
 * numbers), and for the forward passes the CPU backend (fp32 storage, double accumulation) built
 * from the same seed. For the CPU backend, whose ops are that reference, small naive loops in
 * double written in attn/check.c; its forward pass is the reference itself, so it has no forward
 * rows here (tests/model checks it against an independent naive encoder).
 *
 * A check compares ||out - ref|| / ||ref|| in double with a threshold per storage type (as
 * tests/gpu/gpu_check.h: fp32 1e-5, fp16 1e-3, bf16 8e-3 per kernel; products with GELU and TF32
 * a little more; whole forward passes fp32 1e-5, fp16 1e-2, bf16 3e-2), never below 3 times what
 * rounding the exact answer to the storage type alone costs. Outputs are poisoned with NaN first,
 * so an element an op leaves unwritten fails (relative error infinity). */
#ifndef LB_CHECK_H
#define LB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"
#include "attn/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct LbCheckRow {
    char op[24];      /* "softmax", "linear", "bmm", "forward", ... */
    char shape[96];   /* "8 x 1000", "linformer kv/late n 64 k 16 B 2" */
    LbDtype dtype;    /* the storage type the op ran in */
    double rel_error; /* ||out - ref|| / ||ref||; infinity for a NaN or infinite element; NaN when
                       * the op itself failed (see error) */
    double threshold;
    int ok;
    char error[200]; /* why it failed when not by its numbers (the op's error, element i is NaN) */
} LbCheckRow;

typedef struct LbCheckTable {
    LbCheckRow *rows;
    size_t count, cap;
} LbCheckTable; /* zero-initialise; lb_check_table_free */

typedef struct LbCheckPlan {
    int quick;      /* a few small shapes per op and one forward per model (seconds on the
                     * emulated GPU); otherwise every op's paths and every sharing level and order */
    uint64_t seed;  /* of the random inputs and weights */
    LbSharing sharing; /* quick: the Linformer variant of the one Linformer forward */
    LbOrder order;
    LbKSchedule k_schedule; /* quick: other than uniform (the sweep runs one), a forward of layers
                             * of different k too, as the full check always runs */
} LbCheckPlan;

/* Run the checks on `be` (its storage type) and append one row per check to `t`. Returns LB_OK,
 * or a negative status only when the checks themselves could not go on (host memory); an op that
 * fails is a failed row, and after a device error (LB_ERR_DEVICE, which may leave a CUDA context
 * unusable) the remaining checks on `be` are not run. */
int lb_check_backend(LbBackend *be, const LbCheckPlan *plan, LbCheckTable *t);

/* Rows that failed, and the largest relative error of all rows (the failed ones' NaN aside;
 * infinity when one was infinite). */
size_t lb_check_failures(const LbCheckTable *t);
double lb_check_max_rel_error(const LbCheckTable *t);
/* The first failed row, or NULL. */
const LbCheckRow *lb_check_first_failure(const LbCheckTable *t);

void lb_check_table_free(LbCheckTable *t);

#ifdef __cplusplus
}
#endif

#endif
