#!/bin/sh
# bench/peer's batch search when a batch fits once and not again: on a GPU a pass at the batch
# found can run out of memory from the cache an earlier pass left (blocks split for another order
# of allocations) though it fitted from a released allocator. The CPU counts memory and cannot run
# out, so Runner.run_pass stands in a pass that raises torch's out-of-memory error above LIMIT
# unless the cache was given back just before it. On a tiny model capped at batch CAP (> LIMIT),
# for each case (attention, pass): the cell is `ok` at a batch of at most LIMIT, never raises,
# and its peak_bytes is that batch's (a clean runner's verification pass at it); with the batch
# given (--batch-from) a batch that does not fit again is the cell's error row; an error other
# than running out of memory in a timed pass still propagates.
# Usage: test_peer_oom.sh FIND_PYTHON SOURCE_DIR. Exit 77 (skipped) without a Python with torch.
set -u
py=$("$1") || exit 77
PYTHONPATH="$2/bench/peer" exec "$py" - <<'PY'
import argparse

import torch

from lbpeer import device
from lbpeer.measure import Runner

LIMIT = 40  # the largest batch whose passes fit one after another
CAP = 64    # --max-batch: the search's batch, whose first pass fits
failed = 0


def fail(what):
    global failed
    print("FAIL " + what)
    failed += 1


class CachingCpu(device.Device):
    """The CPU with a caching allocator's state: `cached` from a pass until release()."""

    def __init__(self):
        super().__init__("cpu", 0, 256 << 20, None)
        self.cached = False

    def release(self):
        super().release()
        self.cached = False


class Fragmenting(Runner):
    """A pass above LIMIT runs out of memory unless the cache was given back before it."""

    def __init__(self, settings, error=torch.OutOfMemoryError):
        super().__init__(CachingCpu(), settings)
        self.error, self.raised = error, []

    def run_pass(self, fn, ids, dy):
        batch = ids.shape[0]
        if batch > LIMIT and self.dev.cached:
            self.raised.append(batch)
            raise self.error("CUDA out of memory. Tried to allocate 414.00 MiB (injected at batch %d)" % batch)
        self.dev.cached = True
        super().run_pass(fn, ids, dy)


def settings(which):
    return argparse.Namespace(**{"pass": which}, dtype="fp32", layers=2, d_model=32, heads=2, ffn=64, vocab=100,
                              sharing="layerwise", order="early", seed=1, sdpa="math", compile=False,
                              max_batch=CAP, cell_time=0.0)


N = 64
for att, which in (("standard", "train"), ("linformer", "train"), ("standard", "forward")):
    k = 16 if att == "linformer" else None
    what = "%s --pass %s" % (att, which)
    runner = Fragmenting(settings(which))
    try:
        cell = runner.measure(att, "torch-" + att, N, k)
    except Exception as e:  # noqa: BLE001 - the defect: out of memory out of a cell
        fail("%s: the cell raised %s: %s" % (what, type(e).__name__, str(e).splitlines()[0]))
        continue
    if not any(b > LIMIT for b in runner.raised):
        fail("%s: no pass ran out of memory above batch %d, so nothing was tested" % (what, LIMIT))
    if cell.status != "ok" or not 1 <= cell.batch <= LIMIT:
        fail("%s: status %r at batch %d, not ok at a batch of at most %d" % (what, cell.status, cell.batch, LIMIT))
        continue
    if not cell.passes or cell.passes < 5 or cell.ms_per_seq != cell.median_ms / cell.batch:
        fail("%s: %s passes, %s ms per sequence against a median of %s ms at batch %d"
             % (what, cell.passes, cell.ms_per_seq, cell.median_ms, cell.batch))
    clean = Runner(device.Device("cpu", 0, 256 << 20, None), settings(which)).measure(att, "torch-" + att, N, k,
                                                                                      cell.batch)
    if cell.peak_bytes != clean.peak_bytes:
        fail("%s: peak_bytes %d at batch %d, where that batch's pass holds %d"
             % (what, cell.peak_bytes, cell.batch, clean.peak_bytes))
    print("%-9s %-7s batch %d (out of memory at %s), peak %d bytes, %d passes"
          % (att, which, cell.batch, sorted(set(runner.raised), reverse=True), cell.peak_bytes, cell.passes))

# --batch-from: the batch given only, and not fitting it again is the cell's error row
try:
    cell = Fragmenting(settings("train")).measure("standard", "torch-standard", N, None, CAP)
    want = "out of memory at --batch-from's batch %d" % CAP
    if cell.status != want or cell.batch != CAP:
        fail("--batch-from %d: status %r at batch %d, not %r" % (CAP, cell.status, cell.batch, want))
except Exception as e:  # noqa: BLE001
    fail("--batch-from %d: the cell raised %s: %s" % (CAP, type(e).__name__, str(e).splitlines()[0]))

# any other error in a timed pass is the cell's failure, not a step down
try:
    Fragmenting(settings("train"), error=ValueError).measure("standard", "torch-standard", N, None)
    fail("a ValueError in a timed pass was taken for running out of memory")
except ValueError:
    pass

print("test_peer_oom: %d failures" % failed)
raise SystemExit(1 if failed else 0)
PY
