#!/usr/bin/env bash
# Everything linbench's CUDA backend needs checked and measured on a GPU machine, in one command.
# Stages (run in the order given; default: info test check sanitize bench):
#   info      nvidia-smi, the toolchain, the binaries' revision
#   build     (implied by the others) use binaries staged by bench/stage_device.sh, or build here
#   test      every test of the build's `gpu` suite, each binary run directly (77 = skip)
#   check     `linbench check` at fp16, bf16 and fp32 (the full check, not --quick)
#   sanitize  compute-sanitizer: memcheck over every gpu test the build marks for it
#             (LB_TEST_QUICK=1: smaller shapes, every path still taken); racecheck, synccheck and
#             initcheck over every kernel test (the suites gpu-sanitize-memcheck/-kernel)
#   new       what has never run on a GPU, first (bench/NOTES.md "Next on a GPU" 5, 6 and 10): the
#             flash and backward ops of test_gpu_ops, test_gpu_train, bench_attention (flash's
#             forward and backward), `linbench check --dtype fp16` (its energy counter too),
#             racecheck and synccheck over the flash and sorting kernels, and `linbench run` of
#             standard, linformer and flash at n = 4096 and 16384 in 16 GiB (passes of under a second)
#   bench     bench_softmax, bench_gemm (fp16, bf16), `linbench run` of every model at n = 512
#             and 4096
#   kernels   bench_softmax and bench_attention alone (the kernels' speed, in seconds)
#   sweep     `linbench sweep $LB_SWEEP_ARGS` (default --breakdown: the paper's grid), timed;
#             resumed where a previous call left it (its directory lives in $LB_STATE, which
#             travels back and forth, see below)
#   models    `linbench sweep --models chunked,performer --breakdown` on the same grid, likewise
#   peer      bench/peer (the same encoder in PyTorch; needs a Python with torch and numpy,
#             $LB_PEER_PYTHON or python3, else SKIP) on the GPU over n = $LB_PEER_N (default
#             512:65536, the sweep stage's grid) at its own batches, resumed where a previous
#             call left it (linbench-peer sweep --resume, its directory in $LB_STATE as the
#             sweep's), then `linbench compare` of the sweep stage's directory against it
#             (Markdown, with the J per sequence of both where NVML's counter is there)
#   plots     `linbench compare` (Markdown) and `linbench plot` of each finished sweep
# The test list and each test's sanitizer class come from the build (meson's test list, written
# by stage_device.sh as gpu_tests.tsv, or read with `meson introspect` after an on-device build),
# never from this file, so a new GPU test cannot be left out.
#
# A deadline (LB_DEADLINE seconds from the start, default 570) stops starting steps in time for a
# 10-minute command limit; a step it cuts short is reported TIMEOUT (a sweep exits 130 and is
# resumed by the next call). Output: $OUT/summary.txt (one line per step: PASS, SKIP, FAIL,
# TIMEOUT, NOT RUN), and $OUT/device.tar.gz with every log and the sweep directories; the summary
# table prints last. Without $OUT, everything goes to out-device/.
#
# usage: bench/run_device.sh [STAGE...]          (from anywhere; see bench/README.md)
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-$ROOT/out-device}
mkdir -p "$OUT"
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/lb-device.XXXXXX")
STATE=${LB_STATE:-$ROOT/build-stage/state}
mkdir -p "$STATE"
START=$(date +%s)
DEADLINE=$((START + ${LB_DEADLINE:-570}))
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(info test check sanitize bench)
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export PATH="/usr/local/cuda/bin:$PATH"
SUMMARY=()
# LB_BIN: the binaries of a directory instead of the staged or on-device build (a maintainer's dry
# run of a stage on a machine whose binaries are elsewhere)
BIN=${LB_BIN:-}

note() { SUMMARY+=("$(printf '%-9s %-48s %s' "$1" "$2" "$3")"); }
left() { echo $((DEADLINE - $(date +%s))); }

# step STAGE NAME LOG CMD...: run CMD under the time left, append its output to LOG, record PASS
# (0), SKIP (77), STOPPED (a sweep that ended cleanly at the deadline), TIMEOUT or FAIL (other).
step() {
    local stage=$1 name=$2 log=$3
    shift 3
    local t
    t=$(left)
    if [ "$t" -le 10 ]; then
        note "$stage" "$name" "NOT RUN (deadline)"
        return 0
    fi
    echo "=== $name ($(date +%T), ${t}s left): $*" >>"$log"
    local s0 rc
    s0=$(date +%s)
    # --preserve-status: the program's own exit status, so a step stopped at the deadline shows
    # how it ended (130: a sweep that stopped cleanly; 143 or 137: killed by the signal; 139: a
    # crash). On the H100 (2026-11-23) two sweeps so stopped died by timeout's second SIGTERM
    # (to the process group), since fixed in cmd/cmd_sweep.c.
    timeout --preserve-status --kill-after=10 "$t" "$@" >>"$log" 2>&1
    rc=$?
    local dt=$(($(date +%s) - s0))
    echo "=== $name: exit $rc after ${dt}s" >>"$log"
    if [ "$dt" -ge "$t" ]; then
        if [ "$rc" -eq 130 ]; then
            note "$stage" "$name" "STOPPED at the deadline (${dt}s; resume)"
        else
            note "$stage" "$name" "TIMEOUT (${dt}s; exit $rc)"
        fi
    else
        case $rc in
        0) note "$stage" "$name" "PASS (${dt}s)" ;;
        77) note "$stage" "$name" "SKIP (${dt}s)" ;;
        *) note "$stage" "$name" "FAIL rc=$rc (${dt}s, see $(basename "$log"))" ;;
        esac
    fi
    tail -n 3 "$log"
    return 0
}

finish() {
    cp -r "$STATE" "$LOGS/state" 2>/dev/null
    printf '%s\n' "${SUMMARY[@]}" >"$LOGS/summary.txt"
    tar -czf "$OUT/device.tar.gz" -C "$LOGS" . 2>/dev/null
    echo
    echo "=== summary ($(($(date +%s) - START))s; everything in $OUT/device.tar.gz)"
    printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/summary.txt"
}
trap finish EXIT

stage_info() {
    local log=$LOGS/info.log
    {
        date -u
        nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,ecc.mode.current,mig.mode.current,persistence_mode --format=csv
        nvidia-smi
        nvcc --version
        command -v compute-sanitizer && compute-sanitizer --version
        [ -f build-stage/REVISION ] && echo "staged binaries: $(tr '\n' ' ' <build-stage/REVISION)"
        git log -1 --oneline 2>/dev/null || true
        [ -n "$BIN" ] || stage_build
        "$BIN/linbench" info
    } >"$log" 2>&1
    note info "device" "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
}

# A meson to build with: on PATH, as a Python module, or from a carried wheel (.whl/meson-*.whl).
find_meson() {
    if command -v meson >/dev/null 2>&1; then echo meson; return 0; fi
    if python3 -c 'import mesonbuild' >/dev/null 2>&1; then echo "python3 -m mesonbuild.mesonmain"; return 0; fi
    local whl
    whl=$(ls .whl/meson-*.whl 2>/dev/null | head -n 1)
    if [ -n "$whl" ] && python3 -m pip install -q --no-index --no-deps --target /tmp/lb-meson "$whl" >/dev/null 2>&1; then
        echo "env PYTHONPATH=/tmp/lb-meson python3 -m mesonbuild.mesonmain"
        return 0
    fi
    return 1
}

stage_build() {
    local log=$LOGS/build.log
    if [ -x build-stage/linbench ] && [ -f build-stage/gpu_tests.tsv ]; then
        BIN=$ROOT/build-stage
        note build "staged binaries (build-stage/)" "$(tr '\n' ' ' <build-stage/REVISION 2>/dev/null)"
        return 0
    fi
    local meson
    if ! meson=$(find_meson); then
        note build "no staged binaries and no meson" "FAIL (see bench/README.md)"
        return 1
    fi
    # libcsv: the system's, or the header and static library staged in .libcsv/.
    if [ -d .libcsv ]; then
        export CPATH="$ROOT/.libcsv/include${CPATH:+:$CPATH}"
        export LIBRARY_PATH="$ROOT/.libcsv/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    fi
    [ -f build-device/build.ninja ] ||
        step build "meson setup (sm_90)" "$log" $meson setup build-device -Dgpu_arch=90 -Dbuildtype=release
    step build "ninja" "$log" ninja -C build-device
    # The same layout stage_device.sh stages: binaries side by side, and the gpu test list.
    if ! bench/stage_binaries.sh build-device build-device/flat "$meson" >>"$log" 2>&1; then
        note build "stage the on-device build" "FAIL (see build.log)"
        return 1
    fi
    BIN=$ROOT/build-device/flat
}

# The gpu tests, one per line "NAME SANITIZER" (kernel, memcheck or none), in the build's order.
gpu_tests() { awk -F'\t' 'NR > 1 { print $1, $2 }' "$BIN/gpu_tests.tsv"; }

stage_test() {
    local log=$LOGS/test.log name kind
    while read -r name kind; do
        step test "$name" "$log" "$BIN/$name"
    done < <(gpu_tests)
}

stage_check() {
    local log=$LOGS/check.log d
    for d in fp16 bf16 fp32; do
        step check "linbench check --dtype $d" "$log" "$BIN/linbench" check --dtype "$d"
    done
}

stage_sanitize() {
    local log=$LOGS/sanitize.log name kind tool
    if ! command -v compute-sanitizer >/dev/null 2>&1; then
        note sanitize "compute-sanitizer" "NOT FOUND"
        return 0
    fi
    # API errors are not reported: the code checks every call itself, and test_gpu_backend
    # provokes an out-of-memory cudaMalloc on purpose.
    while read -r name kind; do
        [ "$kind" = none ] && { note sanitize "$name" "not sanitized (the build says none)"; continue; }
        step sanitize "memcheck $name" "$log" env LB_TEST_QUICK=1 compute-sanitizer --tool memcheck \
            --report-api-errors no --leak-check full --error-exitcode 99 --print-limit 20 "$BIN/$name"
    done < <(gpu_tests)
    # racecheck, synccheck and initcheck look at our kernels only: on an H100 (2026-11-23) racecheck
    # reported hazards inside cuBLASLt's own Hopper kernels (nvjet_sm90_*, which synchronise their
    # TMA copies through mbarriers that it does not follow) while every product they computed
    # matched the double reference; they are NVIDIA's to answer for, not ours. Our kernels are the
    # ones named *_kernel (tests/build/test_kernel_names.sh holds gpu/ to that).
    # The kernel-name filter is not enough for racecheck: it dies ("failed to handle a hardware
    # exception") at the first cuBLASLt product it meets, so there test_gpu_ops runs every row of
    # the check table but the products', read from its source (synccheck and initcheck run all).
    local ours rows
    ours=$(sed -n 's/^ *{"\([a-z_]*\)", check_.*/\1/p' attn/check.c | grep -vx 'linear\|bmm' | paste -sd, -)
    while read -r name kind; do
        [ "$kind" = kernel ] || continue
        # LB_SANITIZERS: fewer of them in a short lease (initcheck alone takes minutes)
        for tool in ${LB_SANITIZERS:-racecheck synccheck initcheck}; do
            rows=
            [ "$tool" = racecheck ] && [ "$name" = test_gpu_ops ] && rows=$ours
            step sanitize "$tool $name${rows:+ (rows of our kernels)}" "$log" env LB_TEST_QUICK=1 \
                compute-sanitizer --tool "$tool" --kernel-name kns=_kernel --error-exitcode 99 --print-limit 20 \
                "$BIN/$name" ${rows:+"$rows"}
        done
    done < <(gpu_tests)
}

stage_bench() {
    local log=$LOGS/bench.log m n models
    step bench "bench_softmax" "$log" "$BIN/bench_softmax"
    step bench "bench_gemm fp16" "$log" "$BIN/bench_gemm" --dtype fp16
    step bench "bench_gemm bf16" "$log" "$BIN/bench_gemm" --dtype bf16
    # Every model of the table, as `linbench run --help` lists them.
    models=$("$BIN/linbench" run --help | sed -n 's/^ *--model M *\(.*\) (default.*/\1/p' | tr -d ,)
    for n in 512 4096; do
        for m in $models; do
            step bench "linbench run --model $m --n $n" "$log" "$BIN/linbench" run --model "$m" --n "$n"
        done
    done
}

stage_new() {
    local log=$LOGS/new.log tool m n
    local ops=flash_attention,flash_attention_lse,flash_attention_backward,add,column_sums,gelu_backward
    ops=$ops,softmax_backward,layernorm_backward,embed_backward,pool_seq_backward
    ops=$ops,depthwise_conv_seq_backward,favor_features_backward,divide_by_last_backward
    step new "test_gpu_ops (flash, backward)" "$log" "$BIN/test_gpu_ops" "$ops"
    step new "test_gpu_train" "$log" "$BIN/test_gpu_train"
    step new "bench_attention" "$log" "$BIN/bench_attention"
    step new "linbench check --dtype fp16" "$log" "$BIN/linbench" check --dtype fp16
    for n in 4096 16384; do
        for m in standard linformer flash; do
            step new "linbench run --model $m --n $n --mem-limit 16G" "$log" "$BIN/linbench" run --model "$m" \
                --n "$n" --mem-limit 16G
        done
    done
    for tool in racecheck synccheck; do
        step new "$tool (flash, embed_backward)" "$log" env LB_TEST_QUICK=1 timeout 150 compute-sanitizer --tool "$tool" \
            --kernel-name kns=_kernel --error-exitcode 99 --print-limit 20 "$BIN/test_gpu_ops" \
            flash_attention,flash_attention_lse,flash_attention_backward,embed_backward
    done
}

# sweep_to NAME DIR FLAGS...: a sweep into DIR, resumed if an earlier call started it.
sweep_to() {
    local name=$1 dir=$2
    shift 2
    local log
    log=$LOGS/$(basename "$dir").log
    if [ -f "$dir/meta.csv" ]; then
        step "$name" "linbench sweep --resume $(basename "$dir")" "$log" "$BIN/linbench" sweep --resume "$dir"
    else
        step "$name" "linbench sweep $* ($(basename "$dir"))" "$log" "$BIN/linbench" sweep "$@" --out "$dir"
    fi
}

stage_kernels() {
    local log=$LOGS/kernels.log
    step kernels "bench_softmax" "$log" "$BIN/bench_softmax"
    step kernels "bench_attention" "$log" "$BIN/bench_attention"
}

# LB_SWEEP_ARGS: the sweep's flags (a lease too short for the paper's grid at full memory: a
# smaller grid or budget); split on blanks
# shellcheck disable=SC2086
stage_sweep() { sweep_to sweep "$STATE/sweep" ${LB_SWEEP_ARGS:---breakdown}; }
stage_models() { sweep_to models "$STATE/sweep-models" --models chunked,performer --breakdown; }

stage_peer() {
    local log=$LOGS/peer.log py=${LB_PEER_PYTHON:-python3} dir=$STATE/peer
    if ! "$py" -c "import torch, numpy" >/dev/null 2>&1; then
        note peer "bench/peer" "SKIP (no Python with torch and numpy: set LB_PEER_PYTHON)"
        return 0
    fi
    # Resumed as sweep_to resumes linbench's: the cells an earlier call left, with the settings it
    # began with (LB_PEER_N and LB_PEER_ARGS count for the call that starts the directory).
    if [ -f "$dir/meta.csv" ]; then
        step peer "linbench-peer sweep --resume $(basename "$dir")" "$log" "$py" bench/peer/linbench-peer sweep \
            --resume "$dir"
    else
        # LB_PEER_ARGS: other flags of linbench-peer sweep (a maintainer's dry run: --device cpu ...)
        # shellcheck disable=SC2086
        step peer "linbench-peer sweep --n ${LB_PEER_N:-512:65536}" "$log" "$py" bench/peer/linbench-peer sweep \
            --n "${LB_PEER_N:-512:65536}" ${LB_PEER_ARGS:---device cuda} --out "$dir"
    fi
    if [ -f "$dir/raw.csv" ] && [ -f "$STATE/sweep/raw.csv" ]; then
        step peer "compare sweep peer" "$log" sh -c "'$BIN/linbench' compare --format md '$STATE/sweep' '$dir' > '$dir/compare.md'"
        step peer "plot sweep peer" "$log" "$BIN/linbench" plot "$STATE/sweep" "$dir" --out "$dir"
    fi
}

stage_plots() {
    local log=$LOGS/plots.log d
    for d in "$STATE"/sweep*; do
        [ -f "$d/raw.csv" ] || continue
        step plots "compare $(basename "$d")" "$log" sh -c "'$BIN/linbench' compare --format md '$d' > '$d/compare.md'"
        step plots "plot $(basename "$d")" "$log" "$BIN/linbench" plot "$d"
    done
}

for s in "${STAGES[@]}"; do
    case $s in
    build) stage_build || exit 1 ;;
    info | new | test | check | sanitize | bench | kernels | sweep | models | peer | plots)
        if [ -z "$BIN" ]; then stage_build || { echo "build failed: see build.log in $OUT/device.tar.gz"; exit 1; }; fi
        "stage_$s"
        ;;
    *) echo "run_device.sh: unknown stage \"$s\" (stages: info build new test check sanitize bench kernels sweep models peer plots)"; exit 2 ;;
    esac
done
