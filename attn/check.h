/* Checking a backend before trusting its numbers: every op of the ops table at its quick or full
 * shapes on fresh random data against a naive reference in double (on the CPU backend only the
 * ops that have one apart from its own: products, softmax, layernorm, GELU), then small forward passes of
 * every model against the CPU backend's, and under --pass train a training step of each model
 * against the CPU backend's (CUDA only). One row per check: ||out - ref|| / ||ref|| against the
 * op's tolerance for the storage type; outputs are poisoned with NaN first, so an element
 * unwritten, or written outside the output, fails the row. Nothing is printed here. */
#ifndef LB_CHECK_H
#define LB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "attn/config.h"
#include "attn/model.h"
#include "attn/ops.h"

typedef struct LbCheckRow {
    char op[32];      /* "softmax", "linear", "bmm", "forward", "train", "depthwise_conv_seq_backward", ... */
    char shape[96];   /* "8 x 1000", "linformer kv/late n 64 k 16 B 2" */
    LbDtype dtype;    /* the storage type the op ran in */
    double rel_error; /* infinity for a NaN or infinite element; NaN when the op itself failed */
    double threshold;
    int ok;
    char error[200]; /* why it failed when not by its numbers */
} LbCheckRow;

typedef struct LbCheckTable {
    LbCheckRow *rows;
    size_t count, cap;
} LbCheckTable; /* zero-initialise; lb_check_table_free */

typedef struct LbCheckPlan {
    int quick;      /* the quick shapes and one forward per model; otherwise the full shapes and
                     * every sharing level and order */
    uint64_t seed;  /* of the random inputs and weights */
    LbSharing sharing; /* quick: the Linformer variant of the one Linformer forward */
    LbOrder order;
    LbKSchedule k_schedule; /* quick: other than uniform, a forward of layers of different k too */
    const char *only; /* NULL: everything; else the ops (and "forward", "train") named in this comma list */
    LbPassKind pass;  /* train: after the forward passes, a training step of each model (quick: the
                       * standard model's and the Linformer variant's), one row per step: its
                       * gradient tensor nearest its limit (the largest relative error) */
} LbCheckPlan;

/* Run the table on `be` (its storage type) and append one row per check to `t`. Returns LB_OK,
 * or a negative status only when the checks could not go on (host memory); an op that fails is a
 * failed row, and after a device error the remaining checks on `be` are not run. */
int lb_check_backend(LbBackend *be, const LbCheckPlan *plan, LbCheckTable *t);

/* One op of the table at a shape of the caller's (the shape fields each op's check function in
 * attn/check.c names; unused ones 0), through the same check and tolerance: edge shapes and
 * regressions. LB_ERR_INVALID for an op not in the table. */
int lb_check_op(LbBackend *be, const LbCheckPlan *plan, const char *op, const int64_t shape[8], LbCheckTable *t);

/* One row of op at `shape` (a label): out against ref (count) on be's storage type with the
 * table's tolerance for op, through the table's comparison. For checks the table cannot run
 * itself: sampled rows of tensors past 2^31 elements, whole forward passes. */
int lb_check_compare(LbBackend *be, const char *op, const char *shape, const float *out, const float *ref,
                     int64_t count, LbCheckTable *t);

/* A training step's gradients on the host (lb_check_train_step); lb_check_grads_free. */
typedef struct LbCheckGrads {
    LbTensorRef *refs; /* the gradient model's tensors (lb_model_tensors: named as the model's),
                        * each ptr a float copy of rows x cols */
    int64_t count;
    float *dy;         /* (B, n, d): the upstream gradient */
    size_t planned, high_water; /* the training plan's bytes, the arena's high-water mark */
} LbCheckGrads;

/* One training step (attn/train.h) of cfg in be's dtype at `batch` from `seed`, as run --pass
 * train --dump runs it, every gradient downloaded into g: what the check's train rows compare.
 * On failure g holds nothing. */
int lb_check_train_step(LbBackend *be, LbModelConfig cfg, int64_t batch, uint64_t seed, LbCheckGrads *g);
void lb_check_grads_free(LbCheckGrads *g);

/* Rows that failed; the largest relative error (infinity when one was infinite), the first failed
 * row or NULL. */
size_t lb_check_summary(const LbCheckTable *t, double *max_rel_error, const LbCheckRow **first_failure);

void lb_check_table_free(LbCheckTable *t);

#endif
