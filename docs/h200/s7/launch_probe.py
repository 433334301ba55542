"""Session 7 (session 6's graph_params_probe.py, plus two rows): can a call's host cost drop
below one kernel launch through triton's launcher (~14 us on the H200's host), either by
running the kernel from a CUDA graph whose kernel-node arguments are updated per call, or by
launching the compiled function straight through the driver (cuLaunchKernel from ctypes)?

On that host a one-kernel graph replays in ~5.4 us per call (bench run30, batch 1), a launch
costs ~14 us. This probe captures the headline's batch-1 split kernel in a graph once, then per
call points the node at the new input and a fresh output (cuGraphExecKernelNodeSetParams) and
replays it, checked against the fp32 reference on fresh inputs. It prints per-call times (loops
of 200 calls and one sync; min and median of 15 loops) of: the module's plan path, the bare
replay, the parameter update alone, the update plus replay, and torch.empty.
Run from the repository root: python3 docs/h200/s7/launch_probe.py OUT"""

import ctypes
import statistics
import sys
import time
from ctypes import POINTER, byref, c_int, c_size_t, c_uint, c_void_p
from pathlib import Path

import torch

from mlpgen.emit import entry
from mlpgen.measure import candidate_module, device_problem
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import reference, rel_error


class KernelNodeParams(ctypes.Structure):  # CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h, CUDA 12+)
    _fields_ = [
        ("func", c_void_p),
        ("gridDimX", c_uint),
        ("gridDimY", c_uint),
        ("gridDimZ", c_uint),
        ("blockDimX", c_uint),
        ("blockDimY", c_uint),
        ("blockDimZ", c_uint),
        ("sharedMemBytes", c_uint),
        ("kernelParams", POINTER(c_void_p)),
        ("extra", POINTER(c_void_p)),
        ("kern", c_void_p),
        ("ctx", c_void_p),
    ]


def driver():
    cu = ctypes.CDLL("libcuda.so.1")
    sigs = {
        "cuGraphGetNodes": [c_void_p, POINTER(c_void_p), POINTER(c_size_t)],
        "cuGraphNodeGetType": [c_void_p, POINTER(c_int)],
        "cuGraphKernelNodeGetParams_v2": [c_void_p, POINTER(KernelNodeParams)],
        "cuGraphExecKernelNodeSetParams_v2": [c_void_p, c_void_p, POINTER(KernelNodeParams)],
        "cuFuncGetParamInfo": [c_void_p, c_size_t, POINTER(c_size_t), POINTER(c_size_t)],
        "cuLaunchKernel": [c_void_p, *[c_uint] * 7, c_void_p, POINTER(c_void_p), POINTER(c_void_p)],
        "cuGraphLaunch": [c_void_p, c_void_p],
    }
    for name, args in sigs.items():
        getattr(cu, name).argtypes = args
        getattr(cu, name).restype = c_int
    return cu


def ok(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: CUresult {rc}")


def per_call(fn, calls=200, loops=15):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return min(times), statistics.median(times)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "launch_probe.log", "w")

    def say(text):
        print(text, flush=True)
        log.write(text + "\n")

    cu = driver()
    spec = MLPSpec(widths=(256, 512, 256), act="gelu", dtype="fp16")
    cfg = KernelConfig("split", block_m=16, chunk=32, block_n=256, block_k=128, num_warps=4)
    (out / "work").mkdir(exist_ok=True)
    mod = candidate_module(spec, cfg, out / "work")
    for m in (1, 64):
        probe_batch(cu, spec, cfg, mod, m, say)


def probe_batch(cu, spec, cfg, mod, m, say):
    inputs = [device_problem(spec, m, "cuda", seed=m * 100 + i) for i in range(8)]
    x0, weights, biases = inputs[0]
    calls_plan = mod._Plan(entry(cfg), m, x0)  # what a call runs (the shared workspace)
    graph_plan = mod._Plan(entry(cfg), m, x0, shared_ws=False)  # its own, zeroed once
    mod._execute(graph_plan, x0, weights, biases, private=True)  # compiled and loaded
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        y_static = mod._execute(graph_plan, x0, weights, biases, private=True)
    g.instantiate()
    n = c_size_t(0)
    ok(cu.cuGraphGetNodes(g.raw_cuda_graph(), None, byref(n)), "cuGraphGetNodes")
    nodes = (c_void_p * n.value)()
    ok(cu.cuGraphGetNodes(g.raw_cuda_graph(), nodes, byref(n)), "cuGraphGetNodes")
    kinds = []
    for node in nodes:
        t = c_int(-1)
        ok(cu.cuGraphNodeGetType(node, byref(t)), "cuGraphNodeGetType")
        kinds.append(t.value)
    say(f"M={m}: {n.value} graph node(s), types {kinds} (0 = kernel)")
    node = nodes[kinds.index(0)]
    params = KernelNodeParams()
    ok(cu.cuGraphKernelNodeGetParams_v2(node, byref(params)), "cuGraphKernelNodeGetParams")
    sizes = []
    while True:
        off, size = c_size_t(0), c_size_t(0)
        if cu.cuFuncGetParamInfo(params.func, len(sizes), byref(off), byref(size)) != 0:
            break
        sizes.append(size.value)
    if not sizes or not params.kernelParams:
        say(f"  no parameter list to update (func {params.func}, kern {params.kern})")
        return
    # our own copy of every argument, so that the node's can be pointed elsewhere per call
    bufs = [ctypes.create_string_buffer(s) for s in sizes]
    for i, (buf, s) in enumerate(zip(bufs, sizes)):
        ctypes.memmove(buf, params.kernelParams[i], s)
    arg = [ctypes.c_uint64.from_buffer(b) if s == 8 else None for b, s in zip(bufs, sizes)]
    say(
        f"  kernel params: sizes {sizes}; x {arg[0].value == x0.data_ptr()}, "
        f"y {arg[1].value == y_static.data_ptr()} (the captured pointers in slots 0 and 1)"
    )
    table = (c_void_p * len(bufs))(*[ctypes.addressof(b) for b in bufs])
    new = KernelNodeParams.from_buffer_copy(params)
    new.kernelParams = ctypes.cast(table, POINTER(c_void_p))
    exe = c_void_p(g.raw_cuda_graph_exec())

    def set_args(x, y):
        arg[0].value, arg[1].value = x.data_ptr(), y.data_ptr()
        ok(cu.cuGraphExecKernelNodeSetParams_v2(exe, node, byref(new)), "SetParams")

    def graph_call(x):
        y = torch.empty((m, spec.widths[-1]), dtype=x.dtype, device=x.device)
        set_args(x, y)
        g.replay()
        return y

    # a fresh x and y each call; the graph keeps the captured weights (inputs[0]'s): a call
    # with other weights would update those slots too
    worst = 0.0
    for x, _, _ in inputs:
        y = graph_call(x)
        worst = max(worst, rel_error(y, reference(spec, x, weights, biases)))
    say(f"  graph call with a new x and y each time: rel err {worst:.1e}")
    k = [0]

    def rotating(fn):
        def call():
            k[0] = (k[0] + 1) % len(inputs)
            return fn(inputs[k[0]][0])

        return call

    launch = cu.cuLaunchKernel
    grid = (params.gridDimX, params.gridDimY, params.gridDimZ)
    block = (params.blockDimX, params.blockDimY, params.blockDimZ)
    shmem, func, args_table = params.sharedMemBytes, c_void_p(params.func), new.kernelParams

    def driver_call(x):  # the compiled kernel straight through the driver, same arguments
        y = torch.empty((m, spec.widths[-1]), dtype=x.dtype, device=x.device)
        arg[0].value, arg[1].value = x.data_ptr(), y.data_ptr()
        stream = torch._C._cuda_getCurrentRawStream(x.device.index)
        ok(launch(func, *grid, *block, shmem, stream, args_table, None), "cuLaunchKernel")
        return y

    def raw_graph_call(x):  # cuGraphLaunch from ctypes instead of torch's replay()
        y = torch.empty((m, spec.widths[-1]), dtype=x.dtype, device=x.device)
        set_args(x, y)
        stream = torch._C._cuda_getCurrentRawStream(x.device.index)
        ok(cu.cuGraphLaunch(exe, stream), "cuGraphLaunch")
        return y

    for name, fn in (("driver launch", driver_call), ("raw graph launch", raw_graph_call)):
        worst = 0.0
        for x, _, _ in inputs:
            y = fn(x)
            worst = max(worst, rel_error(y, reference(spec, x, weights, biases)))
        say(f"  {name} with a new x and y each time: rel err {worst:.1e}")

    def plan_call(x):
        return mod._execute(calls_plan, x, weights, biases)

    def empty():
        return torch.empty((m, spec.widths[-1]), dtype=x0.dtype, device="cuda")

    y_fixed = torch.empty((m, spec.widths[-1]), dtype=x0.dtype, device=x0.device)
    rows = [
        ("plan path (_execute)", rotating(plan_call)),
        ("graph replay, same pointers", g.replay),
        ("parameter update only", rotating(lambda x: set_args(x, y_fixed))),
        ("update + replay (new x, fresh y)", rotating(graph_call)),
        ("update + cuGraphLaunch (ctypes)", rotating(raw_graph_call)),
        ("cuLaunchKernel (ctypes, fresh y)", rotating(driver_call)),
        ("torch.empty only", empty),
    ]
    for name, fn in rows:
        lo, med = per_call(fn)
        say(f"  {name:<34} min {lo:6.2f} us  median {med:6.2f} us")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
