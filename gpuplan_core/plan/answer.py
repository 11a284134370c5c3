"""The one answer to a scenario: computed once, headlined by every page, the report and ``plan --json``.

answer = the recommendation's top pick (plan/recommend.py: the cheapest configuration that fits and meets every
target the scenario sets), with
  - its cost: per month (serving) or per run (training);
  - memory per GPU at the pick's own layout (tp x pp of one replica; training: its tp, pp, data parallel, ZeRO
    stage), not the scenario's one-GPU need;
  - each target the scenario sets, checked against the pick (met, and by how much);
  - the alternatives a page shows beside it (the cheapest always-on option, the cheapest per run), each checked
    against the same targets and labelled with how it differs from the answer. An option that misses a target is
    never the answer and is labelled with what it misses ("misses the 2 s first-token target by 0.5 s").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from ..common.text import ms
from ..memory.budget import memory_budget
from ..memory.request import pick_request
from ..pricing.energy import EnergyReport, OwnReport, PriceTier
from ..pricing.offers import Offer
from ..results.plan import Pick, Plan, WhyStep
from ..scenario.parts import Parallelism
from ..scenario.scenario import Scenario
from .recommend import cost_table, recommend, search
from .site import pick_energy, pick_own, price_tiers
from .why import why_energy


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


@dataclass(frozen=True)
class Targets:
    """The targets an answer is checked against, as the search applies them: latency targets (p95 first token,
    mean time per token, seconds) for interactive serving, the deadline (hours) for training; None: not set."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    deadline_hours: float | None = None

    @classmethod
    def of(cls, sc: Scenario) -> Targets:
        if sc.job.mode != "inference":
            return cls(deadline_hours=sc.training.deadline_hours)
        if sc.job.serving == "interactive":
            return cls(sc.traffic.ttft_target_s, sc.traffic.tpot_target_s)
        return cls()


def checks_of(
    targets: Targets, ttft_s: float | None = None, tpot_s: float | None = None, wall_hours: float | None = None
) -> list[TargetCheck]:
    """Every target set, against predicted values."""
    out = []
    if targets.ttft_s:
        out.append(TargetCheck(name="ttft", label="first-token", target=targets.ttft_s, value=ttft_s, unit="s"))
    if targets.tpot_s:
        out.append(TargetCheck(name="tpot", label="time-per-token", target=targets.tpot_s, value=tpot_s, unit="s"))
    if targets.deadline_hours:
        out.append(
            TargetCheck(name="deadline", label="deadline", target=targets.deadline_hours, value=wall_hours, unit="h")
        )
    return out


def target_checks(targets: Targets, p: Pick) -> list[TargetCheck]:
    """Every target set, against one option."""
    return checks_of(targets, p.ttft_s, p.tpot_s, p.wall_hours)


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


def _pick_memory(sc: Scenario, p: Pick) -> tuple[int, str]:
    """Memory per GPU at the pick's layout (memory/request.py ``pick_request``: one replica for serving, the whole
    layout for training), and where, in words."""
    req = pick_request(sc, p)
    if sc.job.mode == "inference":
        where = f"{req.parallelism.gpus} x {p.gpu}" + (
            f" (TP {p.tp}" + (f", PP {p.pp}" if p.pp > 1 else "") + ")" if req.parallelism.gpus > 1 else ""
        )
    else:
        where = f"{req.parallelism.gpus:,} x {p.gpu}, TP {p.tp}, PP {p.pp}, ZeRO {req.parallelism.zero_stage}"
    return round(memory_budget(sc.model(), req).per_gpu_bytes), where


def _differs(ans: Pick | None, p: Pick, checks: list[TargetCheck]) -> str:
    missed = [c.text() for c in checks if not c.met]
    if missed:
        return "; ".join(missed)
    if ans is None:
        return "meets every target set"
    if p.offer_id == ans.offer_id and p.layout == ans.layout and p.weights_format == ans.weights_format:
        return "the answer itself"
    if p.offer_id == ans.offer_id:
        return f"the answer's offer at another layout ({p.replicas} x {p.layout})"
    parts = []
    if p.gpu != ans.gpu or p.gpus != ans.gpus:
        parts.append(f"{p.gpus:,} x {p.gpu} instead of {ans.gpus:,} x {ans.gpu}")
    if p.billing_model != ans.billing_model:
        parts.append(f"{p.billing_model.replace('_', '-')} instead of {ans.billing_model.replace('_', '-')}")
    if p.provider != ans.provider:
        parts.append(f"from {p.provider}")
    return ", ".join(parts) or f"another offer of the same GPUs ({p.offer_id})"


def _alternatives(targets: Targets, serving: bool, ans: Pick | None, rows: list[Pick]) -> list[Option]:
    """The cheapest always-on option (``serving``) and the cheapest per run among those that meet every target (or,
    when none does, the cheapest of all, labelled with what it misses)."""
    out = []
    if serving:
        roles = (("cheapest always-on", "monthly_usd"), ("cheapest per run", "run_cost_usd"))
    else:
        roles = (("cheapest per run", "run_cost_usd"),)
    for role, key in roles:
        priced = [r for r in rows if getattr(r, key) is not None]
        if not priced:
            continue
        checked = [(r, target_checks(targets, r)) for r in priced]
        ok = [(r, c) for r, c in checked if all(x.met for x in c)]
        r, c = min(ok or checked, key=lambda rc: (getattr(rc[0], key), rc[0].offer_id, rc[0].layout))  # ties: by id
        out.append(Option(role=role, pick=r, checks=c, differs=_differs(ans, r, c)))
    return out


def answer(
    sc: Scenario, offers: list[Offer], explore_formats: bool = False, rows: list[Pick] | None = None
) -> ScenarioAnswer:
    """The one answer: the recommendation's pick with its cost, memory at its layout, targets and alternatives.
    ``rows``: the cost table's rows for these offers when the caller has them already (the Cost page's)."""
    found = search(sc, offers) if sc.job.mode == "inference" and (rows is None or not explore_formats) else None
    plan = recommend(sc, offers, explore_formats=explore_formats, found=None if explore_formats else found)
    rows = list(cost_table(sc, offers, found=found).offers) if rows is None else list(rows)
    top = plan.picks[0] if plan.picks else None
    targets = Targets.of(sc)
    out = ScenarioAnswer(
        model=plan.model,
        mode=plan.mode,
        pick=top,
        why=plan.why,
        runners_up=plan.picks[1:],
        near_misses=plan.near_misses,
        message=plan.message,
        plan=plan,
        alternatives=_alternatives(targets, sc.job.mode == "inference", top, rows),
    )
    if top is not None:
        out.cost_usd = top.monthly_usd if top.monthly_usd is not None else top.run_cost_usd
        out.cost_per = "month" if top.monthly_usd is not None else "run"
        out.memory_per_gpu_bytes, out.memory_layout = _pick_memory(sc, top)
        out.checks = target_checks(targets, top)
        out.energy = pick_energy(sc, top)
        out.own = pick_own(sc, top)
        out.price_tiers = price_tiers(sc, top, offers)
        wall = [w.calc.result for w in out.why if w.label == "Wall time" and w.calc is not None]
        hours = (
            (wall[0] if wall else top.wall_hours or 0.0) if sc.job.mode != "inference" else sc.pricing.hours_per_month
        )
        out.why = [*out.why, *why_energy(out.energy, hours)]
    return out
