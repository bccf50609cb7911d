#!/bin/sh
# Prepare, on this (build) machine, what bench/run_device.sh needs on a lent GPU machine, which
# has nvcc, ninja and python but neither meson nor libcsv:
#   build-stage/  the GPU test binaries, the benchmarks and linbench, built here for sm_90
#                 (H100/H200) in build-dev/ (release + -lineinfo); /build*/ is git-ignored, so
#                 it travels only when the device call names it in `carry`;
#   .libcsv/      csv.h and libcsv.a from this machine, for an on-device build (run_device.sh
#                 falls back to building there when build-stage/ is absent).
# Binaries built on Debian 12 (glibc 2.36) run on the device image; they load libcudart,
# libcublas and libcublasLt from the device's CUDA 13 (run_device.sh sets LD_LIBRARY_PATH).
#
# usage: bench/stage_device.sh        (from the repository root)
set -eu
cd "$(dirname "$0")/.."
if [ ! -f build-dev/build.ninja ]; then
    meson setup build-dev -Dgpu_arch=90 -Dbuildtype=release
fi
ninja -C build-dev
rm -rf build-stage
mkdir -p build-stage
for t in test_gpu_backend test_gpu_kernels test_gpu_matmul test_gpu_forward test_gpu_large; do
    cp build-dev/tests/gpu/$t build-stage/
done
cp build-dev/bench/bench_softmax build-dev/bench/bench_gemm build-dev/linbench build-stage/
git rev-parse --short=12 HEAD > build-stage/REVISION
git status --porcelain --untracked-files=no | grep -q . && echo "dirty" >> build-stage/REVISION || true

mkdir -p .libcsv/include .libcsv/lib
hdr=$(echo '#include <csv.h>' | cc -E -M -x c - 2>/dev/null | tr ' \\' '\n\n' | grep '/csv\.h$' | head -n 1 || true)
lib=$(cc -print-file-name=libcsv.a)
if [ -n "$hdr" ] && [ -f "$lib" ]; then
    cp "$hdr" .libcsv/include/ && cp "$lib" .libcsv/lib/
fi
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.libcsv/' "$exclude" 2>/dev/null || echo '/.libcsv/' >> "$exclude"

du -sh build-stage .libcsv
echo "staged: carry [\"build-stage\"] (and [\".libcsv\"] for an on-device build) in the device call"
