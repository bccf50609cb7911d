#!/bin/sh
# bench/run_device.sh's sanitize stage, dry-run with stand-ins (no GPU needed): racecheck must run
# test_gpu_ops over the check table's rows of our kernels, never over linear's or bmm's (it dies at
# cuBLASLt's first kernel); memcheck, synccheck and initcheck over every row.
# The op list is read from attn/check.c's table, so this fails if that read finds nothing.
# Usage: test_device_sanitize.sh SOURCE_DIR
set -u
src=$1
. "$(dirname "$0")/check.sh"
mkdir -p "$tmp/bin" "$tmp/tools"
printf 'name\tsanitizer\ttimeout_s\ntest_gpu_backend\tmemcheck\t120\ntest_gpu_ops\tkernel\t900\n' >"$tmp/bin/gpu_tests.tsv"
printf '#!/bin/sh\necho "sanitizer: $*"\n' >"$tmp/tools/compute-sanitizer"
chmod +x "$tmp/tools/compute-sanitizer"
PATH="$tmp/tools:$PATH" OUT="$tmp/out" LB_STATE="$tmp/state" LB_BIN="$tmp/bin" \
    "$src/bench/run_device.sh" sanitize >"$tmp/stage.log" 2>&1
tar -xzf "$tmp/out/device.tar.gz" -C "$tmp" ./sanitize.log
cat "$tmp/stage.log"
line() { grep "^sanitizer: --tool $1 .*/$2" "$tmp/sanitize.log"; }
ops=$(line racecheck test_gpu_ops | sed 's/.* //')
check "racecheck ran test_gpu_ops" "[ -n \"\$(line racecheck test_gpu_ops)\" ]"
check "over flash_attention's and softmax's rows" "echo ,$ops, | grep -q ',flash_attention,' && echo ,$ops, | grep -q ',softmax,'"
check "not over linear's or bmm's" "! echo ,$ops, | grep -q ',linear,\|,bmm,'"
for tool in memcheck synccheck initcheck; do
    check "$tool over every row" "line $tool test_gpu_ops | grep -q 'test_gpu_ops\$'"
done
finish test_device_sanitize
