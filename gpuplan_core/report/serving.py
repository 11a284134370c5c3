"""Typed serving results: one replica under one load (``serve --json``) and its latency against the request rate
(the Performance page's load charts).

Times are seconds (``_s``), rates per second (``_per_s``); a replica is one copy of the model on tp x pp GPUs.
Each predicted quantity carries the error band of the published serving measurements (``error_band``).
"""

from __future__ import annotations

from pydantic import Field

from ..results.base import _Sparse
from ..results.serving import ServingBands, ServingCurve, ServingResult  # noqa: F401  (re-exported: their old home)
from .results import ModelSummary


class ServeReport(ModelSummary, _Sparse):
    """One replica of the scenario on its GPU under a load, with its capacity within the targets and the replicas
    the traffic needs. ``at_load`` is flattened into the top level of the JSON. Capacity is there only when the
    scenario sets a target, the peak and the replicas only with a traffic estimate as well."""

    SOMETIMES = ("capacity_requests_per_s", "peak_requests_per_s", "replicas")

    gpu: str
    tp: int
    pp: int
    input_tokens: int
    output_tokens: int
    max_num_batched_tokens: int = Field(description="the engine's token budget per step")
    max_num_seqs: int = Field(description="the engine's limit of sequences running at once")
    at_load: ServingResult = Field(description="the replica under the load asked for")
    max_requests_per_s: float = Field(description="the request rate at which one replica saturates")
    error_band: ServingBands = Field(description="per predicted quantity: the serving calibration's band")
    provenance: dict[str, str]
    capacity_requests_per_s: float | None = Field(
        None, description="the largest request rate with p95 TTFT and mean TPOT within the targets"
    )
    peak_requests_per_s: float | None = Field(None, description="requests per day / 86,400 x peak-to-average")
    replicas: int | None = Field(None, description="ceil(peak / capacity); None when no load meets the targets")

    def _shape(self, d: dict) -> dict:
        at = d.pop("at_load")
        keys = list(d)
        cut = keys.index("max_requests_per_s")
        return {**{k: d[k] for k in keys[:cut]}, **at, **{k: d[k] for k in keys[cut:]}}
