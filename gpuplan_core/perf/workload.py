"""A scenario's serving configuration: the Workload of one replica at a layout and weights format."""

from __future__ import annotations

from ..hardware.engines import ENGINES
from ..model.arch import model_from_param_count
from ..model.formats import get_format
from ..scenario.scenario import Scenario
from .roofline import Workload


def workload_for(
    sc: Scenario, tp: int | None = None, pp: int | None = None, weights_format: str | None = None
) -> Workload:
    """The formats and serving levers of one replica (perf.py), at this layout or another."""
    draft = model_from_param_count(max(sc.spec_draft_params, 500_000_000)) if sc.spec_draft_params else None
    return Workload(
        weights_format=get_format(weights_format or sc.weights_format).name,
        kv_format=get_format(sc.kv_format).name,
        tp=sc.tp if tp is None else tp,
        pp=sc.pp if pp is None else pp,
        prefix_cache_fraction=sc.prefix_cache_fraction,
        spec_draft=draft,
        spec_tokens=sc.spec_tokens,
        spec_acceptance=sc.spec_acceptance,
        eager=not ENGINES[sc.engine].cuda_graphs,
    )
