#!/bin/sh
# No model-specific branch outside attn/: cmd/ and reports/ learn what a model has (a k axis, its
# own flags) from the model table (attn/attention.h), so a model added to the table needs no line
# in them. The baseline every model is compared with (LB_MODEL_STANDARD) and Table 3's pair
# (LB_TABLE3_MODEL / LB_TABLE3_BASELINE, defined once in reports/grid.h) are the exceptions.
# usage: test_model_branches.sh SOURCE_ROOT
set -eu
root=$1
hits=$(grep -n -E 'LB_MODEL_(LINFORMER|CHUNKED|PERFORMER)' "$root"/cmd/*.c "$root"/cmd/*.h "$root"/reports/*.c \
    "$root"/reports/*.h | grep -v -E '^[^:]*/reports/grid\.h:[0-9]+:#define LB_TABLE3_' || true)
if [ -n "$hits" ]; then
    echo "FAIL: a model named outside attn/ (use the model table, or LB_TABLE3_* for Table 3's pair):"
    echo "$hits"
    exit 1
fi
echo "1 passed, 0 failed: cmd/ and reports/ name no model but the baseline and Table 3's pair"
