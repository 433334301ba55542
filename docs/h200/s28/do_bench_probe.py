"""Session 28: what `mlpgen bench`'s GPU time (triton's do_bench, the L2 cache flushed before
each call) is made of at small batches, where it stays above the issue's 5-6 µs and above the
tuner's times (CUDA graphs of 20 calls back to back).

Each contender's call is timed four ways, the ways alternating, medians of ROUNDS rounds:
  do_bench     as `mlpgen bench` times it: triton.testing.do_bench(call, 25, 100), median; the
               L2 flushed (a 256 MB memset) before each timed call;
  warm         the same CUDA events around one call, the GPU kept busy before it by a
               torch.cuda._sleep instead of the flush (so the host's launch is hidden as under
               do_bench, and the weights stay in L2);
  warm, 1 ms   the same, 1 ms of sleep: the sleep itself does not slow the call;
  graph x20    the tuner's: do_bench of a CUDA graph of 20 calls, over 20.
Contenders: an empty Triton kernel (one program, launched as kernel[grid]()), eager
nn.Sequential and the generated module's FusedMLP (the shipped table: bench's "mlpgen"), each
on the headline spec at 1, 64 and 1024 rows and 1024,4096,1024 bf16 at 1 and 64.
Every FusedMLP output is checked against the fp32 reference first (mlpgen.measure.check at the
row count and at 37 rows, 2 seeds).
Run from the repository root: python3 docs/h200/s28/do_bench_probe.py OUT"""

import os
import statistics
import sys
from pathlib import Path

ROUNDS = int(os.environ.get("DO_BENCH_PROBE_ROUNDS", "5"))
CASES = [
    ("tuned/mlp_256x512x256_gelu_fp16.py", (1, 64, 1024)),
    ("tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py", (1, 64)),
]
SLEEP_CYCLES = 400_000  # ~0.2 ms at the H200's ~1.98 GHz: longer than eager's launches
REPS = 200


def main(out: Path) -> None:
    import torch
    import triton
    from triton.testing import do_bench

    from mlpgen.bench import build_fused, build_sequential
    from mlpgen.emit import read_module
    from mlpgen.measure import check, device_problem, gpu_us
    from mlpgen.selfcheck import load_module

    @triton.jit
    def empty(x_ptr):
        pass

    def warm(call, cycles):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
        for s, e in zip(starts, ends):
            torch.cuda._sleep(cycles)
            s.record()
            call()
            e.record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3

    ways = {
        "do_bench": lambda call: do_bench(call, warmup=25, rep=100, return_mode="median") * 1e3,
        "warm": lambda call: warm(call, SLEEP_CYCLES),
        "warm, 1 ms": lambda call: warm(call, 5 * SLEEP_CYCLES),
        "graph x20": gpu_us,
    }
    out.mkdir(parents=True, exist_ok=True)
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    rows_out = []
    for path, batches in CASES:
        spec = read_module(Path(path))[0]
        mod = load_module(Path(path))
        for m in batches:
            x, w, b = device_problem(spec, m, "cuda", 0)
            seq = build_sequential(spec, w, b)
            fused = build_fused(mod, w, b)
            for rows in (m, 37):
                for seed in range(2):
                    err, why = check(mod.mlp, spec, rows, "cuda", seed)
                    assert not why, (path, rows, why)
            calls = {
                "empty kernel": lambda x=x: empty[(1,)](x),
                "eager": lambda x=x, seq=seq: seq(x),
                "mlpgen": lambda x=x, fused=fused: fused(x),
            }
            t = {(c, wname): [] for c in calls for wname in ways}
            with torch.no_grad():
                for call in calls.values():
                    call()
                torch.cuda.synchronize()
                for _ in range(ROUNDS):
                    for c, call in calls.items():
                        for wname, way in ways.items():
                            t[c, wname].append(way(call))
            for c in calls:
                rows_out.append((spec.name, m, c, [statistics.median(t[c, wn]) for wn in ways]))
            say(f"timed {spec.name} at {m} rows")
    say("")
    say("| spec | rows | call | " + " | ".join(ways) + " |")
    say("|---|---:|---|" + "---:|" * len(ways))
    for name, m, c, us in rows_out:
        say(f"| {name} | {m} | {c} | " + " | ".join(f"{u:.2f}" for u in us) + " |")
    say(
        f"µs per call, medians of {ROUNDS} rounds; {torch.cuda.get_device_name()}, torch "
        f"{torch.__version__}, triton {triton.__version__}"
    )
    (out / "do_bench.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]))
