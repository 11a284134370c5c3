"""Layouts left unjudged by bounds (plan/prune.py): the answer, the Cost page's rows and the counts equal the
exhaustive search's, and the bounds hold on every layout judged. More questions: ``bench/bench_prune.py --check``."""

from __future__ import annotations

import math
import random

import pytest

from gpuplan_core.plan import cost, recommend, rent
from gpuplan_core.plan import search as layout_search
from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.capacity import simulations_run
from gpuplan_core.plan.prune import TOP, Unit, _Shown
from gpuplan_core.plan.search import ServingAsk, bound
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.results.plan import Pick
from gpuplan_core.scenario.scenario import Scenario

GPUS = ("H100-SXM", "A100-80GB-SXM", "L40S", "RTX-4090", "H200")
ALL = load_pricing().offers
OFFERS = [o for o in ALL if o.gpu in GPUS]


def shown(sc: Scenario, a, offers) -> tuple:
    """Everything the answer and the Cost page show of a serving question."""
    p = a.plan
    return (
        a.pick and (a.pick.offer_id, a.pick.layout, a.pick.gpus, a.cost_usd),
        [x.model_dump() for x in (*p.picks, *p.near_misses, *p.pareto)],
        [(o.role, o.pick.model_dump(), o.differs) for o in a.alternatives],
        p.candidates,
        p.rejected,
        p.message,
        [r.model_dump() for r in cost.cost_table(sc, offers).offers],
    )


def _answer(sc: Scenario, offers, exhaustive: bool, monkeypatch) -> tuple[tuple, int]:
    layout_search.forget()
    inner = rent.inference_candidates

    def search(*args, **kw):
        return inner(*args, **kw, exhaustive=exhaustive)

    monkeypatch.setattr(recommend, "inference_candidates", search)
    monkeypatch.setattr(cost, "inference_candidates", search)
    runs = simulations_run()
    out = shown(sc, answer(sc, offers), offers)
    return out, simulations_run() - runs


def _questions(n: int, seed: int) -> list[Scenario]:
    rng = random.Random(seed)
    return [
        Scenario(
            preset=rng.choice(("Qwen2.5-7B", "Llama-3.1-8B", "Phi-3-mini-4k")),
            input_tokens=rng.choice((500, 1000, 2000, 4000)),
            output_tokens=rng.choice((100, 300)),
            requests_per_day=rng.choice((2_000, 20_000, 100_000)),
        )
        for _ in range(n)
    ]


def _compare(sc: Scenario, offers, monkeypatch) -> tuple[int, int]:
    with monkeypatch.context() as mp:
        full, full_runs = _answer(sc, offers, True, mp)
    with monkeypatch.context() as mp:
        pruned, pruned_runs = _answer(sc, offers, False, mp)
    assert pruned == full
    assert pruned_runs <= full_runs
    return full_runs, pruned_runs


@pytest.mark.parametrize(
    "sc", _questions(4, 30), ids=lambda sc: f"{sc.request.input_tokens}-{sc.traffic.requests_per_day:g}"
)
def test_the_pruned_answer_is_the_exhaustive_one(sc, monkeypatch):
    _compare(sc, OFFERS, monkeypatch)


def test_a_question_with_layouts_left_out_answers_as_the_exhaustive_search(monkeypatch):
    # the full catalog: a few of Phi-3-mini's ~40 layouts at 2,000-token prompts and 20,000 a day are left out
    sc = Scenario(preset="Phi-3-mini-4k", input_tokens=2000, requests_per_day=20_000)
    full_runs, pruned_runs = _compare(sc, ALL, monkeypatch)
    assert pruned_runs < full_runs


def test_the_bounds_hold_on_every_layout_judged():
    """No load point's p95 first token or mean end to end under one request alone on the roofline; the capacity
    within the search's bracket before its bisection and the all-slots-busy rate, and 0 exactly when the bracket's
    low end is: what prune.py leaves layouts out on (a wrong bound fails here)."""
    checked = 0
    for sc in _questions(3, 31):
        found = recommend.inference_candidates(sc.model(), sc, OFFERS, [sc.formats.weights_format], exhaustive=True)
        ask = ServingAsk.of(sc)
        for lay in found.layouts:
            b = bound(sc.model(), ask, lay.gpu, lay.weights_format, lay.tp, lay.pp, lay.kv_sequences)
            r = lay.replica
            assert b.least_capacity_per_s <= r.capacity_per_s <= b.max_rate_per_s
            assert (b.least_capacity_per_s > 0) == (r.capacity_per_s > 0)
            assert b.floor_ttft_s == r.floor_ttft_s
            for p in (*r.points, *([r.light] if r.light else [])):
                assert p.ttft_p95_s >= b.floor_ttft_s  # without prune.py's 10% margin
                assert p.e2e_mean_s >= b.floor_e2e_s
            checked += 1
    assert checked > 10


def _pick(offer: str, usd: float, ttft_s: float, misses: tuple = ()) -> Pick:
    return Pick.model_construct(offer_id=offer, monthly_usd=usd, run_cost_usd=None, ttft_s=ttft_s, misses=list(misses))


def _unit(bounds, floor_ttft_s=0.05) -> Unit:
    return Unit(None, "bf16", 1, 1, 8, [], bounds=bounds, floor_ttft_s=floor_ttft_s, priceable=True)


def test_a_layout_is_left_out_only_when_no_shown_figure_can_be_its():
    # five offers' picks that meet the targets at 100..500 USD, each 0.1 s; one that misses at 50 USD
    picks = [_pick(f"o{i}", 100.0 * i, 0.1) for i in range(1, TOP + 1)] + [_pick("cheap", 50.0, 2.0, ("TTFT",))]
    shown_ = _Shown(picks)
    assert (shown_.best, shown_.fifth, shown_._fastest(100.0, True), shown_._fastest(100.0, False)) == (
        100.0,
        (500.0, 0.1),
        2.0,  # under 100 USD only the miss
        0.1,
    )
    assert shown_.leaves_out(_unit([("o1", 600.0)], floor_ttft_s=0.1))  # over the fifth, as slow as o1
    assert not shown_.leaves_out(_unit([("o1", 500.0)], floor_ttft_s=0.1))  # ties the fifth: could be shown
    assert shown_.leaves_out(_unit([("o5", 500.0)], floor_ttft_s=0.11))  # as costly as o5's, certainly slower
    assert not shown_.leaves_out(_unit([("o9", 600.0)], floor_ttft_s=0.1))  # o9's own row
    assert not shown_.leaves_out(_unit([("o1", 600.0)], floor_ttft_s=0.09))  # could be on the Pareto front
    assert not shown_.leaves_out(Unit(None, "bf16", 1, 1, 8, [], bounds=[], priceable=False))  # serverless
    assert math.isinf(_Shown(picks[: TOP - 1]).fifth[0])  # fewer than five shown: every layout could be
