"""Demand that grows (plan/growth.py, results/growth.py): the pick's replicas month by month, by hand and against
the search's own plan for that month's traffic."""

from __future__ import annotations

import math

import pytest

from gpuplan_core import api
from gpuplan_core.plan.growth import grow, growth_problem
from gpuplan_core.pricing.billing import lifetime, replicas_for_traffic
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.pricing.offers import Offer
from gpuplan_core.results.growth import Growth
from gpuplan_core.results.plan import Pick
from gpuplan_core.scenario.deployment import Traffic
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import offer as an_offer

CAP = 2.0  # requests per second one replica serves within the targets


def _pick(offer: Offer, replicas: int, monthly_usd: float, tp: int = 2) -> Pick:
    """A pick on ``offer`` of 8 GPUs at TP ``tp``: ``replicas`` replicas, each serving CAP requests a second within
    the targets, for ``monthly_usd`` a month."""
    fields = dict(gpu=offer.gpu, weights_format="bf16", gpus=8, nodes=1, tp=tp, pp=1, misses=[], why=[])
    return Pick.renting(offer, **fields, replicas=replicas, monthly_usd=monthly_usd, requests_per_s_per_replica=CAP)


def test_replicas_and_cost_by_hand_month_by_month():
    # 100,000 requests a day at 3x peak: 100,000 / 86,400 x 3 = 3.47 req/s -> ceil(3.47 / 2) = 2 replicas of TP 2:
    # 4 GPUs, one 8-GPU node at 16 USD/h x 730 h = 11,680 USD a month. Growth 20% a month.
    offer = an_offer()
    traffic = Traffic(requests_per_day=100_000, peak_to_average=3, monthly_growth=0.2)
    g = grow(traffic, _pick(offer, 2, 11_680.0), offer, training_usd=50_000, months=12, hours_per_month=730)
    assert isinstance(g, Growth) and len(g.months) == 13  # months 0 .. 12, typed
    m = g.months
    for month in (0, 3, 4, 7, 12):
        rpd = 100_000 * 1.2**month
        peak = rpd / 86_400 * 3
        assert m[month].requests_per_day == pytest.approx(rpd)
        assert m[month].peak_requests_per_s == pytest.approx(peak)
        assert m[month].replicas == math.ceil(peak / CAP)
        nodes = math.ceil(m[month].replicas * 2 / 8)
        assert m[month].monthly_usd == pytest.approx(nodes * 16.0 * 730)
    # month 3: 100,000 x 1.728 / 86,400 x 3 = 6.0 req/s -> 3 replicas (6 GPUs, still one node); month 4: 7.2 -> 4
    assert [m[k].replicas for k in (0, 1, 2, 3, 4)] == [2, 3, 3, 3, 4]
    assert g.more_replicas_month == 1 and g.next_step_replicas == 3
    assert g.next_step_monthly_usd == pytest.approx(11_680.0)  # 6 GPUs still fit one 8-GPU node
    # month 7: 100,000 x 1.2^7 / 86,400 x 3 = 12.44 req/s -> 7 replicas = 14 GPUs -> 2 nodes = 23,360 USD
    assert m[7].replicas == 7 and m[7].monthly_usd == pytest.approx(23_360.0)
    # cumulative = months before: 4 x 11,680 = 46,720 < 50,000 by month 4, 5 x 11,680 = 58,400 by month 5
    assert m[4].inference_cumulative_usd == pytest.approx(4 * 11_680.0)
    assert g.inference_passes_training_month == 5
    assert m[5].total_usd == pytest.approx(50_000 + 5 * 11_680.0)


def test_replicas_never_fall_with_growth_and_equal_the_rule_for_that_months_traffic():
    offer = an_offer(gpus_per_node=1, price_per_node_hour_usd=2.0, offer_id="x-h100-1")
    traffic = Traffic(requests_per_day=30_000, peak_to_average=2.5, monthly_growth=0.07)
    g = grow(traffic, _pick(offer, 1, 2 * 2 * 730, tp=2), offer, training_usd=0.0, months=36, hours_per_month=730)
    reps = [r.replicas for r in g.months]
    assert reps == sorted(reps) and reps[-1] > reps[0]
    for r in g.months:
        rpd = traffic.requests_per_day * 1.07**r.month
        assert r.replicas == replicas_for_traffic(rpd, 2.5, CAP)
        assert r.monthly_usd == pytest.approx(r.replicas * 2 * 2.0 * 730)  # per-GPU rental: 2 GPUs a replica


def test_no_growth_is_the_flat_lifetime():
    offer = an_offer()
    g = grow(Traffic(requests_per_day=100_000), _pick(offer, 2, 11_680.0), offer, 30_000, 24, 730)
    flat = lifetime(30_000, 11_680.0, 24)
    assert [r.inference_cumulative_usd for r in g.months] == pytest.approx(
        [r["inference_cumulative_usd"] for r in flat["months"]]
    )
    assert g.inference_passes_training_month == flat["inference_passes_training_month"] == 3
    assert g.more_replicas_month is None and g.next_step_replicas is None


def test_a_spike_sizes_its_month_only():
    # 100,000/day x 3 / 86,400 = 3.47 req/s; month 4 at 5x: 17.4 req/s -> ceil(17.4 / 2) = 9 replicas, then back to 2
    offer = an_offer()
    g = grow(
        Traffic(requests_per_day=100_000, spike_month=4, spike_factor=5), _pick(offer, 2, 11_680.0), offer, 0.0, 12, 730
    )
    reps = [r.replicas for r in g.months]
    assert reps[4] == math.ceil(100_000 * 5 / 86_400 * 3 / CAP) == 9
    assert set(reps[:4] + reps[5:]) == {2}
    assert g.more_replicas_month == 4 and g.next_step_replicas == 9
    assert g.next_step_monthly_usd == pytest.approx(math.ceil(9 * 2 / 8) * 16 * 730)  # 3 nodes: 35,040 USD
    assert g.inference_passes_training_month is None  # no training bill


def test_scale_to_zero_serverless_scales_with_the_requests():
    offer = an_offer(billing_model="serverless_flex", gpus_per_node=1, price_per_node_hour_usd=4.0, offer_id="x-sl")
    g = grow(Traffic(requests_per_day=10_000, monthly_growth=0.5), _pick(offer, 1, 300.0), offer, 0.0, 3, 730)
    assert [r.monthly_usd for r in g.months] == pytest.approx([300.0 * 1.5**m for m in range(4)])


def test_active_serverless_workers_are_billed_around_the_clock():
    # 40,000/day x 3 / 86,400 = 1.39 req/s -> ceil(1.39 / 2) = 1 worker; doubling: 2.78 -> 2, 5.56 -> 3 workers;
    # each a TP-2 replica on 1-GPU machines at 4 USD/h: 2 machines x 4 x 730 = 5,840 USD a month per worker
    offer = an_offer(billing_model="serverless_active", gpus_per_node=1, price_per_node_hour_usd=4.0, offer_id="x-a")
    g = grow(Traffic(requests_per_day=40_000, monthly_growth=1.0), _pick(offer, 1, 5_840.0), offer, 0.0, 2, 730)
    assert [r.replicas for r in g.months] == [1, 2, 3]
    assert [r.monthly_usd for r in g.months] == pytest.approx([5_840.0, 11_680.0, 17_520.0])


def test_what_cannot_grow_says_which_field():
    offer = an_offer()
    assert "requests_per_day" in growth_problem(Traffic(requests_per_day=None, monthly_growth=0.1), None)
    assert "no pick" in growth_problem(Traffic(monthly_growth=0.1), None)
    with pytest.raises(ValueError, match="monthly_growth"):
        grow(Traffic(requests_per_day=0, monthly_growth=0.1), _pick(offer, 1, 1.0), offer, 0.0, 12, 730)
    with pytest.raises(ValueError, match="monthly_growth"):
        Traffic(monthly_growth=-0.1)
    with pytest.raises(ValueError, match="spike_month"):
        Scenario(spike_month=0)


def test_the_answer_grown_equals_the_search_at_that_months_traffic():
    """The real pick, grown: in the month its replicas step up, the search itself, asked with that month's traffic
    and the pick's layout, rents the same number of replicas."""
    offers = load_pricing().offers
    sc = Scenario(preset="Llama-3.1-8B", requests_per_day=200_000, monthly_growth=0.15)
    cost = api.cost_report(sc, offers=offers)
    g = cost.growth
    assert g is not None and g.pick_monthly_usd == g.months[0].monthly_usd
    step = g.more_replicas_month
    assert step is not None and g.months[step].replicas > g.pick_replicas == g.months[0].replicas
    pick = api.answer_report(sc, offers=offers, cost=cost).pick
    at = sc.with_(
        requests_per_day=g.months[step].requests_per_day,
        gpu=pick.gpu,
        gpus=pick.tp * pick.pp,
        tp=pick.tp,
        pp=pick.pp,
        weights_format=pick.weights_format,
    )
    again = api.answer_report(at, offers=offers).pick
    assert again.requests_per_s_per_replica == pytest.approx(g.requests_per_s_per_replica)
    assert again.replicas == g.months[step].replicas
    assert "growth" not in api.cost_report(sc.with_(monthly_growth=0.0), offers=offers).model_dump()
