#!/bin/sh
# Copy what bench/run_device.sh runs out of a configured and built meson build directory into one
# folder: linbench and its CUDA module, the benchmarks, every test of the build's `gpu` suite, and
# gpu_tests.tsv, that suite as the build lists it (name, the sanitizer class from the suites
# gpu-sanitize-kernel / gpu-sanitize-memcheck, timeout), so the device run never keeps a list of
# its own.
#
# usage: bench/stage_binaries.sh BUILD_DIR DEST_DIR [MESON_COMMAND]
set -eu
build=$1
dest=$2
meson=${3:-meson}
mkdir -p "$dest"
$meson introspect "$build" --tests >"$dest/tests.json"
python3 - "$dest/tests.json" "$dest/gpu_tests.tsv" "$dest/files.txt" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))
rows, files = [], []
for t in tests:
    suites = [s.split(":")[-1] for s in t["suite"]]
    if "gpu" not in suites:
        continue
    kind = "kernel" if "gpu-sanitize-kernel" in suites else "memcheck" if "gpu-sanitize-memcheck" in suites else "none"
    rows.append(f"{t['name']}\t{kind}\t{t['timeout']}")
    files.append(t["cmd"][0])
if not rows:
    sys.exit("stage_binaries: the build has no test in suite gpu (configured without CUDA?)")
with open(sys.argv[2], "w") as f:
    f.write("name\tsanitizer\ttimeout_s\n" + "\n".join(rows) + "\n")
with open(sys.argv[3], "w") as f:
    f.write("\n".join(files) + "\n")
PY
rm -f "$dest/tests.json"
xargs -I{} cp {} "$dest/" <"$dest/files.txt"
rm -f "$dest/files.txt"
cp "$build/linbench" "$build/linbench-cuda.so" "$dest/"
for b in "$build"/bench/bench_*; do
    [ -f "$b" ] && [ -x "$b" ] && cp "$b" "$dest/"
done
echo "staged in $dest: $(wc -l <"$dest/gpu_tests.tsv") lines of gpu_tests.tsv (header included)"
