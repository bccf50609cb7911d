#!/bin/sh
# nvcc in /usr/local/cuda/bin but not on PATH, as a CUDA install leaves it until PATH is set: meson
# takes the CUDA compiler from PATH only, so the build cannot use that nvcc by itself. Configures
# linbench (no compilation) with a PATH that holds no nvcc and checks that
#   - -Dcuda=auto warns, naming that nvcc and the PATH to set, and the summary says CUDA is off
#     because of it (not a silent "False");
#   - -Dcuda=enabled fails with the same line;
#   - the README's two quick-start commands both begin by putting /usr/local/cuda/bin on PATH, and
#     with that PATH the CUDA backend is on.
# Usage: test_nvcc_path.sh SOURCE_DIR. Exit 77 (skipped) without an nvcc in /usr/local/cuda/bin,
# or where the folders meson needs hold an nvcc too (no PATH without one can be made).
set -u
src=$1
known=/usr/local/cuda/bin/nvcc
if [ ! -x "$known" ]; then
    echo "SKIP: no $known (nvcc: $(command -v nvcc || echo none)); the build looks for nvcc outside PATH there only"
    exit 77
fi
. "$(dirname "$0")/check.sh"
stripped=""
old_ifs=$IFS
IFS=:
for dir in $PATH; do
    [ -n "$dir" ] && [ ! -x "$dir/nvcc" ] && stripped="${stripped:+$stripped:}$dir"
done
IFS=$old_ifs
if [ -n "$(PATH=$stripped command -v nvcc)" ] || [ -z "$(PATH=$stripped command -v meson)" ]; then
    echo "SKIP: no PATH without nvcc that still has meson (PATH=$PATH)"
    exit 77
fi

PATH=$stripped meson setup "$tmp/auto" "$src" > "$tmp/auto.log" 2>&1
code=$?
line=$(grep 'WARNING: CUDA backend off' "$tmp/auto.log" | head -1)
echo "-Dcuda=auto, PATH without nvcc: exit $code: $line"
[ $code -eq 0 ] || tail -5 "$tmp/auto.log"
check "configure succeeds" "[ $code -eq 0 ]"
check "a warning names $known and the PATH to set" \
    "echo '$line' | grep -q '$known is not on PATH.*export PATH=\"\$PATH:/usr/local/cuda/bin\"'"
check "the summary says why CUDA is off" "grep -q 'CUDA backend *: False (the toolkit was found but cannot be used' '$tmp/auto.log'"

PATH=$stripped meson setup "$tmp/enabled" "$src" -Dcuda=enabled > "$tmp/enabled.log" 2>&1
code=$?
line=$(grep 'ERROR' "$tmp/enabled.log" | head -1)
echo "-Dcuda=enabled, PATH without nvcc: exit $code: $line"
check "-Dcuda=enabled fails" "[ $code -ne 0 ]"
check "naming $known and the PATH to set" "echo '$line' | grep -q -- '-Dcuda=enabled: $known is not on PATH.*export PATH'"

# The quick start's commands: the first statement of each sh block after "Command 1"/"Command 2".
readme_first() {
    awk -v start="$1" '$0 ~ start { found = 1 } found && /^```$/ { exit } found && inblock { print } found && /^```sh$/ { inblock = 1 }' \
        "$src/README.md" | sed 's/ && .*//'
}
first1=$(readme_first 'Command 1 installs')
first2=$(readme_first 'Command 2 runs')
echo "README command 1 begins: $first1"
echo "README command 2 begins: $first2"
check "command 1 puts /usr/local/cuda/bin on PATH" "[ '$first1' = 'export PATH=\"\$PATH:/usr/local/cuda/bin\"' ]"
check "command 2 does the same" "[ '$first1' = '$first2' ]"
(PATH=$stripped && eval "$first2" && command -v nvcc > "$tmp/nvcc" && meson setup "$tmp/readme" "$src") > "$tmp/readme.log" 2>&1
code=$?
echo "configured as the README says: exit $code: $(grep 'CUDA backend' "$tmp/readme.log")"
[ $code -eq 0 ] || tail -5 "$tmp/readme.log"
check "configure succeeds" "[ $code -eq 0 ]"
check "the CUDA backend is on" "grep -q 'CUDA backend *: True' '$tmp/readme.log'"
check "ninja finds the same nvcc on that PATH" "[ \"\$(cat '$tmp/nvcc')\" = '$known' ]"
finish test_nvcc_path
