"""Train a small model with a generated MLP: fit the signed distance function of a torus with a
3 -> 64 -> 64 -> 64 -> 1 ReLU MLP, the field a NeRF or SDF user trains.

    python benchmarks/train_example.py                     # CUDA: fp16 under autocast
    python benchmarks/train_example.py --eager             # the same with nn.Sequential
    python benchmarks/train_example.py --device cpu --steps 100 --batch 1024   # fp32

mlpgen.fuse replaces the model's MLP block by the generated FusedMLP, taking its module from
--out or generating it there (on a GPU tune it first: `mlpgen --widths 3,64,64,64,1 --act relu`;
otherwise it runs the heuristic default and warns once). The weights stay fp32 (the optimizer's
master copy); on CUDA the MLP runs in fp16 under torch.autocast, with a GradScaler. Prints the
loss as it falls and the time of a training step (forward, backward, optimizer step).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
from torch import nn

WIDTHS = (3, 64, 64, 64, 1)


class Field(nn.Module):
    """A point's signed distance, by an MLP of its coordinates."""

    def __init__(self):
        super().__init__()
        layers: list[nn.Module] = []
        for k, n in zip(WIDTHS[:-1], WIDTHS[1:]):
            layers += [nn.Linear(k, n), nn.ReLU()]
        self.mlp = nn.Sequential(*layers[:-1])

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return self.mlp(p).squeeze(-1)


def torus(p: torch.Tensor, major: float = 0.6, minor: float = 0.25) -> torch.Tensor:
    """The exact signed distance to a torus around the y axis."""
    ring = torch.stack([p[:, [0, 2]].norm(dim=1) - major, p[:, 1]], dim=1)
    return ring.norm(dim=1) - minor


def train(
    steps: int,
    batch: int,
    device: str,
    out: str = "tuned",
    eager: bool = False,
    lr: float = 3e-3,
    log_every: int = 50,
    seed: int = 0,
    log=print,
) -> list[float]:
    """Fit the torus; returns the loss of every step."""
    torch.manual_seed(seed)
    cuda = device.startswith("cuda")
    dtype = torch.float16 if cuda else torch.float32
    model = Field().to(device)
    if not eager:
        import mlpgen

        report = mlpgen.fuse(model, out=out, dtype="fp16" if cuda else "fp32")
        model.float()  # fp32 master weights; autocast runs the MLP in fp16
        log(f"fused: {[(r.path, r.spec.name) for r in report.replaced]}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda", enabled=cuda)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    gen = torch.Generator(device=device).manual_seed(seed)
    losses, times = [], []
    for i in range(steps):
        p = torch.rand(batch, 3, device=device, generator=gen) * 2 - 1
        sync()
        t0 = time.perf_counter()
        with torch.autocast(device.split(":")[0], dtype=dtype, enabled=cuda):
            loss = (model(p).float() - torus(p)).square().mean()
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        sync()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
        if (i + 1) % log_every == 0 or i + 1 == steps:
            recent = times[max(1, i + 1 - log_every) :] or times  # the first step compiles
            log(
                f"step {i + 1:5d}  loss {statistics.fmean(losses[-log_every:]):.2e}  "
                f"{statistics.median(recent) * 1e3:.2f} ms/step"
            )
    return losses


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--batch", type=int, default=1 << 16, help="points per step")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", default="tuned", help="where the generated module is found or put")
    p.add_argument("--eager", action="store_true", help="train the plain nn.Sequential")
    p.add_argument("--lr", type=float, default=3e-3)
    args = p.parse_args(argv)
    what = "nn.Sequential" if args.eager else "mlpgen FusedMLP"
    print(f"{what}: {' -> '.join(map(str, WIDTHS))} relu, {args.batch} points per step")
    train(args.steps, args.batch, args.device, args.out, args.eager, args.lr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
