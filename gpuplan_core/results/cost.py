"""What each offer costs for the scenario (the Cost page, ``cost --json``): plan/cost.py's cost_table returns it.

Money is US dollars: ``_usd`` a total, ``monthly_`` per month of ``hours_per_month`` hours, ``run_`` one run (a
day's requests as a batch job, an hour without traffic, or the training run with failed runs and sweeps). The
rows are InferenceCostRow, TrainingCostRow (results/plan.py: a Pick and the run).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..pricing.energy import OwnReport, PriceTier
from .answer import ScenarioAnswer
from .base import _Sparse
from .growth import Growth
from .memory import ModelSummary
from .plan import InferenceCostRow, Pick, Rejected, TrainingCostRow


class CostReport(ModelSummary, _Sparse):
    """Per offer, its best configuration for the scenario (meets the targets if any does, else the cheapest),
    cheapest run first. Serving rows are InferenceCostRow, training rows TrainingCostRow. Keys that apply to one
    job only (training's size; serving's cheapest month) and the pricing file's problems (only when the report
    read a file) are left out of the JSON elsewhere."""

    SOMETIMES = (
        "training_flops",
        "training_tokens",
        "mfu",
        "tokens_note",
        "cheapest_monthly_usd",
        "pricing_errors",
        "pricing_warnings",
        "energy_kwh",
        "energy_cost_usd",
        "co2_kg",
        "monthly_energy_kwh",
        "monthly_energy_cost_usd",
        "monthly_co2_kg",
        "energy_kwh_per_million_output_tokens",
        "own",
        "growth",
    )

    mode: str
    hours_per_month: float = Field(description="the hours a month always-on is billed")
    offers: list[InferenceCostRow] | list[TrainingCostRow]
    rejected: list[Rejected]
    serverless: list[Pick] = Field(description="serving with a traffic estimate: monthly from the traffic model")
    training_flops: float | None = Field(None, description="training: tokens x (6 x active parameters + attention)")
    training_tokens: float | None = None
    mfu: float | None = Field(None, description="training: the model FLOPs utilization assumed")
    tokens_note: str | None = Field(None, description="training: how the token count was chosen, when not given")
    gpu_hours: float | None = Field(description="training: GPU-hours of the cheapest run; None for serving")
    wall_hours: float | None = Field(description="training: wall-clock hours of the cheapest run; None for serving")
    cheapest_monthly_usd: float | None = Field(
        None,
        description="serving: the least monthly always-on of any row, regardless of targets (the answer, which meets "
        "them, is the answer block's cost_usd)",
    )
    energy_kwh: float | None = Field(None, description="training: the cheapest run's kWh (GPU-hours x W x PUE)")
    energy_cost_usd: float | None = Field(None, description="training: its kWh x electricity price")
    co2_kg: float | None = Field(None, description="training: its kWh x grid intensity")
    monthly_energy_kwh: float | None = Field(None, description="serving: the first row's always-on kWh a month")
    monthly_energy_cost_usd: float | None = None
    monthly_co2_kg: float | None = None
    energy_kwh_per_million_output_tokens: float | None = Field(None, description="serving: kWh per 1M output tokens")
    power_watts_per_gpu: float | None = Field(None, description="the average power per GPU those figures use")
    pue: float | None = None
    electricity_usd_per_kwh: float | None = None
    grid_gco2_per_kwh: float | None = None
    own: OwnReport | None = Field(None, description="owning the first row's GPUs beside renting them")
    price_tiers: list[PriceTier] = Field(default_factory=list, description="the first row's GPU type per billing")
    pricing_errors: list[str] = Field(default_factory=list, description="rows of the pricing file left out, and why")
    pricing_warnings: list[str] = Field(default_factory=list)
    answer: ScenarioAnswer | None = Field(
        None, exclude=True, description="the one answer for the same offers (cost_report(with_answer=True))"
    )
    growth: Growth | None = Field(
        None,
        description="serving with a growth rate or a spike: the answer's pick re-planned month by month (None: no "
        "pick or no traffic to grow)",
    )

    @property
    def training(self) -> bool:
        return self.mode != "inference"

    def to_json(self) -> dict[str, Any]:
        """``cost --json``: the report's keys, and where the report carries the one answer for the same offers, its
        block, the same as ``plan --json``'s."""
        out = self.model_dump()
        return out if self.answer is None else out | {"answer": self.answer.answer_json()}
