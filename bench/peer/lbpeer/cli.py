"""linbench-peer's command line: `sweep` (the grid, into a directory linbench compare reads; or,
with --resume, the cells a directory still lacks) and `check` (the peer's output against a
`linbench run --dump`). Bad input is one line on stderr and exit 2 with nothing measured or
written; a device that cannot be used, a directory in use, or a failed check, exit 1; an
interrupted sweep 130 (its meta.csv says interrupted)."""
import argparse
import csv
import os
import platform
import shlex
import signal
import sys
import time

from . import VERSION, names

PROG = "linbench-peer"
EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
N_MIN, N_MAX, K_MIN = 2, 1048576, 1

SWEEP_HELP = """usage: linbench-peer sweep [flags]

linbench's encoder in PyTorch, measured cell by cell as linbench sweep measures its own: for each
n, each model of --models (and each k < n for torch-linformer) at its largest batch within the
memory budget (or at linbench's batch, --batch-from), warm-up, then the median of timed passes.
Writes a result directory in linbench's format: linbench compare LINBENCH_DIR THIS_DIR.

Grid:
  --n LIST            sequence lengths, 2 to 1048576: comma list and doubling ranges a:b
                      (default 512:65536)
  --k LIST            torch-linformer's projected lengths, same syntax (default 128:2048)
  --models LIST       a comma list of torch-standard, torch-linformer, torch-sdpa
                      (default torch-standard,torch-linformer,torch-sdpa)
  --sdpa BACKEND      torch-sdpa's kernel: flash, efficient, cudnn or math; refused where the
                      device has none for the dtype and head width (default flash)
  --compile           run every model under torch.compile (default: eager)
  --pass P            forward, or train: one training step without the optimizer's update (the
                      forward, then autograd's backward from a random upstream gradient of the
                      output, every weight's gradient), timed and searched as a pass
                      (default forward)
  --batch-from DIR    run linbench's batches: each cell at the batch of the same work in DIR's
                      raw.csv (torch-sdpa at standard's; a cell linbench did not measure ok is
                      skipped); the grid, the model, --device, --seed and --cell-time not given
                      are taken from DIR's meta.csv, and a model setting given that differs is
                      refused; the memory budget is this device's own (a batch that does not fit
                      it is the cell's error)
Model (default RoBERTa-base):
  --layers N --d-model N --heads N --ffn N --vocab N   12, 768, 12, 3072, 50265
  --dtype D           fp16, bf16 or fp32 (default fp16)
  --tf32              let fp32 products use TF32 (with --dtype fp32 only)
  --sharing S         Linformer's sharing: layerwise, kv, headwise or none (default layerwise)
  --order O           early or late (default early; late with --sharing none)
Device and memory:
  --device D          cuda or cpu (default cuda)
  --gpu N             which GPU (default 0)
  --mem-limit SIZE    memory budget, e.g. 16G, 512M, 1.5GiB (default: the GPU's free memory less
                      the headroom; cpu: 512MiB)
  --headroom SIZE     GPU memory kept outside the budget (default: the larger of 256M and 1%)
  --max-batch N       cap on the batch search (default none)
Timing:
  --cell-time SEC     stop adding timed passes past this much timed work, 1 to 3600; at least 5
                      passes always run (default 10)
  --seed N            seed of the random weights and token ids (default 1)
Output:
  -o, --out DIR       must be new or hold no results (default peer-YYYYmmdd-HHMMSS)
  --force             remove the results already in --out
  --resume DIR        measure only the cells not yet in DIR/raw.csv, with every setting from
                      DIR/meta.csv; flags given must agree with them, and DIR must come from
                      this linbench-peer version
  -q, --quiet         no line per cell
  -h, --help          this help

A directory is written by one process at a time (the lock linbench sweep takes, held for the
whole run).

Exit codes: 0 done; 1 the device cannot be used, a cell failed, a file cannot be written or the
directory is in use; 2 bad input; 130 interrupted by Ctrl-C, SIGTERM or SIGHUP (finished cells
kept; continue with --resume).
"""

CHECK_HELP = """usage: linbench-peer check DUMP_DIR [flags]

Loads the weights and token ids of `linbench run --dump DUMP_DIR`, runs the peer's model of the
same work on them in fp32 (torch-standard and torch-sdpa with each backend for a standard or
chunked dump, torch-linformer with the dump's sharing and order for a linformer one) and prints
each one's relative error ||peer - linbench|| / ||linbench|| against the dump's output.npy,
beside the threshold of linbench check's forward pass for the dump's storage type (fp32 1e-5).

  --sdpa LIST         the SDPA backends to check (default flash,efficient,cudnn,math; one the
                      device lacks is listed as skipped)
  --compile           also run each model under torch.compile
  --device D          cuda or cpu (default cpu)
  --gpu N             which GPU (default 0)
  -h, --help          this help

Exit codes: 0 every model within its threshold; 1 one is not; 2 bad input.
"""

TOP_HELP = """usage: linbench-peer COMMAND [flags]

linbench's encoder in PyTorch (eager, SDPA, compiled), under linbench's protocol:
  sweep    the grid, into a result directory that linbench compare and plot read
  check    the peer's output against a linbench run --dump
  help     this help (linbench-peer COMMAND --help: the command's flags)

  --version   the peer's version and torch's
"""


class Usage(Exception):
    """Bad input: the message, one line; flag and should when a flag's value was refused."""

    def __init__(self, message, flag=None, should=None):
        super().__init__(message)
        self.flag, self.should = flag, should


class Failure(Exception):
    """A runtime failure of the sweep's own (its directory in use, a raw.csv that does not read
    back): the message, one line, exit 1."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        if message.startswith("unrecognized arguments: "):
            raise Usage("unknown flag \"%s\" for %s (see linbench-peer %s --help)"
                        % (message.split(": ", 1)[1].split()[0], self.prog, self.prog))
        if "expected one argument" in message:
            raise Usage("flag %s needs a value (see linbench-peer %s --help)" % (message.split()[1].rstrip(":"), self.prog))
        raise Usage("%s (see linbench-peer %s --help)" % (message, self.prog))


def bad(value, flag, should):
    return Usage("invalid argument \"%s\" for --%s: should be %s" % (value, flag, should), flag, should)


def parse_int(text, lo, hi, flag):
    if text is None or not text.isdigit() or not lo <= int(text) <= hi:
        raise bad(text, flag, "an integer from %d to %d" % (lo, hi))
    return int(text)


def parse_list(text, lo, hi, flag, what):
    """Comma lists and doubling ranges a:b (a, 2a, 4a, ... <= b), sorted, each once."""
    out = set()
    for item in text.split(","):
        parts = item.split(":")
        if not all(p.isdigit() and lo <= int(p) <= hi for p in parts) or len(parts) > 2:
            raise bad(text, flag, "%s from %d to %d, as a comma list or doubling ranges like %s"
                      % (what, lo, hi, "512:65536" if flag == "n" else "128:2048"))
        a = int(parts[0])
        b = int(parts[-1])
        if a > b:
            raise bad(text, flag, "a range a:b with a <= b")
        while a <= b:
            out.add(a)
            a *= 2
    return sorted(out)


UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1000, "m": 1 << 20, "mib": 1 << 20, "mb": 10 ** 6,
         "g": 1 << 30, "gib": 1 << 30, "gb": 10 ** 9, "t": 1 << 40, "tib": 1 << 40, "tb": 10 ** 12}


def parse_size(text):
    """Bytes of "16G", "512MiB", "1.5GiB" (K/M/G/T and KiB... binary, KB... decimal), or None."""
    i = 0
    while i < len(text) and (text[i].isdigit() or text[i] == "."):
        i += 1
    num, unit = text[:i], text[i:].strip().lower()
    if not num or not num[0].isdigit() or num.endswith(".") or num.count(".") > 1 or unit not in UNITS:
        return None
    v = round(float(num) * UNITS[unit])
    return v if v >= 1 else None


def _common_device_flags(p, default_device):
    p.add_argument("--device", default=default_device)
    p.add_argument("--gpu", default="0")


def sweep_parser():
    p = Parser(prog="sweep", add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    for flag in ("--n", "--k", "--models", "--sdpa", "--batch-from", "--layers", "--d-model", "--heads", "--ffn",
                 "--vocab", "--dtype", "--sharing", "--order", "--mem-limit", "--headroom", "--max-batch",
                 "--cell-time", "--seed", "--resume", "--pass"):
        p.add_argument(flag, default=None)
    for flag in ("--compile", "--tf32", "--force"):
        p.add_argument(flag, action="store_true")
    p.add_argument("-o", "--out", default=None)
    p.add_argument("-q", "--quiet", action="store_true")
    p.add_argument("--device", default=None)
    p.add_argument("--gpu", default="0")
    return p


# --- the settings a sweep records, under linbench's meta.csv keys -----------------------------------

# flag -> (meta.csv key, linbench's default): the ones --batch-from takes from linbench's meta.csv
MODEL_SETTINGS = (("n", "n_list", "512:65536"), ("k", "k_list", "128:2048"), ("layers", "layers", "12"),
                  ("d_model", "d_model", "768"), ("heads", "heads", "12"), ("ffn", "ffn", "3072"),
                  ("vocab", "vocab", "50265"), ("dtype", "dtype", "fp16"), ("sharing", "sharing", "layerwise"),
                  ("order", "order", None), ("seed", "seed", "1"), ("cell_time", "cell_time_s", "10"),
                  ("device", "device", "cuda"), ("pass", "pass", "forward"))
# of those, the ones a flag may set otherwise than --batch-from's sweep did (not the model's shape
# nor the pass, whose batch it is)
FREE_SETTINGS = ("n", "k", "seed", "cell_time", "device")


def read_linbench_dir(directory):
    """meta (dict) and raw rows (list of dicts) of linbench's result directory, or Usage."""
    where = "invalid argument \"%s\" for --batch-from" % directory
    if not os.path.isdir(directory):
        raise Usage("%s: not a directory: should be a directory written by linbench sweep" % where)
    out = []
    for name in ("meta.csv", "raw.csv"):
        path = os.path.join(directory, name)
        try:
            with open(path, newline="") as f:
                out.append(list(csv.reader(f)))
        except OSError:
            raise Usage("%s: no %s in it: should be a directory written by linbench sweep" % (where, name)) from None
    meta_rows, raw_rows = out
    if not meta_rows or meta_rows[0] != ["key", "value"] or not raw_rows or raw_rows[0][:3] != ["model", "n", "k"]:
        raise Usage("%s: its meta.csv or raw.csv is not linbench's: should be a directory written by linbench sweep"
                    % where)
    meta = {r[0]: r[1] for r in meta_rows[1:] if len(r) == 2}
    if meta.get("tool", "linbench") != "linbench":
        raise Usage("%s: a %s result (meta.csv's tool): should be linbench's, whose batches the peer runs"
                    % (where, meta.get("tool")))
    head = raw_rows[0]
    rows = [dict(zip(head, r)) for r in raw_rows[1:] if len(r) == len(head)]
    return meta, rows


def settle_settings(a):
    """Fill the settings not given: from --batch-from's meta.csv, else linbench's defaults; refuse
    a given one that contradicts --batch-from's."""
    a.linbench_meta, a.linbench_rows = None, None
    if a.batch_from is not None:
        a.linbench_meta, a.linbench_rows = read_linbench_dir(a.batch_from)
    lm = a.linbench_meta
    for attr, key, default in MODEL_SETTINGS:
        theirs = None
        if lm is not None:
            theirs = lm.get(key, "forward" if key == "pass" else None)  # no pass: a forward sweep's
            if key == "dtype" and lm.get("storage_dtype"):
                theirs = lm["storage_dtype"]  # the work linbench did (its CPU reference stores fp32)
        mine = getattr(a, attr)
        if mine is not None and theirs not in (None, "") and attr not in FREE_SETTINGS:
            if mine != theirs:
                said = "storage_dtype" if key == "dtype" and lm.get("storage_dtype") else key
                raise Usage("invalid argument \"%s\" for --batch-from: its %s is %s and --%s is %s: should be a sweep "
                            "of the same model" % (a.batch_from, said, theirs, attr.replace("_", "-"), mine))
        if mine is None:
            setattr(a, attr, theirs if theirs not in (None, "") else default)
    if lm is not None and not a.tf32:
        a.tf32 = lm.get("tf32") == "1"


def validate(a):
    """Every setting parsed and checked; Usage naming the flag otherwise."""
    a.n_list = parse_list(a.n, N_MIN, N_MAX, "n", "sequence lengths")
    a.k_list = parse_list(a.k, K_MIN, N_MAX, "k", "projected lengths")
    models = a.models or ",".join(names.MODELS)
    a.attentions = []
    for m in models.split(","):
        if m not in names.MODELS or names.ATTENTIONS[names.MODELS.index(m)] in a.attentions:
            raise bad(models, "models", "a comma list of %s, each once" % ", ".join(names.MODELS))
        a.attentions.append(names.ATTENTIONS[names.MODELS.index(m)])
    a.attentions.sort(key=names.ATTENTIONS.index)
    a.sdpa = a.sdpa or "flash"
    if a.sdpa not in names.SDPA_BACKENDS:
        raise bad(a.sdpa, "sdpa", ", ".join(names.SDPA_BACKENDS[:-1]) + " or " + names.SDPA_BACKENDS[-1])
    if getattr(a, "pass") not in ("forward", "train"):
        raise bad(getattr(a, "pass"), "pass", "forward or train")
    a.layers = parse_int(str(a.layers), 1, 1024, "layers")
    a.d_model = parse_int(str(a.d_model), 1, 65536, "d-model")
    a.heads = parse_int(str(a.heads), 1, 1024, "heads")
    a.ffn = parse_int(str(a.ffn), 1, 1048576, "ffn")
    a.vocab = parse_int(str(a.vocab), 1, 16777216, "vocab")
    if a.d_model % a.heads:
        raise Usage("invalid argument \"%d\" for --heads: should divide --d-model %d" % (a.heads, a.d_model))
    if a.dtype not in ("fp16", "bf16", "fp32"):
        raise bad(a.dtype, "dtype", "fp16, bf16 or fp32")
    if a.tf32 and a.dtype != "fp32":
        raise Usage("--tf32 needs --dtype fp32 (it lets fp32 products use TF32)")
    if a.sharing not in ("layerwise", "kv", "headwise", "none"):
        raise bad(a.sharing, "sharing", "layerwise, kv, headwise or none")
    if a.order is None:
        a.order = "late" if a.sharing == "none" else "early"
    if a.order not in ("early", "late"):
        raise bad(a.order, "order", "early or late")
    if a.sharing == "none" and a.order == "early":
        raise Usage("--sharing none cannot run with --order early: per-head projections need --order late")
    if a.device not in ("cuda", "cpu"):
        raise bad(a.device, "device", "cuda or cpu")
    a.gpu = parse_int(a.gpu, 0, 1023, "gpu")
    if a.mem_limit is not None:
        v = parse_size(a.mem_limit)
        if v is None or v < 1 << 20:
            raise bad(a.mem_limit, "mem-limit", "a size of at least 1M, such as 16G, 16GiB, 512M or 1.5GiB")
        a.mem_limit = v
    if a.headroom is not None:
        v = 0 if a.headroom == "0" else parse_size(a.headroom)
        if v is None:
            raise bad(a.headroom, "headroom", "a size such as 256M, 1G or 0")
        a.headroom = v
    if a.max_batch is not None:
        a.max_batch = parse_int(a.max_batch, 1, 1 << 40, "max-batch")
    a.cell_time = parse_int(str(a.cell_time), 1, 3600, "cell-time")
    if not str(a.seed).isdigit():
        raise bad(a.seed, "seed", "a non-negative integer")
    a.seed = int(a.seed)
    if "linformer" in a.attentions and not any(k < n for n in a.n_list for k in a.k_list):
        raise Usage("no k < n in --n %s and --k %s: torch-linformer has no cell (k is its projected length, "
                    "less than n)" % (a.n, a.k))


# --- the settings meta.csv records, which a resume keeps -------------------------------------------

# (meta.csv key, flag, its text there from the validated settings): linbench's keys where linbench
# has the setting. --resume takes each flag not given from its key, and refuses one given that
# differs.
RECORDED = (
    ("n_list", "n", lambda a: ",".join(map(str, a.n_list))),
    ("k_list", "k", lambda a: ",".join(map(str, a.k_list))),
    ("models", "models", lambda a: ",".join(names.PREFIX + att for att in a.attentions)),
    ("layers", "layers", lambda a: str(a.layers)),
    ("d_model", "d-model", lambda a: str(a.d_model)),
    ("heads", "heads", lambda a: str(a.heads)),
    ("ffn", "ffn", lambda a: str(a.ffn)),
    ("vocab", "vocab", lambda a: str(a.vocab)),
    ("dtype", "dtype", lambda a: a.dtype),
    ("tf32", "tf32", lambda a: "1" if a.tf32 else "0"),
    ("sharing", "sharing", lambda a: a.sharing),
    ("order", "order", lambda a: a.order),
    ("device", "device", lambda a: a.device),
    ("mem_limit", "mem-limit", lambda a: str(a.mem_limit) if a.mem_limit else ""),
    ("max_batch", "max-batch", lambda a: str(a.max_batch or "")),
    ("headroom", "headroom", lambda a: "" if a.headroom is None else str(a.headroom)),
    ("cell_time_s", "cell-time", lambda a: str(a.cell_time)),
    ("seed", "seed", lambda a: str(a.seed)),
    ("sdpa", "sdpa", lambda a: a.sdpa if "sdpa" in a.attentions else ""),
    ("compile", "compile", lambda a: "1" if a.compile else "0"),
    ("batch_from", "batch-from", lambda a: os.path.abspath(a.batch_from) if a.batch_from else ""),
    ("pass", "pass", lambda a: getattr(a, "pass")),
)
SWITCHES = ("tf32", "compile")  # flags without a value: "1" in meta.csv when given


def recorded(a):
    """meta.csv's text of every recorded setting, in RECORDED's order."""
    return {key: text(a) for key, _, text in RECORDED}


def lock_out(directory, flag):
    """Hold directory's lock (lbpeer/resultdir.py's lock) for the rest of this process, or say why
    not: in use by another process, exit 1; a lock file that cannot be had, exit 2."""
    from .resultdir import InUse, lock
    try:
        return lock(directory)
    except InUse as e:
        raise Failure("%s is in use by another linbench or linbench-peer%s: wait for it to end, or use another "
                      "directory" % (directory, " (pid %d)" % e.pid if e.pid else "")) from None
    except OSError as e:
        raise Usage("invalid argument \"%s\" for %s: should be a writable directory (%s)"
                    % (directory, flag, e.strerror or e)) from None


def open_resumed(a):
    """--resume DIR: DIR locked, its meta.csv read, written by this peer version, every recorded
    setting in it; each flag not given set from it (as if given with its text). Returns meta.csv
    (a dict), the flags so taken (flag -> key) and the memory budget it ran with."""
    d = a.resume
    if a.out is not None and a.out != d:
        raise Usage("--out %s and --resume %s differ: should be given one directory, with --resume alone" % (a.out, d))
    if a.force:
        raise Usage("--force cannot be used with --resume: should be one or the other")
    where = "invalid argument \"%s\" for --resume" % d
    path = os.path.join(d, "meta.csv")
    if not os.path.isfile(path):
        raise Usage("%s: should be a directory written by linbench-peer sweep (it has no meta.csv)" % where)
    a.lock_fd = lock_out(d, "--resume")
    from .resultdir import read_meta
    try:
        meta = read_meta(d)
    except (OSError, ValueError, csv.Error) as e:
        raise Usage("%s: should be a directory written by linbench-peer sweep (%s)" % (where, e)) from None
    if meta.get("tool") != "peer":
        raise Usage("%s: it was written by %s (meta.csv's tool), not linbench-peer: should be a directory written by "
                    "linbench-peer sweep" % (where, meta.get("tool") or "an unknown tool"))
    version = meta.get("peer_version") or ""
    if version != VERSION:
        raise Usage("%s: it was written by linbench-peer %s and this is linbench-peer %s: should be resumed with "
                    "linbench-peer %s" % (where, version or "(unknown version)", VERSION, version or "of that version"))
    meta.setdefault("pass", "forward")  # written before --pass: a forward sweep's
    for key in [key for key, _, _ in RECORDED] + ["memory_budget_bytes"]:
        if key not in meta:
            raise Usage("%s: should be a directory written by linbench-peer sweep (%s has no %s)" % (where, path, key))
    budget = meta["memory_budget_bytes"]
    if not budget.isdigit():
        raise Usage("%s: %s's memory_budget_bytes is \"%s\": should be a byte count" % (where, path, budget))
    taken = {}
    for key, flag, _ in RECORDED:
        attr = flag.replace("-", "_")
        if getattr(a, attr) in (None, False):
            v = meta[key]
            setattr(a, attr, v == "1" if flag in SWITCHES else v if v != "" else None)
            taken[flag] = key
    a.out = d
    return meta, taken, int(budget)


def check_resumed(a, meta, taken):
    """The settings, validated, against the resumed meta.csv's: Usage for the first that differs
    (a flag given), or that does not read back as written (a key taken from meta.csv)."""
    d = a.resume
    mine = recorded(a)
    for key, flag, _ in RECORDED:
        if mine[key] == meta[key]:
            continue
        if flag in taken:
            raise Usage("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\", which reads back as \"%s\": "
                        "should be as linbench-peer sweep wrote it" % (d, d, key, meta[key], mine[key]))
        given = "--" + flag if flag in SWITCHES else "--%s %s" % (flag, mine[key] or "(unset)")
        raise Usage("%s differs from the resumed run's \"%s\" (%s in %s/meta.csv): should be the same, or left out, "
                    "to resume %s" % (given, meta[key], key, d, d))


def meta_refusal(e, a, meta, taken):
    """A flag's value refused that came from the resumed meta.csv, worded as the file's (the user
    never gave the flag); other refusals as they are."""
    key = taken.get(e.flag)
    if key is None:
        return e
    return Usage("invalid argument \"%s\" for --resume: %s/meta.csv's %s is \"%s\": should be %s"
                 % (a.resume, a.resume, key, meta[key], e.should))


def held_results(directory):
    """The first result file directory holds, or None."""
    from .resultdir import FILES
    return next((f for f in FILES if os.path.exists(os.path.join(directory, f))), None)


def prepare_out(a):
    a.out = a.out or time.strftime("peer-%Y%m%d-%H%M%S")
    if os.path.exists(a.out):
        if not os.path.isdir(a.out):
            raise bad(a.out, "out", "a directory (new or without results)")
        held = held_results(a.out)
        if held and not a.force:
            raise Usage("invalid argument \"%s\" for --out: it holds results (%s): should be new or hold none "
                        "(--force removes them, --resume %s measures what it lacks)" % (a.out, held, a.out))


def open_out(a):
    """--out made and locked; with --force, the results in it removed (raw.csv last, so a run
    killed in between leaves no grids beside another run's rows)."""
    os.makedirs(a.out, exist_ok=True)
    a.lock_fd = lock_out(a.out, "--out")
    prepare_out(a)  # again under the lock: another run may have written since
    if a.force:
        from .resultdir import FILES
        for f in reversed(FILES):
            if os.path.exists(os.path.join(a.out, f)):
                os.remove(os.path.join(a.out, f))


# --- the sweep ------------------------------------------------------------------------------------

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop(signum, frame):
    """The first stop signal ends the sweep where it is; the rest are ignored, so that a second
    one (timeout(1) sends SIGTERM to the process, then to its group) cannot cut short the writing
    of the files the first one left to write."""
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise KeyboardInterrupt


class Stopped(Exception):
    """A cell failed (not by running out of memory): the sweep ends there."""


class Failed:
    """The row of a cell whose measurement raised."""

    def __init__(self, model, n, k, why):
        self.model, self.n, self.k, self.batch, self.peak_bytes = model, n, k, 0, 0
        self.status = why or "error"
        self.median_ms = self.min_ms = self.max_ms = self.ms_per_seq = None
        self.tokens_per_s = self.tflop_per_s = self.passes = None


def _linbench_batch(a, attention, n, k):
    """The batch of the same work in --batch-from's raw.csv: (batch, None), or (None, why)."""
    work = names.WORK[attention]
    for r in reversed(a.linbench_rows):
        if r.get("model") == work and r.get("n") == str(n) and (k is None or r.get("k") == str(k)):
            if r.get("status") != "ok":
                return None, "linbench's %s row is %s" % (work, r.get("status"))
            return int(r["batch"]), None
    return None, "linbench measured no %s cell there" % work


def sweep_meta(a, argv, dev, resumed):
    """meta.csv as the sweep starts (status running): a resume keeps the first run's command line
    and start time and adds its own as resume_N_time and resume_N_command, as linbench's does."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    command = " ".join([PROG, "sweep"] + [shlex.quote(x) for x in argv])
    first = resumed or {}
    meta = {
        "tool": "peer", "peer_version": VERSION, "git_revision": "",
        "command_line": first.get("command_line") or command,
        "start_time": first.get("start_time") or now, "end_time": "", "status": "running",
    }
    meta.update(dev.meta)
    meta.update({"storage_dtype": a.dtype, "gpu_count": "1"})
    meta.update(recorded(a))
    meta.update({
        "shard": "", "chunk": "", "breakdown": "0", "min_passes": "5",
        "compile_mode": "torch.compile default; the batch search dynamic in the batch, the timed pass static"
                        if a.compile else "",
        "reduced_precision_reduction": "0",
        "energy": "", "energy_note": "",
    })
    earlier = [k for k in first if k.startswith("resume_") and k.split("_")[1].isdigit()]
    for k in earlier:
        meta[k] = first[k]
    if resumed is not None:
        index = 1 + max([int(k.split("_")[1]) for k in earlier] or [0])
        meta["resume_%d_time" % index] = now
        meta["resume_%d_command" % index] = command
    return meta


def run_sweep(argv):
    p = sweep_parser()
    a = p.parse_args(argv)
    if a.help:
        sys.stdout.write(SWEEP_HELP)
        return EXIT_OK
    resumed, taken, keep_budget = None, {}, None
    if a.resume is not None:
        resumed, taken, keep_budget = open_resumed(a)
    try:
        settle_settings(a)
        validate(a)
    except Usage as e:
        raise meta_refusal(e, a, resumed, taken) from None
    if resumed is not None:
        check_resumed(a, resumed, taken)
    else:
        prepare_out(a)

    import torch  # after the flags: a typo costs no torch import

    from . import device as dev_mod
    from .energy import open_counter
    from .measure import Runner
    from .resultdir import (DONE, RawWriter, drop_partial_line, energy_state, read_rows, remove_stale_temporaries,
                            write_grids, write_meta, write_speedups)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[a.dtype]
    try:
        dev = dev_mod.Device(a.device, a.gpu, a.mem_limit, a.headroom, keep_budget)
    except dev_mod.UsageError as e:
        raise Usage(str(e)) from None
    except dev_mod.RuntimeFailure as e:
        if resumed is None:
            raise
        raise Failure("cannot resume %s: %s" % (a.out, e)) from None
    if "sdpa" in a.attentions:
        train = getattr(a, "pass") == "train"
        why = dev_mod.sdpa_backend_check(dev.torch_device, a.sdpa, dtype, a.heads, a.d_model // a.heads, train)
        if why:
            raise Usage("invalid argument \"%s\" for --sdpa: PyTorch %s has no %s kernel%s for %s at head width %d on "
                        "this device (%s): %s" % (a.sdpa, torch.__version__, a.sdpa, " with a backward" if train else "",
                                                  a.dtype, a.d_model // a.heads, dev.meta["device_name"], why))
    # linbench's numerics: products accumulate in fp32 (no reduced-precision reductions), TF32 only
    # when asked
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

    if resumed is None:
        open_out(a)
    remove_stale_temporaries(a.out)
    raw_path = os.path.join(a.out, "raw.csv")
    done = set()
    if resumed is not None and os.path.exists(raw_path):  # none when killed before its header
        try:
            drop_partial_line(raw_path)
            done = {(r.model, r.n, r.k) for r in read_rows(a.out) if r.status in DONE}
        except (ValueError, csv.Error) as e:
            raise Failure("cannot resume %s: %s" % (a.out, e)) from None
    row_names = {att: names.row_name(att, a.sdpa, a.compile) for att in a.attentions}
    todo = []  # (attention, name, n, k, batch: None for the largest)
    for n in a.n_list:
        for att in a.attentions:
            for k in ([k for k in a.k_list if k < n] if att in names.HAS_K else [None]):
                name = row_names[att]
                if (name, n, k) in done:
                    continue
                batch = None
                if a.batch_from:
                    batch, why = _linbench_batch(a, att, n, k)
                    if batch is None:
                        print("%s: note: %s n=%d%s skipped: %s" % (PROG, name, n, "" if k is None else " k=%d" % k,
                                                                   why), file=sys.stderr)
                        continue
                todo.append((att, name, n, k, batch))
    meta = sweep_meta(a, argv, dev, resumed)
    # Probed once, before the first cell, as linbench's sweep does: a missing counter is named in
    # meta.csv before anything runs.
    counter, counter_why = open_counter(dev)
    meta["energy_note"] = counter_why or ""
    runner = Runner(dev, a, counter, counter_why or "")
    cells = []  # this run's
    status, code, error = "complete", EXIT_OK, None
    raw = None
    old_handlers = {s: signal.signal(s, _stop) for s in STOP_SIGNALS}
    try:
        write_meta(a.out, meta)
        raw = RawWriter(a.out, append=resumed is not None)
        if resumed is not None and not a.quiet:
            print("resuming %s: %d cells measured before, %d to measure" % (a.out, len(done), len(todo)), flush=True)
        for att, name, n, k, batch in todo:
            failure = None
            try:
                cell = runner.measure(att, name, n, k, batch)
            except (KeyboardInterrupt, dev_mod.UsageError, dev_mod.RuntimeFailure):
                raise
            except Exception as e:  # noqa: BLE001 - the cell's error row, then the sweep stops
                cell = Failed(name, n, k, "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0]
                                                      if str(e).strip() else ""))
                failure = cell.status
            raw.append(cell, a, dev.uuid, dev.host)
            cells.append(cell)
            if not a.quiet:
                what = "%s n=%d%s" % (name, n, "" if k is None else " k=%d" % k)
                if cell.status == "ok":
                    print("%s: batch %d, %.4g ms per sequence (%d passes)" % (what, cell.batch, cell.ms_per_seq,
                                                                                cell.passes), flush=True)
                else:
                    print("%s: %s" % (what, cell.status), flush=True)
            if failure:  # after a failure that is not running out of memory the device may be
                # unusable (a CUDA error poisons the context): stop, as linbench stops
                raise Stopped(failure)
    except Stopped as e:
        status, code = "failed", EXIT_FAILURE
        print("%s: %s; the sweep stopped (the cells measured so far are in %s/raw.csv; continue with: %s sweep "
              "--resume %s)" % (PROG, e, a.out, PROG, shlex.quote(a.out)), file=sys.stderr)
    except KeyboardInterrupt:
        status, code = "interrupted", EXIT_INTERRUPTED
        print("%s: interrupted: the cells measured so far are in %s/raw.csv (continue with: %s sweep --resume %s)"
              % (PROG, a.out, PROG, shlex.quote(a.out)), file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - said by main once meta.csv says failed
        status, error = "failed", e
    finally:
        for s in STOP_SIGNALS:  # what is left is writing what was measured
            signal.signal(s, signal.SIG_IGN)
    try:
        if raw is not None:
            raw.close()
        # the grids from every row on disk, a resume's earlier ones too
        rows = read_rows(a.out) if os.path.exists(raw_path) else []
        std, lin = row_names.get("standard"), row_names.get("linformer")
        write_grids(a.out, rows, a.n_list, a.k_list, std or "torch-standard", lin or "torch-linformer")
        models = [(row_names[att], att in names.HAS_K) for att in a.attentions]
        baselines = [row_names[att] for att in ("standard", "sdpa") if att in row_names]
        write_speedups(a.out, rows, models, baselines, a.n_list, a.k_list)
        meta["energy"], meta["energy_note"] = energy_state(rows, counter_why, cells)
    except (OSError, ValueError, csv.Error) as e:
        status, error = "failed", error or e
    finally:
        meta["status"] = status
        meta["end_time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        try:
            write_meta(a.out, meta)  # last, so that complete means every file is written
        except OSError as e:
            error = error or e
        for s, h in old_handlers.items():
            signal.signal(s, h)
    if error is not None:
        if isinstance(error, (ValueError, csv.Error)):
            raise Failure(str(error))
        raise error
    if code == EXIT_OK:
        print("wrote %s (raw.csv, meta.csv, time_speedup.csv, memory_speedup.csv, energy_speedup.csv, speedups.csv); "
              "compare with: "
              "linbench compare LINBENCH_DIR %s" % (a.out, shlex.quote(a.out)))
    return code


# --- check ----------------------------------------------------------------------------------------

FORWARD_TOL = {"fp16": 1e-2, "bf16": 3e-2, "fp32": 1e-5}  # attn/check.c's forward_tol


def run_check(argv):
    p = Parser(prog="check", add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("dump", nargs="?")
    p.add_argument("--sdpa", default=",".join(names.SDPA_BACKENDS))
    p.add_argument("--compile", action="store_true")
    _common_device_flags(p, "cpu")
    a = p.parse_args(argv)
    if a.help:
        sys.stdout.write(CHECK_HELP)
        return EXIT_OK
    if not a.dump:
        raise Usage("check needs a dump directory: linbench-peer check DUMP_DIR (see linbench-peer check --help)")
    backends = a.sdpa.split(",")
    if any(b not in names.SDPA_BACKENDS for b in backends) or len(set(backends)) != len(backends):
        raise bad(a.sdpa, "sdpa", "a comma list of %s, each once" % ", ".join(names.SDPA_BACKENDS))
    if a.device not in ("cuda", "cpu"):
        raise bad(a.device, "device", "cuda or cpu")
    gpu = parse_int(a.gpu, 0, 1023, "gpu")
    from .dump import Dump, DumpError
    try:
        d = Dump(a.dump)
    except DumpError as e:
        raise Usage("invalid argument \"%s\" for check: %s" % (a.dump, e)) from None
    work = {"standard": "standard", "chunked": "standard", "linformer": "linformer"}.get(d.model)
    if work is None:
        raise Usage("invalid argument \"%s\" for check: a %s dump: the peer has standard, linformer and sdpa "
                    "(a dump of standard, chunked or linformer)" % (a.dump, d.model))

    import numpy as np
    import torch

    from . import device as dev_mod
    from .encoder import Encoder
    if a.device == "cuda":
        if not torch.cuda.is_available():
            print("%s: no CUDA device: torch.cuda.is_available() is false; --device cpu checks on the CPU" % PROG,
                  file=sys.stderr)
            return EXIT_FAILURE
        dev = torch.device("cuda", gpu)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    else:
        dev = torch.device("cpu")
    storage = d.meta.get("storage_dtype") or d.meta.get("dtype") or "fp32"
    tol = FORWARD_TOL.get(storage, 1e-5)
    weights = {k: torch.from_numpy(v).to(dev) for k, v in d.weights.items()}
    ids = torch.from_numpy(d.ids.astype(np.int64)).to(dev)
    ref = d.output.astype(np.float64)
    print("linbench-peer check: %s (linbench %s, n %d, batch %d, %d layers, d_model %d, %d heads, %s storage%s) on %s, "
          "PyTorch %s, fp32" % (a.dump, d.model, d.shape.n, d.ids.shape[0], d.shape.layers, d.shape.d, d.shape.h,
                                storage, ", %s/%s" % (d.shape.sharing, d.shape.order) if work == "linformer" else "",
                                dev, torch.__version__))
    runs = [("linformer", None)] if work == "linformer" else [("standard", None)] + [("sdpa", b) for b in backends]
    print("%-30s %10s %10s  %s" % ("model", "rel_error", "threshold", "result"))
    failed = 0
    for att, backend in runs:
        for compiled in ([False, True] if a.compile else [False]):
            name = names.row_name(att, backend, compiled)
            if att == "sdpa":
                why = dev_mod.sdpa_backend_check(dev, backend, torch.float32, d.shape.h, d.shape.hd)
                if why:
                    print("%-30s %10s %10s  skipped: no %s kernel on %s for fp32 at head width %d (%s)"
                          % (name, "-", "-", backend, dev, d.shape.hd, why))
                    continue
            model = Encoder(d.shape, att, weights)
            fn = torch.compile(model) if compiled else model
            ctx = dev_mod.sdpa_context(backend) if att == "sdpa" else dev_mod.nothing()
            with torch.inference_mode(), ctx:
                out = fn(ids).double().cpu().numpy()
            if compiled:
                torch._dynamo.reset()
            num = float(np.sqrt(np.sum((out - ref) ** 2)))
            den = float(np.sqrt(np.sum(ref ** 2)))
            err = num / den if den > 0 else (0.0 if num == 0 else float("inf"))
            ok = bool(np.isfinite(out).all()) and err <= tol
            failed += not ok
            print("%-30s %10.3g %10.3g  %s" % (name, err, tol, "ok" if ok else "FAIL"))
    return EXIT_FAILURE if failed else EXIT_OK


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if not argv or argv[0] in ("help", "-h", "--help"):
            sys.stdout.write(TOP_HELP)
            return EXIT_OK if argv else EXIT_USAGE
        if argv[0] == "--version":
            try:
                import torch
                tv = torch.__version__
            except ImportError:
                tv = "not installed"
            print("%s %s (PyTorch %s, Python %s)" % (PROG, VERSION, tv, platform.python_version()))
            return EXIT_OK
        commands = {"sweep": run_sweep, "check": run_check}
        if argv[0] not in commands:
            raise Usage("unknown command \"%s\": should be sweep or check (see linbench-peer help)" % argv[0])
        return commands[argv[0]](argv[1:])
    except Usage as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return EXIT_USAGE
    except Failure as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return EXIT_FAILURE
    except ImportError as e:
        print("%s: %s: the peer needs PyTorch and numpy (bench/peer/README.md)" % (PROG, e), file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - a runtime failure is one line, not a traceback
        from . import device as dev_mod
        if isinstance(e, dev_mod.UsageError):
            print("%s: %s" % (PROG, e), file=sys.stderr)
            return EXIT_USAGE
        if isinstance(e, (dev_mod.RuntimeFailure, OSError)):
            print("%s: %s" % (PROG, e), file=sys.stderr)
            return EXIT_FAILURE
        raise
