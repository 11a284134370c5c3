"""Typed serving results: one replica under one load (``perf/serving.serve`` returns ``ServingResult``; ``serve
--json`` flattens it), the band of each predicted number, and one replica's latency against the request rate (the
Performance page's load charts, ``ServingCurve``); ``serve --json`` of one replica (``ServeReport``).

Times are seconds (``_s``), rates per second (``_per_s``); a replica is one copy of the model on tp x pp GPUs.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .bands import ErrorBand
from .base import _Report, _Sparse
from .memory import ModelSummary


class ServingResult(BaseModel):
    """One replica under one load (``perf/serving.serve``). Latencies are None when the load is beyond what the
    replica can serve."""

    model_config = ConfigDict(frozen=True)

    load_kind: Literal["concurrency", "request_rate"]
    load: float
    saturated: bool
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    tpot_mean_s: float | None = Field(description="mean time per output token after the first")
    tpot_p50_s: float | None = Field(description="median gap between two tokens (inter-token latency)")
    e2e_mean_s: float | None
    output_tokens_per_s: float
    requests_per_s: float
    running_sequences: float
    max_running_sequences: int
    waiting_requests: float
    prefill_steps_per_request: int
    decode_step_s: float
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p90_s: float | None = Field(None, description="inter-token gap, 90th percentile")
    itl_p95_s: float | None = None
    itl_p99_s: float | None = None
    preemptions: int = Field(0, description="sequences preempted (KV cache full) and recomputed during the run")
    simulated_requests: int = Field(0, description="requests in the simulated run")
    arrival: str = "poisson"
    lengths: str = "fixed"
    notes: list[str] = Field(default_factory=list)

    @classmethod
    def saturated_at(cls, request_rate: float, running: float, **common) -> ServingResult:
        """A load beyond what the replica serves: no latency, no throughput, the queue unbounded."""
        none = dict.fromkeys(("ttft_mean_s", "ttft_p50_s", "ttft_p95_s", "tpot_mean_s", "tpot_p50_s", "e2e_mean_s"))
        return cls(
            load_kind="request_rate",
            load=request_rate,
            saturated=True,
            output_tokens_per_s=0.0,
            requests_per_s=0.0,
            running_sequences=running,
            waiting_requests=math.inf,
            **none,
            **common,
        )


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


class ServingCurve(_Report):
    """One replica from a trickle to just under saturation: the points of the load charts, the target lines, its
    capacity within the targets and the replicas the traffic needs."""

    gpu: str
    tp: int
    pp: int
    ep: int = Field(1, description="expert parallel: the replica's attention-DP ranks (1: tensor parallel)")
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

    @property
    def replica_gpus(self) -> int:
        """GPUs of one replica: tp x pp, or an expert-parallel replica's ep."""
        return self.tp * self.pp * self.ep

    @property
    def peak_per_replica_requests_per_s(self) -> float | None:
        """The traffic's peak over the replicas it needs: the load each replica carries at the peak."""
        return self.peak_requests_per_s / self.replicas if self.peak_requests_per_s and self.replicas else None


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
