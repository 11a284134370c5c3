"""The cost engine: billing rules by hand, the cost and plan reports built on them."""

import pytest

from gpuplan_core import api
from gpuplan_core.pricing.billing import (
    MARKET_ESTIMATES,
    billed_seconds,
    break_even_busy_share,
    cost_per_million_tokens,
    gpu_hours,
    lifetime,
    market_projection,
    monthly_always_on,
    nodes_needed,
    replicas_for_traffic,
    run_cost,
    serverless_monthly,
    training_flops,
)
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

BY_ID = {o.offer_id: o for o in load_pricing().offers}


def test_billing_increments_and_minimums():
    assert billed_seconds(61, 1, 60) == 61  # per-second, 60 s minimum: a 61 s job bills 61 s
    assert billed_seconds(30, 1, 60) == 60  # the minimum applies
    assert billed_seconds(61, 60, None) == 120  # per-minute, rounded up
    assert billed_seconds(119, 60, None, "down") == 60  # Azure: whole minutes only
    # research example: 37 min 20 s = 2,240 s; per-minute up -> 2,280 s; down -> 2,220 s
    assert billed_seconds(2240, 60, None, "up") == 2280
    assert billed_seconds(2240, 60, None, "down") == 2220


def test_node_rounding_pays_idle_gpus():
    assert nodes_needed(10, 8) == 2
    rc = run_cost(BY_ID["aws-p5-48xl-use1-od"], 10, 3600)
    assert rc.billed_gpus == 16 and rc.idle_gpus == 6
    assert rc.run_cost_usd == pytest.approx(2 * 55.04)
    assert any("6 idle GPUs" in n for n in rc.notes)


def test_always_on_is_730_hours():
    o = BY_ID["runpod-h100-secure-od"]
    assert monthly_always_on(o, 1) == pytest.approx(o.price_per_node_hour_usd * 730)
    assert monthly_always_on(o, 1, hours_per_month=720) == pytest.approx(o.price_per_node_hour_usd * 720)


def test_training_gpu_hours_hand_computed():
    # 6 x 7e9 x 1e12 = 4.2e22 FLOPs on H100 (989 TFLOP/s dense BF16) at 50% MFU
    flops = training_flops(7e9, 1e12)
    assert flops == 4.2e22
    assert gpu_hours(flops, 989e12, 0.5) == pytest.approx(23_593, abs=1)
    assert training_flops(7e9, 1e12, method="lora") == 4 * 7e9 * 1e12
    # causal attention adds 6 x L x s x (a x d) per token
    assert training_flops(7e9, 1e6, layers=32, context=4096, attn_width=4096) == 6 * (7e9 + 32 * 4096 * 4096) * 1e6
    with pytest.raises(ValueError, match="mfu"):
        gpu_hours(flops, 989e12, 0)


def test_spot_restart_overhead_and_reservation():
    spot = BY_ID["aws-p5-48xl-use1-spot"]
    rc = run_cost(spot, 8, 3600, spot_restart_overhead=0.25)
    assert rc.billed_s == 4500 and rc.run_cost_usd == pytest.approx(spot.price_per_node_hour_usd * 1.25)


def test_serverless_vs_always_on_break_even():
    # research: RunPod H100 pod 3.49 $/h vs serverless flex 4.176 $/h -> 83.6%
    assert break_even_busy_share(3.49, 4.176) == pytest.approx(0.8357, abs=1e-4)
    import math

    # a worker kept busy: 10 req/s, each 3 s in flight, 20 req/s capacity: one worker, always busy, no cold starts
    busy = serverless_monthly(3.6, 86_400 * 10, e2e_s=3, capacity_requests_per_s=20, cold_start_s=30, idle_timeout_s=5)
    assert (busy.workers_average, busy.workers) == (1, 1)
    assert busy.cold_starts_per_month < 1 and busy.busy_share > 0.999
    assert busy.billed_seconds_per_month == pytest.approx(730 * 3600, rel=1e-6)  # billed like always-on
    # sparse traffic: each request pays its time in flight + the idle timeout + (almost always) a cold start
    sparse = serverless_monthly(3.6, 24, e2e_s=2, capacity_requests_per_s=5, cold_start_s=30, idle_timeout_s=5)
    r = 24 / 86_400
    b, p = math.expm1(r * 2) / r, math.exp(-r * 5)  # busy period (M/G/inf), chance an idle gap outlasts the timeout
    per_cycle, cycle = b + (1 - p) / r + p * 30, b + 1 / r + p * 30
    assert sparse.billed_seconds_per_month == pytest.approx(730 * 3600 / cycle * per_cycle)
    assert sparse.billed_seconds_per_request == pytest.approx(2 + 5 + 30, rel=0.01)
    assert sparse.monthly_usd == pytest.approx(730 / cycle * per_cycle * 3.6)
    # the case: 2,000 requests a day on a worker that batches: cold starts only after it slept, and the
    # bill (start-ups included) stays below always-on
    day = serverless_monthly(3.6, 2_000, e2e_s=8, capacity_requests_per_s=4, cold_start_s=60, idle_timeout_s=5)
    assert day.workers == 1 and day.cold_starts_per_month < 2_000 * 730 / 24
    assert day.billed_seconds_per_month < 730 * 3600


def test_cost_per_token_and_fleet():
    # research example: 3.49 $/h, 1,000 tok/s, 50% utilization -> 1.94 $ per 1M tokens
    assert cost_per_million_tokens(3.49, 1000, 0.5) == pytest.approx(1.939, abs=1e-3)
    assert replicas_for_traffic(864_000, 2.0, 5.0) == 4  # peak 20 req/s over 5 req/s per replica


def test_lifetime_break_even_month():
    life = lifetime(100_000, 30_000, months=12)
    assert life["inference_passes_training_month"] == 4
    assert life["months"][4]["inference_cumulative_usd"] == 120_000


def test_market_projection_uses_one_labelled_estimate():
    proj = market_projection(1000, "a16z", months=12)
    assert proj[12]["monthly_usd"] == pytest.approx(100)
    epoch = market_projection(1000, "epoch", months=3)
    assert epoch[3]["monthly_usd"] == pytest.approx(1000 * 0.53)
    assert all(e["label"].startswith("ANALYST ESTIMATE") for e in MARKET_ESTIMATES.values())
    with pytest.raises(ValueError, match="estimate"):
        market_projection(1000, "average")


# ---- reports and the recommendation ----------------------------------------------------------------


def test_cost_report_training_keys():
    r = api.cost_report(
        {
            "params": 7_000_000_000,
            "mode": "training",
            "training_tokens": 1e12,
            "mfu": 0.5,
            "gpu": "H100",
            "zero_stage": 3,
            "gpus": 8,
        }
    )
    assert r.gpu_hours > 23_593  # 6ND plus the attention term at the default 4,096-token context
    assert r.wall_hours == pytest.approx(r.gpu_hours / 8)
    for row in r.model_dump()["offers"]:
        assert row["gpu"] == "H100-SXM"
        assert set(row) >= {"run_cost_usd", "monthly_always_on_usd", "offer_id"}


def test_recommendation_rejects_cheapest_gpu_for_missing_latency():
    """Without a target the cheapest fitting configuration wins; a tight TPOT target rules it out (the same offer
    may still win with more of its GPUs, as when a 2-GPU node runs TP 2), and cheaper misses are listed."""
    base = {"preset": "Llama-3.1-8B", "input_tokens": 1000, "output_tokens": 200, "batch": 8}
    base |= {"requests_per_day": None, "ttft_target_s": None, "tpot_target_s": None}  # no traffic, no targets
    free = api.plan_report(base, explore_formats=False).model_dump()
    cheapest = free["picks"][0]
    strict_tpot = cheapest["tpot_s"] * 0.8
    strict = api.plan_report({**base, "tpot_target_s": strict_tpot}, explore_formats=False).model_dump()
    top = strict["picks"][0]
    assert (top["offer_id"], top["layout"]) != (cheapest["offer_id"], cheapest["layout"])
    assert top["tpot_s"] <= strict_tpot
    assert top["monthly_usd"] >= cheapest["monthly_usd"]
    for p in strict["near_misses"]:
        assert p["monthly_usd"] < top["monthly_usd"] and "TPOT" in p["misses"][0]
    # on L4s alone (single-GPU offers) the cheapest L4 becomes a near miss
    l4 = {**base, "gpu": "L4"}
    free = api.plan_report(l4, explore_formats=False).model_dump()["picks"][0]
    strict = api.plan_report({**l4, "tpot_target_s": free["tpot_s"] * 0.8}, explore_formats=False).model_dump()
    assert free["offer_id"] in {p["offer_id"] for p in strict["near_misses"]} or not strict["picks"]


def test_plan_training_deadline_adds_gpus():
    r = api.plan_report(
        {
            "params": 7_000_000_000,
            "mode": "training",
            "training_tokens": 1e11,
            "mfu": 0.4,
            "zero_stage": 3,
            "deadline_hours": 24,
        }
    ).model_dump()
    assert r["picks"]
    assert all(p["wall_hours"] <= 24 * 1.0001 for p in r["picks"])


def test_empty_filter_is_a_message_not_a_crash():
    r = api.plan_report({"preset": "Llama-3.1-8B", "provider": "nobody"}).model_dump()
    assert r["picks"] == [] and "No offers match" in r["message"]


def test_scenario_rejects_unknown_billing_values_clearly():
    with pytest.raises(ValueError, match="billing"):
        Scenario(billing="weekly")


def test_a_fleet_is_sized_by_one_replicas_capacity_under_continuous_batching():
    base = {
        "preset": "Llama-3.1-8B",
        "input_tokens": 1000,
        "output_tokens": 200,
        "batch": 1,
        "requests_per_day": 2_000_000,
        "tpot_target_s": 0.05,
        "ttft_target_s": 5.0,
    }
    r = api.plan_report(base, explore_formats=False).model_dump()
    top = r["picks"][0]
    assert top["tpot_s"] <= 0.05 and top["ttft_s"] <= 5.0  # p95 TTFT and mean TPOT at each replica's share
    assert "continuous batching" in top["why"][0]
    peak = 2_000_000 / 86_400 * 3.0
    cap = top["requests_per_s_per_replica"]
    assert top["replicas"] == -(-peak // cap)  # ceil(peak rate / one replica's capacity within the targets)
    one = api.plan_report({**base, "requests_per_day": None}, explore_formats=False).model_dump()["picks"][0]
    # batching more requests per replica means fewer replicas than serving them one at a time would need
    per_replica_at_1 = 1 / (one["ttft_s"] + 199 * one["tpot_s"])
    replicas_at_1 = -(-2_000_000 / 86_400 * 3.0 // per_replica_at_1)
    assert top["replicas"] < replicas_at_1
