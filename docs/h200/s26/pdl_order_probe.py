"""Written in session 26 for the next session (not run): the order of a kernel's PDL steps, for
the headline's shipped cells that run with PDL (cluster at 1, 16 and 64 rows; persist at 256
and 1024).

Every kernel but layered's and persist's opens with _pdl_enter: launch_dependents, then wait.
So the next call's grid may launch as soon as this one starts. That grid releases its own next
one at once, so several grids can be resident and waiting. persist released that way took 8.33
us at 1024 rows against 5.85 releasing after its grid barrier (run188). Variants per cell:
  plain       the cell without PDL;
  shipped     as the module renders it;
  wait first  _pdl_wait, then _pdl_release, at the kernel's start: the next grid launches while
              this one runs, and no grid launches before its predecessor is running.
Each variant is checked first (measure.check at the bucket's rows, rows + 13 and 37 rows, 2
seeds), then timed: GPU µs as the tuner measures it (a CUDA graph of 20 calls) and the user's
call (mlp(), loops of 50 calls and a synchronize). The variants alternate; each number is the
median of PDL_PROBE_ROUNDS rounds (default 5).
Run from the repository root: python3 docs/h200/s26/pdl_order_probe.py OUT [ROWS ...]"""

import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from mlpgen.emit import entry, read_module, render
from mlpgen.spec import KernelConfig

HEADLINE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
GPU = "NVIDIA H200|sm90|132"
ROUNDS = int(os.environ.get("PDL_PROBE_ROUNDS", "5"))
ENTER = "    _pdl_enter()"
PERSIST_WAIT = "    _pdl_wait()"
PERSIST_RELEASE = "    _pdl_release()"
RELEASE_NOTE = "  # the next kernel (the next call's) may launch now: this one's last layer runs\n"


def kernel_body(src: str, name: str) -> tuple[int, int]:
    """Where the kernel `name`'s text starts and ends in a rendered module."""
    start = src.index(f"def {name}(")
    end = src.find("\n@triton.jit", start)
    return start, end if end > 0 else src.index("\nKERNELS", start)


def wait_first(src: str, config: KernelConfig) -> str:
    """The kernel's wait first, then its release, both at its start."""
    start, end = kernel_body(src, config.kernel_name)
    body = src[start:end]
    if config.strategy == "persist":
        assert body.count(PERSIST_RELEASE) == 1 and body.count(PERSIST_WAIT) == 1
        body = body.replace(PERSIST_RELEASE + RELEASE_NOTE, "", 1)
        wait_line = body[body.index(PERSIST_WAIT) :].split("\n", 1)[0]
        body = body.replace(wait_line, wait_line + "\n" + PERSIST_RELEASE, 1)
    else:
        assert body.count(ENTER) == 1, config.kernel_name
        line = body[body.index(ENTER) :].split("\n", 1)[0]
        body = body.replace(line, PERSIST_WAIT + "\n" + PERSIST_RELEASE, 1)
    return src[:start] + body + src[end:]


def variants(spec, cell: dict):
    linked = KernelConfig.from_dict(cell)
    assert linked.pdl, cell
    plain = replace(linked, pdl=False)
    src = render(spec, {"test": {1: entry(linked)}}, {})
    return {
        "plain": (plain, render(spec, {"test": {1: entry(plain)}}, {})),
        "shipped": (linked, src),
        "wait first": (linked, wait_first(src, linked)),
    }


def main(out: Path, rows_list: list[int]) -> None:
    import torch
    import triton

    from mlpgen.measure import check, device_problem, gpu_us, host_us, hot_path
    from mlpgen.selfcheck import load_module

    out.mkdir(parents=True, exist_ok=True)
    spec, tuned, _ = read_module(HEADLINE)
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    say("| rows | kernel | variant | GPU | call |")
    say("|---:|---|---|---:|---:|")
    for rows in rows_list:
        cell = tuned[GPU][rows]
        mods = {}
        for name, (config, src) in variants(spec, cell).items():
            f = out / f"v{rows}_{name.replace(' ', '_')}.py"
            f.write_text(src)
            mod = load_module(f)
            mod.gpu_key(torch.device("cuda"))
            x, w, b = device_problem(spec, 37, "cuda", 0)
            hot_path(mod, config, x, w, b)()  # compile; the module's table is this config now
            c = mod.TUNED["default"][1]
            for m in sorted({37, rows, rows + 13}):
                for seed in range(2):
                    _, why = check(
                        lambda x, w, b, out=None, mod=mod, c=c: mod._launch(x, w, b, c, out=out),
                        spec,
                        m,
                        "cuda",
                        seed,
                    )
                    assert not why, (rows, name, m, why)
            mods[name] = (mod, config)
        x, w, b = device_problem(spec, rows, "cuda", 0)
        fns = {n: hot_path(mod, cfg, x, w, b) for n, (mod, cfg) in mods.items()}
        t = {n: {"gpu": [], "call": []} for n in fns}
        with torch.no_grad():
            for _ in range(ROUNDS):
                for n, fn in fns.items():
                    t[n]["gpu"].append(gpu_us(fn))
                    t[n]["call"].append(host_us(fn, torch.cuda.synchronize))
        for n in fns:
            med = {k: statistics.median(v) for k, v in t[n].items()}
            say(f"| {rows} | {cell['kernel']} | {n} | {med['gpu']:.2f} | {med['call']:.2f} |")
    say(
        f"µs per call, medians of {ROUNDS} rounds; {torch.cuda.get_device_name()}, torch "
        f"{torch.__version__}, triton {triton.__version__}"
    )
    (out / "order.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]), [int(r) for r in sys.argv[2:]] or [1, 16, 64, 256, 1024])
