"""api/cost.py: the money questions. A training run's GPU-hours are its FLOPs (6 x parameters x tokens + causal
attention) over the GPU's dense peak x MFU; each offer's run costs its GPU-hours x price x (1 + failed runs and
sweeps) x (1 + spot restarts on spot); monthly always-on is GPUs x price x 730 h (DOMAIN.md). Serving's cheapest
always-on rental is reported regardless of targets, beside the one answer. Growth re-plans the pick month by month."""

import math
from types import SimpleNamespace

import pytest

from gpuplan_core.api.cost import _offers, answer_report, cost_report, growth_report, plan_report
from gpuplan_core.results.plan import Plan
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import pick

LLAMA_8B = 8_030_261_248
TRAIN = dict(preset="Llama-3.1-8B", mode="training", gpu="H100-SXM", gpus=8, training_tokens=1e9)


@pytest.fixture(scope="module")
def training(offers):
    return cost_report(Scenario(**TRAIN), offers=offers)


@pytest.fixture(scope="module")
def serving(offers):
    return cost_report(Scenario(preset="Llama-3.1-8B", gpu="H100-SXM"), offers=offers, with_answer=True)


def test_a_training_run_s_flops_are_6_x_parameters_x_tokens_plus_causal_attention(training):
    """6 x 8,030,261,248 x 1e9 for the weights; attention 12 x layers x hidden x sequence per token, half of it
    under the causal mask: 6 x 32 x 4,096 x 4,096 x 1e9."""
    assert training.training_flops == pytest.approx(6 * LLAMA_8B * 1e9 + 6 * 32 * 4096 * 4096 * 1e9, rel=1e-12)
    assert training.training_tokens == 1e9 and training.mode == "training"


def test_gpu_hours_are_the_flops_over_dense_peak_times_mfu(training):
    """H100 SXM: 989 TFLOP/s BF16 dense; 8 GPUs share the GPU-hours, so the wall time is an eighth of them."""
    hours = training.training_flops / (989e12 * training.mfu) / 3600
    assert training.gpu_hours == pytest.approx(hours, rel=1e-9)
    assert training.wall_hours == pytest.approx(hours / 8, rel=1e-9)
    assert 0.2 < training.mfu < 0.6


def test_each_training_offer_costs_its_billed_hours_with_failed_runs_and_spot_restarts(training, offers):
    """overhead_factor 0.3 (failed runs and sweeps) on every row, spot restarts 0.1 more on spot rows; the wall time
    is billed in the offer's increment (a minute at most in these rows, rounded as the offer says)."""
    by_id = {o.offer_id: o for o in offers}
    rows = training.offers
    assert rows and {r.gpu for r in rows} == {"H100-SXM"}  # the pinned GPU's offers only
    assert [r.run_cost_usd for r in rows] == sorted(r.run_cost_usd for r in rows)  # cheapest run first
    for r in rows:
        o = by_id[r.offer_id]
        cluster_hour = o.price_per_node_hour_usd * r.gpus / o.gpus_per_node  # 8 one-GPU machines or one 8-GPU node
        spot = 1.1 if r.billing_model == "spot" else 1.0
        billed_h = r.run_cost_usd / (cluster_hour * 1.3 * spot)
        assert (o.billing_increment_s or 1) <= 60 and abs(billed_h - r.wall_hours) <= 60 / 3600, r.offer_id
        assert r.monthly_always_on_usd == pytest.approx(cluster_hour * 730)
    assert (training.gpu_hours, training.wall_hours) == (rows[0].gpu_hours, rows[0].wall_hours)


def test_the_first_row_s_energy_is_its_power_over_the_wall_time_at_the_site_s_pue(training):
    kwh = training.power_watts_per_gpu * 8 * training.wall_hours * training.pue / 1000
    assert training.energy_kwh == pytest.approx(kwh, rel=1e-9)
    assert training.co2_kg == pytest.approx(kwh * training.grid_gco2_per_kwh / 1000, rel=1e-9)
    assert training.energy_cost_usd == pytest.approx(kwh * training.electricity_usd_per_kwh, rel=1e-9)
    assert training.own.gpus == 8 and training.growth is None and training.answer is None


def test_serving_s_cheapest_always_on_is_regardless_of_targets_and_the_answer_rides_along(serving, offers):
    """One H100 SXM at the bundled file's cheapest on-demand rate: 1 x price x 730 h a month."""
    rows = serving.offers
    assert serving.cheapest_monthly_usd == min(r.monthly_always_on_usd for r in rows)
    for r in rows:
        assert r.monthly_always_on_usd == pytest.approx(r.gpus * r.price_per_gpu_hour_usd * 730)
    ans = serving.answer
    assert ans.pick.gpu == "H100-SXM" and ans.pick.meets_target
    assert serving.cheapest_monthly_usd <= ans.pick.monthly_usd
    again = answer_report(Scenario(preset="Llama-3.1-8B", gpu="H100-SXM"), offers=offers)
    assert (again.pick.offer_id, again.pick.gpus, again.pick.monthly_usd) == (
        ans.pick.offer_id,
        ans.pick.gpus,
        ans.pick.monthly_usd,
    )


def test_serving_energy_per_million_output_tokens_multiplies_out_to_the_month_s_kwh(serving):
    """10,000 requests a day x 300 output tokens x 730 / 24 days: the month's output tokens at the scenario's traffic
    (issue 27: kWh per 1M output tokens x the month's output tokens = the month's kWh)."""
    month_tokens = 10_000 * 300 * 730 / 24
    per_million = serving.energy_kwh_per_million_output_tokens
    assert per_million * month_tokens / 1e6 == pytest.approx(serving.monthly_energy_kwh, rel=1e-9)


def test_no_growth_block_without_growth_and_no_answer_unless_asked(offers):
    c = cost_report(Scenario(preset="Llama-3.1-8B", gpu="H100-SXM"), offers=offers)
    assert (c.growth, c.answer) == (None, None)


def test_growth_re_plans_the_pick_s_replicas_month_by_month(offers, h100_offer):
    """10,000 requests a day at peak-to-average 3: 10,000 / 86,400 x 3 = 0.347 req/s at the busiest hour. One replica
    carries 0.5 req/s; at 10% a month the peak passes 0.5 when 1.1^m > 1.44: month 4 (1.1^4 = 1.464) needs 2."""
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", monthly_growth=0.1)
    p = pick(offer_id=h100_offer.offer_id, requests_per_s_per_replica=0.5, monthly_usd=1.87 * 730)
    g = growth_report(sc, SimpleNamespace(pick=p), offers)
    assert (g.offer_id, g.pick_replicas, g.more_replicas_month, g.next_step_replicas) == (h100_offer.offer_id, 1, 4, 2)
    for mo in g.months[:8]:
        peak = 10_000 * 1.1**mo.month / 86_400 * 3
        assert mo.requests_per_day == pytest.approx(10_000 * 1.1**mo.month)
        assert mo.peak_requests_per_s == pytest.approx(peak)
        assert mo.replicas == math.ceil(peak / 0.5)
        assert mo.monthly_usd == pytest.approx(mo.replicas * h100_offer.price_per_gpu_hour_usd * 730)
    assert len(g.months) == 37  # months 0 .. 36


def test_growth_needs_a_pick_and_a_traffic_estimate(offers, h100_offer):
    p = pick(offer_id=h100_offer.offer_id, requests_per_s_per_replica=0.5)
    assert (
        growth_report(Scenario(preset="Llama-3.1-8B", requests_per_day=None), SimpleNamespace(pick=p), offers) is None
    )
    assert growth_report(Scenario(preset="Llama-3.1-8B"), SimpleNamespace(pick=None), offers) is None


def test_a_pricing_file_without_a_usable_offer_is_refused_with_its_errors(tmp_path):
    bad = tmp_path / "prices.csv"
    bad.write_text("offer_id,provider\nx,y\n")
    with pytest.raises(ValueError, match=r"^pricing: no usable offers; "):
        _offers(str(bad))


def test_the_plan_of_a_training_run_is_a_plan(offers):
    p = plan_report(TRAIN, offers=offers)
    assert isinstance(p, Plan)
    assert p.model_dump()["mode"] == "training"
