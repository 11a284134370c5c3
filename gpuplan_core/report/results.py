"""Typed results of the api: what the app reads by attribute and the CLI writes as ``model_dump()`` JSON.

Keys and their order are the CLI's stable JSON (README): a report flattens its main GPU's fields into the top level.
Units live in the names: ``_bytes`` are bytes, ``_s`` seconds, ``_per_s`` per second.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_serializer

from ..results.bands import ErrorBand
from ..results.base import _Report
from ..results.memory import GpuFit, Layout, MemoryReport, ModelSummary, NoFit  # noqa: F401  (moved; re-exported)


class PhaseReport(_Report):
    """One phase (prefill or a decode step) on the roofline, per GPU of the replica."""

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


class SweepPoint(_Report):
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


class GpuPerf(_Report):
    """Predicted speed of the scenario on one GPU type, at the scenario's layout or the smallest that fits."""

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
    notes: list[str]
    error_band: PerfBands = Field(description="per predicted quantity: its regime's calibration band")
    provenance: dict[str, str]
    fits: Literal[True] = True
    max_batch: int
    output_tokens_per_s_at_max_batch: float | None
    decode_tokens_per_s_at_max_batch: float | None
    roofs: dict[str, float] = Field(description="dense peak FLOP/s per math format the GPU runs natively")
    sweep: list[SweepPoint]


class PerfReport(ModelSummary):
    """The scenario's GPU (``main``, flattened into the top level of the JSON) and every GPU asked for."""

    main: GpuPerf | NoFit
    gpus: list[GpuPerf | NoFit]

    @model_serializer(mode="wrap")
    def _flat(self, handler):
        d = handler(self)
        main = d.pop("main")
        gpus = d.pop("gpus")
        return {**d, **main, "gpus": gpus}
