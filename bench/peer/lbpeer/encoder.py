"""linbench's encoder (docs/METHOD.md, "What runs") in PyTorch, one module for every attention.

The same model as attn/encoder.c and attn/model_*.c, weight for weight under the names
`linbench run --dump` writes (tok_emb, pos_emb, emb_ln_g, layer0.w_qkv, ..., proj0):
    x = LN(tok_emb[ids] + pos_emb[t])                                        (B, n, d)
    per layer (post-LayerNorm):  x = LN(x + Attention(x));  x = LN(x + W2 GELU(W1 x + b1) + b2)
LayerNorm eps 1e-5 (LB_LAYERNORM_EPS), GELU the erf form, every linear layer with its bias,
w (out, in) as F.linear takes it. Q, K, V come from one fused product w_qkv (3d, d), in that
order along its rows; head i is columns i*hd .. (i+1)*hd of each.

Attention, per head, scale 1/sqrt(hd):
    standard   softmax(Q K^T * scale) V, the (B, h, n, n) scores materialised (linbench applies the
               scale as the product's alpha; here Q is scaled before the product, which is the
               same number whenever scale is a power of two, as at hd = 64 and 16)
    sdpa       F.scaled_dot_product_attention(Q, K, V, scale=scale) with the backend the caller
               chose (torch.nn.attention.sdpa_kernel around the call)
    linformer  keys and values compressed along the sequence to k rows by E, F (k, n), no bias
               (attn/model_linformer.c):
                 early order: K' = (E X) W_K + b_K, V' = (F X) W_V + b_V
                 late order:  K' = E (X W_K + b_K), V' = F (X W_V + b_V)
               sharing: layerwise proj0 (E = F, every layer); kv proj{l}; headwise proj{2l} (E),
               proj{2l+1} (F); none proj{2(l h + i)}, proj{2(l h + i) + 1} per head i (late only).
"""
import math

import torch
import torch.nn.functional as F

LAYERNORM_EPS = 1e-5
LAYER_TENSORS = ("w_qkv", "b_qkv", "w_o", "b_o", "ln1_g", "ln1_b", "w_ff1", "b_ff1", "w_ff2", "b_ff2",
                 "ln2_g", "ln2_b")
SHARINGS = ("layerwise", "kv", "headwise", "none")
ORDERS = ("early", "late")


def projection_count(sharing, layers, heads):
    """How many E (and F) matrices (k, n) a sharing level has (attn/model_linformer.c)."""
    return {"layerwise": 1, "kv": layers, "headwise": 2 * layers, "none": 2 * layers * heads}[sharing]


def projection_index(sharing, layer, heads, head, which):
    """The proj{i} that is E (which 0) or F (which 1) of `layer` and `head`."""
    if sharing == "layerwise":
        return 0
    if sharing == "kv":
        return layer
    if sharing == "headwise":
        return 2 * layer + which
    return 2 * (layer * heads + head) + which


class Shape:
    """The encoder's shape and, for Linformer, its settings."""

    def __init__(self, layers, d_model, heads, ffn, vocab, n, k=None, sharing="layerwise", order="early"):
        if d_model % heads:
            raise ValueError("d_model %d is not a multiple of heads %d" % (d_model, heads))
        self.layers, self.d, self.h, self.f, self.vocab, self.n = layers, d_model, heads, ffn, vocab, n
        self.k, self.sharing, self.order = k, sharing, order
        self.hd = d_model // heads


def weight_shapes(shape, attention):
    """(name, shape) of every weight, in linbench's allocation order (attn/model.c)."""
    d, f = shape.d, shape.f
    out = [("tok_emb", (shape.vocab, d)), ("pos_emb", (shape.n, d)), ("emb_ln_g", (d,)), ("emb_ln_b", (d,))]
    per_layer = {"w_qkv": (3 * d, d), "b_qkv": (3 * d,), "w_o": (d, d), "b_o": (d,), "ln1_g": (d,),
                 "ln1_b": (d,), "w_ff1": (f, d), "b_ff1": (f,), "w_ff2": (d, f), "b_ff2": (d,),
                 "ln2_g": (d,), "ln2_b": (d,)}
    for layer in range(shape.layers):
        out += [("layer%d.%s" % (layer, t), per_layer[t]) for t in LAYER_TENSORS]
    if attention == "linformer":
        count = projection_count(shape.sharing, shape.layers, shape.h)
        out += [("proj%d" % i, (shape.k, shape.n)) for i in range(count)]
    return out


def random_weights(shape, attention, generator, device, dtype):
    """Weights of linbench's distributions (attn/model.c: embeddings U(-0.1, 0.1), LayerNorm gain
    U(0.8, 1.2) and shift U(-0.1, 0.1), a linear layer and its bias U(-1/sqrt(in), 1/sqrt(in)),
    E and F U(-1/sqrt(n), 1/sqrt(n))) drawn from torch's generator: not linbench's values (a
    dump carries those), which a timing does not depend on."""
    fan_in = {"w_qkv": shape.d, "w_o": shape.d, "w_ff1": shape.d, "w_ff2": shape.f}
    out = {}
    for name, dims in weight_shapes(shape, attention):
        base = name.split(".")[-1]
        if base.startswith("proj"):
            a = 1 / math.sqrt(shape.n)
            lo, hi = -a, a
        elif base.endswith("_g"):
            lo, hi = 0.8, 1.2
        elif base in ("tok_emb", "pos_emb") or base.startswith(("ln", "emb_ln")):
            lo, hi = -0.1, 0.1
        else:  # a linear layer's w or b: U(-1/sqrt(in), 1/sqrt(in)) with `in` its w's columns
            a = 1 / math.sqrt(fan_in["w_" + base[2:]])
            lo, hi = -a, a
        t = torch.empty(dims, device=device, dtype=torch.float32)
        t.uniform_(lo, hi, generator=generator)
        out[name] = t.to(dtype)
    return out


class Encoder(torch.nn.Module):
    """The encoder with one attention: "standard", "linformer" or "sdpa". forward(ids (B, n)
    int64) -> the last layer's hidden state (B, n, d). trainable: every weight a leaf that
    requires its gradient (the tensors of `weights` themselves; with sharing none, each layer's
    per-head E and F stacked into one leaf (h, k, n)); `trained` lists them, each once."""

    def __init__(self, shape, attention, weights, trainable=False):
        super().__init__()
        if attention not in ("standard", "linformer", "sdpa"):
            raise ValueError("unknown attention %r" % attention)
        self.shape, self.attention = shape, attention
        self.trainable = trainable
        if trainable:
            for t in weights.values():
                t.requires_grad_(True)
        self.scale = 1.0 / math.sqrt(shape.hd)
        for name in ("tok_emb", "pos_emb", "emb_ln_g", "emb_ln_b"):
            self.register_buffer(name, weights[name])
        self.layers = torch.nn.ModuleList()
        for layer in range(shape.layers):
            m = torch.nn.Module()
            for t in LAYER_TENSORS:
                m.register_buffer(t, weights["layer%d.%s" % (layer, t)])
            if attention == "linformer":
                self._add_projections(m, layer, weights)
            self.layers.append(m)

    def _add_projections(self, m, layer, weights):
        s = self.shape
        if s.sharing == "none" and s.order == "early":
            raise ValueError("--sharing none cannot run with --order early: per-head projections need --order late")
        if s.sharing == "none":  # every head its own: (h, k, n), head i's at [i]
            for which, name in ((0, "E"), (1, "F")):
                rows = [weights["proj%d" % projection_index("none", layer, s.h, i, which)] for i in range(s.h)]
                stacked = torch.stack(rows)
                # a leaf of its own: a stack made here is in no later pass's graph
                m.register_buffer(name, stacked.detach().requires_grad_() if self.trainable else stacked)
        else:
            m.register_buffer("E", weights["proj%d" % projection_index(s.sharing, layer, s.h, 0, 0)])
            m.register_buffer("F", weights["proj%d" % projection_index(s.sharing, layer, s.h, 0, 1)])

    @property
    def trained(self):
        """The weights a training step computes the gradient of, each once (E = F shared)."""
        return [t for t in self.buffers() if t.requires_grad]

    # (B, len, d) -> (B, h, len, hd), a view
    def _heads(self, t):
        B, length, _ = t.shape
        return t.view(B, length, self.shape.h, self.shape.hd).transpose(1, 2)

    def _attend(self, q, k, v):
        """q (B, h, n, hd), k and v (B, h, len, hd) -> (B, n, d)."""
        B, h, n, hd = q.shape
        if self.attention == "sdpa":
            o = F.scaled_dot_product_attention(q, k, v, scale=self.scale)
        else:
            scores = torch.matmul(q * self.scale, k.transpose(-1, -2))  # (B, h, n, len)
            o = torch.matmul(scores.softmax(dim=-1), v)                 # (B, h, n, hd)
        return o.transpose(1, 2).reshape(B, n, h * hd)

    def _linformer(self, m, x):
        s, d = self.shape, self.shape.d
        w_q, w_k, w_v = m.w_qkv.split(d)
        b_q, b_k, b_v = m.b_qkv.split(d)
        separate = s.sharing in ("headwise", "none")
        if s.order == "early":
            q = F.linear(x, w_q, b_q)                                     # (B, n, d)
            if not separate:  # E = F: X compressed once, K' and V' from one product
                xc = torch.matmul(m.E, x)                                 # (B, k, d)
                kc, vc = F.linear(xc, m.w_qkv[d:], m.b_qkv[d:]).split(d, dim=-1)
            else:
                kc = F.linear(torch.matmul(m.E, x), w_k, b_k)             # (B, k, d)
                vc = F.linear(torch.matmul(m.F, x), w_v, b_v)
            return self._attend(self._heads(q), self._heads(kc), self._heads(vc))
        q, k, v = F.linear(x, m.w_qkv, m.b_qkv).split(d, dim=-1)          # (B, n, d) each
        if s.sharing == "none":  # (h, k, n) @ (B, h, n, hd) -> (B, h, k, hd)
            return self._attend(self._heads(q), torch.matmul(m.E, self._heads(k)), torch.matmul(m.F, self._heads(v)))
        kc, vc = torch.matmul(m.E, k), torch.matmul(m.F, v)               # (B, k, d)
        return self._attend(self._heads(q), self._heads(kc), self._heads(vc))

    def _attention(self, m, x):
        if self.attention == "linformer":
            o = self._linformer(m, x)
        else:
            q, k, v = F.linear(x, m.w_qkv, m.b_qkv).split(self.shape.d, dim=-1)  # (B, n, d) each
            o = self._attend(self._heads(q), self._heads(k), self._heads(v))
        return F.linear(o, m.w_o, m.b_o)

    def forward(self, ids):
        d = (self.shape.d,)
        n = ids.shape[1]
        x = F.embedding(ids, self.tok_emb) + self.pos_emb[:n]
        x = F.layer_norm(x, d, self.emb_ln_g, self.emb_ln_b, LAYERNORM_EPS)
        for m in self.layers:
            x = F.layer_norm(x + self._attention(m, x), d, m.ln1_g, m.ln1_b, LAYERNORM_EPS)
            y = F.linear(F.gelu(F.linear(x, m.w_ff1, m.b_ff1)), m.w_ff2, m.b_ff2)  # GELU: the erf form
            x = F.layer_norm(x + y, d, m.ln2_g, m.ln2_b, LAYERNORM_EPS)
        return x


def flops_per_seq(shape, attention):
    """FLOPs of one sequence's pass, a multiply-add counted as 2: linbench's count
    (lb_config_flops_per_seq, docs/METHOD.md "Work counted"); sdpa does the standard model's work."""
    n, d, f = float(shape.n), float(shape.d), float(shape.f)
    per_layer = 2 * n * (2 * d * f)
    if attention == "linformer":
        k = float(shape.k)
        if shape.order == "early":
            compress = 4 * n * k * d if shape.sharing in ("headwise", "none") else 2 * n * k * d
            per_layer += 2 * n * (2 * d * d) + 2 * k * (2 * d * d) + 4 * n * k * d + compress
        else:
            per_layer += 2 * n * (4 * d * d) + 8 * n * k * d
    else:
        per_layer += 2 * n * (4 * d * d) + 4 * n * n * d
    return per_layer * shape.layers
