#!/bin/sh
# The build on the toolkits users have: configures linbench (no compilation) with a stand-in nvcc
# that answers as CUDA 12.4 does (tests/build/nvcc-12.4), and checks that
#   - the default architectures are those 12.4 can build (sm_80 ... sm_90, PTX of sm_90), not sm_100;
#   - an explicit -Dgpu_arch=100 stops at configure time with one line naming the architecture.
# Usage: test_toolkits.sh SOURCE_DIR. Exit 77 (skipped) without a real nvcc to hand calls to.
set -u
src=$1
real=$(command -v nvcc || true)
[ -n "$real" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || real=/usr/local/cuda/bin/nvcc
if [ -z "$real" ]; then
    echo "SKIP: no nvcc"
    exit 77
fi
. "$(dirname "$0")/check.sh"
# A toolkit root that says 12.4 (meson reads version.txt and refuses a toolkit whose version
# differs from nvcc's), with the real headers and libraries behind it.
root=$(dirname "$(dirname "$(readlink -f "$real")")")
fake="$tmp/cuda-12.4"
mkdir -p "$fake/bin"
cp "$src/tests/build/nvcc-12.4" "$fake/bin/nvcc"
ln -s "$root/include" "$fake/include"
for d in lib64 lib targets nvvm; do [ -e "$root/$d" ] && ln -s "$root/$d" "$fake/$d"; done
echo "CUDA Version 12.4.131" > "$fake/version.txt"
export LB_REAL_NVCC="$real" PATH="$fake/bin:$PATH" CUDA_PATH="$fake"

meson setup "$tmp/b124" "$src" -Dcuda=enabled > "$tmp/setup.log" 2>&1
code=$?
[ $code -eq 0 ] || tail -5 "$tmp/setup.log"
check "configure with CUDA 12.4 succeeds" "[ $code -eq 0 ]"
gencodes=$(grep -o 'gencode=arch=compute_[0-9]*,code=[a-z]*_[0-9]*' "$tmp/b124/build.ninja" 2>/dev/null | sort -u | tr '\n' ' ')
echo "CUDA 12.4 default: $gencodes"
check "sm_90 built" "echo '$gencodes' | grep -q 'code=sm_90'"
check "PTX of sm_90 embedded" "echo '$gencodes' | grep -q 'compute_90,code=compute_90'"
check "no sm_100 on CUDA 12.4" "! echo '$gencodes' | grep -q '_100'"

meson setup "$tmp/b100" "$src" -Dcuda=enabled -Dgpu_arch=90,100 > "$tmp/setup100.log" 2>&1
code=$?
line=$(grep 'ERROR' "$tmp/setup100.log" | head -1)
echo "CUDA 12.4 with -Dgpu_arch=90,100: exit $code: $line"
check "-Dgpu_arch=100 refused on CUDA 12.4" "[ $code -ne 0 ]"
check "the refusal names sm_100 and the option" "echo '$line' | grep -q 'gpu_arch.*sm_100'"
finish test_toolkits
