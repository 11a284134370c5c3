"""The replica cache (plan/capacity.py): a replica is judged once per question of what it reads; a change to the
traffic, the prices, the site or the training inputs re-plans without a run of the step loop."""

from __future__ import annotations

import math

import pytest

from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.capacity import LoadPoint, ReplicaEval, _grid, simulations_run
from gpuplan_core.plan.search import Layout, served
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.deployment import Traffic
from gpuplan_core.scenario.scenario import Scenario

OFFERS = load_pricing().offers


def test_the_load_points_start_under_a_quarter_and_leave_no_gap_over_a_quarter():
    # cap 1, no runs yet: 0.05, then 0.05 + 0.95 x k / 4 (ceil(0.95 / 0.25) = 4 gaps)
    assert _grid(1.0, []) == pytest.approx([0.05, 0.2875, 0.525, 0.7625])
    # the bisection ran 0.05, 0.5 and 0.6 of the capacity: 0.05 -> 0.5 (0.45) needs one point, 0.6 -> 1 another
    assert _grid(2.0, [0.1, 1.0, 1.2, 2.0]) == pytest.approx([0.55, 1.6])
    # the search's lowest run at 20% of the capacity is low enough: no 5% point; 0.2 -> 1 in ceil(0.8 / 0.25) = 4
    assert _grid(1.0, [0.2, 1.0, 3.0]) == pytest.approx([0.4, 0.6, 0.8])  # 3.0 is above the capacity: not a point


def test_latency_between_two_loads_is_their_chord_and_flat_below_the_first():
    ev = ReplicaEval(
        static=None,
        floor_ttft_s=0.1,
        floor_tpot_s=0.01,
        capacity_per_s=4.0,
        serving_batch=8,
        points=(LoadPoint(1.0, 0.2, 0.02, 2.0), LoadPoint(3.0, 0.6, 0.03, 3.0), LoadPoint(4.0, 1.6, 0.05, 5.0)),
    )
    at = ev.at(2.0)  # halfway from 1 to 3 req/s
    assert (at.ttft_p95_s, at.tpot_mean_s, at.e2e_mean_s) == pytest.approx((0.4, 0.025, 2.5))
    assert ev.at(3.5).ttft_p95_s == pytest.approx(1.1)
    assert ev.at(0.2).ttft_p95_s == 0.2  # below the first point: the first point's
    rising = (LoadPoint(1.0, 0.2, 0.02, 2.0), LoadPoint(3.0, math.inf, math.inf, math.inf, saturated=True))
    sat = ReplicaEval(None, 0.1, 0.01, 4.0, 8, rising)
    assert sat.at(2.0).saturated


def test_replicas_are_the_peak_over_the_capacity_and_the_latency_is_at_that_load():
    ev = ReplicaEval(None, 0.1, 0.01, 2.0, 8, (LoadPoint(0.1, 0.3, 0.02, 2.0), LoadPoint(2.0, 1.9, 0.04, 4.0)))
    lay = Layout(gpu=None, weights_format="bf16", tp=1, pp=1, kv_sequences=40, replica=ev)
    # 100,000 a day x 3 / 86,400 s = 3.472 req/s; ceil(3.472 / 2.0) = 2 replicas at 1.736 req/s each
    s = served(lay, Traffic(requests_per_day=100_000, peak_to_average=3.0))
    assert s.replicas == 2
    w = (100_000 * 3 / 86_400 / 2 - 0.1) / (2.0 - 0.1)
    assert s.ttft_s == pytest.approx(0.3 + w * (1.9 - 0.3))
    assert s.tpot_s == pytest.approx(0.02 + w * 0.02)


def test_traffic_price_site_and_training_changes_run_no_simulation():
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", requests_per_day=20_000, input_tokens=1500)
    first = answer(sc, OFFERS)
    assert first.pick is not None
    runs = simulations_run()
    cheaper = [o.model_copy(update={"price_per_node_hour_usd": o.price_per_node_hour_usd / 2}) for o in OFFERS]
    changes = [
        (sc.with_(requests_per_day=26_000), OFFERS),
        (sc.with_(peak_to_average=4.5), OFFERS),
        (sc.with_(hours_per_month=700.0), OFFERS),
        (sc.with_(training_tokens=5e9), OFFERS),
        (sc.with_(pue=1.5), OFFERS),
        (sc, cheaper),
    ]
    for changed, offers in changes:
        ans = answer(changed, offers)
        assert ans.pick is not None and ans.pick.gpu == "H100-SXM"
    assert simulations_run() == runs  # every replica was remembered
    more = answer(sc.with_(requests_per_day=26_000), OFFERS)
    # the capacity per replica is the same; the replicas follow the traffic: ceil(26,000 x 3 / 86,400 / capacity)
    cap = more.pick.requests_per_s_per_replica
    assert cap == first.pick.requests_per_s_per_replica
    peak = 26_000 * sc.traffic.peak_to_average / 86_400
    assert more.pick.replicas == max(1, math.ceil(peak / cap - 1e-9))
    answer(sc.with_(input_tokens=1600), OFFERS)  # a new request length is a new replica: it is simulated
    assert simulations_run() > runs


def _headline(ans) -> tuple:
    p = ans.pick
    if p is None:
        return (None, ans.message)
    return (p.offer_id, p.layout, p.gpus, p.replicas, p.monthly_usd, p.ttft_s, p.tpot_s, ans.cost_usd)


def _random_questions(n: int, seed: int) -> list[tuple[Scenario, dict]]:
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        sc = Scenario(
            preset=rng.choice(["Llama-3.1-8B", "Qwen2.5-7B", "Mistral-7B-v0.1"]),
            gpu=rng.choice(["L40S", "H100-SXM", "A100-SXM-80GB"]),
            input_tokens=rng.choice([300, 1000, 3000]),
            output_tokens=rng.choice([100, 400]),
            requests_per_day=rng.choice([5_000, 40_000, 300_000]),
        )
        change = rng.choice(
            [
                {"requests_per_day": rng.choice([2_000, 90_000, 700_000])},
                {"peak_to_average": rng.choice([1.5, 4.0])},
                {"hours_per_month": 500.0},
                {"pue": 1.6},
                {"input_tokens": sc.request.input_tokens + 200},  # a new replica question
                {"ttft_target_s": 0.8},  # a new replica question
            ]
        )
        out.append((sc, change))
    return out


@pytest.mark.parametrize("sc, change", _random_questions(6, seed=3))
def test_an_answer_from_remembered_replicas_is_the_answer_computed_afresh(sc, change):
    """The cache is keyed on everything a replica reads: after answering one question, a changed one answered from
    the remembered replicas equals the same question answered with nothing remembered (pick, layout, GPU count,
    replicas, cost and latencies), whether the change is one the cache may reuse (traffic, prices, site) or not
    (lengths, targets)."""
    from gpuplan_core.plan.capacity import evaluate_replica

    answer(sc, OFFERS)
    changed = sc.with_(**change)
    warm = _headline(answer(changed, OFFERS))
    evaluate_replica.cache_clear()
    cold = _headline(answer(changed, OFFERS))
    assert warm == cold
