#!/bin/sh
# Prepare, on a build machine with meson and libcsv, what bench/run_device.sh needs on a GPU
# machine that has the CUDA Toolkit but neither meson nor libcsv:
#   build-stage/  linbench, its CUDA module, the benchmarks and every test of the gpu suite, built
#                 for sm_90 (H100/H200; LB_GPU_ARCH=NN for another) in build-dev/ (release,
#                 -lineinfo), with gpu_tests.tsv, the build's own list of them; /build*/ is
#                 git-ignored, so it travels only where it is copied or carried;
#   .libcsv/      csv.h and libcsv.a from this machine, for building on the GPU machine instead.
# Binaries built on Debian 12 (glibc 2.36) run on newer distributions; they load libcudart,
# libcublas and libcublasLt from the GPU machine's CUDA 13 (run_device.sh sets LD_LIBRARY_PATH).
#
# usage: bench/stage_device.sh        (from anywhere in the repository)
set -eu
cd "$(dirname "$0")/.."
arch=${LB_GPU_ARCH:-90}
[ -f build-dev/build.ninja ] || meson setup build-dev -Dgpu_arch="$arch" -Dbuildtype=release
meson configure build-dev -Dgpu_arch="$arch"
ninja -C build-dev
# Keep a sweep's state carried back from an earlier device call (bench/README.md).
[ -d build-stage/state ] && mv build-stage/state .stage-state
rm -rf build-stage
bench/stage_binaries.sh build-dev build-stage
[ -d .stage-state ] && mv .stage-state build-stage/state
git describe --always --dirty --abbrev=12 >build-stage/REVISION

mkdir -p .libcsv/include .libcsv/lib
hdr=$(echo '#include <csv.h>' | cc -E -M -x c - 2>/dev/null | tr ' \\' '\n\n' | grep '/csv\.h$' | head -n 1 || true)
lib=$(cc -print-file-name=libcsv.a)
if [ -n "$hdr" ] && [ -f "$lib" ]; then
    cp "$hdr" .libcsv/include/ && cp "$lib" .libcsv/lib/
fi
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.libcsv/' "$exclude" 2>/dev/null || echo '/.libcsv/' >>"$exclude"

du -sh build-stage .libcsv
echo "staged: copy build-stage/ (and .libcsv/ for a build there) to the GPU machine's checkout"
