"""The money questions: per-offer cost (plan/cost.py's report, with the pricing file's problems), growth, the plan
and the one answer. Re-exported by ``gpuplan_core.api``.

The Cost page reads plan/cost.py's report directly (``api.cost_table``, re-exported): requests/day reaches its chart
through 8 files (traced, and listed, by tests/ui/test_cost_path.py)."""

from __future__ import annotations

from typing import Any

from ..results.cost import CostReport
from ..scenario.scenario import Scenario
from ._shared import scenario_of


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
    """Per offer: per-run cluster cost and monthly always-on; training: GPU-hours and wall hours (plan/cost.py's
    cost_table, the report the Cost page reads through ``api.cost_table``). ``fixed_layout``: only the scenario's
    own layout is priced (cost_table says what that is per job). Here the report also gets the pricing file's
    problems (when it read one), ``growth``: the growth block (it needs the answer; a caller that builds the answer
    itself leaves it out), and ``with_answer``: the one answer for the same offers (``cost --json``'s answer
    block)."""
    from ..plan.cost import cost_table

    sc = scenario_of(s)
    read = None
    if offers is None:
        read = _offers(pricing_path)
        offers = read.offers
    cost = cost_table(sc, offers, fixed_layout)  # the scenario's GPU type only, when it sets one; cheapest run first
    more: dict[str, Any] = {}
    if read is not None:
        more |= {"pricing_errors": [str(e) for e in read.errors], "pricing_warnings": [str(w) for w in read.warnings]}
    grows = growth and sc.job.mode == "inference" and sc.traffic.grows
    if grows or with_answer:
        ans = answer_report(sc, offers=offers, cost=cost)
        more |= {"growth": growth_report(sc, ans, offers) if grows else None, "answer": ans if with_answer else None}
    return cost.model_copy(update=more) if more else cost


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
