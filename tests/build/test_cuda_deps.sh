#!/bin/sh
# An incremental build recompiles a CUDA object when a header it reaches changes, or it links the
# old object against the new struct layouts. In a scratch copy of the source, configured with
# CUDA for one architecture, builds gpu/fill.cu's object and checks, with `ninja -n -d explain`
# after ninja has regenerated itself, that
#   - with nothing changed, the object is up to date (so the checks below can fail);
#   - after attn/ops.h (reached through gpu/kernels.h) changes, it would be recompiled;
#   - after fill.cu includes a header new to the tree and is rebuilt, a change to that header
#     would recompile it too.
# Runs with the meson on PATH and, where .ci/run installed it, with meson 0.61 ($LB_OLD_MESON).
# Usage: test_cuda_deps.sh SOURCE_DIR. Exit 77 (skipped) without nvcc.
set -u
src=$1
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || PATH="$PATH:/usr/local/cuda/bin"
if [ -z "$(command -v nvcc)" ]; then
    echo "SKIP: no nvcc"
    exit 77
fi
. "$(dirname "$0")/check.sh"

# A copy of the source without its VCS data and build directories: the test edits its headers.
mkdir "$tmp/src"
tar -C "$src" --exclude=.git --exclude-tag-all=meson-private -cf - . | tar -C "$tmp/src" -xf -

# would_rebuild BUILDDIR OBJECT: whether ninja, once it has regenerated build.ninja, would
# recompile OBJECT (its explanation is left in $tmp/explain).
would_rebuild() {
    ninja -C "$1" build.ninja > "$tmp/regen" 2>&1 || { cat "$tmp/regen"; return 2; }
    ninja -C "$1" -n -d explain "$2" > "$tmp/explain" 2>&1
    grep -q "Compiling Cuda object $2" "$tmp/explain"
}

mesons=meson
[ -n "${LB_OLD_MESON:-}" ] && [ -x "$LB_OLD_MESON" ] && mesons="$mesons $LB_OLD_MESON"
for m in $mesons; do
    v=$("$m" --version)
    b="$tmp/b-$v"
    rm -rf "$tmp/src.now" && cp -r "$tmp/src" "$tmp/src.now"
    s="$tmp/src.now"
    "$m" setup "$b" "$s" -Dcuda=enabled -Dgpu_arch=90 > "$tmp/setup.log" 2>&1
    code=$?
    echo "meson $v: configure exit $code"
    [ $code -eq 0 ] || tail -5 "$tmp/setup.log"
    check "meson $v: configure with CUDA succeeds" "[ $code -eq 0 ]"
    [ $code -eq 0 ] || continue
    obj=$(ninja -C "$b" -t targets all | sed -n 's/^\([^:]*[/_]fill\.cu\.o\): cuda_COMPILER$/\1/p')
    echo "meson $v: object $obj"
    check "meson $v: gpu/fill.cu is compiled by nvcc" "[ -n '$obj' ]"
    [ -n "$obj" ] || continue
    ninja -C "$b" "$obj" > "$tmp/build.log" 2>&1
    code=$?
    [ $code -eq 0 ] || tail -5 "$tmp/build.log"
    check "meson $v: $obj builds" "[ $code -eq 0 ]"

    would_rebuild "$b" "$obj"
    code=$?
    check "meson $v: up to date before any change" "[ $code -eq 1 ]"

    printf '/* edited by test_cuda_deps */\n' >> "$s/attn/ops.h"
    would_rebuild "$b" "$obj"
    code=$?
    [ $code -eq 0 ] || grep -i 'explain\|no work' "$tmp/explain" | tail -3
    check "meson $v: attn/ops.h changed: $obj is recompiled" "[ $code -eq 0 ]"

    printf '#define LB_TEST_CUDA_DEPS 1\n' > "$s/gpu/test_cuda_deps_new.h"
    printf '#include "gpu/test_cuda_deps_new.h"\n' >> "$s/gpu/fill.cu"
    ninja -C "$b" "$obj" > "$tmp/build.log" 2>&1
    code=$?
    [ $code -eq 0 ] || tail -5 "$tmp/build.log"
    check "meson $v: $obj builds with a new header" "[ $code -eq 0 ]"
    printf '#define LB_TEST_CUDA_DEPS 2\n' > "$s/gpu/test_cuda_deps_new.h"
    would_rebuild "$b" "$obj"
    code=$?
    [ $code -eq 0 ] || grep -i 'explain\|no work' "$tmp/explain" | tail -3
    check "meson $v: the new header changed: $obj is recompiled" "[ $code -eq 0 ]"
done
finish test_cuda_deps
