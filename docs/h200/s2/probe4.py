"""Session-2 probe (H200): host cost of launch paths, split-hidden kernel GPU time, large tiles."""
import os, sys, time, statistics, re, json, shutil, importlib
from pathlib import Path
import torch, triton
sys.path.insert(0, ".probe")
from culaunch import Launcher
import splith as SH
from mlpgen.selfcheck import load_module
from mlpgen.measure import gpu_us, candidate_module, device_problem, launcher
from mlpgen.spec import MLPSpec, KernelConfig

OUT = Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
dev = "cuda"
spec = MLPSpec((256, 512, 256))
def host(fn, calls=200, loops=15):
    fn(); torch.cuda.synchronize(); per = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls): fn()
        torch.cuda.synchronize(); per.append((time.perf_counter() - t0) / calls * 1e6)
    return min(per), statistics.median(per)

print("== host cost per call (us, min/median of 15 loops of 200) ==", flush=True)
shutil.copy("tuned/mlp_256x512x256_gelu_fp16.py", OUT / "headline.py")
mod = load_module(OUT / "headline.py")
x, W, B = device_problem(spec, 64, dev, 0)
eager = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).to(dev, torch.float16)
with torch.no_grad():
    eager[0].weight.copy_(W[0]); eager[0].bias.copy_(B[0]); eager[2].weight.copy_(W[1]); eager[2].bias.copy_(B[1])
cfg = KernelConfig(block_m=16, chunk=128, num_warps=8)
cmod = candidate_module(spec, cfg, OUT)
run = launcher(cmod, cfg)
y0 = run(x, W, B); torch.cuda.synchronize()
(key, compiled), = [(k, v) for k, v in cmod._COMPILED.items()]
y = torch.empty_like(y0)
args = [x, y, W[0], B[0], W[1], B[1], 64]
print("signature", dict(compiled.src.signature), "shared", compiled.metadata.shared,
      "gscratch", getattr(compiled.metadata, "global_scratch_size", None), "pscratch", getattr(compiled.metadata, "profile_scratch_size", None))
L = Launcher(compiled, args)
grid = (4,)
stream = torch._C._cuda_getCurrentRawStream(0)
y.fill_(float("nan")); L(grid, stream, args); torch.cuda.synchronize()
print("ctypes launch equals module:", torch.equal(y, y0))
meta = compiled.packed_metadata
rows = {}
with torch.no_grad():
    rows["torch.empty"] = host(lambda: torch.empty((64, 256), dtype=torch.float16, device=x.device))
    rows["x.new_empty"] = host(lambda: x.new_empty((64, 256)))
    rows["data_ptr x7"] = host(lambda: [a.data_ptr() for a in args[:6]])
    rows["raw stream"] = host(lambda: torch._C._cuda_getCurrentRawStream(0))
    rows["compiled.run"] = host(lambda: compiled.run(4, 1, 1, stream, compiled.function, meta, None, None, None, *args))
    rows["ctypes launch"] = host(lambda: L(grid, stream, args))
    def ct_full():
        yy = x.new_empty((64, 256)); a = [x, yy, W[0], B[0], W[1], B[1], 64]
        L(grid, torch._C._cuda_getCurrentRawStream(0), a); return yy
    rows["ctypes+alloc+args"] = host(ct_full)
    rows["module mlp()"] = host(lambda: mod.mlp(x, W, B))
    rows["module _forward"] = host(lambda: mod._forward(x, W, B))
    rows["eager"] = host(lambda: eager(x))
for k, (a, b) in rows.items():
    print(f"{k:22s} {a:7.2f} {b:7.2f}")

print("\n== split-hidden GPU time (us, graph replay of 20) vs rowblock m16 c128 w8 and eager ==", flush=True)
res = []
for M in (1, 64, 256, 1024):
    x, W, B = device_problem(spec, M, dev, 1)
    with torch.no_grad():
        eager[0].weight.copy_(W[0]); eager[0].bias.copy_(B[0]); eager[2].weight.copy_(W[1]); eager[2].bias.copy_(B[1])
        ref = eager(x).float()
    ws = torch.zeros(M + 64, 256, device=dev); cnt = torch.zeros(1024, dtype=torch.int32, device=dev)
    base = {"eager": gpu_us(lambda: eager(x)), "rowblock": gpu_us(lambda: run(x, W, B))}
    line = [f"M={M:5d} eager {base['eager']:6.2f} rowblock {base['rowblock']:6.2f} |"]
    for BM in (16, 32, 64):
        if BM > max(16, M * 2): continue
        for CH in (32, 64, 128):
            for BN, nw in ((256, 4), (128, 4), (64, 4), (128, 8)):
                try:
                    _, yy = SH.run(x, W[0], B[0], W[1], B[1], ws, cnt, BM, CH, 128, BN, nw)
                    for _ in range(3): _, yy = SH.run(x, W[0], B[0], W[1], B[1], ws, cnt, BM, CH, 128, BN, nw)
                    err = ((yy.float() - ref).norm() / ref.norm()).item()
                    t = gpu_us(lambda: SH.run(x, W[0], B[0], W[1], B[1], ws, cnt, BM, CH, 128, BN, nw))
                    _, yy = SH.run(x, W[0], B[0], W[1], B[1], ws, cnt, BM, CH, 128, BN, nw); torch.cuda.synchronize()
                    err = max(err, ((yy.float() - ref).norm() / ref.norm()).item())
                    res.append(dict(M=M, BM=BM, CH=CH, BN=BN, nw=nw, us=t, err=err, **base))
                except Exception as e:
                    res.append(dict(M=M, BM=BM, CH=CH, BN=BN, nw=nw, error=str(e)[:200]))
    best = sorted([r for r in res if r["M"] == M and "us" in r and r["err"] < 1e-2], key=lambda r: r["us"])[:4]
    bad = [r for r in res if r["M"] == M and ("error" in r or r.get("err", 0) >= 1e-2)]
    print(*line, " ; ".join(f"m{r['BM']} c{r['CH']} n{r['BN']} w{r['nw']}: {r['us']:.2f}" for r in best), f"| bad {len(bad)}", flush=True)
(OUT / "splith.json").write_text(json.dumps(res, indent=1))

print("\n== large tiles: resources and wgmma, time at 65536/262144 ==", flush=True)
cands = [KernelConfig(strategy="stream", block_m=128, block_n=32, chunk=64, num_warps=8, num_stages=3),
         KernelConfig(strategy="stream", block_m=64, block_n=64, chunk=64, num_warps=4, num_stages=3),
         KernelConfig(strategy="persist", block_m=128, block_n=256, block_k=64, num_warps=8, num_stages=3),
         KernelConfig(strategy="persist", block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=3)]
for M in (65536, 262144):
    x, W, B = device_problem(spec, M, dev, 2)
    with torch.no_grad():
        eager[0].weight.copy_(W[0]); eager[0].bias.copy_(B[0]); eager[2].weight.copy_(W[1]); eager[2].bias.copy_(B[1])
    te = gpu_us(lambda: eager(x))
    lin1 = lambda: torch.nn.functional.linear(x, W[0], B[0])
    h = lin1(); t1 = gpu_us(lin1); t2 = gpu_us(lambda: torch.nn.functional.gelu(h))
    t3 = gpu_us(lambda: torch.nn.functional.linear(h, W[1], B[1]))
    print(f"M={M} eager {te:.1f} (linear1 {t1:.1f} gelu {t2:.1f} linear2 {t3:.1f})", flush=True)
    for c in cands:
        try:
            cm = candidate_module(spec, c, OUT); r = launcher(cm, c)
            r(x, W, B); torch.cuda.synchronize()
            t = gpu_us(lambda: r(x, W, B))
            comp = list(cm._COMPILED.values())[-1]
            ptx = comp.asm.get("ptx", "")
            info = dict(regs=comp.n_regs, spills=comp.n_spills, shared=comp.metadata.shared,
                        wgmma=len(re.findall(r"wgmma.mma_async", ptx)), mma_sync=len(re.findall(r"mma.sync", ptx)),
                        cp_async=len(re.findall(r"cp.async", ptx)), tma=len(re.findall(r"cp.async.bulk.tensor", ptx)))
            try:
                sass = comp.asm["sass"]
                info.update(HGMMA=len(re.findall(r"HGMMA", sass)), LDL=len(re.findall(r"\bLDL", sass)), STL=len(re.findall(r"\bSTL", sass)),
                            LDGSTS=len(re.findall(r"LDGSTS", sass)))
            except Exception as e:
                info["sass"] = str(e)[:80]
            if M == 65536:
                (OUT / f"{c.strategy}_m{c.block_m}_n{c.block_n}.ptx").write_text(ptx)
            print(f"  {c.strategy} m{c.block_m} n{c.block_n} c{c.chunk} k{c.block_k} w{c.num_warps} s{c.num_stages}: {t:.1f} us ({te/t:.2f}x eager) {info}", flush=True)
        except Exception as e:
            print("  ", c, "ERR", str(e)[:300])
