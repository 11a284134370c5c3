"""The one answer to a scenario (its typed result: results/answer.py): computed once, headlined by every page,
the report and ``plan --json``.

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

from ..memory.budget import memory_budget
from ..memory.pools import pool_memory
from ..memory.request import pick_request
from ..pricing.offers import Offer
from ..results.answer import Option, ScenarioAnswer, TargetCheck
from ..results.plan import Pick, layout_label, replica_split
from ..scenario.scenario import Scenario
from .cost import cost_rows, offers_for
from .recommend import recommend, search
from .site import pick_energy, pick_own, price_tiers
from .training_search import copied, training_candidates
from .why import why_energy


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


def _pick_memory(sc: Scenario, p: Pick) -> tuple[int, str]:
    """Memory per GPU at the pick's layout (memory/request.py ``pick_request``: one replica for serving, the whole
    layout for training; a disaggregated pick's decode worker, its prefill worker in ``memory_pools``), and where, in
    words."""
    req = pick_request(sc, p)
    if (d := p.disaggregated) is not None:  # the pick's tp is its decode worker's (plan/disaggregated.py)
        where = f"one decode worker, {layout_label(p.gpu, d.decode.tp, 1)}, of the split ({replica_split(p)})"
    elif sc.job.mode == "inference":
        where = f"{req.parallelism.gpus} x {p.gpu}" + (f" ({replica_split(p)})" if req.parallelism.gpus > 1 else "")
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
    serving = sc.job.mode == "inference"
    found = search(sc, offers) if serving and (rows is None or not explore_formats) else None
    trained = for_rows = None
    if not serving and rows is None:  # one training search for the plan and the rows, as ``found`` for serving
        kept = offers_for(offers, sc.job, sc.pricing, sc.parallelism)
        trained = training_candidates(sc.model(), sc, kept)
        for_rows = copied(trained)  # before the ranking notes its misses on the plan's
    plan = recommend(
        sc, offers, explore_formats=explore_formats, found=None if explore_formats else found, trained=trained
    )
    if rows is None:
        rows = list(cost_rows(sc, offers, found=found, trained=for_rows)["offers"])
    rows = list(rows)
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
        out.memory_pools = pool_memory(sc, top)
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
