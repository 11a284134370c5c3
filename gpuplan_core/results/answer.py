"""The one answer's typed result (plan/answer.py builds it): the pick, its cost, memory at its layout, each target
checked, the alternatives beside it. Every page headlines it; ``plan --json`` is its ``to_json()``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..common.text import ms
from ..pricing.energy import EnergyReport, OwnReport, PriceTier
from ..scenario.layout import Parallelism
from ..scenario.scenario import Scenario
from .memory import PoolMemory
from .plan import Pick, Plan, WhyStep


class TargetCheck(BaseModel):
    """One target the scenario sets, against one option's predicted value."""

    name: Literal["ttft", "tpot", "deadline"]
    label: str = Field(description="'first-token', 'time-per-token', 'deadline'")
    target: float = Field(description="seconds (ttft, tpot) or hours (deadline)")
    value: float | None = Field(None, description="the option's prediction in the same unit; None: not predicted")
    unit: Literal["s", "h"]

    @property
    def met(self) -> bool:
        return self.value is not None and self.value <= self.target

    @property
    def by(self) -> float | None:
        """How far inside (positive) or outside (negative) the target, in its unit."""
        return None if self.value is None else self.target - self.value

    def target_text(self) -> str:
        """'first token 2 s', 'time per token 100 ms', 'deadline 500 h'."""
        what = {"ttft": "first token", "tpot": "time per token", "deadline": "deadline"}[self.name]
        return f"{what} {_amount(self.target, self.unit)}"

    def text(self) -> str:
        """'within the 2 s first-token target (1,200 ms)', 'misses the 2 s first-token target by 0.5 s'. The value
        is printed as every headline prints it (a latency by ``common.text.ms``: 36.9 ms, not 37)."""
        t = f"the {_amount(self.target, self.unit)} {self.label} target"
        if self.value is None:
            return f"no prediction for {t}"
        if self.met:
            return f"within {t} ({ms(self.value) if self.unit == 's' else _amount(self.value, self.unit)})"
        return f"misses {t} by {_amount(-self.by, self.unit)}"


def _amount(x: float, unit: str) -> str:
    """Hours, seconds (to 0.01 s: 1.99 s is not 2 s) or milliseconds, without trailing zeros."""
    if unit == "h":
        return f"{x:,.0f} h" if x >= 10 else f"{x:,.1f} h"
    if x >= 1:
        return f"{x:,.2f}".rstrip("0").rstrip(".") + " s"
    return f"{x * 1e3:,.0f} ms" if x >= 0.01 else f"{x * 1e3:,.1f} ms"


class Option(BaseModel):
    """An alternative a page shows beside the answer, and how it differs from it."""

    role: Literal["cheapest always-on", "cheapest per run"]
    pick: Pick
    checks: list[TargetCheck]
    differs: str = Field(description="how it differs from the answer, in words")

    @property
    def meets_targets(self) -> bool:
        return all(c.met for c in self.checks)


class ScenarioAnswer(BaseModel):
    """What gpuplan answers for one scenario. Every page's headline reads it."""

    model: str
    mode: str
    pick: Pick | None = Field(None, description="the recommendation: None when nothing fits and meets the targets")
    cost_usd: float | None = Field(None, description="the pick's monthly cost (serving) or cost of the run")
    cost_per: Literal["month", "run"] = "month"
    memory_per_gpu_bytes: int | None = Field(None, description="the budget at the pick's layout, per GPU")
    memory_layout: str | None = Field(None, description="the layout that memory is per GPU of")
    memory_pools: list[PoolMemory] = Field(
        default_factory=list,
        exclude_if=lambda v: not v,  # in the JSON only for a disaggregated answer
        description="a disaggregated pick's pools, prefill then decode: each worker's memory per GPU (the decode "
        "worker's is memory_per_gpu_bytes); empty otherwise",
    )
    checks: list[TargetCheck] = Field(default_factory=list, description="every target the scenario sets, vs the pick")
    alternatives: list[Option] = Field(default_factory=list)
    why: list[WhyStep] = Field(default_factory=list)
    runners_up: list[Pick] = Field(default_factory=list)
    near_misses: list[Pick] = Field(default_factory=list)
    message: str | None = Field(None, description="why nothing qualifies, when nothing does")
    energy: EnergyReport | None = Field(None, description="the pick's energy, its cost and CO2 (plan/site.py)")
    own: OwnReport | None = Field(None, description="owning the pick's GPUs beside renting them")
    price_tiers: list[PriceTier] = Field(default_factory=list, description="the pick's GPU type per billing model")
    plan: Plan

    @property
    def gpus(self) -> int | None:
        return None if self.pick is None else self.pick.gpus

    def shows_pick(self, par: Parallelism) -> bool:
        """Do the detail views (Performance) describe the pick's layout? Yes unless the user picked another (the
        scenario's ``par``): a GPU type other than the pick's, or a tensor/pipeline split of their own."""
        p = self.pick
        return p is not None and (par.gpu is None or par.gpu == p.gpu) and (par.tp, par.pp) == (1, 1)

    def detail_scenario(self, sc: Scenario) -> Scenario:
        """The scenario the detail views describe: at the pick's GPU, layout and weights format (``shows_pick``),
        else the user's own."""
        if not self.shows_pick(sc.parallelism):
            return sc
        p = self.pick
        if p.ep and p.ep > 1 and p.disaggregated is None:  # expert parallel: ep GPUs at tp = pp = 1
            return sc.with_(gpu=p.gpu, tp=1, pp=1, gpus=p.replica_gpus, ep=p.ep, weights_format=p.weights_format)
        return sc.with_(gpu=p.gpu, tp=p.tp, pp=p.pp, gpus=p.tp * p.pp, weights_format=p.weights_format)

    def answer_json(self) -> dict:
        """The ``answer`` block of ``plan --json`` and ``cost --json``: every field but the plan, each check with
        whether it is met and in words."""
        return self.model_dump(exclude={"plan"}) | {
            "checks": [c.model_dump() | {"met": c.met, "text": c.text()} for c in self.checks],
            "alternatives": [
                o.model_dump()
                | {"meets_targets": o.meets_targets, "checks": [c.model_dump() | {"met": c.met} for c in o.checks]}
                for o in self.alternatives
            ],
        }

    def to_json(self) -> dict:
        """``plan --json``: the plan's keys as before, and the answer's beside them."""
        return self.plan.model_dump() | {"answer": self.answer_json()}
