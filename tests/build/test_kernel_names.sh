#!/bin/sh
# Every kernel of gpu/ is named *_kernel: bench/run_device.sh runs compute-sanitizer's racecheck,
# synccheck and initcheck over the kernels whose names hold "_kernel" (kns=_kernel), so a kernel
# named otherwise would silently go unchecked on the GPU. Fails on a __global__ it cannot parse.
# usage: test_kernel_names.sh SOURCE_ROOT
set -eu
root=$1
fail=0
count=0
for f in "$root"/gpu/*.cu "$root"/gpu/*.cuh; do
    [ -f "$f" ] || continue
    declared=$(grep -o '__global__' "$f" | wc -l)
    names=$(tr '\n' ' ' <"$f" |
        grep -oE '__global__ +void +(__launch_bounds__ *\([^)]*\) *)?[A-Za-z_0-9]+ *\(' |
        sed -E 's/.*[ )]([A-Za-z_0-9]+) *\($/\1/' || true)
    parsed=$(printf '%s' "$names" | grep -c . || true)
    if [ "$parsed" -ne "$declared" ]; then
        echo "FAIL: $f declares $declared __global__ functions, $parsed parsed as 'void [__launch_bounds__(..)] NAME('"
        fail=1
    fi
    for n in $names; do
        count=$((count + 1))
        case $n in
        *_kernel) ;;
        *) echo "FAIL: $f: kernel $n is not named *_kernel (run_device.sh's sanitizers would skip it)"; fail=1 ;;
        esac
    done
done
[ "$count" -gt 0 ] || { echo "FAIL: no kernel found under $root/gpu"; exit 1; }
[ "$fail" -eq 0 ] && echo "1 passed, 0 failed: $count kernels, each named *_kernel"
exit $fail
