#!/bin/sh
# Which source lines of gpu/ (the CUDA backend, not the emulator under gpu/emu/) the emulated-GPU
# suites execute: builds linbench with gcov instrumentation in BUILD (default build-cov; CUDA off,
# so only the emulated GPU is built), runs the suites (default gpu-emu), and prints, per file and in
# all, the executable lines executed. A line counts once however many template instances it has
# (executed when any instance ran it). Needs gcc's gcov (Debian's gcc package brings it).
#
# usage: tests/coverage.sh [--build DIR] [--suite S]... [--min PERCENT]
#   --min P   exit 1 when fewer than P% of the lines are executed (default: report only)
# Run from anywhere in the repository; takes minutes (an instrumented build and the suites).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-cov
min=""
suites=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --suite) suites="$suites --suite $2"; shift 2 ;;
    --min) min=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "coverage.sh: unknown argument $1 (--build DIR, --suite S, --min PERCENT)" >&2; exit 2 ;;
    esac
done
[ -n "$suites" ] || suites="--suite gpu-emu"
build=$(realpath -m "$build")
command -v gcov >/dev/null || { echo "coverage.sh: gcov not found (install gcc)" >&2; exit 1; }

# Optimised (-O2 -g): at -O0 the emulated suites outlast their timeouts; gcov still tells
# executed lines from those never reached.
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Db_coverage=true -Dcuda=disabled -Dbuildtype=debugoptimized >/dev/null
ninja -C "$build" >/dev/null
if [ "${LB_COVERAGE_REUSE:-0}" = 1 ]; then
    : # report on the counts the last run left (for working on this script)
else
find "$build" -name '*.gcda' -delete
# shellcheck disable=SC2086
# instrumented code runs slower: the tests' own time limits, tripled (no test asserts a time)
meson test -C "$build" $suites --timeout-multiplier 3 --print-errorlogs >/dev/null || echo "coverage.sh: some tests failed (see $build/meson-logs/testlog.txt); coverage of what ran:" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# gcov per object directory; -l names each report after its unit too, so a header included by
# several units gets one report per unit (merged below) instead of the last one alone.
i=0
for dir in $(find "$build" -name '*.gcda' -printf '%h\n' | sort -u); do
    i=$((i + 1))
    mkdir -p "$work/$i"
    # in the build directory, where the sources' relative paths start
    (cd "$build" && { gcov -l -p -o "$dir" "$dir"/*.gcda >/dev/null 2>&1 || true; } &&
        { mv -- *.gcov "$work/$i/" 2>/dev/null || true; })
done
# Every line of every gpu/ source outside gpu/emu/: executable when some report gives it a count
# or #####, executed when some report gives it a count above 0.
# The sources' paths as the compiler got them: relative to the build directory, which may be
# anywhere (../gpu/x.cu from build-cov, ../work/linbench/gpu/x.cu from /tmp/cov), or absolute.
rel=$(realpath -m --relative-to="$build" "$root")
gcovs=$(find "$work" -name '*.gcov')
awk -v root="$root" -v rel="$rel" '
    FNR == 1 { src = "" }
    /^ *-: *0:Source:/ {
        s = $0; sub(/^ *-: *0:Source:/, "", s)
        # absolute, or relative to the build directory: keep gpu/ of this repository
        if (index(s, root "/") == 1) s = substr(s, length(root) + 2)
        else if (index(s, rel "/") == 1) s = substr(s, length(rel) + 2)
        src = (s ~ /^gpu\// && s !~ /^gpu\/emu\//) ? s : ""
        next
    }
    src == "" { next }
    {
        if (!match($0, /^ *[^:]+: *[0-9]+:/)) next
        head = substr($0, 1, RLENGTH); split(head, f, ":")
        c = f[1]; gsub(/ /, "", c); ln = f[2] + 0
        if (ln == 0 || c == "-") next
        key = src SUBSEP ln
        seen[key] = 1; files[src] = 1
        if (c ~ /^[0-9]/ && c + 0 > 0) hit[key] = 1
    }
    END {
        for (k in seen) { split(k, p, SUBSEP); total[p[1]]++; if (k in hit) ran[p[1]]++ }
        n = 0
        for (s in files) names[++n] = s
        for (i = 2; i <= n; i++) for (j = i; j > 1 && names[j - 1] > names[j]; j--) { t = names[j]; names[j] = names[j - 1]; names[j - 1] = t }
        printf "%-28s %8s %8s %7s\n", "file", "lines", "executed", "%"
        for (i = 1; i <= n; i++) {
            s = names[i]; T += total[s]; R += ran[s]
            printf "%-28s %8d %8d %6.1f%%\n", s, total[s], ran[s], 100 * ran[s] / total[s]
        }
        printf "%-28s %8d %8d %6.1f%%\n", "gpu/ in all", T, R, T ? 100 * R / T : 0
        print (T ? 100 * R / T : 0) > "/dev/stderr"
    }' ${gcovs:-/dev/null} 2>"$work/percent" >"$work/report" # the names hold no blanks: gcov's -p writes # for /
cat "$work/report"
pct=$(cat "$work/percent")
if ! grep -q '^gpu/[^ ]' "$work/report"; then
    echo "coverage.sh: no line of $root/gpu/ in the coverage data under $build (built from another checkout, or no suite ran?)" >&2
    exit 1
fi
if [ -n "$min" ] && awk -v p="$pct" -v m="$min" 'BEGIN { exit !(p < m) }'; then
    echo "coverage.sh: ${pct}% of gpu/'s lines executed, under --min $min" >&2
    exit 1
fi
