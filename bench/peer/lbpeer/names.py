"""The peer's model names: what raw.csv's model column holds for its rows.

    torch-standard   the standard Transformer's attention, the n x n scores materialised
    torch-linformer  Linformer's attention (keys and values compressed to k rows)
    torch-sdpa-B     F.scaled_dot_product_attention with backend B (flash, efficient, cudnn, math)
each with "-compiled" after it when it ran under torch.compile. linbench's reports/peer_dir.c
reads the same grammar: "torch-" NAME, where NAME is a model of linbench's table (the same work
as that model) or "sdpa" (exact softmax attention: the work of linbench's `standard`), then the
SDPA backend, then "compiled"."""

PREFIX = "torch-"
COMPILED = "compiled"
# the attentions and the linbench model whose work each does
WORK = {"standard": "standard", "linformer": "linformer", "sdpa": "standard"}
ATTENTIONS = tuple(WORK)
MODELS = tuple(PREFIX + a for a in ATTENTIONS)  # as --models takes them
SDPA_BACKENDS = ("flash", "efficient", "cudnn", "math")
HAS_K = ("linformer",)  # attentions with a k axis (Linformer's projected length)


def row_name(attention, sdpa_backend=None, compiled=False):
    """The model column of a row: torch-standard, torch-sdpa-flash-compiled ..."""
    name = PREFIX + attention
    if attention == "sdpa":
        name += "-" + sdpa_backend
    if compiled:
        name += "-" + COMPILED
    return name
