#!/bin/sh
# bench/run_device.sh's peer stage, dry-run on the CPU (LB_BIN: this build's linbench; LB_PEER_ARGS:
# a tiny fp32 model on --device cpu) beside a linbench sweep of the same model, so the stage a GPU
# session runs cannot drift from the peer's flags or compare's: the peer's sweep, compare's
# Markdown of the two and plot, each PASS in the summary, and compare.md pairing them.
# Usage: test_device_peer.sh FIND_PYTHON SOURCE_DIR BUILD_DIR. Exit 77 (skipped) where no Python with
# torch and numpy is found, as the other peer tests.
set -u
py=$("$1") || exit 77
src=$2 build=$3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lb-device-peer-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
model="--dtype fp32 --layers 1 --d-model 32 --heads 2 --ffn 64 --vocab 100 --k 16 --mem-limit 8M --cell-time 1"
# shellcheck disable=SC2086
"$build/linbench" sweep --device cpu $model --n 64,128 -q --out "$scratch/state/sweep" >"$scratch/sweep.log" 2>&1 || {
    echo "FAIL: the linbench sweep"; cat "$scratch/sweep.log"; exit 1; }
LB_BIN=$build LB_STATE=$scratch/state OUT=$scratch/out LB_PEER_PYTHON=$py LB_PEER_N=64,128 \
    LB_PEER_ARGS="--device cpu $model" "$src/bench/run_device.sh" peer >"$scratch/kit.log" 2>&1
rc=$?
cat "$scratch/kit.log"
fail=0
[ "$rc" -eq 0 ] || { echo "FAIL: run_device.sh peer exited $rc"; fail=1; }
for step in "linbench-peer sweep --n 64,128" "compare sweep peer" "plot sweep peer"; do
    grep -q "^peer *$step *PASS" "$scratch/out/summary.txt" 2>/dev/null || { echo "FAIL: no PASS for \"$step\""; fail=1; }
done
grep -q "linbench against PyTorch" "$scratch/state/peer/compare.md" 2>/dev/null &&
    grep -q "### linformer against torch-linformer" "$scratch/state/peer/compare.md" ||
    { echo "FAIL: peer/compare.md does not pair the sweep with the peer"; fail=1; }
[ -f "$scratch/out/device.tar.gz" ] || { echo "FAIL: no device.tar.gz"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: the peer stage, dry-run on the CPU"
exit $fail
