#!/bin/sh
# The Python that bench/peer runs with in the tests: the first of $LB_PEER_PYTHON, the venv .ci/run
# installs PyTorch into (${XDG_CACHE_HOME:-$HOME/.cache}/linbench/torch), and python3 on PATH that
# imports torch and numpy. Prints its path and exits 0, or says why not and exits 77 (skipped).
cache="${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/linbench/torch/bin/python"
for py in "${LB_PEER_PYTHON:-}" "$cache" "$(command -v python3 2>/dev/null)"; do
    if [ -z "$py" ] || [ ! -x "$py" ]; then continue; fi
    if "$py" -c "import torch, numpy" >/dev/null 2>&1; then
        echo "$py"
        exit 0
    fi
done
echo "SKIP: no Python with torch and numpy (LB_PEER_PYTHON, $cache, python3); .ci/run installs one" >&2
exit 77
