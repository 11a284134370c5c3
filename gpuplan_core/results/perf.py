"""Typed speed results: one engine step on the roofline (``PhaseReport``, what ``perf/roofline.py`` returns), the
static views of the step model (``StaticPerf``: one request alone or a batch of B at once, what ``perf/predict.py``
returns) and one GPU type's full speed report (``GpuPerf``: the static view with its calibration band, the batch
sweep and the roofs the roofline chart draws), and ``perf --json`` of them all (``PerfReport``).

Keys and their order are the CLI's stable ``perf --json`` (README). Units live in the names: ``_s`` seconds,
``_per_s`` per second, ``_bytes`` bytes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_serializer

from .bands import ErrorBand
from .base import _Report
from .memory import ModelSummary


class PhaseReport(_Report):
    """One phase (prefill or a decode step: one engine step) on the roofline, per GPU of the replica."""

    name: str
    flops: float
    bytes: float
    weight_bytes: float
    kv_bytes: float
    time_s: float
    compute_time_s: float
    memory_time_s: float
    overhead_time_s: float
    comm_time_s: float
    bound: Literal["compute", "memory", "overhead"]
    intensity_flops_per_byte: float
    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    mfu: float
    mbu: float
    kernel_source: str = Field(
        "roofline",
        description="where the step's time came from: 'roofline', or the measured kernel tables (package, GPU, "
        "engine and version) and which groups of the step they timed (perf/kernel_steps.py)",
    )


class SweepPoint(_Report):
    """A decode step of ``batch`` sequences (the roofline's batch sweep)."""

    batch: int
    intensity_flops_per_byte: float
    achieved_flops_per_s: float
    step_time_s: float
    tokens_per_s: float
    bound: str


class PerfBands(_Report):
    """The calibration band of each predicted time and rate of a static batch (its regime's published points)."""

    ttft_s: ErrorBand = Field(description="prefill's regime")
    prefill_tokens_per_s: ErrorBand
    tpot_s: ErrorBand = Field(description="decode's regime")
    decode_tokens_per_s: ErrorBand
    decode_tokens_per_s_per_sequence: ErrorBand
    e2e_request_s: ErrorBand = Field(description="throughput's regime (decode's below 16 sequences)")
    output_tokens_per_s: ErrorBand


class StaticPerf(_Report):
    """A static view of the step model: ``batch`` requests that all arrive at once on an empty replica (one request
    alone at batch 1), their prompts read in one prefill step, then decode steps of the whole batch."""

    gpu: str
    gpu_count: int
    tp: int
    pp: int
    math_format: str
    math_note: str | None
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    ridge_flops_per_byte: float
    batch: int
    prompt_tokens: int
    output_tokens: int
    prefill: PhaseReport
    decode: PhaseReport
    ttft_s: float
    tpot_s: float = Field(description="mean decode step, exclusive of the first token")
    tpot_inclusive_s: float
    e2e_request_s: float
    decode_tokens_per_s_per_sequence: float
    decode_tokens_per_s: float
    output_tokens_per_s: float = Field(description="end to end, static batch")
    prefill_tokens_per_s: float
    compute_bound_batch: int | None
    moe_note: str | None
    notes: list[str] = Field(default_factory=list)


class GpuPerf(StaticPerf):
    """Predicted speed of the scenario on one GPU type (a static batch at the scenario's layout or the smallest that
    fits), with the band of each figure, the batch sweep and the roofs the roofline chart draws."""

    error_band: PerfBands = Field(description="per predicted quantity: its regime's calibration band")
    provenance: dict[str, str]
    fits: Literal[True] = True
    max_batch: int
    output_tokens_per_s_at_max_batch: float | None
    decode_tokens_per_s_at_max_batch: float | None
    roofs: dict[str, float] = Field(description="dense peak FLOP/s per math format the GPU runs natively")
    sweep: list[SweepPoint]


class NoFit(_Report):
    """The model fits no layout of this GPU type, or the serving engine cannot run its format there: no speed to
    predict (``notes[0]`` says which)."""

    gpu: str
    fits: Literal[False] = False
    notes: list[str]


class GpuAtLoad(_Report):
    """One GPU type as the plan runs it at the scenario's load (its cheapest configuration that meets the targets,
    else its cheapest): the layout, p95 first token and mean time per token at the peak over its replicas, and one
    replica's capacity. Without a traffic estimate the latencies are the static batch's. The pick's GPU type reads
    the pick's own figures."""

    gpu: str
    weights_format: str
    layout: str = Field(description="one replica, e.g. '2 x H100-SXM, TP 2'")
    tp: int
    pp: int
    gpu_count: int = Field(description="GPUs of one replica (tp x pp)")
    replicas: int
    ttft_s: float | None = Field(description="p95 at the peak over the replicas (static batch without traffic)")
    tpot_s: float | None
    requests_per_s_per_replica: float | None
    monthly_usd: float | None
    meets_target: bool
    misses: list[str]
    offer_id: str
    is_pick: bool = Field(description="this is the answer's pick")


class PerfReport(ModelSummary):
    """``perf --json``: the scenario's GPU (``main``, flattened into the top level of the JSON) and every GPU asked
    for."""

    main: GpuPerf | NoFit
    gpus: list[GpuPerf | NoFit]

    @model_serializer(mode="wrap")
    def _flat(self, handler):
        d = handler(self)
        main = d.pop("main")
        gpus = d.pop("gpus")
        return {**d, **main, "gpus": gpus}
