# Sourced by the build tests' scripts: a scratch directory $tmp, removed on exit; check WHAT COND
# (COND eval'd: counted, "FAIL: WHAT" when false); finish NAME prints the counts and, as the
# script's last command, gives its status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { if eval "$2"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $1"; fi; }
finish() { echo "$1: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
