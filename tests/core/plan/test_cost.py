"""cost_table (plan/cost.py): typed rows per offer, and ``fixed_layout`` pricing only the scenario's own
layout (what Compare shows fitting) where the free search would pick another."""

from __future__ import annotations

import math

import pytest

from gpuplan_core import api, get_gpu
from gpuplan_core.plan.cost import cost_table
from gpuplan_core.plan.search import NO_FIT
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.results.plan import InferenceCostRow, TrainingCostRow
from gpuplan_core.scenario.scenario import Scenario

OFFERS = load_pricing().offers
BY_ID = {o.offer_id: o for o in OFFERS}
# Llama-3.1-8B on 24 GB RTX 3090s under traffic: at TP 1 the 16 GB of weights leave little KV cache, so a replica
# serves few requests; TP 2 halves the weights per GPU and the search finds it cheaper.
BUSY_8B = Scenario(preset="Llama-3.1-8B", requests_per_day=200_000, ttft_target_s=1.0, tpot_target_s=0.03)
RTX3090 = "vast-rtx3090-2-od"


def _rows(sc: Scenario, fixed: bool) -> dict[str, InferenceCostRow | TrainingCostRow]:
    return {r.offer_id: r for r in cost_table(sc, OFFERS, fixed_layout=fixed).offers}


def test_rows_are_typed_and_multiply_out():
    rows = cost_table(BUSY_8B, OFFERS).offers
    assert rows and all(isinstance(r, InferenceCostRow) for r in rows)
    for r in rows:
        o = BY_ID[r.offer_id]  # GPUs paid for are whole nodes
        assert r.monthly_always_on_usd == pytest.approx(r.gpus / o.gpus_per_node * o.price_per_node_hour_usd * 730)
        if not r.requests_per_s_per_replica:  # misses a target at any load: one replica, priced for an hour
            assert (r.replicas, r.run_hours) == (1, 1.0) and r.misses
            continue
        assert r.replicas == math.ceil(200_000 / 86_400 * 3 / r.requests_per_s_per_replica)
        # a day's requests as one batch job on the replicas
        assert r.run_hours == pytest.approx(200_000 / (r.requests_per_s_per_replica * r.replicas) / 3600)
    training = cost_table(Scenario(params=7_000_000_000, mode="training", training_tokens=1e11), OFFERS).offers
    assert training and all(isinstance(r, TrainingCostRow) for r in training)


def test_fixed_layout_prices_the_scenarios_own_layout_where_the_search_picks_another():
    free, fixed = _rows(BUSY_8B, False), _rows(BUSY_8B, True)
    assert (free[RTX3090].tp, fixed[RTX3090].tp) == (2, 1)  # the search's pick is TP 2; the scenario says TP 1
    assert all((r.tp, r.pp) == (1, 1) for r in fixed.values())
    own = fixed[RTX3090]
    peak = 200_000 / 86_400 * 3  # requests/s at peak
    n = math.ceil(peak / own.requests_per_s_per_replica)
    assert own.replicas == n > 20  # ~1 req/s per RTX 3090 replica at 2 s / 0.1 s targets
    o = BY_ID[RTX3090]  # 2-GPU nodes: n single-GPU replicas rent ceil(n / 2) whole nodes
    nodes = math.ceil(n / o.gpus_per_node)
    assert own.gpus == nodes * o.gpus_per_node
    assert own.monthly_always_on_usd == pytest.approx(nodes * o.price_per_node_hour_usd * 730)
    assert free[RTX3090].monthly_always_on_usd == pytest.approx(6 * o.price_per_node_hour_usd * 730)  # 6 x TP 2
    assert (
        api.cost_report(BUSY_8B, offers=OFFERS, fixed_layout=True).model_dump()
        != api.cost_report(BUSY_8B, offers=OFFERS).model_dump()
    )


def test_fixed_layout_leaves_out_a_gpu_the_own_layout_does_not_fit():
    sc = Scenario(preset="Llama-3.1-70B")  # 70,553,706,496 parameters x 2 bytes = 141 GB: not on one 80 GB H100
    free, fixed = _rows(sc, False), _rows(sc, True)
    assert any(r.gpu == "H100-SXM" and r.tp >= 2 for r in free.values())
    assert not any(r.gpu == "H100-SXM" for r in fixed.values())
    rejected = cost_table(sc, OFFERS, fixed_layout=True).rejected
    assert any(r.gpu == "H100-SXM" and r.reason == NO_FIT for r in rejected)
    assert {r.gpu for r in fixed.values()} == {"B200"}  # 192 GB: the one catalog GPU with offers that holds it


def test_fixed_layout_changes_nothing_where_the_layout_is_the_scenarios_own():
    set_layout = Scenario(preset="Llama-3.1-70B", tp=2, gpus=2)  # a layout the user set is the only one tried
    free, fixed = _rows(set_layout, False), _rows(set_layout, True)
    assert free and {k: r.model_dump() for k, r in free.items()} == {k: r.model_dump() for k, r in fixed.items()}
    one_gpu = Scenario(preset="Llama-3.1-8B")  # no traffic: one replica, and TP 1 is cheapest wherever it fits
    free, fixed = _rows(one_gpu, False), _rows(one_gpu, True)
    same = [k for k in fixed if free[k].tp == 1]
    assert same and all(free[k].model_dump() == fixed[k].model_dump() for k in same)


def test_fixed_layout_for_training_keeps_the_gpu_count_and_says_it_misses_the_deadline():
    sc = Scenario(
        params=7_000_000_000,
        mode="training",
        training_tokens=1e11,
        deadline_hours=100,
        gpu="H100",
        gpus=8,
        zero_stage=3,
    )
    report = cost_table(sc, OFFERS, fixed_layout=True)
    free, fixed = _rows(sc, False), {r.offer_id: r for r in report.offers}
    # 8 GPUs set by the user: the search keeps the count too (it never adds GPUs to a count asked for)
    assert fixed and all(free[k].gpus == 8 for k in fixed)
    peak = get_gpu("H100").dense_peak_flops("bf16")[0]
    for b in fixed.values():
        assert (b.gpus, b.tp, b.pp, b.zero_stage) == (8, 1, 1, 3)  # the scenario's 8 GPUs on one machine
        assert b.mfu_predicted and b.mfu_low < b.mfu < b.mfu_high  # no MFU given: the layout's predicted one
        assert b.gpu_hours == pytest.approx(report.training_flops / (peak * b.mfu) / 3600)
        assert b.wall_hours == pytest.approx(b.gpu_hours / 8)
        assert b.misses == [f"{b.wall_hours:,.0f} h > deadline 100 h"] and not b.meets_target
