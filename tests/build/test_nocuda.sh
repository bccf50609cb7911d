#!/bin/sh
# The linbench binary without the CUDA libraries (gpu/loader.c): it links none (ldd), so
# --version, --device cpu and compare start anywhere; --device cuda with a module whose CUDA
# library is missing says which library and what to install, in one line, exit 1 (no device);
# a missing module says so, and one LINBENCH_CUDA_MODULE names but that is not there names the
# variable; info says why there is no device in one phrase; a module whose shared structs differ
# from the binary's (built before the ops table grew) is refused by name. Usage: test_nocuda.sh LINBENCH SOURCE_ROOT. Needs a C
# compiler for the stand-in modules.
set -u
bin=$1
src=$2
. "$(dirname "$0")/check.sh"

libs=$(ldd "$bin" | grep -Ei 'cuda|cublas|nvidia' || true)
echo "ldd linbench, CUDA libraries: ${libs:-none}"
check "the binary links no CUDA library" "[ -z \"$libs\" ]"

"$bin" --version > "$tmp/out" 2>&1
check "--version runs" "[ $? -eq 0 ] && grep -q '^linbench ' '$tmp/out'"

"$bin" sweep --device cpu --layers 1 --d-model 16 --heads 2 --ffn 32 --vocab 100 --n 32 --k 8 \
    --mem-limit 8M --max-batch 1 --cell-time 1 -q --out "$tmp/cpu" > "$tmp/out" 2>&1
check "--device cpu sweeps" "[ $? -eq 0 ] && [ -s '$tmp/cpu/raw.csv' ]"
"$bin" compare "$tmp/cpu" > "$tmp/out" 2>&1
check "compare runs" "[ $? -eq 0 ]"

# A module that needs a library the loader cannot find, as on a laptop without CUDA.
printf 'int lb_stand_in_dependency(void) { return 0; }\n' > "$tmp/dep.c"
printf 'int lb_stand_in_dependency(void);\nint lb_stand_in(void) { return lb_stand_in_dependency(); }\n' > "$tmp/mod.c"
cc -shared -fPIC -o "$tmp/libcublasLt.so.99" -Wl,-soname,libcublasLt.so.99 "$tmp/dep.c" &&
    cc -shared -fPIC -o "$tmp/linbench-cuda.so" "$tmp/mod.c" "$tmp/libcublasLt.so.99"
built=$?
rm -f "$tmp/libcublasLt.so.99"
if [ $built -eq 0 ]; then
    LINBENCH_CUDA_MODULE="$tmp/linbench-cuda.so" "$bin" sweep --device cuda --out "$tmp/gpu" > "$tmp/out" 2> "$tmp/err"
    code=$?
    echo "--device cuda without libcublasLt: exit $code: $(cat "$tmp/err")"
    check "exit 1 without the CUDA libraries" "[ $code -eq 1 ]"
    check "one line naming the missing library and what to install" \
        "[ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q 'libcublasLt.so.99' '$tmp/err' && grep -q 'install' '$tmp/err'"
    check "nothing written" "[ ! -e '$tmp/gpu/raw.csv' ]"
else
    check "a stand-in module could be built" "false"
fi

# A module of this interface number built before the ops table's last member: refused, never
# called past the end of its table.
cat > "$tmp/stale.c" <<'EOF'
#include "gpu/module.h"
static int open_stub(int index, LbDtype dtype, int tf32, LbBackend **out)
{
    (void)index, (void)dtype, (void)tf32;
    *out = 0;
    return -1;
}
const LbCudaModule *lb_cuda_module(void)
{
    static const LbCudaModule m = {LB_CUDA_MODULE_ABI, open_stub, sizeof(LbOps) - sizeof(void *), sizeof(LbBackend),
                                   sizeof(LbDeviceInfo)};
    return &m;
}
EOF
if cc -shared -fPIC -I"$src" -o "$tmp/stale.so" "$tmp/stale.c"; then
    LINBENCH_CUDA_MODULE="$tmp/stale.so" "$bin" info > "$tmp/out" 2>&1
    echo "info with a module of a smaller ops table: $(grep 'CUDA' "$tmp/out" | tail -1)"
    check "a module with another ops table is refused" "grep -q 'is from another build of linbench (ops table' '$tmp/out'"
else
    check "a stand-in module of this interface could be built" "false"
fi

# A module the variable names but that is not there: the variable is blamed, not the install.
LINBENCH_CUDA_MODULE="$tmp/absent.so" "$bin" info > "$tmp/out" 2>&1
echo "info with LINBENCH_CUDA_MODULE naming no file: $(grep 'CUDA_MODULE' "$tmp/out")"
check "info names the variable and its path" \
    "grep -q 'LINBENCH_CUDA_MODULE is \"$tmp/absent.so\": No such file or directory' '$tmp/out' && ! grep -q 'reinstall' '$tmp/out'"
LINBENCH_CUDA_MODULE="$tmp/absent.so" "$bin" sweep --device cuda --out "$tmp/absent" > "$tmp/out" 2> "$tmp/err"
check "--device cuda names the variable and its path, exit 1" \
    "[ $? -eq 1 ] && [ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q 'LINBENCH_CUDA_MODULE is \"$tmp/absent.so\"' '$tmp/err'"

# info says why there is no device in one phrase, never "no CUDA device: no CUDA device ...".
"$bin" info > "$tmp/out" 2>&1
check "info without a GPU, or with one, does not stutter" "! grep -qi 'no CUDA device: no CUDA device' '$tmp/out'"
if [ $built -eq 0 ]; then
    LINBENCH_CUDA_MODULE="$tmp/linbench-cuda.so" "$bin" info > "$tmp/out" 2>&1
    echo "info without libcublasLt: $(grep -i 'CUDA device' "$tmp/out")"
    check "info without the CUDA libraries does not stutter" \
        "grep -q 'no CUDA device' '$tmp/out' && ! grep -qi 'no CUDA device: no CUDA device' '$tmp/out'"
fi
finish test_nocuda
