"""Typed serving results: one replica under one load (``serve --json``) and its latency against the request rate
(the Performance page's load charts).

Times are seconds (``_s``), rates per second (``_per_s``); a replica is one copy of the model on tp x pp GPUs.
Each predicted quantity carries the error band of the published serving measurements (``error_band``).
"""

from __future__ import annotations

from pydantic import Field

from ..perf.serving import ServingResult
from ..results.bands import ErrorBand
from ..results.base import _Report, _Sparse
from .results import ModelSummary


class ServingBands(_Report):
    """The band of each predicted number of a replica under load, from the published load sweeps of its kind
    (dense models on continuously batching engines, or the MoE runs)."""

    ttft_mean_s: ErrorBand
    ttft_p50_s: ErrorBand
    ttft_p95_s: ErrorBand
    tpot_mean_s: ErrorBand
    tpot_p50_s: ErrorBand
    e2e_mean_s: ErrorBand
    output_tokens_per_s: ErrorBand
    requests_per_s: ErrorBand
    capacity_requests_per_s: ErrorBand
    max_requests_per_s: ErrorBand


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


class ServingCurve(_Report):
    """One replica from a trickle to just under saturation: the points of the load charts, the target lines, its
    capacity within the targets and the replicas the traffic needs."""

    gpu: str
    tp: int
    pp: int
    max_running_sequences: int = Field(description="requests in flight at most: the KV cache or the engine limit")
    max_requests_per_s: float = Field(description="the request rate at which one replica saturates")
    capacity_requests_per_s: float | None = Field(description="within the targets; None: interactive targets unset")
    ttft_target_s: float | None = Field(description="p95; None for batch serving or no target")
    tpot_target_s: float | None
    peak_requests_per_s: float | None = Field(description="None without a traffic estimate")
    replicas: int | None = Field(description="for the peak, at the capacity (or just under saturation)")
    points: list[ServingResult] = Field(description="request rates spaced evenly on a log scale")
    notes: list[str]
    error_band: ServingBands
    provenance: dict[str, str]
