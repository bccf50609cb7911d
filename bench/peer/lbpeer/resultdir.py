"""A peer sweep's result directory, in linbench's format (README "Files", reports/raw.h, meta.h,
grid.h, speedups.h) so that `linbench compare LINBENCH_DIR PEER_DIR` and `linbench plot` read it:

  raw.csv      linbench's 25 columns; model is the peer's name (lbpeer/names.py); k, sharing and
               order only for torch-linformer; planned_bytes 0 (the peer has no plan); peak_bytes
               what the device's count saw (lbpeer/device.py); the clock columns empty and
               slowdown 0 (the peer reads no clocks); power_w and energy_j_per_seq as linbench's
               (lbpeer/measure.py), both empty where unknown; one row per cell, flushed and
               synced when the cell ends, so a killed sweep loses at most the cell in progress
               (a resume drops a partial last line, as linbench's reports/raw.c does).
  meta.csv     key,value: tool "peer", the peer's and torch's versions, the device, every setting
               under linbench's keys (n_list ... seed) and the peer's own (sdpa, compile,
               batch_from, timer, memory_count), status running / complete / interrupted /
               failed, energy and energy_note as linbench's (energy_state); a resumed sweep keeps
               the first run's command_line and start_time and adds resume_N_time and
               resume_N_command. Written whole (a temporary file, synced, renamed over it).
  time_speedup.csv, memory_speedup.csv, energy_speedup.csv   torch-linformer against
               torch-standard, shaped like Table 3 (n rows, k=... columns); energy NA where a side
               has none
  speedups.csv every other measured peer model against torch-standard and against torch-sdpa-*.
The grids and speedups.csv are computed from every row of raw.csv (a resumed sweep's earlier rows
too). One process writes a directory at a time: it holds the lock linbench's sweep takes
(cmd/outdir.c), flock on DIR/.linbench.lock, for as long as it runs.
"""
import csv
import errno
import fcntl
import math
import os
import stat

RAW_COLUMNS = ("model", "n", "k", "sharing", "order", "dtype", "batch", "planned_bytes", "peak_bytes", "median_ms",
               "min_ms", "max_ms", "ms_per_seq", "tokens_per_s", "tflop_per_s", "passes", "sm_clock_start_mhz",
               "sm_clock_end_mhz", "clock_events", "slowdown", "power_w", "energy_j_per_seq", "device_uuid", "host",
               "status")
FILES = ("raw.csv", "meta.csv", "time_speedup.csv", "memory_speedup.csv", "energy_speedup.csv", "speedups.csv")
LOCK_NAME = ".linbench.lock"  # linbench's own (cmd/outdir.c), so a linbench sweep and a peer exclude each other
DONE = ("ok", "OOM")  # a row of either status is a measured cell; a resume measures again only an error's


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


def read_meta(directory):
    """meta.csv's key,value rows as a dict in file order; ValueError when it is not one."""
    path = os.path.join(directory, "meta.csv")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != ["key", "value"] or any(len(r) != 2 for r in rows[1:]):
        raise ValueError("%s is not a key,value table" % path)
    return dict(rows[1:])


# --- the lock -------------------------------------------------------------------------------------


class InUse(Exception):
    """Another process holds the directory's lock: pid is its pid, 0 when it has not written it."""

    def __init__(self, pid):
        super().__init__(pid)
        self.pid = pid


def lock(directory):
    """Take directory's lock for the life of this process, as linbench's take_lock: the open
    descriptor (keep it open), InUse when another process holds it, OSError when the lock file
    cannot be had (its strerror says why: a symbolic link or a file other than a regular one is
    refused, never followed or opened, so the lock cannot be pointed at something else). Only the
    file at the path counts: one unlinked between the open and the flock is tried again."""
    path = os.path.join(directory, LOCK_NAME)
    for _ in range(16):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
        except FileExistsError:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
            except FileNotFoundError:
                continue  # removed by a run abandoning the directory between the two opens
            except OSError as e:
                if e.errno == errno.ELOOP:
                    raise OSError(e.errno, "%s is a symbolic link" % path) from None
                raise
        held = os.fstat(fd)
        if not stat.S_ISREG(held.st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "%s is not a regular file" % path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise InUse(int(text) if text.isdigit() else 0) from None
        except OSError:
            os.close(fd)
            raise
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            os.ftruncate(fd, 0)
            os.pwrite(fd, b"%d\n" % os.getpid(), 0)  # for the message of a process that loses the race
            return fd
        os.close(fd)
    raise OSError(errno.EAGAIN, "%s kept changing while it was locked" % path)


def remove_stale_temporaries(directory):
    """NAME.tmp.PID of a result file that a killed run left half-written: under the lock nobody
    else is writing one."""
    for entry in os.listdir(directory):
        if any(entry.startswith(name + ".tmp.") for name in FILES):
            try:
                os.unlink(os.path.join(directory, entry))
            except FileNotFoundError:
                pass


# --- raw.csv --------------------------------------------------------------------------------------


def drop_partial_line(path):
    """Cut path after its last newline (a row half-written when a run was killed), as linbench's
    drop_partial_line in reports/raw.c; the size kept."""
    with open(path, "rb") as f:
        data = f.read()
    keep = data.rfind(b"\n") + 1
    if keep != len(data):
        os.truncate(path, keep)
    return keep


class Row:
    """A raw.csv row read back, with what the grids and the resume look at (the attributes of a
    measured Cell: model, n, k (None without one), batch, status, ms_per_seq, power_w,
    energy_j_per_seq)."""

    def __init__(self, fields):
        f = dict(zip(RAW_COLUMNS, fields))
        self.model, self.status = f["model"], f["status"]
        self.n = int(f["n"])
        self.k = int(f["k"]) if f["k"] else None
        self.batch = int(f["batch"]) if f["batch"] else 0
        self.ms_per_seq, self.power_w, self.energy_j_per_seq = (float(f[c]) if f[c] else None for c in
                                                                ("ms_per_seq", "power_w", "energy_j_per_seq"))


def read_rows(directory):
    """Every row of directory/raw.csv as Row (none when it has no rows yet); ValueError naming
    the line when the header is not RAW_COLUMNS or a row does not read."""
    path = os.path.join(directory, "raw.csv")
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    if not lines:
        return []
    if tuple(lines[0]) != RAW_COLUMNS:
        raise ValueError("%s: its header is not the %d columns this peer writes" % (path, len(RAW_COLUMNS)))
    rows = []
    for i, fields in enumerate(lines[1:], 2):
        try:
            if len(fields) != len(RAW_COLUMNS):
                raise ValueError("%d fields, not %d" % (len(fields), len(RAW_COLUMNS)))
            rows.append(Row(fields))
        except ValueError as e:
            raise ValueError("%s line %d does not read as a row: %s" % (path, i, e)) from None
    return rows


class RawWriter:
    """raw.csv, a row appended and synced per cell; append: after the rows already there (a
    resume, whose partial last line drop_partial_line has dropped), the header only when the
    file is empty."""

    def __init__(self, directory, append=False):
        path = os.path.join(directory, "raw.csv")
        self.f = open(path, "a" if append else "w", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        if self.f.tell() == 0:
            self.w.writerow(RAW_COLUMNS)
            self._sync()

    def _sync(self):
        self.f.flush()
        os.fsync(self.f.fileno())

    def append(self, cell, settings, uuid, host):
        has_k = cell.k is not None
        ok = cell.status == "ok"
        energy = ok and has_energy(cell)
        row = dict(model=cell.model, n=cell.n, dtype=settings.dtype, batch=cell.batch, planned_bytes=0,
                   peak_bytes=cell.peak_bytes, slowdown=0, device_uuid=uuid, host=host,
                   status=cell.status.replace("\n", " "))
        if has_k:
            row.update(k=cell.k, sharing=settings.sharing, order=settings.order)
        if ok:
            row.update({c: real(getattr(cell, c)) for c in ("median_ms", "min_ms", "max_ms", "ms_per_seq",
                                                            "tokens_per_s", "tflop_per_s")}, passes=cell.passes)
        if energy:
            row.update(power_w=real(cell.power_w), energy_j_per_seq=real(cell.energy_j_per_seq))
        # by name, in RAW_COLUMNS' order (tests/reports/test_raw.c keeps those equal to raw.c's)
        self.w.writerow([row.get(c, "") for c in RAW_COLUMNS])
        self._sync()

    def close(self):
        self.f.close()


def has_energy(cell):
    """Whether a cell carries energy (both numbers positive and finite, as linbench's raw.csv)."""
    return all(isinstance(v, float) and math.isfinite(v) and v > 0
               for v in (getattr(cell, "power_w", None), getattr(cell, "energy_j_per_seq", None)))


def energy_state(rows, counter_why, measured=()):
    """meta.csv's energy (measured: every ok row has it; partial; none) and energy_note (why a
    cell has none), as linbench's sweep writes them: the counts over rows (every row of raw.csv),
    the reason from this run's measured cells (a row read back does not say it)."""
    ok = [c for c in rows if c.status == "ok"]
    with_energy = [c for c in ok if has_energy(c)]
    state = "measured" if ok and len(with_energy) == len(ok) else "partial" if with_energy else "none"
    if counter_why:
        return state, counter_why
    if len(with_energy) == len(ok):
        return state, ""
    why = next((c.energy_why for c in measured if c.status == "ok" and not has_energy(c)
                and getattr(c, "energy_why", "")), "")
    return state, "%d of %d cells have no energy: %s" % (
        len(ok) - len(with_energy), len(ok),
        why or "the counter could not be read, or did not advance over their timed passes")


# --- the ratios -----------------------------------------------------------------------------------


def _ratio(base, model):
    """(time, memory) of model against base, as lb_grid_set_cell: ERR when either failed, OOM when
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
    """The energy ratio of model against base, as lb_grid_set_cell: the time ratio's ERR, OOM
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
