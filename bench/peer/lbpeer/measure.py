"""One cell of a peer sweep, under linbench's protocol (docs/METHOD.md; attn/measure/measure.c):

  - a pass is the forward, or with --pass train one training step without the optimizer's
    update (`step`): the forward, then the backward from an upstream gradient of the output
    drawn uniformly in [-1, 1], every weight's gradient computed by autograd; the gradients are
    set to None before each step (zero_grad(set_to_none=True)), untimed, so each step allocates
    them anew and the search counts them with the activations kept for the backward.
  - the largest batch: doubling from 1 and then bisecting, each probe one real pass at
    that batch under the budget (lbpeer/device.py); running out of memory is a step down, never
    a failure; if batch 1 does not fit, the cell is OOM. With a batch given (--batch-from) that
    batch only, and not fitting it is the cell's error. Under --compile the probes run one
    compiled function (torch.compile's default: the batch becomes a dynamic size after the
    second probe, so the search costs two compilations), then the cell is compiled again for
    its batch alone (static shapes), which is what is timed; if that does not fit, the batch
    steps down by 1/8, as linbench's does when a library allocates beside its arena.
  - the verification pass at the batch found is the warm-up (as linbench's); the allocator keeps
    what it cached there, as linbench keeps its arena. A batch that fits from a released
    allocator may not fit from that cache (its blocks split for another order of allocations,
    reserved but unusable), so a timed pass that runs out of memory steps the batch down by 1/8
    too, and the cell is verified and timed again there: the batch timed is one whose passes ran
    one after another, and peak_bytes is its verification pass's. With --batch-from it is the
    cell's error, as not fitting there is.
  - timed passes: at least 5; stop when the interquartile range is within 2% of the median, or
    past --cell-time seconds of timed work, or at 50 passes; median, min and max kept.
  - energy, as linbench's: the device's counter (lbpeer/energy.py) read before the first timed
    pass and after the last; mean power = joules / host seconds over the timed passes, J per
    sequence = mean power x median ms / batch; none (and why) where there is no counter or it did
    not advance.
A forward pass runs under torch.inference_mode, and each pass's output is dropped before the next."""
import gc
import time

import torch

from . import device as dev_mod
from .energy import Unsupported
from .encoder import Encoder, Shape, flops_per_seq, random_weights

MIN_PASSES = 5
MAX_PASSES = 50
SETTLE = 0.02
INPUT_SEED_MIX = 0x5EED  # linbench's LB_INPUT_SEED_MIX: the ids' seed is the run's xor this
UPSTREAM_SEED_MIX = 0xD1  # the upstream gradient's seed: the run's xor this, not the ids'
# A step's FLOPs over the forward's: each product of the count (encoder.flops_per_seq, products
# only) has two of its size in the backward, the gradients of both its operands.
STEP_FLOPS = 3


def step(fn, ids, dy=None):
    """One pass: fn(ids), the output dropped; with dy (the output's shape) the training step,
    its backward from dy leaving each weight's gradient in its .grad."""
    out = fn(ids)
    if dy is not None:
        out.backward(dy)


def clear_grads(model):
    """The gradients gone, as zero_grad(set_to_none=True) leaves them."""
    for t in model.trained:
        t.grad = None


def summary(times):
    """Median, min and max, as lb_stats_summary."""
    v = sorted(times)
    c = len(v)
    med = v[c // 2] if c % 2 else 0.5 * (v[c // 2 - 1] + v[c // 2])
    return med, v[0], v[-1]


def settled(times):
    """The interquartile range within SETTLE of the median (attn/measure/measure.c's quartile indices)."""
    v = sorted(times)
    c = len(v)
    med = summary(v)[0]
    q1, q3 = v[(c - 1) // 4], v[(3 * (c - 1) + 3) // 4]
    return med > 0 and (q3 - q1) / med <= SETTLE


class Cell:
    """One raw.csv row's worth: model (the peer's name), n, k, batch, status and the numbers."""

    def __init__(self, model, attention, n, k):
        self.model, self.attention, self.n, self.k = model, attention, n, k
        self.batch = 0
        self.peak_bytes = 0
        self.median_ms = self.min_ms = self.max_ms = self.ms_per_seq = None
        self.tokens_per_s = self.tflop_per_s = None
        self.passes = None
        self.power_w = self.energy_j_per_seq = None
        self.energy_why = ""
        self.status = "ok"


class Runner:
    """Measures cells with one device and the sweep's settings (an argparse namespace)."""

    def __init__(self, device, settings, counter=None, counter_why=""):
        """counter: the device's energy counter (lbpeer/energy.py), or None and why there is none."""
        self.dev, self.s = device, settings
        self.counter, self.counter_why = counter, counter_why
        self.dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[settings.dtype]
        self.train = getattr(settings, "pass") == "train"
        self.model = None  # the cell's, while it is measured

    def shape(self, n, k):
        s = self.s
        return Shape(s.layers, s.d_model, s.heads, s.ffn, s.vocab, n, k, s.sharing, s.order)

    def _ids(self, batch, n):
        g = torch.Generator(device=self.dev.torch_device)
        g.manual_seed((self.s.seed ^ INPUT_SEED_MIX) + batch)
        return torch.randint(0, self.s.vocab, (batch, n), generator=g, device=self.dev.torch_device)

    def _upstream(self, batch, n):
        """The training step's upstream gradient (batch, n, d), U(-1, 1); None for a forward."""
        if not self.train:
            return None
        g = torch.Generator(device=self.dev.torch_device)
        g.manual_seed((self.s.seed ^ UPSTREAM_SEED_MIX) + batch)
        dy = torch.empty((batch, n, self.s.d_model), device=self.dev.torch_device, dtype=torch.float32)
        return dy.uniform_(-1.0, 1.0, generator=g).to(self.dtype)

    def _context(self, attention):
        return dev_mod.sdpa_context(self.s.sdpa) if attention == "sdpa" else dev_mod.nothing()

    def _compiled(self, model, dynamic):
        torch._dynamo.reset()  # no graph of another cell or batch is reused or counted
        return torch.compile(model, dynamic=dynamic)

    def run_pass(self, fn, ids, dy):
        """One pass as every probe and timed pass runs it (step); a method, so that a test can
        stand in a pass that runs out of memory where the CPU only counts."""
        step(fn, ids, dy)

    def _probe(self, fn, attention, batch, n, resident, warm, release=True):
        """One pass at `batch`: its peak bytes, or None when it does not fit. warm: run once
        before the counted pass (a compilation, the first pass's lazy set-up). release: give the
        allocator's cache back afterwards (always after running out of memory), so the next
        probe counts from the live tensors alone."""
        result, oom = None, False
        try:
            ids, dy = self._ids(batch, n), self._upstream(batch, n)
            inputs = sum(t.numel() * t.element_size() for t in (ids, dy) if t is not None)
            with self._context(attention):
                if warm:
                    self.run_pass(fn, ids, dy)
                    self.dev.sync()
                clear_grads(self.model)  # before the count, so that the step's own are counted
                with self.dev.count() as counted:
                    self.run_pass(fn, ids, dy)
                    self.dev.sync()
                result = counted.peak(resident + inputs)
        except Exception as e:  # noqa: BLE001 - only running out of memory is a step down
            if not dev_mod.is_oom(e):
                raise
            oom = True
        if oom:  # outside the handler, so the failed pass's tensors are gone with its frames
            gc.collect()
        if oom or release:
            clear_grads(self.model)
            self.dev.release()
        return result

    def _largest(self, fn, attention, n, resident):
        """The largest batch whose pass fits (0 when batch 1 does not), and its peak bytes."""
        cap = self.s.max_batch
        good, peak, bad, batch = 0, 0, None, 1
        compiled = self.s.compile
        while True:
            if cap and batch >= cap:
                batch = cap
            got = self._probe(fn, attention, batch, n, resident, warm=compiled or good == 0)
            if got is None:
                bad = batch
                break
            good, peak = batch, got
            if cap and batch == cap:
                return good, peak
            batch *= 2
        while bad - good > 1:
            mid = good + (bad - good) // 2
            got = self._probe(fn, attention, mid, n, resident, warm=compiled)
            if got is None:
                bad = mid
            else:
                good, peak = mid, got
        return good, peak

    def measure(self, attention, name, n, k, batch=None):
        """The cell (Cell), at its largest batch, or at `batch` when given (--batch-from)."""
        cell = Cell(name, attention, n, k)
        shape = self.shape(n, k)
        gen = torch.Generator(device=self.dev.torch_device)
        gen.manual_seed(self.s.seed)
        model = Encoder(shape, attention, random_weights(shape, attention, gen, self.dev.torch_device, self.dtype),
                        trainable=self.train)
        self.model = model
        self.dev.release()
        resident = sum(b.numel() * b.element_size() for b in model.buffers())
        try:
            with torch.inference_mode(not self.train):
                self._measure(model, cell, batch, resident)
        finally:
            self.model = None
            del model
            if self.s.compile:
                torch._dynamo.reset()
            gc.collect()
            self.dev.release()
        return cell

    def _measure(self, model, cell, given, resident):
        attention, n = cell.attention, cell.n
        if given is None:
            fn = self._compiled(model, None) if self.s.compile else model
            batch, peak = self._largest(fn, attention, n, resident)
            if batch == 0:
                cell.status = "OOM"
                return
        else:
            batch = given
        # The batch's own pass (compiled for it alone under --compile; verification and warm-up),
        # then the timed passes; running out of memory in either is the step down.
        fn = self._compiled(model, False) if self.s.compile else model
        while True:
            peak = self._probe(fn, attention, batch, n, resident, warm=self.s.compile, release=False)
            timed = self._timed(fn, cell, batch, n) if peak is not None else None
            if timed is not None:
                break
            if given is not None:
                cell.batch = batch
                cell.status = "out of memory at --batch-from's batch %d" % batch
                return
            if batch == 1:
                cell.status = "OOM"
                return
            batch = batch - 1 - (batch - 1) // 8
        times, host_s, joules0, joules1 = timed
        cell.batch, cell.peak_bytes = batch, peak
        cell.median_ms, cell.min_ms, cell.max_ms = summary(times)
        cell.passes = len(times)
        cell.ms_per_seq = cell.median_ms / batch
        seconds = cell.median_ms / 1000.0
        if joules1 is not None:
            if joules1 > joules0 and host_s > 0:
                cell.power_w = (joules1 - joules0) / host_s
                cell.energy_j_per_seq = cell.power_w * cell.median_ms / 1000.0 / batch
            else:
                cell.energy_why = "the energy counter did not advance over the %.3g s of timed passes" % host_s
        if seconds > 0:
            cell.tokens_per_s = batch * n / seconds
            work = flops_per_seq(self.shape(n, cell.k), attention) * (STEP_FLOPS if self.train else 1)
            cell.tflop_per_s = work * batch / seconds / 1e12

    def _timed(self, fn, cell, batch, n):
        """The timed passes at `batch`, from the cache the verification pass left: (times, host
        seconds over them, the energy counter's joules before and after, or None), or None when
        one runs out of memory, its cache then given back."""
        result, oom = None, False
        try:
            ids, dy = self._ids(batch, n), self._upstream(batch, n)

            def one_pass():
                self.run_pass(fn, ids, dy)

            times, timed_ms = [], 0.0
            joules0 = self._joules(cell)
            host0 = time.monotonic()
            with self._context(cell.attention):
                while len(times) < MAX_PASSES:
                    clear_grads(self.model)
                    ms = self.dev.timed(one_pass)
                    times.append(ms)
                    timed_ms += ms
                    if len(times) >= MIN_PASSES and (timed_ms >= self.s.cell_time * 1000.0 or settled(times)):
                        break
            host_s = time.monotonic() - host0
            joules1 = self._joules(cell) if joules0 is not None else None
            result = times, host_s, joules0, joules1
        except Exception as e:  # noqa: BLE001 - only running out of memory is a step down
            if not dev_mod.is_oom(e):
                raise
            oom = True
        if oom:  # outside the handler, so the failed pass's tensors are gone with its frames
            ids = dy = one_pass = None
            gc.collect()
            clear_grads(self.model)
            self.dev.release()
        return result

    def _joules(self, cell):
        """The counter's joules, or None with the cell's energy_why said."""
        if self.counter is None:
            cell.energy_why = self.counter_why
            return None
        try:
            return self.counter.joules()
        except Unsupported as e:
            cell.energy_why = str(e)
            return None
