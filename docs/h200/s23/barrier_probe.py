"""Session 23 probe: the persist strategy's grid barrier, four ways.

persist (kernel_persist.j2) separates its layers with a grid barrier: each program arrives with
an atomic add on a counter, then polls that counter with atomic adds of 0 (each one a
read-modify-write at L2, by every polling program) until all have arrived; past the last barrier
every program adds to an exit counter and waits for the answer (the last one out resets both).
Variants of the rendered kernel, the rest of its text unchanged:
  base   as rendered;
  ldacq  the poll a plain load with acquire semantics (ld.acquire.gpu) instead of an atomic;
  flip   cooperative groups' barrier: program 0 adds 2^31 - (nprog - 1), the others 1, so that
         each barrier flips the counter's top bit and leaves its low bits as they were; the poll
         (ld.acquire.gpu) waits for the flip; no exit counter, no reset (the counter is never
         read as a count);
  none   no barrier at all (results wrong on purpose where a layer reads another program's
         tiles): what the barriers cost, at most.
Each variant but `none` is checked first (measure.check: NaN-poisoned output, fp32 reference,
rows past M untouched) at the timed M, M + 13 and 37 rows, 2 seeds; then GPU µs per call as the
tuner measures it (measure.gpu_us: a CUDA graph of 20 calls) and the user's call's host time
(measure.hot_path, measure.host_us: loops of 50 calls and a synchronize), the variants
alternating, medians of 5 rounds.
Run from the repository root: python3 docs/h200/s23/barrier_probe.py OUT
(BARRIER_PROBE=compile: compile every variant for sm_90a offline instead, no GPU needed)"""

import os
import re
import statistics
import sys
from pathlib import Path

from mlpgen.emit import entry, read_module, render
from mlpgen.spec import KernelConfig

HEADLINE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
WIDE_FP32 = Path("tuned/mlp_784x1024x1024x10_relu_fp32.py")


def persist(m, n, w):
    return KernelConfig("persist", block_m=m, block_n=n, block_k=64, num_warps=w, num_stages=3)


# (module, rows, config): the shipped persist cells (mlpgen show)
CASES = [
    (HEADLINE, 1024, persist(64, 64, 4)),
    (WIDE_FP32, 1, persist(16, 32, 4)),
    (WIDE_FP32, 64, persist(16, 32, 4)),
    (WIDE_FP32, 1024, persist(64, 128, 8)),
]
VARIANTS = ("base", "ldacq", "flip", "none")
ROUNDS = 5

LD_ACQUIRE = '''

@triton.jit
def _ld_acquire(ptr):
    """The counter at ptr, loaded with acquire semantics at GPU scope (no read-modify-write)."""
    return tl.inline_asm_elementwise(
        "ld.acquire.gpu.global.b32 $0, [$1];", "=r,l", [ptr.to(tl.int64)], dtype=tl.int32,
        is_pure=False, pack=1,
    )
'''
ARRIVE = re.compile(
    r'( *)tl\.atomic_add\(sync_ptr, 1, sem="release"\)\n'
    r' *while tl\.atomic_add\(sync_ptr, 0, sem="acquire"\) < nprog \* \d+:\n'
    r" *pass\n"
)
RESET = re.compile(
    r" *# past the last barrier.*\n"
    r' *if tl\.atomic_add\(sync_ptr \+ 1, 1, sem="acq_rel"\) == nprog - 1:\n'
    r" *tl\.atomic_xchg\(sync_ptr, 0\)\n"
    r" *tl\.atomic_xchg\(sync_ptr \+ 1, 0\)\n"
)
POLL = re.compile(r'while tl\.atomic_add\(sync_ptr, 0, sem="acquire"\)')
FLIP = (
    "{0}old = tl.atomic_add(sync_ptr, tl.where(pid == 0, 2147483647 - nprog + 2, 1), "
    'sem="release")\n'
    "{0}while (_ld_acquire(sync_ptr) ^ old) >= 0:  # until the top bit flips\n"
    "{0}    pass\n"
)


def variant(src: str, form: str) -> str:
    """The rendered module's text with its persist barriers in `form`."""
    n = len(ARRIVE.findall(src))
    assert n >= 1 and len(RESET.findall(src)) == 1, (n, form)
    if form == "base":
        return src
    if form == "ldacq":
        out = POLL.sub("while _ld_acquire(sync_ptr)", src)
    elif form == "flip":
        out = RESET.sub("", ARRIVE.sub(lambda m: FLIP.format(m.group(1)), src))
    else:
        out = RESET.sub("", ARRIVE.sub("", src))
    head = out.index("\n\n@triton.jit")  # the helper goes before the first kernel helper
    return out[:head] + LD_ACQUIRE + out[head:]


def modules(out: Path) -> dict:
    """{(module path, config): {form: rendered variant file}}."""
    made = {}
    for path, _, config in CASES:
        key = (path, config)
        if key in made:
            continue
        spec = read_module(path)[0]
        src = render(spec, {"test": {1: entry(config)}}, {})
        made[key] = {}
        for form in VARIANTS:
            f = out / f"{spec.name}_{config.kernel_name}_{form}.py"
            f.write_text(variant(src, form))
            made[key][form] = f
    return made


def compile_offline(made: dict) -> None:
    """Compile each variant's kernel for sm_90a with this machine's triton (no GPU)."""
    import importlib.util

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    for (path, config), forms in made.items():
        for f in forms.values():
            sp = importlib.util.spec_from_file_location(f.stem, f)
            mod = importlib.util.module_from_spec(sp)
            sp.loader.exec_module(mod)
            fn = mod.KERNELS[config.kernel_name]
            dt = {"fp16": "*fp16", "bf16": "*bf16", "fp32": "*fp32"}[read_module(path)[0].dtype]
            sig = {
                a: ("i32" if a == "M" else "*i32" if a == "sync_ptr" else dt) for a in fn.arg_names
            }
            k = triton.compile(
                ASTSource(fn, sig, {}),
                target=GPUTarget("cuda", 90, 32),
                options=dict(num_warps=config.num_warps, num_stages=3),
            )
            ptx = k.asm["ptx"]
            print(f"{f.name}: ok, atom {ptx.count('atom.')}, ld.acquire {ptx.count('ld.acquire')}")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    made = modules(out)
    if os.environ.get("BARRIER_PROBE") == "compile":
        compile_offline(made)
        return
    import torch
    import triton

    from mlpgen.measure import check, device_problem, gpu_us, host_us, hot_path
    from mlpgen.selfcheck import load_module

    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    mods = {k: {form: load_module(f) for form, f in forms.items()} for k, forms in made.items()}
    for (path, config), forms in mods.items():
        spec = read_module(path)[0]
        for form, mod in forms.items():
            mod.gpu_key(torch.device("cuda"))
            if form == "none":
                continue
            cell = mod.TUNED["test"][1]
            rows = {r for p, r, c in CASES if (p, c) == (path, config)}
            for m in sorted({37} | rows | {r + 13 for r in rows}):
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
                    assert not why, (spec.name, config.kernel_name, form, m, why)
        say(f"checked {spec.name} {config.kernel_name}: base, ldacq, flip ok")
    say("")
    say(
        "| spec | rows | kernel | "
        + " | ".join(f"{v} GPU" for v in VARIANTS)
        + " | "
        + " | ".join(f"{v} call" for v in VARIANTS)
        + " |"
    )
    say("|---|---:|---|" + "---:|" * (2 * len(VARIANTS)))
    for path, rows, config in CASES:
        spec = read_module(path)[0]
        x, w, b = device_problem(spec, rows, "cuda", 0)
        fns = {form: hot_path(mod, config, x, w, b) for form, mod in mods[(path, config)].items()}
        t = {form: {"gpu": [], "call": []} for form in fns}
        with torch.no_grad():
            for _ in range(ROUNDS):
                for form, fn in fns.items():
                    t[form]["gpu"].append(gpu_us(fn))
                    t[form]["call"].append(host_us(fn, torch.cuda.synchronize))
        med = {f: {k: statistics.median(v) for k, v in d.items()} for f, d in t.items()}
        say(
            f"| {spec.name} | {rows} | {config.kernel_name} w{config.num_warps} | "
            + " | ".join(f"{med[f]['gpu']:.2f}" for f in VARIANTS)
            + " | "
            + " | ".join(f"{med[f]['call']:.2f}" for f in VARIANTS)
            + " |"
        )
    say(
        f"µs per call, medians of {ROUNDS} rounds; {torch.cuda.get_device_name()}, torch "
        f"{torch.__version__}, triton {triton.__version__}"
    )
    (out / "barrier.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]))
