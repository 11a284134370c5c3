"""The parts of a scenario that say how the answer is served and billed: the traffic and its latency targets, the
pricing, and the engine's runtime (memory it may fill, scheduler limits, prefix caching, speculation). One small
frozen model each, every field's default, bounds and help written once (parts.py holds what is run).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..common.units import SECONDS_PER_DAY
from ..hardware.engines import LATEST, RELEASES, Engine, EngineVersion
from ..pricing.offers import MAX_PRICE_USD_PER_HOUR
from ..pricing.overrides import parse_price_overrides
from .fields import Billing, PriceSource
from .parts import Part


class Traffic(Part):
    """The load a deployment serves and the latency it must keep."""

    requests_per_day: float | None = Field(
        10_000, ge=0, le=1e12, description="Sizes the fleet and the serverless bill; None or 0: one replica."
    )
    peak_to_average: float = Field(
        3.0,
        ge=1,
        le=100,
        description="The busiest hour's rate over the day's average: replicas are sized for the peak.",
    )
    ttft_target_s: float | None = Field(
        2.0,
        gt=0,
        le=3600,
        description="Time to first token that 95% of requests must beat under the traffic (with no traffic "
        "estimate: a single request's). Interactive serving only.",
    )
    tpot_target_s: float | None = Field(
        0.1,
        gt=0,
        le=60,
        description="Mean time per later token (50 ms is about 20 tokens/s). Interactive serving only.",
    )

    arrival: Literal["poisson", "bursty"] = Field(
        "poisson",
        description="How requests arrive: independently at random (Poisson), or in bursts (gaps twice as uneven: "
        "a launch, a batch job, a retry storm).",
    )
    lengths: Literal["fixed", "uniform", "chat"] = Field(
        "fixed",
        description="How long each request is: all exactly the set lengths; each drawn between (1 - spread) and 1 "
        "times them (benchmarks); or long-tailed around them as chat traffic is (most short, a few very long).",
    )
    length_spread: float = Field(
        0.2,
        ge=0,
        le=0.9,
        description="With lengths 'uniform': each length is drawn between (1 - spread) and 1 "
        "times the set one (0.2: between 80% and 100%).",
    )

    monthly_growth: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Traffic growth per month, compounded (as a fraction in the CLI and scenario files: 0.1 is 10% "
        "more requests each month): the Cost page's lifetime re-plans the replicas month by month. 0: no growth.",
    )
    spike_month: int | None = Field(
        None,
        ge=1,
        le=120,
        description="A month of unusual traffic (a launch, a viral week), counted from now (1: next month); the "
        "lifetime view sizes that month for the spike. None: no spike.",
    )
    spike_factor: float = Field(
        3.0, ge=1, le=100, description="The spike month's traffic over the trend's (3: three times as many requests)."
    )

    def requests_per_day_in(self, month: int) -> float | None:
        """Month ``month``'s requests per day (0: now): requests per day x (1 + growth)^month, x the spike factor in
        the spike month (None without traffic)."""
        if not self.requests_per_day:
            return None
        spike = self.spike_factor if self.spike_month is not None and month == self.spike_month else 1.0
        return self.requests_per_day * (1 + self.monthly_growth) ** month * spike

    @property
    def grows(self) -> bool:
        """Does the traffic change over the months (a growth rate or a spike)?"""
        return self.monthly_growth > 0 or self.spike_month is not None

    @property
    def peak_requests_per_s(self) -> float | None:
        """The busiest hour's arrival rate: requests per day / 86,400 s x peak-to-average (None without traffic)."""
        if not self.requests_per_day:
            return None
        return self.requests_per_day / SECONDS_PER_DAY * self.peak_to_average


class Pricing(Part):
    """Which offers are priced, and how."""

    billing: Billing | None = Field(
        None,
        description="Which offers to consider. Spot can be reclaimed at short notice; serverless bills start-up, "
        "execution and idle time. None: any billing.",
    )
    provider: str | None = Field(None, description="Only this provider's offers (from the pricing file).")
    hours_per_month: float = Field(730.0, ge=1, le=744, description="730 h is the usual convention (8,760 h / 12).")
    utilization: float = Field(
        0.5,
        ge=0.05,
        le=1,
        description="Serving utilization (for $ per 1M tokens): share of paid time spent serving at the modelled "
        "throughput.",
    )
    spot_restart_overhead: float = Field(
        0.1, ge=0, le=1, description="Work lost to reclaimed spot instances, as a share of the run."
    )
    your_prices: dict[str, float] = Field(
        default_factory=dict,
        max_length=50,
        description="Negotiated or committed rates no public catalog shows: 'offer-id=price' in USD per GPU-hour, "
        "above 0, separated by commas (offer ids are in the Cost page's tables), or a mapping. They replace the "
        "catalog price everywhere, marked 'your price', and travel in the link.",
    )
    allow_accelerators: bool = Field(
        False,
        description="Also consider accelerators that are not GPUs (Google TPU, AWS Trainium and Inferentia, Intel "
        "Gaudi): their speed is a roofline estimate with no comparable published measurement, and they need their "
        "own software stack (JAX / vLLM TPU, AWS Neuron, Intel Gaudi). Off: GPUs only, unless you pick one as the "
        "GPU.",
    )
    price_source: PriceSource = Field(
        "add",
        description="How your pricing file is used: added to the bundled offers (an offer with the same id is "
        "replaced by yours), or alone.",
    )

    @field_validator("your_prices", mode="before")
    @classmethod
    def _parse_prices(cls, v):
        """'offer-id=2.10, other-id=0.85' is read as a mapping too (a link, the CLI)."""
        if not isinstance(v, str):
            return v
        try:
            return parse_price_overrides(v)
        except ValueError as exc:
            raise ValueError(f"your_prices: {str(exc).removeprefix('your prices: ')}") from None

    @field_validator("your_prices")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        for oid, usd in v.items():
            if not oid.strip():
                raise ValueError("your_prices: an offer id is empty")
            if not 0 < usd <= MAX_PRICE_USD_PER_HOUR:
                raise ValueError(
                    f"your_prices: {oid} at {usd:g} USD per GPU-hour; a price must be above 0 and at most "
                    f"{MAX_PRICE_USD_PER_HOUR:,}"
                )
        return v


class RuntimeAssumptions(Part):
    """How the engine runs the model: the memory it may fill, the serving engine, prefix caching, speculation."""

    memory_utilization: float = Field(
        0.90, ge=0.5, le=1.0, description="Share of usable VRAM a job may fill (vLLM's gpu_memory_utilization)."
    )
    engine: Engine = Field(
        "vllm",
        description="Serving engine: the runtime terms of the memory budget follow the engine's documented defaults: "
        "CUDA graphs, chunked prefill (or the whole prompt at once), logits held, KV blocks (Methodology lists each "
        "with its source).",
    )
    engine_version: EngineVersion | None = Field(
        None,
        description="The engine's release line, where its scheduling differs: vLLM 0.6 (V0: chunked prefill only "
        "for contexts over 32K, 512 tokens a step, else whole prompts first; 256 sequences) or 0.10+ (V1), SGLang "
        "0.4 or 0.5, TensorRT-LLM 0.14 (C++ runtime), 0.17 (the PyTorch backend before 1.0: no CUDA graphs by "
        "default) or 1.x (PyTorch backend). None: the engine's latest.",
    )
    max_num_seqs: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="The engine's cap on sequences running at once (vLLM max_num_seqs). "
        "None: the engine's default for the GPU.",
    )
    max_num_batched_tokens: int | None = Field(
        None,
        ge=16,
        le=1_000_000,
        description="The engine's token budget per step: decodes plus prompt chunks "
        "(vLLM max_num_batched_tokens, SGLang chunked_prefill_size). None: the engine's default for the GPU.",
    )
    prefix_cache_fraction: float = Field(
        0.0, ge=0, le=0.95, description="Share of each prompt a prefix cache already holds: prefill skips it."
    )
    spec_draft_params: int | None = Field(
        None,
        ge=1_000_000,
        le=1_000_000_000_000,
        description="Speculative decoding: a small draft model (parameters) proposes tokens the big one verifies in "
        "one step (Leviathan et al. 2023). None: off.",
    )
    spec_tokens: int = Field(4, ge=1, le=16, description="Tokens the draft proposes before each verification.")
    spec_acceptance: float = Field(0.7, ge=0, le=1, description="Share of drafted tokens the big model accepts.")
    spec_mtp: Literal["weigh", "on", "off"] = Field(
        "weigh",
        description="Speculative decoding with the model's own multi-token-prediction module where it ships one "
        "(DeepSeek-V3/R1: one token a step at acceptance 0.85, the DeepSeek-V3 report's): weigh (the recommender "
        "weighs it against plain decoding), on, off. A named draft model comes first.",
    )
    request_in_s: float | None = Field(
        None,
        ge=0,
        le=10,
        description="Your deployment's fixed cost per request before its first token (HTTP, tokenisation, "
        "scheduling), fitted by calibrating to your own benchmark file (calibrate --from). None: the engine's "
        "default (perf/schedulers.py).",
    )
    decode_time_factor: float = Field(
        1.0,
        ge=0.2,
        le=5,
        description="Your deployment's measured time per token over the predicted one: multiplies every "
        "decode-only step, fitted by calibrating to your own benchmark file (calibrate --from). 1: as predicted.",
    )

    @model_validator(mode="after")
    def _version_of_engine(self):
        if self.engine_version is not None and (self.engine, self.engine_version) not in RELEASES:
            lines = ", ".join(v for e, v in RELEASES if e == self.engine) or "none"
            raise ValueError(
                f"engine_version: {self.engine} has no release line {self.engine_version} (its lines: {lines}; "
                f"unset: {LATEST.get(self.engine, 'the engine as it is')})"
            )
        return self

    def engine_limit_overrides(self) -> dict[str, int]:
        """The scheduler limits the user set (the rest keep the engine's defaults)."""
        return {
            k: v
            for k, v in (("max_num_seqs", self.max_num_seqs), ("max_num_batched_tokens", self.max_num_batched_tokens))
            if v is not None
        }
