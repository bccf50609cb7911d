"""linbench's encoder in PyTorch, measured under linbench's protocol (bench/peer/README.md).

Optional: nothing in linbench needs it. Python 3, PyTorch and numpy only."""

VERSION = "0.2.0"  # linbench's version this peer was written against (meson.build)
