#!/bin/sh
# bench/run_device.sh's peer stage, dry-run on the CPU (LB_BIN: this build's linbench; LB_PEER_ARGS:
# a tiny fp32 model on --device cpu) beside a linbench sweep of the same model, so the stage a GPU
# session runs cannot drift from the peer's flags or compare's. Two calls, as on a GPU whose grid
# takes more than one: the first starts the peer's sweep, which is killed (SIGKILL, the pid its
# lock file holds) once its first row is on disk; the second resumes it in the same $LB_STATE
# (linbench-peer sweep --resume, PASS), and ends with every cell once, meta.csv complete,
# compare's Markdown of the two and plot, each PASS in the summary, and compare.md pairing them.
# Usage: test_device_peer.sh FIND_PYTHON SOURCE_DIR BUILD_DIR. Exit 77 (skipped) where no Python with
# torch and numpy is found, as the other peer tests.
set -u
py=$("$1") || exit 77
src=$2 build=$3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lb-device-peer-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
model="--dtype fp32 --layers 1 --d-model 32 --heads 2 --ffn 64 --vocab 100 --k 16 --mem-limit 8M --cell-time 1"
cells=6 # n 64 and 128: torch-standard, torch-linformer (k 16), torch-sdpa-flash
peer=$scratch/state/peer
# shellcheck disable=SC2086
"$build/linbench" sweep --device cpu $model --n 64,128 -q --out "$scratch/state/sweep" >"$scratch/sweep.log" 2>&1 || {
    echo "FAIL: the linbench sweep"; cat "$scratch/sweep.log"; exit 1; }
kit() { # kit OUT: one call of the stage
    LB_BIN=$build LB_STATE=$scratch/state OUT=$1 LB_PEER_PYTHON=$py LB_PEER_N=64,128 \
        LB_PEER_ARGS="--device cpu $model" "$src/bench/run_device.sh" peer
}
rows() { if [ -f "$peer/raw.csv" ]; then echo $(($(wc -l <"$peer/raw.csv") - 1)); else echo 0; fi; }
fail=0

kit "$scratch/out1" >"$scratch/kit1.log" 2>&1 &
call=$!
waited=0
while [ "$(rows)" -lt 1 ] && kill -0 "$call" 2>/dev/null && [ "$waited" -lt 3000 ]; do
    sleep 0.1
    waited=$((waited + 1))
done
holder=$(cat "$peer/.linbench.lock" 2>/dev/null)
case $holder in
'' | *[!0-9]*) echo "FAIL: no pid in $peer/.linbench.lock after the first row (\"$holder\")"; fail=1 ;;
*) kill -KILL "$holder" ;;
esac
wait "$call"
cat "$scratch/kit1.log"
kept=$(rows)
[ "$kept" -ge 1 ] && [ "$kept" -lt "$cells" ] || { echo "FAIL: the first call kept $kept of $cells rows: should be killed mid-grid"; fail=1; }
grep -q "^peer *linbench-peer sweep --n 64,128 " "$scratch/out1/summary.txt" 2>/dev/null ||
    { echo "FAIL: the first call did not start the peer's sweep"; fail=1; }

kit "$scratch/out2" >"$scratch/kit2.log" 2>&1
rc=$?
cat "$scratch/kit2.log"
[ "$rc" -eq 0 ] || { echo "FAIL: run_device.sh peer exited $rc"; fail=1; }
for step in "linbench-peer sweep --resume peer" "compare sweep peer" "plot sweep peer"; do
    grep -q "^peer *$step *PASS" "$scratch/out2/summary.txt" 2>/dev/null || { echo "FAIL: no PASS for \"$step\""; fail=1; }
done
# each cell (model, n, k) once, and all of them
[ "$(rows)" -eq "$cells" ] && [ -z "$(awk -F, 'NR > 1 { print $1, $2, $3 }' "$peer/raw.csv" | sort | uniq -d)" ] ||
    { echo "FAIL: raw.csv should hold the $cells cells once each:"; cat "$peer/raw.csv"; fail=1; }
grep -q '^status,complete$' "$peer/meta.csv" && grep -q '^resume_1_command,' "$peer/meta.csv" ||
    { echo "FAIL: meta.csv should say complete and name the resume"; fail=1; }
grep -q "linbench against PyTorch" "$peer/compare.md" 2>/dev/null &&
    grep -q "### linformer against torch-linformer" "$peer/compare.md" ||
    { echo "FAIL: peer/compare.md does not pair the sweep with the peer"; fail=1; }
[ -f "$scratch/out2/device.tar.gz" ] || { echo "FAIL: no device.tar.gz"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: the peer stage, dry-run on the CPU, killed in one call and resumed in the next"
exit $fail
