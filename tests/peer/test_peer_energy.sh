#!/bin/sh
# bench/peer's energy counters (lbpeer/energy.py) on stand-ins: NVML through the stand-in library
# the emulated GPU's tests use (gpu/emu/nvml_standin.c: a current driver, whose counter advances at
# 300 W; one from before Volta, without the entry point; the entry point failing; a bus id it does
# not know; no library at all), and powercap files of the test's own (a wrap unwrapped, no zone, no
# number). The counters need no GPU and no torch, only ctypes.
# Usage: test_peer_energy.sh FIND_PYTHON SOURCE_DIR STANDIN_DIR STANDIN_OLD_DIR. Exit 77 (skipped)
# where no Python with torch is found, as the other peer tests.
set -u
py=$("$1") || exit 77
src=$2 current=$3 old=$4
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lb-peer-energy-XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
fail=0

# What every case may use: refused(CALL, WORDS...), CALL raising Unsupported with every word.
prelude='
from lbpeer.energy import NvmlCounter, PowercapCounter, Unsupported
def refused(call, *words):
    try:
        call()
    except Unsupported as e:
        print(e)
        assert all(w in str(e) for w in words), words
        return
    raise SystemExit("no refusal")
'

# One case: NAME, LD_LIBRARY_PATH, then the Python that checks it (exit 0 when it holds).
case_() {
    name=$1 libs=$2
    shift 2
    if LD_LIBRARY_PATH=$libs PYTHONPATH="$src/bench/peer" "$py" -c "$prelude$1" >"$scratch/out" 2>&1; then
        echo "ok: $name"
    else
        echo "FAIL: $name"
        sed 's/^/    /' "$scratch/out"
        fail=1
    fi
}

case_ "NVML (current driver): joules since the first reading, at the stand-in's 300 W" "$current" '
import time
c = NvmlCounter("ffff:00:00.0")
j0 = c.joules(); t0 = time.monotonic()
time.sleep(0.3)
j1 = c.joules(); t1 = time.monotonic()
w = (j1 - j0) / (t1 - t0)
print("first %g J, then %g J over %.3f s: %.1f W" % (j0, j1, t1 - t0, w))
assert j0 == 0.0 and 250 < w < 350'

case_ "NVML: a device it does not know" "$current" '
refused(lambda: NvmlCounter("0000:65:00.0"), "no energy counter", "0000:65:00.0")'

case_ "NVML: the counter not supported on this GPU" "$current" '
import os
os.environ["LB_EMU_NVML_ERROR"] = "energy:3"
refused(NvmlCounter("ffff:00:00.0").joules, "returned 3", "not supported")'

case_ "NVML (a driver from before Volta): no energy entry point" "$old" '
refused(lambda: NvmlCounter("ffff:00:00.0"), "nvmlDeviceGetTotalEnergyConsumption")'

# (where the driver's own library is installed, the loader finds it whatever the path says)
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
    echo "skip: no NVML library (this machine has the driver's)"
else
case_ "no NVML library" "$scratch" '
refused(lambda: NvmlCounter("ffff:00:00.0"), "libnvidia-ml.so.1")'
fi

mkdir "$scratch/zone" "$scratch/nozone"
case_ "powercap: joules from the first reading, a wrap unwrapped, a file without a number" "$scratch" "
import os
os.environ['LB_POWERCAP_ZONE'] = '$scratch/zone'
def put(name, text):
    with open(os.path.join('$scratch/zone', name), 'w') as f:
        f.write(text)
put('max_energy_range_uj', '1000000\n')  # wraps at 1 J
put('energy_uj', '900000\n')
c = PowercapCounter()
assert c.joules() == 0.0
put('energy_uj', '950000\n')
assert abs(c.joules() - 0.05) < 1e-12
put('energy_uj', '49999\n')  # 50000 uJ to the top, then 49999 + 1
j = c.joules(); print(j); assert abs(j - 0.15) < 1e-12
put('energy_uj', 'not a number\n')
refused(c.joules, 'holds no number')"

case_ "powercap: no zone, the file named" "$scratch" "
import os
os.environ['LB_POWERCAP_ZONE'] = '$scratch/nozone'
refused(lambda: PowercapCounter().joules(), 'no energy counter', '$scratch/nozone/energy_uj')"

exit $fail
