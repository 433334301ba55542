"""Session 25 probe: persist at the headline's 1024 (and 256) rows, two changes outside the space.

The shipped 1024-row cell is persist 64 x 64 with 32-wide last tiles (128 tiles in each layer,
one a program): its grid barrier makes every program wait for all 128 layer-0 tiles, and every
tile's operands come by pointer loads (cp.async). Variants, each a kernel text of the same name
and arguments put in place of the rendered one:
  shipped s3 / s4     the module's own render (3 / 4 stages);
  text s3             this probe's text of the same kernel (the text the others change);
  rows s3 / s4        a counter per 64-row block in place of the grid barrier: each layer-0 tile
                      adds 1 to its row block's counter (release) when stored, each layer-1 tile
                      polls its own row block's counter (acquire) until it is a multiple of the
                      row block's tile count. Reset-free and right only because every program
                      adds to the row block that it then reads (the same tile index in both
                      layers, equal tile counts a row block): a program's own add is in the count,
                      so the previous launch's full count cannot pass for this one's;
  tma s3 / s4         every operand loaded by TMA (descriptors made in the kernel), the grid
                      barrier kept, with proxy fences between the generic stores and the async
                      reads of the hidden layer;
  tma rows s4         both;
and, wrong on purpose (timed, not checked): no barrier at all, 4 stages.
Each checked variant is verified first (measure.check: NaN-poisoned output, fp32 reference, rows
past M untouched) at 37 rows, the timed rows and rows + 13, 2 seeds; then GPU µs per call as the
tuner measures it (measure.gpu_us: a CUDA graph of 20 calls) and the user's call's host time
(measure.host_us), the variants alternating, medians of PERSIST_PROBE_ROUNDS (5) rounds.
Run from the repository root: python3 docs/h200/s25/persist_sync_probe.py OUT [ROWS ...]"""

import os
import statistics
import sys
from pathlib import Path

from mlpgen.emit import entry, read_module, render
from mlpgen.spec import KernelConfig

HEADLINE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
ROUNDS = int(os.environ.get("PERSIST_PROBE_ROUNDS", "5"))
BM, BN, LBN, BK = 64, 64, 32, 64
K0, N0, N1 = 256, 512, 256  # the headline's widths
NT0, NT1 = N0 // BN, N1 // LBN  # tiles a row block: 8 and 8

HELPERS = '''
@triton.jit
def _probe_fence_async(x):
    """fence.proxy.async.global: generic-proxy stores and async-proxy (TMA) reads ordered."""
    return tl.inline_asm_elementwise(
        "fence.proxy.async.global; mov.u32 $0, $1;", "=r,r", [x], dtype=tl.int32,
        is_pure=False, pack=1,
    )  # fmt: skip


@triton.jit
def _probe_row_wait(ptr):
    """Poll the row block's counter (acquire) until it is a multiple of its tile count."""
    while (_ld_acquire(ptr) & NT0_MASK) != 0:
        pass
    tl.debug_barrier()

'''.replace("NT0_MASK", str(NT0 - 1))


def kernel_text(name: str, tma: bool, rows_sync: bool, barrier: bool = True) -> str:
    """The 1024-row persist kernel for the headline, as this probe varies it."""
    out = [
        '@triton.jit(do_not_specialize=["M"])',
        f"def {name}(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, h1_ptr, sync_ptr, M):",
        "    _pdl_enter()",
        "    pid = tl.program_id(0)",
        "    nprog = tl.num_programs(0)",
        f"    m_tiles = tl.cdiv(M, {BM})",
    ]
    if tma:
        desc = "    {0}_desc = tl.make_tensor_descriptor({0}_ptr, [{1}, {2}], [{2}, 1], [{3}, {4}])"
        out += [
            desc.format("x", "M", K0, BM, BK),
            desc.format("w0", N0, K0, BN, BK),
            desc.format("h1", "M", N0, BM, BK),
            desc.format("w1", N1, N0, LBN, BK),
        ]

    def layer(i, k, n, bn, nt, src, w, b, dst, act):
        lines = [
            f"    for t in range(pid, m_tiles * {nt}, nprog):",
            f"        r0 = (t // {nt}) * {BM}",
            f"        c0 = (t % {nt}) * {bn}",
            f"        rows = (r0 + tl.arange(0, {BM})).to(tl.int64)",
            f"        cols = c0 + tl.arange(0, {bn})",
        ]
        if i == 1 and rows_sync:
            lines.append(f"        _probe_row_wait(sync_ptr + t // {nt})")
            if tma:
                lines.append("        _probe_fence_async(pid)")
        lines += [
            f"        acc = tl.zeros(({BM}, {bn}), dtype=tl.float32)",
            f"        for k0 in range(0, {k}, {BK}):",
        ]
        if tma:
            lines += [
                f"            a = {src}_desc.load([r0, k0])",
                f"            w = {w}_desc.load([c0, k0])",
            ]
        else:
            cg = ', cache_modifier=".cg"' if i == 1 else ""
            lines += [
                f"            ks = k0 + tl.arange(0, {BK})",
                f"            a = tl.load({src}_ptr + rows[:, None] * {k} + ks[None, :], "
                f"mask=(rows[:, None] < M), other=0.0{cg})",
                f"            w = tl.load({w}_ptr + cols[:, None] * {k} + ks[None, :])",
            ]
        lines += [
            "            acc = tl.dot(a, tl.trans(w), acc)",
            f"        acc += tl.load({b}_ptr + cols).to(tl.float32)[None, :]",
            f"        tl.store({dst}_ptr + rows[:, None] * {n} + cols[None, :], {act}, "
            "mask=(rows[:, None] < M))",
        ]
        if i == 0 and rows_sync:
            if tma:
                lines.append("        _probe_fence_async(pid)")
            lines += [
                "        tl.debug_barrier()",
                f"        tl.atomic_add(sync_ptr + t // {nt}, 1, sem='release')",
            ]
        return lines

    out += layer(0, K0, N0, BN, NT0, "x", "w0", "b0", "h1", "_gelu_f16(acc)")
    if barrier and not rows_sync:
        if tma:
            out.append("    _probe_fence_async(pid)")
        out.append("    _grid_sync(sync_ptr, pid, nprog)")
        if tma:
            out.append("    _probe_fence_async(pid)")
    out += layer(1, N0, N1, LBN, NT1, "h1", "w1", "b1", "y", "acc.to(tl.float16)")
    return "\n".join(out) + "\n"


def persist(s: int) -> KernelConfig:
    return KernelConfig(
        "persist", block_m=BM, block_n=BN, block_k=BK, num_warps=4, num_stages=s, last_block_n=LBN
    )


def spliced(src: str, text: str) -> str:
    """The module's source with its one kernel replaced by `text` (and this probe's helpers);
    the barrier counter made one int32 per row (a counter per row block for `rows`)."""
    start = src.index('@triton.jit(do_not_specialize=["M"])\ndef _k_persist')
    end = src.index("\n\nKERNELS")
    src = src[:start] + HELPERS + "\n" + text + src[end:]
    old = "torch.zeros(1, dtype=torch.int32"
    assert old in src
    return src.replace(old, "torch.zeros(rows, dtype=torch.int32")


def variants(spec):
    def src(s):
        return render(spec, {"test": {1: entry(persist(s))}}, {})

    def text(s, name, **kw):
        base = src(s)
        kernel = base[base.index("def _k_persist") + 4 : base.index("(x_ptr")]
        return persist(s), spliced(base, kernel_text(kernel, **kw)), True

    out = {
        "shipped s3": (persist(3), src(3), True),
        "shipped s4": (persist(4), src(4), True),
        "text s3": text(3, "text", tma=False, rows_sync=False),
        "rows s3": text(3, "rows", tma=False, rows_sync=True),
        "rows s4": text(4, "rows", tma=False, rows_sync=True),
        "tma s3": text(3, "tma", tma=True, rows_sync=False),
        "tma s4": text(4, "tma", tma=True, rows_sync=False),
        "tma rows s4": text(4, "tma rows", tma=True, rows_sync=True),
    }
    config, src4, _ = text(4, "none", tma=False, rows_sync=False, barrier=False)
    out["no barrier s4 (wrong)"] = (config, src4, False)
    return out


def main(out: Path, rows_list: list[int]) -> None:
    import torch
    import triton

    from mlpgen.measure import check, device_problem, gpu_us, host_us, hot_path
    from mlpgen.selfcheck import load_module

    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(HEADLINE)[0]
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    def scratch(size, alignment, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(scratch)  # the TMA variants' descriptors
    mods = {}
    for name, (config, src, checked) in variants(spec).items():
        f = out / f"v_{name.replace(' ', '_').replace('(', '').replace(')', '')}.py"
        f.write_text(src)
        try:
            mod = load_module(f)
            mod.gpu_key(torch.device("cuda"))
            x, w, b = device_problem(spec, 37, "cuda", 0)
            hot_path(mod, config, x, w, b)()  # compile
            torch.cuda.synchronize()
            if checked:
                cell = mod.TUNED["default"][1]
                for m in sorted({37} | set(rows_list) | {r + 13 for r in rows_list}):
                    for seed in range(2):
                        err, why = check(
                            lambda x, w, b, out=None, mod=mod, cell=cell: mod._launch(
                                x, w, b, cell, out=out
                            ),
                            spec,
                            m,
                            "cuda",
                            seed,
                        )
                        assert not why, (name, m, why)
                say(f"checked {name}")
        except Exception as e:  # one variant's failure must not cost the others' numbers
            say(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}")
            continue
        mods[name] = (mod, config)
    say("")
    say("| variant | " + " | ".join(f"{r} GPU | {r} call" for r in rows_list) + " |")
    say("|---|" + "---:|---:|" * len(rows_list))
    res = {name: {} for name in mods}
    for rows in rows_list:
        x, w, b = device_problem(spec, rows, "cuda", 0)
        fns = {n: hot_path(mod, cfg, x, w, b) for n, (mod, cfg) in mods.items()}
        t = {n: {"gpu": [], "call": []} for n in fns}
        with torch.no_grad():
            for _ in range(ROUNDS):
                for n, fn in fns.items():
                    t[n]["gpu"].append(gpu_us(fn))
                    t[n]["call"].append(host_us(fn, torch.cuda.synchronize))
        for n in fns:
            res[n][rows] = {k: statistics.median(v) for k, v in t[n].items()}
    for n in mods:
        say(
            f"| {n} | "
            + " | ".join(f"{res[n][r]['gpu']:.2f} | {res[n][r]['call']:.2f}" for r in rows_list)
            + " |"
        )
    say(
        f"µs per call, medians of {ROUNDS} rounds; {torch.cuda.get_device_name()}, torch "
        f"{torch.__version__}, triton {triton.__version__}"
    )
    (out / "sync.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]), [int(r) for r in sys.argv[2:]] or [1024, 256])
