"""Session 24 probe: persist's tiles at the headline's 1024 rows, outside the space's domain.

The space searches persist with one tile shape for every layer, k steps of 64 and 3 stages; the
shipped 1024-row cell is 64 x 64 (layer 0: 128 tiles for 128 programs; layer 1, 512 -> 256:
64 tiles, so half the programs wait at the end). Variants of the rendered kernel:
  shipped        64 x 64, k 64, 3 stages, 4 warps;
  last n32       layer 1 with 64 x 32 tiles (128 of them), layer 0 as shipped (two renders
                 spliced at the layer comment);
  k128 / k256    wider k steps (fewer, larger loads in flight), 2 or 3 stages;
  s2 / s4        k 64 with 2 or 4 stages;
  m32 1/SM, 2/SM 32 x 64 tiles on a grid of at most one or two programs an SM (module's
                 _sm_count patched; 2/SM only where the compiled kernel's registers and shared
                 memory let two programs be resident, or the barrier would never return);
and, wrong on purpose (timed, not checked): the shipped kernel without its barrier, and each
layer alone (the other layer's loop and the barrier cut out): where the time goes.
Each checked variant is verified first (measure.check: NaN-poisoned output, fp32 reference,
rows past M untouched) at the timed rows, rows + 13 and 37 rows, 2 seeds; then GPU µs per call
as the tuner measures it (measure.gpu_us: a CUDA graph of 20 calls) and the user's call's host
time (measure.host_us), the variants alternating, medians of 5 rounds.
Run from the repository root: python3 docs/h200/s24/persist_tiles_probe.py OUT [ROWS ...]
(PERSIST_PROBE=grid: the shipped cell against 64 x 32 tiles on one or two programs an SM,
grid_variants)"""

import os
import statistics
import sys
from pathlib import Path

from mlpgen.emit import entry, read_module, render
from mlpgen.spec import KernelConfig

HEADLINE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
ROUNDS = int(os.environ.get("PERSIST_PROBE_ROUNDS", "5"))
BARRIER = (
    "    # grid barrier 0: every program's stores of layer 0 are visible\n"
    "    _grid_sync(sync_ptr, pid, nprog)\n"
)


def persist(m=64, n=64, k=64, w=4, s=3):
    return KernelConfig("persist", block_m=m, block_n=n, block_k=k, num_warps=w, num_stages=s)


def layer_block(src: str, i: int) -> str:
    """Layer i's text in the module's one persist kernel."""
    start = src.index(f"    # layer {i}:")
    ends = [src.find(mark, start) for mark in ("    # grid barrier", "\n\n\nKERNELS")]
    return src[start : min(e for e in ends if e > 0)]


def cut(src: str, *parts: str) -> str:
    for part in parts:
        assert part in src
        src = src.replace(part, "    pass\n" if part.startswith("    # layer") else "")
    return src


# name: (config the module serves, its source from the spec, programs an SM, checked)
def variants(spec):
    def src(config):
        return render(spec, {"test": {1: entry(config)}}, {})

    base = src(persist())
    out = {
        "shipped": (persist(), base, 1, True),
        "last n32": (
            persist(),
            base.replace(layer_block(base, 1), layer_block(src(persist(n=32)), 1)),
            1,
            True,
        ),
        "last n32 k128": (
            persist(k=128),
            src(persist(k=128)).replace(
                layer_block(src(persist(k=128)), 1), layer_block(src(persist(n=32, k=128)), 1)
            ),
            1,
            True,
        ),
        "k128 s3": (persist(k=128), src(persist(k=128)), 1, True),
        "k128 s2": (persist(k=128, s=2), src(persist(k=128, s=2)), 1, True),
        "k256 s2": (persist(k=256, s=2), src(persist(k=256, s=2)), 1, True),
        "k64 s2": (persist(s=2), src(persist(s=2)), 1, True),
        "k64 s4": (persist(s=4), src(persist(s=4)), 1, True),
        "m32 1/SM": (persist(m=32), src(persist(m=32)), 1, True),
        "m32 2/SM": (persist(m=32), src(persist(m=32)), 2, True),
        "m32 last n32 2/SM": (
            persist(m=32),
            src(persist(m=32)).replace(
                layer_block(src(persist(m=32)), 1), layer_block(src(persist(m=32, n=32)), 1)
            ),
            2,
            True,
        ),
        "no barrier": (persist(), cut(base, BARRIER), 1, False),
        "layer 0 alone": (persist(), cut(base, BARRIER, layer_block(base, 1)), 1, False),
        "layer 1 alone": (persist(), cut(base, BARRIER, layer_block(base, 0)), 1, False),
    }
    return out


def grid_variants(spec):
    """PERSIST_PROBE=grid: the shipped 1024-row cell since run172 (64 x 64, 32-wide last tiles)
    against 64-row tiles of 32 columns (256 of them in each layer with 16-wide last tiles) on a
    grid of one or two programs an SM. The configs are KernelConfig.last_block_n ones, rendered
    by the module itself."""

    def one(config, per_sm):
        return (config, render(spec, {"test": {1: entry(config)}}, {}), per_sm, True)

    def last(n, lbn, s=3):
        return KernelConfig(
            "persist",
            block_m=64,
            block_n=n,
            block_k=64,
            num_warps=4,
            num_stages=s,
            last_block_n=lbn,
        )

    return {
        "shipped (64 x 64, last 32)": one(last(64, 32), 1),
        "64 x 64, last 32, 4 stages": one(last(64, 32, 4), 1),
        "64 x 32, last 16, 1/SM": one(last(32, 16), 1),
        "64 x 32, last 16, 2/SM": one(last(32, 16), 2),
        "64 x 32, last 16, 4 stages, 2/SM": one(last(32, 16, 4), 2),
        "64 x 32, 2/SM": one(last(32, 0), 2),
    }


def resident(mod) -> int:
    """Programs of the module's compiled kernels that fit on one SM at once (registers, shared
    memory; the H200's 64K registers and 227 KiB of shared memory a block, 228 an SM)."""
    fits = []
    for c in mod._COMPILED.values():
        threads = 32 * c.metadata.num_warps
        regs = max(c.n_regs, 1) * threads
        fits.append(min(65536 // regs, (233472 - 1024) // max(c.metadata.shared + 1024, 1), 32))
    return min(fits)


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

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    mods = {}
    chosen = grid_variants(spec) if os.environ.get("PERSIST_PROBE") == "grid" else variants(spec)
    for name, (config, src, per_sm, checked) in chosen.items():
        f = out / f"v_{name.replace(' ', '_').replace('/', '')}.py"
        f.write_text(src)
        mod = load_module(f)
        mod.gpu_key(torch.device("cuda"))
        mod._sm_count = lambda x, n=per_sm * sms: n  # the grid's cap
        x, w, b = device_problem(spec, 37, "cuda", 0)
        hot_path(mod, config, x, w, b)()  # compile
        torch.cuda.synchronize()
        fit = resident(mod)
        if fit < per_sm:
            say(f"{name}: only {fit} program(s) an SM resident; skipped")
            continue
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
            say(f"checked {name} ({fit} resident an SM)")
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
    (out / "tiles.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]), [int(r) for r in sys.argv[2:]] or [1024, 4096])
