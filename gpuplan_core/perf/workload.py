"""A scenario's serving configuration: the Workload of one replica at a layout and weights format."""

from __future__ import annotations

from ..hardware.engines import cuda_graphs, prefill_graphs, step_time_factor
from ..model.arch import ModelArch
from ..model.formats import get_format
from ..scenario.deployment import RuntimeAssumptions
from ..scenario.parts import Formats
from .roofline import Workload
from .speculative import replica_draft, with_draft


def workload_for(
    formats: Formats,
    assumptions: RuntimeAssumptions,
    tp: int = 1,
    pp: int = 1,
    weights_format: str | None = None,
    ep: int = 1,
    m: ModelArch | None = None,
) -> Workload:
    """The formats and serving levers of one replica (roofline.py) at a layout (tp x pp, or an MoE model's experts
    over ``ep`` GPUs with attention data-parallel: perf/expert_parallel.py), in the scenario's
    weights format or another one. Eager (no CUDA graphs) where the engine has none or its release line runs
    without them by default (hardware/engines.py ``EngineRelease.cuda_graphs``); its prompt steps eager where the line
    graphs decode-only steps (``EngineRelease.prefill_graphs``); its steps at the release line's measured time over
    the step model's (``EngineRelease.step_time_factor``). Speculating with the draft a replica of model ``m`` runs
    (model/draft.py ``replica_draft``: the user's draft model, or ``m``'s MTP module where ``spec_mtp`` is "on";
    without ``m``, the user's alone)."""
    a = assumptions
    wl = Workload(
        weights_format=get_format(weights_format or formats.weights_format).name,
        kv_format=get_format(formats.kv_format).name,
        tp=tp,
        pp=pp,
        prefix_cache_fraction=a.prefix_cache_fraction,
        spec_tokens=a.spec_tokens,
        spec_acceptance=a.spec_acceptance,
        eager=not cuda_graphs(a.engine, a.engine_version),
        step_time_factor=step_time_factor(a.engine, a.engine_version),
        ep=ep,
        eager_prefill=not prefill_graphs(a.engine, a.engine_version),
    )
    return with_draft(wl, replica_draft(m, a))
