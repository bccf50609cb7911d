"""A peer sweep's result directory, in linbench's format (README "Files", reports/raw.h, meta.h,
grid.h, speedups.h) so that `linbench compare LINBENCH_DIR PEER_DIR` and `linbench plot` read it:

  raw.csv      linbench's 25 columns; model is the peer's name (lbpeer/names.py); k, sharing and
               order only for torch-linformer; planned_bytes 0 (the peer has no plan); peak_bytes
               what the device's count saw (lbpeer/device.py); the clock columns empty and
               slowdown 0 (the peer reads no clocks); power_w and energy_j_per_seq as linbench's
               (lbpeer/measure.py), both empty where unknown; one row per cell, flushed and
               synced when the cell ends.
  meta.csv     key,value: tool "peer", the peer's and torch's versions, the device, every setting
               under linbench's keys (n_list ... seed) and the peer's own (sdpa, compile,
               batch_from, timer, memory_count), status running / complete / interrupted, energy
               and energy_note as linbench's (energy_state).
  time_speedup.csv, memory_speedup.csv, energy_speedup.csv   torch-linformer against
               torch-standard, shaped like Table 3 (n rows, k=... columns); energy NA where a side
               has none
  speedups.csv every other measured peer model against torch-standard and against torch-sdpa-*.
"""
import csv
import math
import os

RAW_COLUMNS = ("model", "n", "k", "sharing", "order", "dtype", "batch", "planned_bytes", "peak_bytes", "median_ms",
               "min_ms", "max_ms", "ms_per_seq", "tokens_per_s", "tflop_per_s", "passes", "sm_clock_start_mhz",
               "sm_clock_end_mhz", "clock_events", "slowdown", "power_w", "energy_j_per_seq", "device_uuid", "host",
               "status")
FILES = ("raw.csv", "meta.csv", "time_speedup.csv", "memory_speedup.csv", "energy_speedup.csv", "speedups.csv")


def real(v):
    """The fewest of 15, 16 or 17 significant digits that read back to v (lb_csv_format_double)."""
    for digits in (15, 16, 17):
        s = "%.*g" % (digits, v)
        if float(s) == v:
            return s
    return s


def _write_atomic(path, rows):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_meta(directory, meta):
    _write_atomic(os.path.join(directory, "meta.csv"), [("key", "value")] + list(meta.items()))


class RawWriter:
    def __init__(self, directory):
        self.f = open(os.path.join(directory, "raw.csv"), "w", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        self.w.writerow(RAW_COLUMNS)
        self._sync()

    def _sync(self):
        self.f.flush()
        os.fsync(self.f.fileno())

    def append(self, cell, settings, uuid, host):
        has_k = cell.k is not None
        ok = cell.status == "ok"
        row = [cell.model, cell.n, cell.k if has_k else "", settings.sharing if has_k else "",
               settings.order if has_k else "", settings.dtype, cell.batch, 0, cell.peak_bytes]
        row += [real(v) for v in (cell.median_ms, cell.min_ms, cell.max_ms, cell.ms_per_seq, cell.tokens_per_s,
                                  cell.tflop_per_s)] if ok else [""] * 6
        energy = ok and has_energy(cell)
        row += [cell.passes if ok else "", "", "", "", 0]
        row += [real(cell.power_w), real(cell.energy_j_per_seq)] if energy else ["", ""]
        row += [uuid, host, cell.status.replace("\n", " ")]
        self.w.writerow(row)
        self._sync()

    def close(self):
        self.f.close()


def has_energy(cell):
    """Whether a cell carries energy (both numbers positive and finite, as linbench's raw.csv)."""
    return all(isinstance(v, float) and math.isfinite(v) and v > 0
               for v in (getattr(cell, "power_w", None), getattr(cell, "energy_j_per_seq", None)))


def energy_state(cells, counter_why):
    """meta.csv's energy (measured: every ok cell has it; partial; none) and energy_note (why a
    cell has none), as linbench's sweep writes them."""
    ok = [c for c in cells if c.status == "ok"]
    with_energy = [c for c in ok if has_energy(c)]
    state = "measured" if ok and len(with_energy) == len(ok) else "partial" if with_energy else "none"
    if counter_why:
        return state, counter_why
    if len(with_energy) == len(ok):
        return state, ""
    why = next((c.energy_why for c in ok if not has_energy(c) and getattr(c, "energy_why", "")), "")
    return state, "%d of %d cells have no energy: %s" % (
        len(ok) - len(with_energy), len(ok),
        why or "the counter could not be read, or did not advance over their timed passes")


# --- the ratios -----------------------------------------------------------------------------------


def _ratio(base, model):
    """(time, memory) of model against base, as lb_grid_ratio_cell: ERR when either failed, OOM when
    either ran out of memory at batch 1, NA when either is missing, else the two ratios."""
    cells = (base, model)
    if any(c is not None and c.status not in ("ok", "OOM") for c in cells):
        return "ERR", "ERR"
    if any(c is not None and c.status == "OOM" for c in cells):
        return "OOM", "OOM"
    if base is None or model is None:
        return "NA", "NA"
    t = base.ms_per_seq / model.ms_per_seq if model.ms_per_seq and model.ms_per_seq > 0 else None
    m = model.batch / base.batch if base.batch > 0 else None
    return (t if t is not None else "ERR"), (m if m is not None else "ERR")


def _energy_ratio(base, model):
    """The energy ratio of model against base, as lb_grid_energy_cell: the time ratio's ERR, OOM
    or NA, else NA where a side has no energy."""
    t, _ = _ratio(base, model)
    if not isinstance(t, float):
        return t
    return base.energy_j_per_seq / model.energy_j_per_seq if has_energy(base) and has_energy(model) else "NA"


def _grid_text(v):
    return "%.6g" % v if isinstance(v, float) and math.isfinite(v) else v


def write_grids(directory, cells, n_list, k_list, standard, linformer):
    """time_speedup.csv, memory_speedup.csv and energy_speedup.csv: `linformer` against `standard`
    (peer names); time_speedup.csv last, as linbench writes them, so that a reader finding it
    finds the other two."""
    by = {(c.model, c.n, c.k): c for c in cells}
    head = ["n"] + ["k=%d" % k for k in k_list]
    grids = ([head], [head], [head])
    for n in n_list:
        rows = ([str(n)], [str(n)], [str(n)])
        for k in k_list:
            if k >= n:
                t = m = e = ""
            else:
                base, model = by.get((standard, n, None)), by.get((linformer, n, k))
                t, m = _ratio(base, model)
                e = _energy_ratio(base, model)
            for g, v in zip(rows, (t, m, e)):
                g.append(_grid_text(v))
        for g, r in zip(grids, rows):
            g.append(r)
    _write_atomic(os.path.join(directory, "memory_speedup.csv"), grids[1])
    _write_atomic(os.path.join(directory, "energy_speedup.csv"), grids[2])
    _write_atomic(os.path.join(directory, "time_speedup.csv"), grids[0])


def write_speedups(directory, cells, models, baselines, n_list, k_list):
    """speedups.csv: model,baseline,n,k,time_speedup,memory_speedup,energy_speedup for every model of `models`
    (peer names, with their k lists) against each baseline, never itself."""
    by = {(c.model, c.n, c.k): c for c in cells}
    rows = [("model", "baseline", "n", "k", "time_speedup", "memory_speedup", "energy_speedup")]
    for base in baselines:
        for model, has_k in models:
            if model == base:
                continue
            for n in n_list:
                for k in (k_list if has_k else [None]):
                    if k is not None and k >= n:
                        continue
                    b, c = by.get((base, n, None)), by.get((model, n, k))
                    t, m = _ratio(b, c)
                    rows.append((model, base, n, "" if k is None else k) +
                                tuple(real(v) if isinstance(v, float) else v for v in (t, m, _energy_ratio(b, c))))
    _write_atomic(os.path.join(directory, "speedups.csv"), rows)
