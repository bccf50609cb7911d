#!/usr/bin/env python3
"""What the machine code of gpu/ allows, before any GPU runs it.

Compiles every gpu/*.cu for one architecture (sm_90 by default) and prints, per kernel: registers,
spill bytes, stack, static and dynamic shared memory, and the resident blocks and warps per SM
these allow at the kernel's launch bound. For the flash kernels it adds the instruction mix of the
main loop (the innermost loop holding the tensor-core products: one K/V tile) read from
`cuobjdump -sass`: the loop's instructions counted once each, with any loop inside it (the tile
copies) counted once too and named, so the figures are static counts, not issued ones.

  bench/kernel_report.py [--arch 90] [--format text|markdown] [--check gpu/kernel_bounds.txt]

nvcc comes from --nvcc, $NVCC, PATH or /usr/local/cuda/bin; cuobjdump from --cuobjdump,
$LB_CUOBJDUMP, beside nvcc or PATH (PyPI's nvidia-cuda-cuobjdump, with nvidia-cuda-nvdisasm beside
it, serves where the toolkit has none); without it the instruction mix is left out and said so. --check holds the kernels to the
bounds file (no spills in any fp16/bf16 kernel; per-kernel ceilings): exit 1 naming each breach.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Per-SM limits of the architectures linbench builds for (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability"): threads, blocks, 32-bit registers, shared memory a
# block may have (KiB, opt-in), shared memory per SM (KiB).
ARCH_LIMITS = {
    "80": dict(threads=2048, blocks=32, regs=65536, smem_block=163, smem_sm=164),
    "86": dict(threads=1536, blocks=16, regs=65536, smem_block=99, smem_sm=100),
    "89": dict(threads=1536, blocks=24, regs=65536, smem_block=99, smem_sm=100),
    "90": dict(threads=2048, blocks=32, regs=65536, smem_block=227, smem_sm=228),
    "100": dict(threads=2048, blocks=32, regs=65536, smem_block=227, smem_sm=228),
}
REG_GRANULE = 256  # registers are allocated per warp in units of 256
SMEM_GRANULE = 128  # shared memory per block in units of 128 bytes
SMEM_RESERVED = 1024  # the system's share of shared memory per block on sm_80 and later


def find_tool(name, given, env):
    for cand in (given, os.environ.get(env) if env else None, shutil.which(name), "/usr/local/cuda/bin/" + name):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    if out.returncode != 0:
        return {n: n for n in names}
    return dict(zip(names, out.stdout.splitlines()))


def short_name(pretty):
    """flash_tensor_kernel<__half, 64>(...) without the namespace and the parameters."""
    pretty = re.sub(r"\(anonymous namespace\)::", "", pretty)
    depth, end = 0, len(pretty)
    for i, c in enumerate(pretty):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            end = i
            break
    name = pretty[:end].strip()
    return name[5:] if name.startswith("void ") else name


def compile_unit(nvcc, arch, cu, workdir):
    """(cubin path, {mangled: properties}) from ptxas -v; PTX kept for the launch bounds."""
    base = os.path.join(workdir, os.path.basename(cu)[:-3])
    cmd = [nvcc, "-cubin", "-arch=sm_" + arch, "-std=c++17", "--expt-relaxed-constexpr", "-I" + ROOT,
           "-Xptxas", "-v", "--keep", "--keep-dir", workdir, "-o", base + ".cubin", cu]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("kernel_report: nvcc failed on %s:\n%s" % (cu, res.stderr))
    props, current = {}, None
    for line in res.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            props[current] = dict(regs=0, stack=0, spill_st=0, spill_ld=0, smem=0, barriers=0, maxntid=None)
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            props[current].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            props[current]["regs"] = int(m.group(1))
            b = re.search(r"used (\d+) barriers", line)
            s = re.search(r"(\d+) bytes smem", line)
            props[current]["barriers"] = int(b.group(1)) if b else 0
            props[current]["smem"] = int(s.group(1)) if s else 0
    ptx = [f for f in os.listdir(workdir) if f.startswith(os.path.basename(base) + ".") and f.endswith(".ptx")]
    for f in ptx:
        text = open(os.path.join(workdir, f)).read()
        for m in re.finditer(r"\.entry\s+(\S+)\s*\((?:[^)]*)\)\s*((?:\.\w+[^{]*?)*)\{", text, re.S):
            nt = re.search(r"\.maxntid\s+(\d+)", m.group(2))
            if m.group(1) in props and nt:
                props[m.group(1)]["maxntid"] = int(nt.group(1))
    return base + ".cubin", props


def flash_dynamic_smem(workdir):
    """Dynamic shared bytes of flash_tensor_kernel per head width, from gpu/flash_tiles.h itself."""
    src = os.path.join(workdir, "flash_tiles.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include <stddef.h>\n#include "gpu/flash_tiles.h"\n'
                'int main(void) { for (int hd = 16; hd <= 256; hd += 16) printf("%d %zu\\n", hd, '
                'LB_FLASH_SHARED_BYTES(hd)); return 0; }\n')
    exe = os.path.join(workdir, "flash_tiles")
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc or subprocess.run([cc, "-I" + ROOT, "-o", exe, src]).returncode != 0:
        sys.exit("kernel_report: cannot build the reader of gpu/flash_tiles.h with a C compiler")
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    table = {int(hd): int(b) for hd, b in (line.split() for line in out.splitlines())}
    return lambda hd: table[hd]


def occupancy(limits, threads, regs, smem):
    warps = (threads + 31) // 32
    by_threads = limits["threads"] // (warps * 32)
    regs_per_warp = -(-max(regs, 1) * 32 // REG_GRANULE) * REG_GRANULE
    by_regs = (limits["regs"] // regs_per_warp) // warps
    block_smem = -(-(smem + SMEM_RESERVED) // SMEM_GRANULE) * SMEM_GRANULE
    by_smem = (limits["smem_sm"] * 1024) // block_smem
    blocks = min(limits["blocks"], by_threads, by_regs, by_smem)
    limiter = min((by_threads, "threads"), (by_regs, "registers"), (by_smem, "shared"), (limits["blocks"], "blocks"))[1]
    return blocks, blocks * warps, limiter


def sass_functions(cuobjdump, cubin):
    """({mangled: [(address, instruction)]}, None), or (None, why) when cuobjdump fails."""
    # cuobjdump -sass runs nvdisasm, which PyPI's wheels put beside it
    env = dict(os.environ, PATH=os.path.dirname(cuobjdump) + os.pathsep + os.environ.get("PATH", ""))
    out = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        return None, "%s -sass failed: %s" % (cuobjdump, lines[-1] if lines else "exit %d" % out.returncode)
    funcs, name = {}, None
    for line in out.stdout.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m and name:
            funcs[name].append((int(m.group(1), 16), m.group(2).strip()))
    return funcs, None


def opcode(text):
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def loops(instrs):
    """(start, end) address ranges of every backward branch."""
    found = []
    for addr, text in instrs:
        if opcode(text) == "BRA":
            m = re.search(r"BRA\s+(?:`\(\.L_x_\d+\)|)?\s*(0x[0-9a-f]+)", text)
            if m and int(m.group(1), 16) <= addr:
                found.append((int(m.group(1), 16), addr))
    return found


def main_loop_mix(instrs):
    """The innermost loop holding HMMA: its counts, and the loops nested in it."""
    with_mma = [(s, e) for s, e in loops(instrs)
                if any(s <= a <= e and opcode(t).startswith("HMMA") for a, t in instrs)]
    if not with_mma:
        return None
    s, e = min(with_mma, key=lambda r: r[1] - r[0])
    body = [t for a, t in instrs if s <= a <= e]
    mix = dict(total=len(body), HMMA=0, LDSM=0, LDGSTS=0, BAR=0)
    for t in body:
        op = opcode(t).split(".")[0]
        if op in mix:
            mix[op] += 1
    mix["other"] = mix["total"] - mix["HMMA"] - mix["LDSM"] - mix["LDGSTS"] - mix["BAR"]
    inner = [(a, b) for a, b in loops(instrs) if s <= a and b <= e and (a, b) != (s, e)]
    mix["inner"] = [len([1 for x, _ in instrs if a <= x <= b]) for a, b in inner]
    return mix


def dtype_of(name):
    if "__half" in name:
        return "fp16"
    if "bfloat16" in name:
        return "bf16"
    if "float" in name.split("<")[-1] or "simt" in name:
        return "fp32"
    return "-"


def read_bounds(path):
    """Lines `KERNEL-NAME KEY VALUE` (KEY: registers, loop_instructions, spill); # comments."""
    bounds = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, key, value = line.rsplit(None, 2)
        bounds.append((name, key, int(value)))
    return bounds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="90", choices=sorted(ARCH_LIMITS))
    ap.add_argument("--nvcc")
    ap.add_argument("--cuobjdump")
    ap.add_argument("--format", default="text", choices=["text", "markdown"])
    ap.add_argument("--check", metavar="BOUNDS")
    ap.add_argument("--units", help="comma-separated gpu/ units (default: every gpu/*.cu)")
    a = ap.parse_args()
    nvcc = find_tool("nvcc", a.nvcc, "NVCC")
    if not nvcc:
        print("kernel_report: no nvcc (on PATH, $NVCC or /usr/local/cuda/bin)", file=sys.stderr)
        return 77
    cuobjdump = find_tool("cuobjdump", a.cuobjdump, "LB_CUOBJDUMP")
    if not cuobjdump:
        beside = os.path.join(os.path.dirname(nvcc), "cuobjdump")
        cuobjdump = beside if os.path.isfile(beside) else None
    limits = ARCH_LIMITS[a.arch]
    units = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "gpu")) if f.endswith(".cu"))
    if a.units:
        units = [u for u in units if u in a.units.split(",")]
    rows = []
    sass_error = None  # why the instruction mix could not be read, where cuobjdump was found
    with tempfile.TemporaryDirectory(prefix="lb-kernel-report-") as work:
        dyn = flash_dynamic_smem(work)
        for unit in units:
            cubin, props = compile_unit(nvcc, a.arch, os.path.join(ROOT, "gpu", unit + ".cu"), work)
            if not props:
                continue
            sass = {}
            if cuobjdump and any("flash" in n for n in props):
                sass, why = sass_functions(cuobjdump, cubin)
                sass_error = sass_error or why
                sass = sass or {}
            pretty = demangle(list(props))
            for mangled, p in props.items():
                name = short_name(pretty[mangled])
                dynamic = 0
                m = re.match(r"flash_tensor_kernel<.*, (\d+)>", name)
                if m:
                    dynamic = dyn(int(m.group(1)))
                threads = p["maxntid"] or 1024
                blocks, warps, limiter = occupancy(limits, threads, p["regs"], p["smem"] + dynamic)
                mix = main_loop_mix(sass.get(mangled, [])) if "flash" in name and sass else None
                rows.append(dict(unit=unit, name=name, dtype=dtype_of(name), threads=threads, dynamic=dynamic,
                                 blocks=blocks, warps=warps, limiter=limiter, mix=mix, **p))
    rows.sort(key=lambda r: (r["unit"], r["name"]))
    md = a.format == "markdown"
    head = ["kernel", "dtype", "threads", "regs", "spill st/ld", "stack", "smem static", "smem dyn",
            "blocks/SM", "warps/SM", "limited by"]
    print("linbench kernels on sm_%s (nvcc %s)" % (a.arch, nvcc))
    if md:
        print("\n| " + " | ".join(head) + " |\n|" + " --- |" * len(head))
    else:
        print("%-52s %-5s %7s %5s %11s %6s %11s %9s %9s %8s %s" % tuple(head))
    for r in rows:
        cells = [r["name"], r["dtype"], str(r["threads"]), str(r["regs"]), "%d/%d" % (r["spill_st"], r["spill_ld"]),
                 str(r["stack"]), str(r["smem"]), str(r["dynamic"]), str(r["blocks"]), str(r["warps"]), r["limiter"]]
        if md:
            print("| `" + cells[0] + "` | " + " | ".join(cells[1:]) + " |")
        else:
            print("%-52s %-5s %7s %5s %11s %6s %11s %9s %9s %8s %s" % tuple(cells))
    mixes = [r for r in rows if r["mix"]]
    if not cuobjdump:
        print("\nno cuobjdump (toolkit, PATH or $LB_CUOBJDUMP): the flash kernels' instruction mix is left out")
    elif sass_error:
        print("\n" + sass_error + ": the flash kernels' instruction mix is left out")
    elif mixes:
        print("\nflash main loop (one K/V tile per warp; static counts, each nested loop counted once):")
        mhead = ["kernel", "total", "HMMA", "LDSM", "LDGSTS", "BAR", "other", "nested loops"]
        if md:
            print("\n| " + " | ".join(mhead) + " |\n|" + " --- |" * len(mhead))
        for r in mixes:
            m = r["mix"]
            nested = ", ".join(str(x) for x in m["inner"]) or "none"
            cells = [r["name"], m["total"], m["HMMA"], m["LDSM"], m["LDGSTS"], m["BAR"], m["other"], nested]
            if md:
                print("| `%s` | %d | %d | %d | %d | %d | %d | %s |" % tuple(cells))
            else:
                print("%-44s total %5d  HMMA %4d  LDSM %4d  LDGSTS %4d  BAR %3d  other %5d  nested %s" % tuple(cells))
    if not a.check:
        return 0
    breaches = []
    for r in rows:
        if r["dtype"] in ("fp16", "bf16") and (r["spill_st"] or r["spill_ld"]):
            breaches.append("%s spills (%d bytes stored, %d loaded): no fp16/bf16 kernel may" %
                            (r["name"], r["spill_st"], r["spill_ld"]))
    by_name = {r["name"]: r for r in rows}
    for name, key, value in read_bounds(a.check):
        r = by_name.get(name)
        if r is None:
            breaches.append("%s (in %s) is not a kernel of this build" % (name, a.check))
            continue
        if key == "registers":
            got = r["regs"]
        elif key == "loop_instructions":
            if not cuobjdump:
                continue  # said above: a machine without cuobjdump checks the rest
            if not r["mix"]:
                breaches.append("%s: no main loop read from its machine code (%s)" %
                                (name, sass_error or "no loop holding HMMA found"))
                continue
            got = r["mix"]["total"]
        elif key == "blocks_per_sm":
            if r["blocks"] < value:
                breaches.append("%s: %d blocks per SM, below the %d of %s" % (name, r["blocks"], value, a.check))
            continue
        else:
            breaches.append("%s: unknown bound %s in %s" % (name, key, a.check))
            continue
        if got > value:
            breaches.append("%s: %s %d, above the bound %d in %s" % (name, key, got, value, a.check))
    for b in breaches:
        print("kernel_report: " + b, file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
