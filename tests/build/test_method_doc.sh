#!/bin/sh
# docs/METHOD.md, the repository's copy of the protocol, keeps every section of the project's
# original (../shared/METHOD.md, where that directory exists) and its departures section.
# Usage: test_method_doc.sh SOURCE_DIR. Exit 77 where the original is not beside the checkout.
set -u
src=$1
orig="$src/../shared/METHOD.md"
copy="$src/docs/METHOD.md"
[ -f "$orig" ] || { echo "SKIP: no $orig"; exit 77; }
passed=0 failed=0
while IFS= read -r heading; do
    if grep -qxF "$heading" "$copy"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: docs/METHOD.md lacks \"$heading\""; fi
done <<HEADINGS
$(grep '^## ' "$orig")
HEADINGS
if grep -q '^## Where linbench departs' "$copy"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: no departures section"; fi
echo "test_method_doc: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
