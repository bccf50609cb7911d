#!/bin/sh
# gpu/'s machine code within gpu/kernel_bounds.txt: bench/kernel_report.py compiles every kernel
# for sm_90 and fails on a spill in an fp16/bf16 kernel, or on flash's registers, blocks per SM or
# main-loop instructions above their bounds. Skips (77) without nvcc; the instruction counts need
# cuobjdump (the toolkit's, or $LB_CUOBJDUMP, which .ci/run installs from PyPI) and are left out,
# saying so, without it. Usage: test_kernel_report.sh SOURCE_ROOT
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/bench/kernel_report.py" --arch 90 --check "$src/gpu/kernel_bounds.txt" > "$tmp/report" 2> "$tmp/errors"
rc=$?
grep -E '^(linbench kernels|flash main loop|no cuobjdump)|^flash_tensor_kernel<__half, (64|128)>' "$tmp/report"
cat "$tmp/errors"
[ "$rc" -eq 77 ] && { echo "no nvcc: skipped"; exit 77; }
if [ "$rc" -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit "$rc"
