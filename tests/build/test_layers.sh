#!/bin/sh
# Layers that only look down (meson.build: one static library per layer, each compiled with its
# layer's macro LB_LAYER_*): an include the wrong way fails to compile. Checks that
#   - a scratch file compiled with the reports layer's flags that includes a cmd/ header fails,
#     with the guard's #error, while the same file with the cmd layer's flags compiles;
#   - every header of cmd/ refuses the layers below it (the sweep layer, cmd/sweep/, included), and every header of reports/ refuses attn/,
#     gpu/ and the base library (so a new header without the guard shows here);
#   - no source of attn/, gpu/ or reports/ includes cmd/, none of attn/ includes reports/ or gpu/,
#     and the base library (attn/base/) includes only itself.
# The link check (a call the wrong way) is the layer_link_* programs, which the build itself links.
# Usage: test_layers.sh SOURCE_DIR BUILD_DIR CC...
set -u
src=$1 build=$2
shift 2
. "$(dirname "$0")/check.sh"
# run_cc LAYER FILE: compile FILE with the project's flags and LAYER's macro; messages in $tmp/err
run_cc() {
    "$cc0" $cc_rest -std=c11 -D_DEFAULT_SOURCE -DLB_LAYER_$1 -I"$src" -I"$build" -c "$2" -o "$tmp/out.o" > "$tmp/err" 2>&1
}
cc0=$1
shift
cc_rest="$*"

printf '#include "cmd/options.h"\nint lb_scratch(void);\nint lb_scratch(void) { return 0; }\n' > "$tmp/wrong_way.c"
run_cc REPORTS "$tmp/wrong_way.c"
code=$?
echo "reports/ including cmd/options.h: exit $code: $(grep -m1 'error' "$tmp/err")"
check "a reports-layer file including a cmd/ header fails to compile" "[ $code -ne 0 ]"
check "the failure is the layer guard's #error" "grep -q 'reports/ and attn/ may not include cmd/ headers' '$tmp/err'"
run_cc CMD "$tmp/wrong_way.c"
code=$?
[ $code -eq 0 ] || head -3 "$tmp/err"
check "the same file compiles in the cmd layer" "[ $code -eq 0 ]"

printf '#include "reports/raw.h"\n' > "$tmp/attn_reports.c"
run_cc ATTN "$tmp/attn_reports.c"
code=$?
echo "attn/ including reports/raw.h: exit $code: $(grep -m1 'error' "$tmp/err")"
check "an attn-layer file including a reports/ header fails to compile" \
    "[ $code -ne 0 ] && grep -q 'attn/ and gpu/ may not include reports/ headers' '$tmp/err'"

unguarded=""
for h in "$src"/cmd/*.h "$src"/cmd/sweep/*.h; do
    layers="BASE ATTN GPU REPORTS"
    case "$h" in */cmd/sweep/*) ;; *) layers="$layers SWEEP" ;; esac
    for layer in $layers; do
        printf '#include "%s"\n' "${h#"$src"/}" > "$tmp/h.c"
        run_cc $layer "$tmp/h.c"
        grep -q 'may not include cmd/ headers' "$tmp/err" || unguarded="$unguarded ${h#"$src"/}@$layer"
    done
done
for h in "$src"/reports/*.h; do
    for layer in BASE ATTN GPU; do
        printf '#include "reports/%s"\n' "$(basename "$h")" > "$tmp/h.c"
        run_cc $layer "$tmp/h.c"
        grep -q 'may not include reports/ headers' "$tmp/err" || unguarded="$unguarded reports/$(basename "$h")@$layer"
    done
done
[ -z "$unguarded" ] || echo "headers that let a lower layer in:$unguarded"
check "every cmd/ and reports/ header refuses the layers below it" "[ -z '$unguarded' ]"

cd "$src" || exit 1
# none WHAT PATTERN FILES...: no file includes what PATTERN matches
none() {
    up=$(grep -l "#include \"$2" $3 2>/dev/null)
    [ -z "$up" ] || echo "including what they may not: $up"
    check "$1" "[ -z '$up' ]"
}
none "no file in attn/, gpu/ or reports/ includes cmd/" 'cmd/' 'attn/*.[ch] attn/*/*.[ch] reports/*.[ch] gpu/*.[ch] gpu/*.cu gpu/*.cuh'
none "no file in cmd/sweep/ includes a header of cmd/ above it" 'cmd/[a-z_]*\.h"' 'cmd/sweep/*.[ch]'
none "no file in attn/ includes reports/ or gpu/" '\(reports\|gpu\)/' 'attn/*.[ch] attn/*/*.[ch]'
base="attn/base/status attn/base/sizes attn/base/lists attn/base/paths"
up=""
for b in $base; do
    for inc in $(grep -ho '#include "[^"]*"' $b.c $b.h | sed 's/#include "\(.*\)"/\1/'); do
        case " $base " in *" ${inc%.h} "*) ;; *) up="$up $b:$inc" ;; esac
    done
done
[ -z "$up" ] || echo "the base library including more than itself:$up"
check "the base library includes only itself" "[ -z '$up' ]"
finish test_layers
