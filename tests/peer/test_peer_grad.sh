#!/bin/sh
# bench/peer's training step computes the gradients autograd does: on a tiny model (2 layers,
# d = 32, n = 48, batch 3) of each attention, every sharing level of torch-linformer and both
# orders, the peer's step (lbpeer/measure.py's step, run twice with the gradients cleared between,
# as the sweep times it) in fp32 against torch.autograd.grad of the forward model
# (test_peer_equiv.sh: linbench's) in fp64 with the same upstream gradient: each weight's
# gradient within 1e-5 relative (||peer - autograd|| / ||autograd||, linbench check's fp32
# threshold), none missing.
# Usage: test_peer_grad.sh FIND_PYTHON SOURCE_DIR. Exit 77 (skipped) without a Python with torch.
set -u
py=$("$1") || exit 77
PYTHONPATH="$2/bench/peer" exec "$py" - <<'PY'
import torch

from lbpeer import device
from lbpeer.encoder import Encoder, Shape, projection_index, random_weights
from lbpeer.measure import clear_grads, step

TOL = 1e-5
failed = 0
cases = [("standard", "layerwise", "early"), ("sdpa", "layerwise", "early")]
cases += [("linformer", s, o) for s in ("layerwise", "kv", "headwise", "none") for o in ("early", "late")
          if (s, o) != ("none", "early")]
for att, sharing, order in cases:
    shape = Shape(2, 32, 2, 64, 100, 48, 16 if att == "linformer" else None, sharing, order)
    g = torch.Generator().manual_seed(1)
    w64 = random_weights(shape, att, g, "cpu", torch.float64)
    ids = torch.randint(0, shape.vocab, (3, shape.n), generator=g)
    dy = torch.empty(3, shape.n, shape.d, dtype=torch.float64).uniform_(-1, 1, generator=g)
    ctx = device.sdpa_context("math") if att == "sdpa" else device.nothing()
    leaves = {k: v.clone().requires_grad_() for k, v in w64.items()}
    with ctx:
        want = dict(zip(leaves, torch.autograd.grad(Encoder(shape, att, leaves)(ids), list(leaves.values()), dy)))
    w32 = {k: v.float() for k, v in w64.items()}
    model = Encoder(shape, att, w32, trainable=True)
    ctx = device.sdpa_context("flash") if att == "sdpa" else device.nothing()  # the sweep's default
    with ctx:
        for _ in range(2):
            clear_grads(model)
            step(model, ids, dy.float())
    got = {k: t.grad for k, t in w32.items()}
    if sharing == "none":  # each layer's per-head E and F are one leaf (h, k, n)
        for layer, m in enumerate(model.layers):
            for which, t in ((0, m.E), (1, m.F)):
                for head in range(shape.h):
                    got["proj%d" % projection_index("none", layer, shape.h, head, which)] = \
                        None if t.grad is None else t.grad[head]
    worst = (0.0, "")
    for name, ref in want.items():
        g32 = got[name]
        err = float("inf") if g32 is None else float((g32.double() - ref).norm() / ref.norm())
        worst = max(worst, (err, name))
        if not err <= TOL:
            print("FAIL %s %s/%s: %s's gradient %s" % (att, sharing, order, name, "missing" if g32 is None else
                                                         "off by %.3g relative (threshold %g)" % (err, TOL)))
            failed += 1
    print("%-9s %-9s %-5s %2d weights, worst %s at %.3g" % (att, sharing, order, len(want), worst[1], worst[0]))
print("test_peer_grad: %d gradients off" % failed)
raise SystemExit(1 if failed else 0)
PY
