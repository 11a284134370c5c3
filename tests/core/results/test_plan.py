"""The plan's results (results/plan.py): the why-chain's terms and formulas, a pick on an offer, a rejection."""

from __future__ import annotations

import math

from gpuplan_core.results.plan import (
    Calc,
    Pick,
    Rejected,
    WhyStep,
    hours_into,
    layout_label,
    money,
    num,
    rounded,
)
from tests.picks import offer

OFFER = offer()  # one 8 x H100 SXM node at 16 USD a node-hour


def test_terms_print_exactly_or_rounded():
    assert (num(3).text, num(3).exact) == ("3", True)
    assert num(2.25e15, "TFLOP/s", scale=1e12).text == "2,250 TFLOP/s"  # 2.25e15 / 1e12, exact
    third = num(1 / 3, "h")
    assert (third.text, third.exact, third.value) == ("0.333 h", False, 1 / 3)
    assert rounded(1234.5678, "GPU-hours").text == "1,235 GPU-hours"  # whole digits kept past 3 figures
    assert money(2.594).text == "$2.59" and money(1234.4).text == "$1,234"


def test_hours_into_a_cost_print_finely_enough():
    """1.23456 h at 2 USD/h = 2.47 USD: 4 figures (1.235 h) move the cost by 0.5e-3 x 2 = 0.001 <= half a cent;
    at 1,000 USD/h the cost is 1,234.56 USD, printed to the dollar: 1.235 h moves it 0.5 (<= half a dollar)."""
    assert hours_into(1.23456, 2.0, 2.47).text == "1.235 h"
    # at 50 USD/h (cost 61.73 USD, printed in cents) 3 decimals move it 0.5e-3 x 50 = 0.025 > 0.005: one more
    assert hours_into(1.23456, 50.0, 61.73).text == "1.2346 h"  # 0.5e-4 x 50 = 0.0025 <= 0.005


def test_calc_text_joins_and_rounds():
    c = Calc(terms=[num(5, "GPUs"), num(2.0, "USD/h", op="x"), num(4, op="/")], result=num(2.5, "USD"))
    assert c.text() == "5 GPUs x 2 USD/h / 4"
    ceil = Calc(terms=[num(7.2, "req/s"), num(2, "req/s", op="/")], result=num(4), step=1)
    assert ceil.text() == "ceil(7.2 req/s / 2 req/s)"
    nodes = Calc(terms=[num(12, "GPUs")], result=num(16, "GPUs"), step=8, step_text="whole 8-GPU nodes")
    assert nodes.model_copy(update={"at_least": num(8, "GPUs")}).text() == (
        "12 GPUs, rounded up to whole 8-GPU nodes, at least 8 GPUs"
    )
    floor = Calc(terms=[num(9.5)], result=num(9), step=1, rounding="down")
    assert floor.text() == "floor(9.5)"


def test_why_step_of_a_calc():
    c = Calc(terms=[num(730, "h"), num(2.0, "USD/h")], result=money(1460.0))
    s = WhyStep.of("Monthly cost", c, "X, on demand")
    assert (s.value, s.detail) == ("$1,460", "730 h x 2 USD/h; X, on demand")


def test_layout_label():
    assert layout_label("H100-SXM", 1, 1) == "1 x H100-SXM, TP 1"
    assert layout_label("H100-SXM", 8, 2) == "16 x H100-SXM, TP 8, PP 2"


def test_pick_renting_an_offer():
    p = Pick.renting(
        OFFER,
        gpu="H100-SXM",
        weights_format="bf16",
        gpus=8,
        nodes=1,
        tp=2,
        pp=1,
        replicas=4,
        monthly_usd=8 * 2.0 * 730,
        misses=[],
        why=[],
    )
    assert (p.offer_id, p.provider, p.price_per_gpu_hour_usd, p.source) == ("x-h100-8", "X", 2.0, OFFER.source)
    assert (p.layout, p.replica_gpus, p.meets_target, p.run_cost_usd) == ("2 x H100-SXM, TP 2", 2, True, None)
    assert p.rank_cost == 11_680.0  # monthly: 8 GPUs x 2 USD/h x 730 h
    late = p.model_copy(update={"monthly_usd": None, "run_cost_usd": 5000.0})
    assert late.rank_cost == 5000.0
    assert p.model_copy(update={"monthly_usd": None}).rank_cost == math.inf
    missed = Pick.renting(
        OFFER,
        gpu="H100-SXM",
        weights_format="bf16",
        gpus=8,
        nodes=1,
        tp=8,
        pp=1,
        replicas=1,
        monthly_usd=None,
        misses=["p95 TTFT 3.1 s > 2 s"],
        why=[],
    )
    assert missed.meets_target is False


def test_rejected_positional_and_sparse_json():
    r = Rejected("L4", "does not fit", "bf16")
    assert r.model_dump() == {"gpu": "L4", "reason": "does not fit", "weights_format": "bf16"}
    full = Rejected("L4", "no offer", None, "x-l4", layout="2 x L4, TP 2")
    assert full.model_dump() == {"gpu": "L4", "reason": "no offer", "offer_id": "x-l4", "layout": "2 x L4, TP 2"}
