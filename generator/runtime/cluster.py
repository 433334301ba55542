"""The cluster strategy's kernels, rendered for a generated module by mlpgen.runtime. They hand
partial sums between the CTAs of a thread-block cluster through shared memory past triton's own,
which only mlpgen.runtime's launch asks for (an sm_90 GPU, a triton it supports), so a module
carries none: when a plan first takes a cluster cell, the cell's kernel joins the module's
KERNELS and its launch (CTAs a cluster, receive buffer bytes) _CLUSTER_LAUNCH. Without mlpgen,
or where clusters cannot run, the module runs the cell's rows by the heuristic default's cell."""

from __future__ import annotations

from mlpgen.render import helper_sources, shared_kernels
from mlpgen.runtime.kernel_files import file_source, import_source
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES


def kernels_source(spec: MLPSpec, config: KernelConfig) -> tuple[str, tuple[str, tuple]]:
    """(the file of the config's kernel, (its function's name, its constexpr tiles))."""
    sources, table = shared_kernels(spec, [config])
    kernels = "\n\n\n".join(sources)
    title = f"Cluster kernels of {spec.name}, rendered by mlpgen.runtime.cluster."
    return file_source(title, helper_sources(spec, sources), kernels), table[config.kernel_name]


def provide(ns: dict, cell: dict) -> None:
    """Add a cluster cell's kernel to the module's (globals `ns`) KERNELS and its launch to
    _CLUSTER_LAUNCH, unless they are there."""
    kernels = ns["KERNELS"]
    if cell["kernel"] in kernels:
        return
    spec, config = MLPSpec.from_dict(ns["SPEC"]), KernelConfig.from_dict(cell)
    source, (function, tiles) = kernels_source(spec, config)
    module = import_source("cluster", f"mlpgen_cluster_{spec.name}", source)
    kernel = kernels[cell["kernel"]] = (getattr(module, function), tiles)
    plan = STRATEGIES["cluster"].planner(spec, config)
    ns["_CLUSTER_LAUNCH"][kernel] = (plan.ctas, plan.buffer_bytes)
