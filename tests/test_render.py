import ast
import re

import pytest

from mlpgen.emit import default_table, entry, format_literal, read_module, write_module
from mlpgen.layout import chunks_of, plan_layers
from mlpgen.render import render_kernel
from mlpgen.space import DEFAULT_BUCKETS, dominated_reason, heuristic_config, infeasible_reason
from mlpgen.spec import KernelConfig, MLPSpec, SpecError


def test_chunks_cover_width_with_masks_only_where_needed():
    assert [(c.start, c.size, c.masked) for c in chunks_of(100, 64)] == [
        (0, 64, False),
        (64, 64, True),
    ]
    assert [(c.size, c.masked) for c in chunks_of(3, 64)] == [(16, True)]
    assert [(c.size, c.masked) for c in chunks_of(37, 64)] == [(64, True)]
    assert [c.masked for c in chunks_of(256, 64)] == [False] * 4


def test_plan_assigns_activations():
    layers = plan_layers(MLPSpec((8, 16, 4), act="relu", out_act="tanh"), KernelConfig())
    assert [x.act for x in layers] == ["relu", "tanh"]
    assert [x.last for x in layers] == [False, True]


@pytest.mark.parametrize("depth", range(1, 7))
def test_kernel_renders_valid_python_for_any_depth(depth):
    widths = tuple([100, 37, 10, 64, 129, 3, 200][: depth + 1])
    spec = MLPSpec(widths, act="silu", bias=depth % 2 == 0)
    src = render_kernel(spec, KernelConfig(block_m=16, chunk=32))
    ast.parse(src)
    assert src.count("tl.store(") == len(plan_layers(spec, KernelConfig(chunk=32))[-1].out_chunks)
    assert ("b0_ptr" in src) == spec.bias


def test_module_renders_parses_and_reads_back(tmp_path):
    spec = MLPSpec((100, 37, 10), act="gelu_tanh", dtype="bf16")
    path = write_module(tmp_path / f"{spec.name}.py", spec)
    ast.parse(path.read_text())
    assert "DO NOT EDIT" in path.read_text()
    spec2, tuned, prov = read_module(path)
    assert spec2 == spec
    assert tuned == {"default": default_table(spec)}
    assert prov == {}


def test_write_module_merges_gpus_and_refuses_other_specs(tmp_path):
    spec = MLPSpec((16, 16))
    path = tmp_path / f"{spec.name}.py"
    cell = {"strategy": "torch", "block_m": 64, "chunk": 64, "num_warps": 4, "num_stages": 1}
    write_module(path, spec, "GPU A|sm90|132", {1: dict(cell, kernel="", us=1.0)}, {"seed": 1})
    write_module(path, spec, "GPU B|sm80|108", {1: dict(cell, kernel="", us=2.0)}, {"seed": 2})
    _, tuned, prov = read_module(path)
    assert set(tuned) == {"default", "GPU A|sm90|132", "GPU B|sm80|108"}
    assert tuned["GPU A|sm90|132"][1]["us"] == 1.0 and prov["GPU B|sm80|108"]["seed"] == 2
    assert (
        prov["GPU B|sm80|108"]["command"]
        == "mlpgen --widths 16,16 --act gelu --dtype fp16 --seed 2"
    )
    with pytest.raises(SpecError, match="holds"):
        write_module(path, MLPSpec((16, 8)))


def test_writing_a_module_again_unchanged_leaves_the_file_alone(tmp_path):
    """Generating a spec whose module holds the same tables again (the quick start run in a
    checkout that ships the module) changes nothing but the header's date: the file is left
    as it was. Any other change is written."""
    spec = MLPSpec((16, 16))
    path = write_module(tmp_path / f"{spec.name}.py", spec)
    dated = re.sub(r"written: \S+", "written: 1999-01-01", path.read_text(), count=1)
    path.write_text(dated)
    write_module(path, spec)
    assert path.read_text() == dated
    write_module(path, spec, buckets=(1, 7))  # a new bucket in the default table
    assert path.read_text() != dated and "written: 1999-01-01" not in path.read_text()


def test_provenance_names_the_run_that_made_the_table(tmp_path):
    """A re-tune of every bucket replaces the GPU's provenance, its command included (a stale
    command of an earlier run never survives); a re-tune of some buckets splices, keeping the
    earlier fields the new run did not write."""
    spec = MLPSpec((16, 16))
    path = tmp_path / f"{spec.name}.py"
    cell = {"strategy": "torch", "block_m": 64, "chunk": 64, "num_warps": 4, "num_stages": 1}
    key, cells = "GPU A|sm90|132", {b: dict(cell, kernel="", us=1.0) for b in (1, 64)}
    write_module(path, spec, key, cells, {"buckets": [1, 64], "trials": 8, "note": "first"})
    write_module(path, spec, key, cells, {"buckets": [1, 64], "trials": 40}, merge=True)
    prov = read_module(path)[2][key]
    assert "note" not in prov and prov["command"].endswith("--batches 1,64 --trials 40")
    write_module(path, spec, key, {64: cells[64]}, {"buckets": [64], "note": "part"}, merge=True)
    prov = read_module(path)[2][key]
    assert prov["trials"] == 40 and prov["note"] == "part"
    assert prov["command"].endswith("--batches 64 --trials 40")


def test_cells_of_an_earlier_version_read_back_current(tmp_path):
    """A module written when GELU's erf was a searched field (fast_erf, kernel names ending
    in _erf) and the CUDA-graph winner was stored as graph_-prefixed fields reads back without
    the field, with today's kernel names and the winner as the cell's "graph" sub-cell, so
    re-rendering (or re-tuning) it defines the kernels its table names."""
    spec = MLPSpec((64, 96, 32), act="gelu")
    persist = KernelConfig("persist", block_m=64, block_n=64, block_k=64)
    cell = dict(persist.to_dict(), fast_erf=1, kernel=persist.kernel_name + "_erf", us=3.0)
    cell |= {"graph_" + k: v for k, v in cell.items()}
    path = write_module(tmp_path / f"{spec.name}.py", spec, "GPU|sm90|132", {1024: cell})
    text = path.read_text()
    assert text.count('fast_erf": 1') == 2 and '_erf"' in text
    path.write_text(text)
    got = read_module(path)[1]["GPU|sm90|132"][1024]
    assert not any(k.startswith("graph_") for k in got) and "fast_erf" not in got["graph"]
    assert "fast_erf" not in got and got["us"] == 3.0 == got["graph"]["us"]
    assert got["kernel"] == got["graph"]["kernel"] == persist.kernel_name
    write_module(path, spec, buckets=(1024,))
    assert "_erf" not in path.read_text().replace("_tanh", "")


def test_cells_of_retired_strategies_read_back_as_the_heuristic_default(tmp_path):
    """A cell of a retired layer-by-layer strategy (chain, or layered before it) reads back as
    the bucket's heuristic default, its tiles and times gone and its train search's winner
    kept, so the module re-renders without its kernels and runs a verified kernel until a
    re-tune; a CUDA-graph winner of one goes, another stays."""
    spec = MLPSpec((64, 96, 32), act="gelu")
    persist = entry(KernelConfig("persist", block_m=16, block_n=32, block_k=64), us=2.0)
    train = {"backward": "torch"}
    split = entry(KernelConfig("split", block_m=16, chunk=32, block_n=32, block_k=64), us=3.0)
    table = {  # written as today's cells, then renamed in the file as an earlier mlpgen wrote
        16: split | {"graph": split},
        64: entry(KernelConfig("rowblock", block_m=64), us=4.0) | {"train": train},
    }
    table[64]["graph"] = persist
    path = write_module(tmp_path / f"{spec.name}.py", spec, "GPU|sm90|132", table)
    head, table_on = path.read_text().split('"GPU|sm90|132": {', 1)  # its table, the default's
    table_on = table_on.replace('"strategy": "split"', '"strategy": "chain"', 2)
    table_on = table_on.replace('"strategy": "rowblock"', '"strategy": "layered"', 1)
    path.write_text(head + '"GPU|sm90|132": {' + table_on)
    _, tuned, prov = read_module(path)
    got = tuned["GPU|sm90|132"]
    assert prov["GPU|sm90|132"]["heuristic_default_at"] == [16, 64]  # what `show` says
    assert got[16] == entry(heuristic_config(spec, 16))
    assert got[64] == entry(heuristic_config(spec, 64)) | {"train": train, "graph": persist}
    write_module(path, spec, buckets=(16, 64))
    assert "_k_split" not in path.read_text()


def test_format_literal_is_sorted_and_evaluates():
    obj = {"b": {16: {"z": 1, "a": 2}, 1: {"k": "v"}}, "a": {}}
    text = format_literal(obj)
    assert ast.literal_eval(text) == obj
    assert text.index('"a"') < text.index('"b"') and text.index("1:") < text.index("16:")


def expected_strategy(spec: MLPSpec, m: int) -> str:
    """The H200 winners the heuristic encodes: narrow MLPs (every width, the
    input's too, <= 128) run rowblock at every batch; wider ones the torch path above 2048
    rows and below it persist with two layers or a width over 512, else rowblock."""
    widest = max(spec.widths)
    if widest <= 128:
        return "rowblock"
    if m > 2048:
        return "torch"
    return "rowblock" if spec.depth > 2 and widest <= 512 else "persist"


def test_heuristic_is_feasible_for_every_spec_and_bucket():
    """The default is the H200 winner's strategy for the spec's widths and the batch, and a
    fused one is feasible for every spec and dtype, wide ones too (persist stages activations
    through global memory), never dominated, with row tiles that grow with the batch."""
    specs = [
        (256, 512, 256),
        (784, 1024, 1024, 10),
        (3, 5, 2),
        (1024, 4096, 1024),
        (2048, 16),
        (128, 128, 128),  # the edges of the width classes
        (129, 16),
        (512, 512),
        (200, 300, 100, 10),  # deeper than two layers, widths <= 512
        (513, 8),
        (64, 64, 64, 64, 64, 3),
    ]
    seen = set()
    for widths in specs:
        for dtype in ("fp16", "bf16", "fp32"):
            spec = MLPSpec(widths, dtype=dtype)
            for m in DEFAULT_BUCKETS + (2048, 2049):
                cfg = heuristic_config(spec, m)
                assert cfg.strategy == expected_strategy(spec, m), (spec.name, m, cfg)
                assert infeasible_reason(spec, cfg) is None, (spec.name, m, cfg)
                assert dominated_reason(spec, cfg, m) is None, (spec.name, m, cfg)
                if cfg.strategy == "torch":
                    assert cfg == KernelConfig(strategy="torch")  # the one torch candidate
                seen.add((max(widths) <= 128, max(widths) <= 512, cfg.strategy))
    # every class of widths meets the strategies the rules give it
    assert seen == {
        (True, True, "rowblock"),
        (False, True, "rowblock"),
        (False, True, "persist"),
        (False, True, "torch"),
        (False, False, "persist"),
        (False, False, "torch"),
    }
    for widths in [(64, 64, 64), (2048, 16)]:  # row tiles grow with the batch
        small, large = (heuristic_config(MLPSpec(widths), m) for m in (1, 2048))
        assert small.strategy == large.strategy != "torch" and small.block_m < large.block_m


def test_stream_is_two_layers_only():
    from mlpgen.strategies.stream import plan_stream

    with pytest.raises(ValueError, match="2 layers"):
        plan_stream(MLPSpec((8, 8, 8, 8)), KernelConfig(strategy="stream"))
    src = render_kernel(MLPSpec((100, 37, 10)), KernelConfig(strategy="stream", block_n=32))
    ast.parse(src)
    assert "for j in range(0, 37, BLOCK_N)" in src and "hid[:, None] < 37" in src


def test_packed_activation_helpers_only_for_fp16_and_in_plain_strings(tmp_path):
    """fp16 modules get a packed helper for their tanh-family activations (none for relu, none
    in bf16 or fp32), its PTX in plain string literals: torch.compile copies the helper's source
    into its own file, where an escaped newline would become a broken literal."""
    for spec, helpers in (
        (MLPSpec((16, 32, 8), act="silu", out_act="sigmoid"), {"_silu_f16", "_sigmoid_f16"}),
        (MLPSpec((16, 32, 8), act="relu"), set()),
        (MLPSpec((16, 32, 8), act="silu", dtype="bf16"), set()),
        (MLPSpec((16, 32, 8), act="gelu", dtype="fp32"), set()),
    ):
        src = write_module(tmp_path / f"{spec.name}.py", spec).read_text()
        tree = ast.parse(src)
        defined = {
            n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and "_f16" in n.name
        }
        assert defined == helpers | {h + "_exact" for h in helpers}, spec.name
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in helpers:
                text = ast.get_source_segment(src, node)
                assert "tanh.approx.f16x2" in text and "\\" not in text


def test_generated_module_is_lint_clean(tmp_path):
    """What users copy into their projects passes the project's ruff rules (long TUNED lines
    aside: one cell per line by design)."""
    import subprocess
    import sys

    for spec in (MLPSpec((100, 37, 10)), MLPSpec((64, 64, 64, 64, 64, 3), act="relu")):
        path = write_module(tmp_path / f"{spec.name}.py", spec)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "check",
                "--isolated",
                "--select",
                "E,F,W,B",
                "--ignore",
                "E501,B905",
                str(path),
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_split_adds_relaxed_and_arrives_acq_rel():
    """The partial sums go out as relaxed atomic adds, one tile of outputs after another; only
    the row block's arrival on its counter orders them (acq_rel, after a CTA barrier); acq_rel
    adds cost 1-3 us at batch 1-64 on the H200 and fixed nothing. The last program reads each
    tile's sums, then (a barrier between) zeroes them: without it a thread could zero a sum
    another thread had not read yet."""
    from mlpgen.strategies.split import plan_split

    config = KernelConfig("split", block_m=16, chunk=16, block_n=16, block_k=16)
    assert plan_split(MLPSpec((8, 20, 40)), config).n_starts == (0, 16, 32)
    src = render_kernel(MLPSpec((8, 20, 40)), KernelConfig("split", chunk=16, block_n=16))
    assert src.count('sem="relaxed"') == 1 and src.count('sem="acq_rel"') == 1
    # one tile after another: a loop that triton unrolls (BLOCK_N is a constexpr argument)
    tiles = src.index("for n0 in tl.static_range(0, 40, BLOCK_N):")
    assert tiles < src.index('sem="relaxed"') < src.index("tl.debug_barrier()")
    assert src.index("tl.debug_barrier()") < src.index('sem="acq_rel"')
    # the last program: each tile's sums are read by every thread before any is zeroed
    tail = src[src.index('sem="acq_rel"') :]
    read, zero = tail.index('cache_modifier=".cg"'), tail.index("tl.store(acc, tl.zeros(")
    assert read < tail.index("tl.debug_barrier()", read) < zero


# compiles kernels of a generated module (argv[2]: their names, comma-separated) for sm_90
# (run without TRITON_INTERPRET, which the tests set: the module's kernels must be JIT
# functions); prints what the tests check, one line a kernel
COMPILE_FOR_HOPPER = """
import json, sys
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, compile
from mlpgen.runtime.cluster import provide
from mlpgen.selfcheck import load_module
mod = load_module(sys.argv[1])
for cell in mod.TUNED["test"].values():  # cluster cells: mlpgen.runtime renders their kernels
    if cell["strategy"] == "cluster":
        provide(vars(mod), cell)
for name in sys.argv[2].split(","):  # one line of JSON a kernel
    kernel, tiles = mod.KERNELS[name]
    pointer = {"fp16": "*fp16", "bf16": "*bf16", "fp32": "*fp32"}[sys.argv[3]]
    names = kernel.arg_names[: len(kernel.arg_names) - len(tiles)]  # tiles: constexprs after M
    special = {"M": "i32", "sync_ptr": "*i32", "count_ptr": "*i32", "acc_ptr": "*fp32"}
    signature = {name: special.get(name, pointer) for name in names}
    signature.update({name: "constexpr" for name in kernel.arg_names[len(names):]})
    constants = {(len(names) + i,): v for i, v in enumerate(tiles)}
    compiled = compile(ASTSource(kernel, signature, constants), target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "num_stages": 1})
    print(json.dumps({"ptx": compiled.asm["ptx"], "cubin": len(compiled.asm["cubin"]),
                      "launch": getattr(mod, "_CLUSTER_LAUNCH", {}).get((kernel, tiles))}))
"""


def test_shared_kernels_compile_for_hopper(tmp_path):
    """Each strategy's function with its tiles as constexpr arguments, two tile sets of one
    function among them, compiles for sm_90 with triton's own compiler and ptxas (the
    interpreter runs the kernels as Python, not through the compiler's constexpr handling)."""
    import json
    import os
    import subprocess
    import sys

    spec = MLPSpec((256, 512, 256), act="gelu")
    configs = [
        KernelConfig("persist", block_m=64, block_n=64, block_k=64, last_block_n=32),
        KernelConfig("persist", block_m=32, block_n=128, block_k=64),
        KernelConfig("split", block_m=16, chunk=64, block_n=128, block_k=128),
        KernelConfig("stream", block_m=64, block_n=32, chunk=128),
        KernelConfig("stream", block_m=128, block_n=64, chunk=128, tma=True),
        KernelConfig("rowblock", block_m=32, chunk=64),
    ]
    table = {2**i: entry(c) for i, c in enumerate(configs)}
    path = write_module(tmp_path / f"{spec.name}.py", spec, gpu_key="test", table=table)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    names = [c.kernel_name for c in configs]
    proc = subprocess.run(
        [sys.executable, "-c", COMPILE_FOR_HOPPER, str(path), ",".join(names), "fp16"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()[-len(names) :]
    assert len(lines) == len(names) and all(json.loads(line)["cubin"] > 0 for line in lines)


def undefined_store_operands(ptx: str) -> list[str]:
    """Registers that a remote-store asm block reads but nothing before it wrote: triton pads
    a pack=2 or pack=4 asm's operands with undefined values where a thread holds a number of
    elements that is not a multiple of the pack, which a store then uses as its CTA rank and
    mask."""
    lines = ptx.splitlines()
    bad = set()
    for i, line in enumerate(lines):
        if "st.shared::cluster" not in line:
            continue
        outs = set(re.findall(r"mov\.u32 (%r\d+), 0;", line))  # the asm's own results
        for reg in set(re.findall(r"%r\d+\b", line)) - outs:
            pattern = re.compile(re.escape(reg) + r"\b")
            if not any(pattern.search(earlier) for earlier in lines[:i]):
                bad.add(reg)
    return sorted(bad)


@pytest.mark.parametrize(
    "widths, act, dtype, bias, chunk, block_m, block_k",
    [
        ((256, 512, 256), "gelu", "fp16", True, 32, 16, 128),  # the headline: 16 CTAs a cluster
        ((100, 250, 70), "silu", "bf16", True, 64, 16, 128),  # masked k, hidden and n; 4 CTAs
        ((33, 64, 17), "relu", "fp32", False, 32, 16, 128),  # no biases; 2 CTAs
        ((256, 512, 256), "gelu", "fp16", True, 64, 32, 128),  # 32 rows, 8 CTAs
        ((256, 512, 256), "gelu", "fp16", True, 32, 1, 256),  # one row on the CUDA cores
        # one output value a thread: the store that faults on the H200 with pack=2
        ((100, 250, 70), "silu", "bf16", True, 32, 1, 256),
        ((100, 250, 70), "silu", "fp16", True, 64, 4, 64),  # 4 rows, two k steps
        ((33, 64, 17), "relu", "fp32", False, 32, 8, 128),
    ],
)
def test_cluster_kernel_compiles_for_hopper(
    tmp_path, widths, act, dtype, bias, chunk, block_m, block_k
):
    """The cluster kernel, whose inline PTX the interpreter cannot run (the module takes the
    torch path there), compiled for sm_90 by triton's own compiler and ptxas without a GPU: its
    PTX passes the cluster barrier twice (arrive, wait, then arrive and wait again), finds its
    buffer from the launch's shared memory size and hands the outputs over with remote stores
    (four values each for tl.dot tiles, an mma's four accumulators; one value each for tiles of
    1-8 rows, which multiply row by row without tensor cores), every operand of them defined;
    mlpgen.runtime, which renders it for the module, records its cluster size and receive
    buffer for the launch (ClusterPlan: CTAs x rows x owned columns x 4 bytes)."""
    import json
    import os
    import subprocess
    import sys

    from mlpgen.strategies.cluster import plan_cluster

    spec = MLPSpec(widths, act=act, dtype=dtype, bias=bias)
    config = KernelConfig("cluster", block_m=block_m, chunk=chunk, block_k=block_k, num_warps=4)
    assert infeasible_reason(spec, config) is None
    path = write_module(
        tmp_path / f"{spec.name}.py", spec, gpu_key="test", table={1: entry(config)}
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["MLPGEN_CACHE"] = str(tmp_path / "cache")  # where the runtime writes the kernel's file
    proc = subprocess.run(
        [sys.executable, "-c", COMPILE_FOR_HOPPER, str(path), config.kernel_name, dtype],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    plan = plan_cluster(spec, config)
    assert got["launch"] == [plan.ctas, plan.ctas * block_m * plan.bn * 4]
    ptx = got["ptx"]
    assert ptx.count("barrier.cluster.arrive") == 2 and ptx.count("barrier.cluster.wait") == 2
    assert "mapa.shared::cluster" in ptx and "st.shared::cluster.f32" in ptx
    assert ("mma.sync" in ptx) == (block_m >= 16) and plan.fma == (block_m < 16)
    if not plan.fma:  # four values a store: an mma's four accumulators, in their order
        quads = re.findall(r"st\.shared::cluster\.v4\.f32 \[\w+\], \{([^}]*)\}", ptx)
        mma = {m.replace(" ", "") for m in re.findall(r"mma\.sync\S* \{([^}]*)\}", ptx)}
        assert quads and all(q.replace(" ", "") in mma for q in quads)
    if plan.fma:  # the rows unrolled: each row's partial outputs stored on their own
        assert ptx.count("st.shared::cluster.f32") >= block_m
    assert undefined_store_operands(ptx) == []
    assert "%dynamic_smem_size" in ptx and got["cubin"] > 0


@pytest.mark.parametrize("widths", [(256, 512, 256), (24, 40, 48, 8), (64, 32)])
def test_persist_releases_the_next_kernel_after_its_last_barrier(widths):
    """persist waits for the previous kernel before anything else; with several layers it lets
    the next launch only after its last grid barrier (on the H200 5.85 us at the headline's 1024
    rows against 8.33 releasing at the start), with one layer at its start."""
    spec = MLPSpec(widths, act="gelu")
    config = KernelConfig("persist", block_m=64, block_n=64, block_k=64, num_stages=4, pdl=True)
    text = render_kernel(spec, config)
    body = text[text.index("def _k_persist") :]
    steps = re.findall(r"_pdl_\w+\(|_grid_sync\(|tl\.load\(|# layer \d+", body)
    barriers = len(widths) - 2
    if barriers == 0:
        assert steps[0] == "_pdl_enter(" and "_pdl_release(" not in steps
        return
    assert steps[0] == "_pdl_wait(" and "_pdl_enter(" not in steps
    assert steps.count("_pdl_wait(") == steps.count("_pdl_release(") == 1
    release = steps.index("_pdl_release(")
    assert steps[release - 1] == "_grid_sync(" and steps.count("_grid_sync(") == barriers
    assert steps[release + 1] == f"# layer {len(widths) - 2}"  # the last layer follows


def test_compacted_kernels_have_the_templates_syntax_tree(monkeypatch):
    """compact() only joins lines: every kernel of the shipped tables (every strategy, odd
    widths' masks) parses to the tree its template renders, and comes out shorter."""
    from conftest import SHIPPED

    import mlpgen.render as render

    specs = [read_module(p)[:2] for p in SHIPPED]
    odd = MLPSpec((37, 100, 10), act="gelu", dtype="fp32")
    specs.append((odd, {"default": default_table(odd)}))
    kernels = {
        (spec, KernelConfig.from_dict(cell))
        for spec, tuned in specs
        for table in tuned.values()
        for cell in table.values()
        if cell.get("kernel")
    }
    assert {config.strategy for _, config in kernels} >= {"cluster", "persist", "split", "stream"}
    compacted, compact = {k: render_kernel(*k) for k in kernels}, render.compact
    monkeypatch.setattr(render, "compact", lambda source: source)
    shorter = 0
    for key, text in compacted.items():
        raw = render_kernel(*key)
        assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(raw)), key
        assert max(len(line) for line in text.splitlines()[2:]) <= max(
            100, *(len(line) for line in raw.splitlines()[2:])
        )
        shorter += text.count("\n") < raw.count("\n")
    assert shorter >= len(kernels) // 2
    assert compact("f(\n    a,\n    b,\n)\n") == "f(a, b)\n"
    assert compact("t = (\n    a,\n)\n") == "t = (\n    a,\n)\n"  # a 1-tuple keeps its comma


def test_a_module_declares_only_the_strategy_tables_its_launch_parts_fill():
    """The shipped 64-wide module runs rowblock only: no grid, workspace, readiness, fallback or
    layer-step tables, nor the SM count; the headline's cluster, persist and TMA cells bring
    theirs, and mlpgen.runtime reads the workspace size off their buffers."""
    import torch
    from conftest import SHIPPED

    from mlpgen.runtime.lanes import workspace_bytes

    texts = {p.stem: p.read_text() for p in SHIPPED}
    tables = ("_GRIDS", "_WORKSPACE_BUFFERS", "_READY", "_RUNNABLE", "_STEPS", "_OP_TORCH")
    rowblock = texts["mlp_64x64x64x64x64x3_relu_fp16"]
    for name in (*tables, "_WORKSPACES", "def _fallback", "def _sm_count", "def _workspace"):
        assert name not in rowblock, name
    headline = texts["mlp_256x512x256_gelu_fp16"]
    for name in (*tables[:4], "_OP_TORCH = set()", "def _fallback", "def _sm_count"):
        assert name in headline, name
    assert "_STEPS" not in headline
    persist = {"WIDTHS": [256, 512, 256], "DTYPE": torch.float16, "torch": torch}
    exec(headline[headline.index("def _persist_buffers") :].split("\n\n\n")[0], persist)
    assert workspace_bytes(persist["_persist_buffers"], 37) == 37 * 512 * 2 + 4
