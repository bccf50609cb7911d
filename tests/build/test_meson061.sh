#!/bin/sh
# Ubuntu 22.04 ships meson 0.61: configure linbench with the meson 0.61 that .ci/run installs from
# PyPI ($LB_OLD_MESON) and check it succeeds with no deprecation or feature warning beyond 0.61.
# Usage: test_meson061.sh SOURCE_DIR. Exit 77 (skipped) where no such meson was installed.
set -u
src=$1
if [ -z "${LB_OLD_MESON:-}" ] || [ ! -x "$LB_OLD_MESON" ]; then
    echo "SKIP: LB_OLD_MESON does not name a meson 0.61 (.ci/run installs one)"
    exit 77
fi
. "$(dirname "$0")/check.sh"
version=$("$LB_OLD_MESON" --version)
"$LB_OLD_MESON" setup "$tmp/b" "$src" > "$tmp/log" 2>&1
code=$?
warnings=$(grep -c "WARNING: Project specifies a minimum meson_version\|FEATURE\|DEPRECATION" "$tmp/log")
echo "meson $version: configure exit $code, $warnings feature or deprecation warnings"
[ $code -eq 0 ] || tail -5 "$tmp/log"
grep "FEATURE\|DEPRECATION" "$tmp/log" | head -5
check "meson $version configures linbench" "[ $code -eq 0 ]"
check "with no feature or deprecation warning" "[ $warnings -eq 0 ]"
finish test_meson061
