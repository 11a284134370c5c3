"""Compare prices each side at its own layout (cost_table's fixed_layout), the layout it shows fitting, not the
one the search would pick instead."""

from __future__ import annotations

from gpuplan_core import api, to_scenario, usd
from tests.ui.test_app import COMPARE, assert_clean, run_page
from tests.ui.test_app import _differences as differences

# Llama-3.1-8B on RTX 3090s under traffic: the search's cheapest layout is TP 2 (6 replicas, 12 GPUs, $1,445 a
# month on vast-rtx3090-2-od); the scenario's own is TP 1 (28 single-GPU replicas, $3,373).
LINK = {"model": "Llama-3.1-8B", "gpu": "RTX 3090 24GB", "rpd": "200000", "ttft_ms": "1000", "tpot_ms": "30"}


def test_compare_prices_side_a_at_its_own_layout():
    sc, _ = to_scenario(LINK)
    own = min(api.cost_report(sc, fixed_layout=True).offers, key=lambda r: r.monthly_always_on_usd)
    searched = min(api.cost_report(sc).offers, key=lambda r: r.monthly_always_on_usd)
    assert (own.tp, searched.tp) == (1, 2) and own.monthly_always_on_usd > searched.monthly_always_on_usd
    at = run_page(COMPARE, LINK)
    assert_clean(at)
    assert "**A:** 1 x RTX 3090 24GB, BF16 weights" in [m.value for m in at.markdown][0]
    rows = differences(at)
    assert rows["Cost per month"]["A"] == usd(own.monthly_always_on_usd)
