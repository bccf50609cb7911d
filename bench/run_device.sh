#!/usr/bin/env bash
# Everything the CUDA backend needs checked and measured on a lent GPU machine, in one call:
#   info      nvidia-smi and the toolchain
#   build     use carried binaries (build-stage/, from bench/stage_device.sh) or build for sm_90
#   test      the gpu suite (tests/gpu/test_gpu_*), each binary run directly (exit 77 = skip)
#   sanitize  compute-sanitizer memcheck over the gpu tests and racecheck over the kernel test
#             (LB_TEST_QUICK=1: smaller sizes, every path still taken)
#   bench     bench_softmax, bench_gemm (fp16, bf16), linbench run at n = 512
#   sweep     the default `linbench sweep`, timed (target: under 10 minutes on one H100);
#             not in the default list: it needs a call of its own
# Default stages: info build test sanitize bench. Logs go to $OUT (the device tool brings back
# at most 8 files, so each stage writes one log); the summary table prints last.
# A global deadline (LB_DEADLINE seconds, default 570) stops starting new steps in time for the
# 10-minute limit of one device command; a step cut short is reported as TIMEOUT.
#
# usage: bench/run_device.sh [STAGE...]          (from the repository root; see bench/README.md)
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/out-device}
mkdir -p "$OUT"
START=$(date +%s)
DEADLINE=$((START + ${LB_DEADLINE:-570}))
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(info build test sanitize bench)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
SUMMARY=()
BIN=""

note() { SUMMARY+=("$(printf '%-10s %-44s %s' "$1" "$2" "$3")"); }
left() { echo $((DEADLINE - $(date +%s))); }

# step STAGE NAME LOG CMD...: run CMD under the time left, append its output to LOG, record
# PASS (0), SKIP (77), TIMEOUT (124/137) or FAIL (other).
step() {
    local stage=$1 name=$2 log=$3
    shift 3
    local t
    t=$(left)
    if [ "$t" -le 10 ]; then
        note "$stage" "$name" "NOT RUN (deadline)"
        return 0
    fi
    echo "=== $name ($(date +%T), ${t}s left)" >>"$log"
    local s0 rc
    s0=$(date +%s)
    timeout --kill-after=5 "$t" "$@" >>"$log" 2>&1
    rc=$?
    local dt=$(($(date +%s) - s0))
    case $rc in
    0) note "$stage" "$name" "PASS (${dt}s)" ;;
    77) note "$stage" "$name" "SKIP (${dt}s)" ;;
    124 | 137) note "$stage" "$name" "TIMEOUT (${dt}s)" ;;
    *) note "$stage" "$name" "FAIL rc=$rc (${dt}s, see $(basename "$log"))" ;;
    esac
    tail -n 3 "$log"
    return 0
}

finish() {
    echo
    echo "=== summary ($(($(date +%s) - START))s; logs in $OUT)"
    printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/summary.txt"
}
trap finish EXIT

stage_info() {
    local log=$OUT/info.log
    {
        date -u
        nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
        nvidia-smi
        nvcc --version
        command -v compute-sanitizer && compute-sanitizer --version
        [ -f build-stage/REVISION ] && echo "carried binaries: $(tr '\n' ' ' < build-stage/REVISION)"
        git log -1 --oneline 2>/dev/null || true
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
    local log=$OUT/build.log
    if [ -x build-stage/test_gpu_kernels ]; then
        BIN=$ROOT/build-stage
        note build "carried binaries (build-stage/)" "$(tr '\n' ' ' < build-stage/REVISION 2>/dev/null)"
        return 0
    fi
    local meson
    if ! meson=$(find_meson); then
        note build "no binaries carried and no meson" "FAIL (see bench/README.md)"
        return 1
    fi
    # libcsv: the system's, or the header and static library carried in .libcsv/.
    if [ -d .libcsv ]; then
        export CPATH="$ROOT/.libcsv/include${CPATH:+:$CPATH}"
        export LIBRARY_PATH="$ROOT/.libcsv/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    fi
    if [ ! -f build-device/build.ninja ]; then
        step build "meson setup (sm_90)" "$log" $meson setup build-device -Dgpu_arch=90 -Dbuildtype=release
    fi
    step build "ninja" "$log" ninja -C build-device
    BIN=$ROOT/build-device/tests/gpu
    [ -x "$BIN/test_gpu_kernels" ] || return 1
    # Flatten: the benchmarks and linbench beside the tests, as in build-stage/.
    mkdir -p build-device/flat
    cp build-device/tests/gpu/test_gpu_* build-device/bench/bench_* build-device/linbench build-device/flat/ 2>/dev/null
    rm -f build-device/flat/*.p 2>/dev/null
    BIN=$ROOT/build-device/flat
}

GPU_TESTS=(test_gpu_backend test_gpu_kernels test_gpu_matmul test_gpu_forward test_gpu_large)

stage_test() {
    local log=$OUT/test.log
    for t in "${GPU_TESTS[@]}"; do
        step test "$t" "$log" "$BIN/$t"
    done
}

stage_sanitize() {
    local log=$OUT/sanitize.log
    if ! command -v compute-sanitizer >/dev/null 2>&1; then
        note sanitize "compute-sanitizer" "NOT FOUND"
        return 0
    fi
    # test_gpu_large is left out: 10 GB of tensors under memcheck would take the whole lease.
    # API errors are not reported: the code checks every call itself, and test_gpu_backend
    # provokes an out-of-memory cudaMalloc on purpose.
    for t in test_gpu_backend test_gpu_kernels test_gpu_matmul test_gpu_forward; do
        step sanitize "memcheck $t" "$log" env LB_TEST_QUICK=1 \
            compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 --print-limit 20 "$BIN/$t"
    done
    step sanitize "racecheck test_gpu_kernels" "$log" env LB_TEST_QUICK=1 \
        compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 99 --print-limit 20 \
        "$BIN/test_gpu_kernels"
    step sanitize "synccheck test_gpu_kernels" "$log" env LB_TEST_QUICK=1 \
        compute-sanitizer --tool synccheck --error-exitcode 99 --print-limit 20 "$BIN/test_gpu_kernels"
}

stage_bench() {
    local log=$OUT/bench.log
    step bench "bench_softmax" "$log" "$BIN/bench_softmax"
    step bench "bench_gemm fp16" "$log" "$BIN/bench_gemm" --dtype fp16
    step bench "bench_gemm bf16" "$log" "$BIN/bench_gemm" --dtype bf16
    step bench "linbench run standard n=512" "$log" "$BIN/linbench" run --model standard --n 512
    step bench "linbench run linformer n=4096 k=256" "$log" "$BIN/linbench" run --model linformer --n 4096 --k 256
    # The lines that carry the targets, at the end of the output.
    grep -E "copy of|^fp16 +(8192|16384|65536) |^bf16 +(8192|16384|65536) |^fp32 +(8192|16384|65536) |GEMM floor|whole standard forward|matrix ceiling" "$log" | tee "$OUT/bench_targets.txt"
}

stage_sweep() {
    local log=$OUT/sweep.log
    step sweep "linbench sweep (defaults)" "$log" "$BIN/linbench" sweep -o "$OUT/sweep"
    # raw.csv and the grids come back under $OUT/sweep/ (two folders deep is allowed).
}

for s in "${STAGES[@]}"; do
    case $s in
    info) stage_info ;;
    build) stage_build || { echo "build failed: see $OUT/build.log"; exit 1; } ;;
    test | sanitize | bench | sweep)
        if [ -z "$BIN" ]; then stage_build || { echo "build failed: see $OUT/build.log"; exit 1; }; fi
        "stage_$s"
        ;;
    *) echo "run_device.sh: unknown stage \"$s\" (stages: info build test sanitize bench sweep)"; exit 2 ;;
    esac
done
