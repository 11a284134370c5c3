"""The money questions: per-offer cost (with the first row's energy, owning and price tiers), growth, the plan and
the one answer. Re-exported by ``gpuplan_core.api``.

requests/day reaches the Cost page's chart through 10 files (traced, and listed, by tests/ui/test_cost_path.py)."""

from __future__ import annotations

from typing import Any

from ..report.cost import CostReport
from ..scenario.scenario import Scenario
from ._shared import model_summary, scenario_of


def _offers(pricing_path: str | None):
    from ..pricing.csv_file import load_pricing

    report = load_pricing(pricing_path)
    if not report.offers:
        raise ValueError("pricing: no usable offers; " + "; ".join(str(e) for e in report.errors[:5]))
    return report


def cost_report(
    s: Scenario | dict[str, Any],
    pricing_path: str | None = None,
    offers=None,
    fixed_layout: bool = False,
    growth: bool = True,
    with_answer: bool = False,
) -> CostReport:
    """Per offer: per-run cluster cost and monthly always-on; training: GPU-hours and wall hours. ``fixed_layout``:
    only the scenario's own layout is priced (plan.recommend.cost_table says what that is per job). ``growth``:
    with the growth block (it needs the answer; a caller that builds the answer itself leaves it out).
    ``with_answer``: the report carries the one answer for the same offers (``cost --json``'s answer block)."""
    from ..plan.recommend import cost_table

    sc = scenario_of(s)
    report = None
    if offers is None:
        report = _offers(pricing_path)
        offers = report.offers
    table = cost_table(sc, offers, fixed_layout)  # the scenario's GPU type only, when it sets one; cheapest run first
    rows = table.offers
    first = rows[0] if rows else None
    out: dict[str, Any] = {
        **model_summary(sc).model_dump(),
        "mode": sc.job.mode,
        "hours_per_month": sc.pricing.hours_per_month,
        "offers": rows,
        "rejected": table.rejected,
        "serverless": table.serverless,
    }
    if sc.job.mode != "inference":
        out.update(
            training_flops=table.training_flops,
            training_tokens=table.training_tokens,
            mfu=table.mfu,
            tokens_note=table.tokens_note,
            gpu_hours=None if first is None else first.gpu_hours,
            wall_hours=None if first is None else first.wall_hours,
        )
    else:
        out.update(
            gpu_hours=None,
            wall_hours=None,
            cheapest_monthly_usd=None if not rows else min(r.monthly_always_on_usd for r in rows),
        )
    if first is not None:
        out.update(_first_row_site(sc, first, offers))
    if report is not None:
        out["pricing_errors"] = [str(e) for e in report.errors]
        out["pricing_warnings"] = [str(w) for w in report.warnings]
    cost = CostReport(**out)
    grows = growth and sc.job.mode == "inference" and sc.traffic.grows
    if not grows and not with_answer:
        return cost
    ans = answer_report(sc, offers=offers, cost=cost)
    return CostReport(
        **out, growth=growth_report(sc, ans, offers) if grows else None, answer=ans if with_answer else None
    )


def _first_row_site(sc: Scenario, first, offers) -> dict[str, Any]:
    """The cheapest row's energy (the keys of its phase), the site figures they use, owning and price tiers."""
    from ..plan.site import pick_energy, pick_own, price_tiers

    out: dict[str, Any] = {"own": pick_own(sc, first), "price_tiers": price_tiers(sc, first, offers)}
    if (e := pick_energy(sc, first)) is None:
        return out
    if e.phase == "training":
        keys = ("energy_kwh", "energy_cost_usd", "co2_kg")
    else:
        keys = (
            "monthly_energy_kwh",
            "monthly_energy_cost_usd",
            "monthly_co2_kg",
            "energy_kwh_per_million_output_tokens",
        )
    keys += ("power_watts_per_gpu", "pue", "electricity_usd_per_kwh", "grid_gco2_per_kwh")
    return out | {k: getattr(e, k) for k in keys}


def growth_report(s: Scenario | dict[str, Any], answer, offers, training_usd: float = 0.0, months: int = 36):
    """The answer's pick re-planned month by month for the scenario's growth and spike (plan/growth.py), or None
    when there is no pick or no traffic to grow (``plan.growth.growth_problem`` says why)."""
    from ..plan.growth import grow, growth_problem

    sc = scenario_of(s)
    if growth_problem(sc.traffic, answer.pick):
        return None
    offer = next(o for o in offers if o.offer_id == answer.pick.offer_id)
    return grow(sc.traffic, answer.pick, offer, training_usd, months, sc.pricing.hours_per_month)


def plan_report(
    s: Scenario | dict[str, Any], pricing_path: str | None = None, offers=None, explore_formats: bool = False
):
    """The recommendation as a typed Plan (plan.py); the CLI's JSON is its model_dump()."""
    from ..plan.recommend import recommend

    sc = scenario_of(s)
    if offers is None:
        offers = _offers(pricing_path).offers
    return recommend(sc, offers, explore_formats=explore_formats)


def answer_report(
    s: Scenario | dict[str, Any],
    pricing_path: str | None = None,
    offers=None,
    explore_formats: bool = False,
    cost: CostReport | None = None,
):
    """The one answer to the scenario (plan/answer.py): the pick, its cost, memory at its layout, its targets and
    the alternatives. Every page headlines it; ``plan --json`` is its ``to_json()``. ``cost``: this scenario's cost
    report for the same offers, when the caller has it (its rows are the alternatives' candidates)."""
    from ..plan.answer import answer

    sc = scenario_of(s)
    if offers is None:
        offers = _offers(pricing_path).offers
    return answer(sc, offers, explore_formats=explore_formats, rows=None if cost is None else cost.offers)
