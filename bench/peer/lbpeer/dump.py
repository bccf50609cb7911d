"""`linbench run --dump DIR` read back (reports/dump.h): index.csv (name,file,dtype,shape), one .npy
per tensor (ids int32 (B, n), each weight float32, output float32 (B, n, d)) and meta.csv
(key,value: model, n, k, batch, layers, d_model, heads, ffn, vocab, sharing, order, ...)."""
import csv
import os

import numpy as np

from .encoder import Shape


class DumpError(Exception):
    """A directory that is not a readable dump: one line, bad input."""


def _read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.reader(f))
    except OSError as e:
        raise DumpError("cannot read %s: %s" % (path, e.strerror)) from None


class Dump:
    """meta (dict), shape (encoder.Shape), model (linbench's name), ids (np.int32 (B, n)),
    weights ({name: np.float32}), output (np.float32 (B, n, d))."""

    def __init__(self, path):
        self.path = path
        rows = _read_csv(os.path.join(path, "meta.csv"))
        if not rows or rows[0] != ["key", "value"]:
            raise DumpError("%s/meta.csv is not linbench's key,value file: not a linbench run --dump directory" % path)
        self.meta = {r[0]: r[1] for r in rows[1:] if len(r) == 2}
        try:
            m = self.meta
            k = int(m["k"]) if m.get("k") else None
            self.shape = Shape(int(m["layers"]), int(m["d_model"]), int(m["heads"]), int(m["ffn"]), int(m["vocab"]),
                               int(m["n"]), k, m.get("sharing") or "layerwise", m.get("order") or "early")
            self.model = m["model"]
        except (KeyError, ValueError) as e:
            raise DumpError("%s/meta.csv lacks or garbles %s: not a linbench run --dump directory" % (path, e)) from None
        index = _read_csv(os.path.join(path, "index.csv"))
        if not index or index[0] != ["name", "file", "dtype", "shape"]:
            raise DumpError("%s/index.csv is not linbench's name,file,dtype,shape file" % path)
        arrays = {}
        for name, file, dtype, dims in index[1:]:
            a = np.load(os.path.join(path, file))
            want = tuple(int(x) for x in dims.split("x"))
            if a.shape != want or str(a.dtype) != dtype:
                raise DumpError("%s/%s holds %s %s, index.csv says %s %s" % (path, file, a.dtype, a.shape, dtype, want))
            arrays[name] = a
        self.ids = arrays.pop("ids")
        self.output = arrays.pop("output")
        self.weights = arrays
