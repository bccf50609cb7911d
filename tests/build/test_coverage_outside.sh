#!/bin/sh
# tests/coverage.sh --build DIR with DIR outside the checkout: the sources' paths in the gcov data
# are then relative to DIR (../work/linbench/gpu/x.c), and the report must still find gpu/'s
# lines, not print 0 of 0. A stand-in build directory in $TMPDIR: gpu/open_errors.c compiled with
# --coverage as meson would compile it there (its path relative to the directory), run once, and
# an empty build.ninja; LB_COVERAGE_REUSE=1 reports on those counts without a build or a suite.
# Usage: test_coverage_outside.sh SOURCE_ROOT. Exit 77 (skipped) without gcc's gcov.
set -u
src=$(realpath "$1")
command -v gcov >/dev/null && command -v cc >/dev/null || { echo "no gcov or cc: skipped"; exit 77; }
. "$(dirname "$0")/check.sh"
case $tmp in "$src"/*) echo "the scratch directory $tmp is inside $src: skipped"; exit 77 ;; esac

rel=$(realpath -m --relative-to="$tmp" "$src")
cat > "$tmp/main.c" <<'C'
#include <stdio.h>
#include "gpu/open_errors.h"
int main(void)
{
    char what[128];
    return lb_cuda_arch_verdict(9, 0, "90", 90, what, sizeof what) == 2 ? 0 : 1;
}
C
mkdir -p "$tmp/obj"
(cd "$tmp" && cc --coverage -I"$rel" -c "$rel/gpu/open_errors.c" -o obj/open_errors.o &&
    cc -I"$rel" -c "$rel/attn/base/status.c" -o obj/status.o && cc -I"$rel" -c main.c -o obj/main.o &&
    cc --coverage -o stand-in obj/open_errors.o obj/status.o obj/main.o && ./stand-in)
check "a stand-in instrumented with gcov builds and runs" "[ $? -eq 0 ] && ls '$tmp'/obj/*.gcda >/dev/null 2>&1"
: > "$tmp/build.ninja"

LB_COVERAGE_REUSE=1 "$src/tests/coverage.sh" --build "$tmp" > "$tmp/out" 2> "$tmp/err"
code=$?
cat "$tmp/out" "$tmp/err"
check "coverage.sh exits 0 (exit $code)" "[ $code -eq 0 ]"
check "gpu/open_errors.c is reported with its lines" \
    "awk '\$1 == \"gpu/open_errors.c\" && \$2 > 0 && \$3 > 0 { ok = 1 } END { exit !ok }' '$tmp/out'"

# Coverage data holding no line of this checkout's gpu/: an error, not 0 of 0.
rm -f "$tmp"/obj/open_errors.*
LB_COVERAGE_REUSE=1 "$src/tests/coverage.sh" --build "$tmp" > "$tmp/out" 2> "$tmp/err"
code=$?
check "no gpu/ line in the data: exit 1 with one line saying so (exit $code: $(cat "$tmp/err"))" \
    "[ $code -eq 1 ] && grep -q 'no line of' '$tmp/err'"
finish test_coverage_outside
