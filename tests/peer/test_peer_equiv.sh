#!/bin/sh
# bench/peer computes linbench's model: for each model the peer has, `linbench run --dump` on the
# CPU reference (a tiny model, fp32), then `linbench-peer check` loads the dump's weights and ids,
# runs the peer's model of the same work on them and compares its output with linbench's by
# relative error ||peer - linbench|| / ||linbench|| against 1e-5 (linbench check's fp32 forward
# threshold): torch-standard and torch-sdpa (math and every other backend the CPU has) against
# the standard model, also at a head width whose 1/sqrt is no power of two; torch-linformer
# against the Linformer at every sharing level and order; each also under torch.compile for the
# default Linformer and the standard model.
# Usage: test_peer_equiv.sh PATH-TO-LINBENCH SOURCE_DIR FIND_PYTHON. Exit 77 (skipped) where no
# Python with torch and numpy is found (FIND_PYTHON says which it looked for).
set -u
bin=$1
src=$2
py=$("$3") || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
peer="$src/bench/peer/linbench-peer"
passed=0
failed=0
tiny="--device cpu --dtype fp32 --layers 2 --d-model 64 --heads 4 --ffn 128 --vocab 1000 --n 64 --batch 2"

# check NAME DUMP_FLAGS PEER_FLAGS MODEL...: the dump, the peer's check, and each MODEL's row ok
check() {
    name=$1
    dump_flags=$2
    peer_flags=$3
    shift 3
    # shellcheck disable=SC2086 # the flags are words
    if ! "$bin" run $dump_flags --dump "$tmp/$name" > "$tmp/$name.log" 2>&1; then
        echo "FAIL $name: linbench run --dump:"
        cat "$tmp/$name.log"
        failed=$((failed + 1))
        return
    fi
    # shellcheck disable=SC2086
    "$py" "$peer" check "$tmp/$name" $peer_flags > "$tmp/$name.out" 2> "$tmp/$name.err"
    code=$?
    cat "$tmp/$name.out"
    ok=1
    [ $code -eq 0 ] || { echo "FAIL $name: linbench-peer check exit $code"; cat "$tmp/$name.err"; ok=0; }
    for model in "$@"; do
        if ! grep -q "^$model  *[0-9.e+-]*  *1e-05  ok$" "$tmp/$name.out"; then
            echo "FAIL $name: no ok row for $model (its relative error within 1e-05)"
            ok=0
        fi
    done
    if [ $ok -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

check standard "$tiny --model standard" "--compile" \
    torch-standard torch-sdpa-math torch-standard-compiled torch-sdpa-math-compiled
# head width 24: the scale 1/sqrt(24), which the peer applies to Q and linbench to the product
check standard-hd24 "--device cpu --dtype fp32 --layers 2 --d-model 48 --heads 2 --ffn 96 --vocab 500 --n 48 \
--batch 3 --model standard" "" torch-standard torch-sdpa-math
for so in layerwise:early layerwise:late kv:early kv:late headwise:early headwise:late none:late; do
    sharing=${so%:*}
    order=${so#*:}
    flags=""
    models="torch-linformer"
    if [ "$so" = layerwise:early ]; then
        flags="--compile"
        models="torch-linformer torch-linformer-compiled"
    fi
    # shellcheck disable=SC2086
    check "linformer-$sharing-$order" "$tiny --model linformer --k 16 --sharing $sharing --order $order" "$flags" \
        $models
done

echo "test_peer_equiv: $passed passed, $failed failed (Python: $py)"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
