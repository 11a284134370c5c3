"""The typed plan: the picks, near misses and rejections, the why-chain and the cost-latency Pareto front.

``recommend.py`` builds it (inference candidates from ``search.py``, training candidates from ``training.py``); the
CLI's JSON is its ``model_dump()``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_serializer


class WhyStep(BaseModel):
    """One link of the why-chain: a label, its value, and how it follows from the ones before."""

    model_config = ConfigDict(frozen=True)

    label: str
    value: str
    detail: str = ""


class Pick(BaseModel):
    """One priced configuration. ``monthly_usd`` = GPUs paid for x price per GPU-hour x hours per month."""

    gpu: str
    weights_format: str
    offer_id: str
    provider: str
    product: str
    billing_model: str
    gpus: int = Field(description="GPUs paid for (whole nodes where the offer rents whole nodes)")
    nodes: int = Field(description="machines (or serverless workers at peak)")
    tp: int
    pp: int
    layout: str = Field(description="e.g. '2 x H100-SXM, TP 2': one replica")
    replicas: int = Field(description="copies of the layout: serving replicas, or a training job's data-parallel ranks")
    zero_stage: int | None = None
    monthly_usd: float | None
    run_cost_usd: float | None
    price_per_gpu_hour_usd: float
    ttft_s: float | None = Field(None, description="p95 under the traffic, else the static batch's")
    tpot_s: float | None = None
    error_band: str | None = Field(
        None, description="how far to trust ttft_s and tpot_s: the calibration band of their regime"
    )
    wall_hours: float | None = None
    mfu: float | None = Field(None, description="training: the MFU the GPU-hours use (predicted, or the user's)")
    mfu_predicted: bool | None = Field(None, description="training: True when the MFU is the step model's prediction")
    mfu_low: float | None = Field(None, description="training: the prediction's band (held-out error), low end")
    mfu_high: float | None = Field(None, description="training: the prediction's band, high end")
    tokens_per_s_per_gpu: float | None = Field(None, description="training: tokens per second per GPU at that MFU")
    requests_per_s_per_replica: float | None = None
    output_cost_per_million_usd: float | None = None
    input_cost_per_million_usd: float | None = None
    fits: bool = True
    meets_target: bool
    misses: list[str]
    why: list[str]
    source: str
    price_as_of: str | None
    user_price: bool = Field(False, description="priced at the user's own rate (Your prices), not the catalog's")


class ParetoPoint(BaseModel):
    """A configuration no other beats on both cost and p95 TTFT."""

    offer_id: str
    gpu: str
    layout: str
    weights_format: str
    monthly_usd: float
    ttft_s: float
    tpot_s: float | None
    meets_target: bool


class Plan(BaseModel):
    model: str
    mode: str
    unit: str
    picks: list[Pick] = Field(default_factory=list)
    near_misses: list[Pick] = Field(default_factory=list)
    rejected: list[dict] = Field(default_factory=list)
    candidates: int = 0
    why: list[WhyStep] = Field(default_factory=list, description="the top pick's why-chain")
    pareto: list[ParetoPoint] = Field(default_factory=list)
    message: str | None = Field(None, description="why nothing qualifies, when nothing does")
    training_flops: float | None = None
    training_tokens: float | None = None
    mfu: float | None = None
    tokens_note: str | None = None


# ---- the cost table's rows (the Cost page) ------------------------------------------------------


class InferenceCostRow(Pick):
    """One offer's best serving configuration on the Cost page: its Pick (monthly always-on, latency, layout) and
    a run: a day's requests as one batch job on the replicas, or an hour without a traffic estimate."""

    run_cost_usd: float = Field(description="the run on whole nodes: billing increments, minimums, spot restarts")
    run_hours: float = Field(description="the run's length: a day's requests / (capacity x replicas), else 1 hour")
    run_description: str = Field(description="what the run is, in words")
    monthly_always_on_usd: float = Field(description="GPUs paid for x price per GPU-hour x hours per month")
    notes: list[str] = Field(description="the run's billing notes")


class TrainingCostRow(Pick):
    """One offer's training run on the Cost page: its Pick (run cost with failed runs and sweeps, wall hours) and
    what the same GPUs cost kept a month."""

    monthly_always_on_usd: float = Field(description="the run's GPUs x price per GPU-hour x hours per month")
    gpu_hours: float = Field(description="training FLOPs / (dense BF16 peak x MFU), in GPU-hours")
    notes: list[str] = Field(description="how the run is laid out and billed (the pick's why)")


class Rejected(BaseModel):
    """A GPU type, offer or layout that cannot run the scenario, and why (the JSON leaves out the keys it has none
    for: no offer means no offer of the GPU type can run it, no layout any layout)."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    reason: str
    weights_format: str | None = None
    offer_id: str | None = None
    layout: str | None = Field(None, description="one replica, e.g. '2 x H100-SXM, TP 2'")

    @model_serializer(mode="wrap")
    def _given(self, handler):
        return {k: v for k, v in handler(self).items() if v is not None}


class CostTable(BaseModel):
    """What cost_table prices: a row per offer (its best configuration), serverless apart, what cannot run, and
    the training job's size (training only)."""

    offers: list[InferenceCostRow] | list[TrainingCostRow]
    serverless: list[Pick] = Field(default_factory=list)
    rejected: list[Rejected] = Field(default_factory=list)
    training_flops: float | None = None
    training_tokens: float | None = None
    mfu: float | None = None
    tokens_note: str | None = None
