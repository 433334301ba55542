"""Session 9 probe: where split's GPU time at small batches goes (issue 4's CUDA-graph target
needs the headline's batch-1 kernel at ~3.8 us, split takes 4.1-4.4). The shipped 1-row split
kernel (_k_split_m16_c32_n256_k128: 16 programs, each a 32-column hidden slice) is cut back step
by step, each variant a copy of the shipped module with only that kernel's body changed:
  full        as shipped (checked against the fp32 reference first)
  no_last     the arrival counter kept (its acq_rel atomic), the last program's reduction not
  no_arrive   no counter: the partial outputs' relaxed fp32 atomics are the kernel's end
  plain_store the partial outputs stored, not added (no atomics at all)
  layer1      the first layer only: x and the weight slice loaded, dot, bias, GELU, h stored
  empty       an empty body: the launch and the programs' start and end
GPU time per call as the tuner measures it (CUDA graph of 20 calls, L2 warm after the first),
medians of 5 alternating rounds, at 1 and 64 rows. Run from the repository root:
python3 docs/h200/s9/split_parts_probe.py OUT"""

import statistics
import sys
from pathlib import Path

import torch

from mlpgen.emit import read_module
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
KERNEL = "_k_split_m16_c32_n256_k128"
H200 = "NVIDIA H200|sm90|132"


def variants(text: str) -> dict[str, str]:
    start = text.index(f"def {KERNEL}(")
    end = text.index("tl.atomic_xchg(count_ptr + pid_m, 0)\n", start) + len(
        "tl.atomic_xchg(count_ptr + pid_m, 0)\n"
    )
    body = text[start:end]
    head = body[: body.index("    pid_m = ")]
    arrive = body.index("    # arrive:")
    last = body.index("        tl.debug_barrier()\n        for n0")
    layer2 = body.index("    # 512 -> 256")
    out = {"full": body}
    out["no_last"] = body[:last] + "        tl.atomic_xchg(count_ptr + pid_m, 0)\n"
    out["no_arrive"] = body[:arrive]
    out["plain_store"] = (
        body[:arrive].replace("tl.atomic_add(\n        acc_ptr", "tl.store(\n        acc_ptr")
        .replace('        sem="relaxed",\n', "")
    )
    out["layer1"] = body[:layer2] + (
        "    tl.store(acc_ptr + rows[:, None] * 256 + hid[None, :], h.to(tl.float32),"
        " mask=row_ok & (hid[None, :] < 256))\n"
    )
    out["empty"] = head + "    pass\n"
    return {k: text[:start] + v + text[end:] for k, v in out.items()}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    text = SRC.read_text()
    mods = {}
    for name, src in variants(text).items():
        path = out / f"split_{name}.py"
        path.write_text(src)
        mods[name] = load_module(path)
    cell = mods["full"].TUNED[H200][1]
    assert cell["kernel"] == KERNEL
    run = lambda x, w, b, out=None: mods["full"]._launch(x, w, b, cell, out=out)  # noqa: E731
    for m in (1, 64, 37):
        err, why = check(run, spec, m, "cuda", 1)
        assert not why, why
    lines = [f"{'rows':>5} " + " ".join(f"{k:>11}" for k in mods)]
    print(lines[0], flush=True)
    for m in (1, 64):
        x, w, b = device_problem(spec, m, "cuda", 2)
        times = {k: [] for k in mods}
        for _ in range(5):
            for k, mod in mods.items():
                times[k].append(gpu_us(lambda mod=mod: mod._launch(x, w, b, cell)))
        med = {k: statistics.median(v) for k, v in times.items()}
        lines.append(f"{m:>5} " + " ".join(f"{med[k]:11.2f}" for k in mods))
        print(lines[-1], flush=True)
    torch.cuda.synchronize()
    (out / "split_parts_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
