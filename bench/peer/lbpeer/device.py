"""The device a peer sweep runs on: its description for meta.csv, the memory budget, how a pass's
memory is counted against it, and the clock that times a pass.

Budget (docs/METHOD.md, "Largest batch"): on a GPU the free memory when the sweep starts less the
headroom (the larger of 256 MiB and 1% of the GPU's memory, or --headroom), or --mem-limit if
smaller, enforced by the caching allocator (torch.cuda.set_per_process_memory_fraction): a pass
that would hold more raises torch's out-of-memory error, which the batch search takes as a step
down. Weights, inputs, activations and the libraries' workspaces that go through the allocator
all count, as everything in linbench's arena does. On the CPU the budget is --mem-limit (default
512 MiB, as linbench's CPU reference) and is counted, not enforced: the weights and ids plus the
peak of what torch's CPU allocator holds over the pass, from the allocation and free events the
profiler records (torch.profiler with profile_memory: every tensor, in eager mode and in a
compiled graph alike; not the scratch a BLAS library takes from malloc itself). A pass over the
budget is the step down.

Time: CUDA events around each pass on a GPU; time.perf_counter around it on the CPU (torch's CPU
ops return when done)."""
import contextlib
import os
import platform
import socket
import sys
import time
import warnings

import torch

MIB = 1 << 20
HEADROOM_MIN = 256 * MIB
CPU_DEFAULT_BUDGET = 512 * MIB


class BudgetExceeded(Exception):
    """A CPU pass that held more than the budget: out of memory, as on a GPU."""


class UsageError(Exception):
    """Bad input: one line, exit 2."""


class RuntimeFailure(Exception):
    """The device cannot be used: one line, exit 1."""


def is_oom(e):
    """Whether an exception out of a pass is running out of memory (the step down)."""
    if isinstance(e, (torch.OutOfMemoryError, BudgetExceeded, MemoryError)):
        return True
    text = str(e)
    return isinstance(e, RuntimeError) and ("out of memory" in text or "ALLOC_FAILED" in text
                                            or "can't allocate memory" in text)


def _proc_value(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _cpu_available_bytes():
    """The memory this process can have: MemAvailable, and a cgroup's limit where smaller."""
    best = _proc_value("/proc/meminfo", "MemAvailable:")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                v = f.read().strip()
            if v.isdigit():
                best = min(best, int(v)) if best else int(v)
        except OSError:
            pass
    return best


def format_size(b):
    """As linbench's lb_format_size: 512 MiB, 1.5 GiB."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    u = 0
    while u < 5 and b >= 1 << (10 * (u + 1)):
        u += 1
    if u == 0:
        return "%d B" % b
    return ("%.2f" % (b / (1 << (10 * u)))).rstrip("0").rstrip(".") + " " + units[u]


class Device:
    """kind ("cuda" or "cpu"), torch_device, budget (bytes), meta (meta.csv's device keys)."""

    def __init__(self, kind, gpu, mem_limit, headroom, keep_budget=None):
        """keep_budget: the budget of the run a resume continues, kept so that its cells and the
        earlier ones are measured under one (a RuntimeFailure where this device has less)."""
        self.kind = kind
        self.meta = {}
        if kind == "cuda":
            self._init_cuda(gpu, mem_limit, headroom, keep_budget)
        else:
            self._init_cpu(mem_limit, keep_budget)
        self.meta["torch_version"] = torch.__version__
        self.meta["cuda_version"] = torch.version.cuda or ""
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        self.meta["cudnn_version"] = str(cudnn) if cudnn and kind == "cuda" else ""
        self.meta["python_version"] = platform.python_version()
        self.meta["cpu_threads"] = str(torch.get_num_threads())
        self.host = socket.gethostname()

    def _init_cuda(self, gpu, mem_limit, headroom, keep_budget):
        if not torch.cuda.is_available():
            raise RuntimeFailure("no CUDA device: torch.cuda.is_available() is false (torch %s, built for CUDA %s); "
                                 "--device cpu runs on the CPU" % (torch.__version__, torch.version.cuda or "none"))
        if gpu >= torch.cuda.device_count():
            raise UsageError("invalid argument \"%d\" for --gpu: this machine has %d CUDA device(s)"
                             % (gpu, torch.cuda.device_count()))
        self.torch_device = torch.device("cuda", gpu)
        torch.cuda.set_device(self.torch_device)
        props = torch.cuda.get_device_properties(self.torch_device)
        free, total = torch.cuda.mem_get_info(self.torch_device)
        room = max(HEADROOM_MIN, total // 100) if headroom is None else headroom
        if free <= room:
            raise RuntimeFailure("GPU %d has %s free, no more than the headroom of %s: nothing left to measure with"
                                 % (gpu, format_size(free), format_size(room)))
        self.budget = free - room if not mem_limit else min(free - room, mem_limit)
        if keep_budget is not None:
            if self.budget < keep_budget:
                raise RuntimeFailure("the run measured with a memory budget of %s and GPU %d has %s "
                                     "now (its free memory less the headroom of %s)"
                                     % (format_size(keep_budget), gpu, format_size(self.budget), format_size(room)))
            self.budget = keep_budget
        # The allocator's cap is a fraction of the device's memory.
        torch.cuda.set_per_process_memory_fraction(self.budget / total, self.torch_device)
        self.uuid = "GPU-" + str(props.uuid) if getattr(props, "uuid", None) else ""
        # NVML finds the device by it, as linbench's gpu/nvml.c does (lbpeer/energy.py)
        self.pci_bus_id = ("%04x:%02x:%02x.0" % (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
                           if hasattr(props, "pci_bus_id") else "")
        self.meta.update({
            "device_name": props.name,
            "compute_capability": "%d.%d" % (props.major, props.minor),
            "sm_count": str(props.multi_processor_count),
            "memory_total_bytes": str(total),
            "memory_budget_bytes": str(self.budget),
            "memory_headroom_bytes": str(room),
            "timer": "cuda_events",
            "memory_count": "caching allocator, capped at the budget (torch.cuda.set_per_process_memory_fraction); "
                            "peak_bytes: torch.cuda.max_memory_reserved",
        })

    def _init_cpu(self, mem_limit, keep_budget):
        self.torch_device = torch.device("cpu")
        self.budget = keep_budget or mem_limit or CPU_DEFAULT_BUDGET
        can = _cpu_available_bytes()
        if can is not None and self.budget > can:
            if mem_limit:  # as linbench words and exits for its CPU reference (cmd/options.c)
                raise UsageError("invalid argument \"%s\" for --mem-limit: should be at most %s with --device cpu, "
                                 "the memory this process can have" % (format_size(mem_limit), format_size(can)))
            raise RuntimeFailure("the CPU's default budget of %s is more than the %s this process can have: "
                                 "pass a smaller --mem-limit" % (format_size(self.budget), format_size(can)))
        self.uuid = self.pci_bus_id = ""
        self.meta.update({
            "device_name": "CPU (%s)" % _cpu_name(),
            "compute_capability": "",
            "sm_count": "",
            "memory_total_bytes": str(_proc_value("/proc/meminfo", "MemTotal:") or ""),
            "memory_budget_bytes": str(self.budget),
            "memory_headroom_bytes": "",
            "timer": "perf_counter",
            "memory_count": "weights and ids plus the peak of torch's CPU allocator over the pass (the "
                            "profiler's memory events); peak_bytes: that count",
        })

    # --- memory ---------------------------------------------------------------------------------

    def release(self):
        """Give back what the allocator caches, so the next pass starts from its live tensors."""
        if self.kind == "cuda":
            torch.cuda.synchronize(self.torch_device)
            torch.cuda.empty_cache()

    def count(self):
        """A context around one pass: afterwards .peak(resident_bytes) is the pass's peak bytes,
        resident_bytes (weights and ids) included, and on the CPU raises BudgetExceeded past the
        budget."""
        return _CudaCount(self) if self.kind == "cuda" else _CpuCount(self)

    # --- time -----------------------------------------------------------------------------------

    def sync(self):
        if self.kind == "cuda":
            torch.cuda.synchronize(self.torch_device)

    def timed(self, fn):
        """ms of one call of fn (which returns nothing that lives on)."""
        if self.kind == "cuda":
            t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0.record()
            fn()
            t1.record()
            t1.synchronize()
            return t0.elapsed_time(t1)
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1000.0


class _CudaCount:
    def __init__(self, dev):
        self.dev = dev

    def __enter__(self):
        torch.cuda.reset_peak_memory_stats(self.dev.torch_device)
        return self

    def __exit__(self, *exc):
        return False

    def peak(self, resident_bytes):
        return torch.cuda.max_memory_reserved(self.dev.torch_device)  # weights and ids included


@contextlib.contextmanager
def _quiet_stderr():
    """File descriptor 2 to /dev/null: the profiler's library logs every start and stop there
    (and, in a CUDA build on a machine without a GPU, that it found none), whatever
    KINETO_LOG_LEVEL says."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class _CpuCount:
    def __init__(self, dev):
        self.dev = dev
        self.prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)

    def __enter__(self):
        with _quiet_stderr():
            self.prof.__enter__()
        return self

    def __exit__(self, *exc):
        with _quiet_stderr():
            self.prof.__exit__(*exc)
        return False

    def peak(self, resident_bytes):
        events = sorted((e.start_ns(), e.nbytes()) for e in self.prof.profiler.kineto_results.events()
                        if e.name() == "[memory]")
        held = top = 0
        for _, nbytes in events:  # + an allocation, - a free
            held += nbytes
            top = max(top, held)
        peak = resident_bytes + top
        if peak > self.dev.budget:
            raise BudgetExceeded("%s over the CPU budget of %s" % (format_size(peak), format_size(self.dev.budget)))
        return peak


def sdpa_backend_check(device, backend, dtype, heads, head_dim, train=False):
    """None when F.scaled_dot_product_attention runs with `backend` on this device and dtype at
    this head width (and, with train, its backward), else why not (one line)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    which = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
             "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}[backend]
    q = torch.zeros(1, heads, 16, head_dim, device=device, dtype=dtype, requires_grad=train)
    with warnings.catch_warnings(record=True) as said:  # torch warns why each kernel was not used
        warnings.simplefilter("always")
        try:
            with sdpa_kernel(which), torch.inference_mode(not train):
                o = torch.nn.functional.scaled_dot_product_attention(q, q, q)
                if train:
                    o.sum().backward()
            return None
        except RuntimeError as e:
            why = [str(w.message).strip().splitlines()[0] for w in said if str(w.message).strip()]
            if why:
                return "; ".join(why)
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            # torch's "No viable backend ... turning off both the math kernel and the fused
            # kernels" says nothing about this device
            return "PyTorch has none here" if text.startswith("No viable backend") else text


def sdpa_context(backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                        "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}[backend])


def nothing():
    """A context that does nothing (for the models without SDPA)."""
    return contextlib.nullcontext()

