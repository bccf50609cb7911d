#!/usr/bin/env python3
"""PyTorch's fused attention at bench_attention's shapes, for the table beside it.

torch.nn.functional.scaled_dot_product_attention with each fused backend this PyTorch has on the
card (flash, cuDNN, memory-efficient), fp16 and bf16, 12 heads of width 64, n from 512 to 16384,
a batch of about 64k tokens: the forward, and the backward from a random dO. Timed with CUDA
events, median of --reps after 3 warm-ups; TFLOP/s counts 4 B h n^2 d_h for the forward and 10 for
the backward, as bench_attention does, so the two tables read side by side. Exit 77 without CUDA.

usage: bench/bench_sdpa.py [--reps R]
"""
import argparse
import statistics
import sys


def median_ms(torch, fn, reps):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f"bench_sdpa: no PyTorch with torch.nn.attention ({e})", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("bench_sdpa: no CUDA device", file=sys.stderr)
        return 77
    F = torch.nn.functional
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION)]
    print(f"# device: {torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    print(f"{'dtype':5} {'backend':9} {'n':>6} {'batch':>5} {'fwd ms':>9} {'TFLOP/s':>8} {'bwd ms':>9} {'TFLOP/s':>8}")
    heads, hd = 12, 64
    for dtype, name in ((torch.float16, "fp16"), (torch.bfloat16, "bf16")):
        for n in (512, 1024, 2048, 4096, 8192, 16384):
            batch = (65536 + n - 1) // n
            q, k, v = (torch.empty(batch, heads, n, hd, device="cuda", dtype=dtype).uniform_(-1, 1).requires_grad_()
                       for _ in range(3))
            dout = torch.empty(batch, heads, n, hd, device="cuda", dtype=dtype).uniform_(-1, 1)
            flops = 4.0 * batch * heads * n * n * hd
            for label, backend in backends:
                try:
                    with sdpa_kernel(backend):
                        def forward():
                            with torch.no_grad():
                                F.scaled_dot_product_attention(q, k, v)
                        fwd = median_ms(torch, forward, args.reps)
                        out = F.scaled_dot_product_attention(q, k, v)

                        def backward():
                            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
                        bwd = median_ms(torch, backward, args.reps)
                        del out
                except RuntimeError as e:  # a backend this card, dtype or build lacks
                    print(f"{name:5} {label:9} {n:6d} {batch:5d}  not available: {str(e).splitlines()[0][:80]}")
                    continue
                print(f"{name:5} {label:9} {n:6d} {batch:5d} {fwd:9.4f} {flops / fwd / 1e9:8.1f} {bwd:9.4f} "
                      f"{2.5 * flops / bwd / 1e9:8.1f}")
            del q, k, v, dout
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
