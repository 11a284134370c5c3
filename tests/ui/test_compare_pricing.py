"""Compare's side A is the sidebar's answer: the layout the search picks and its price, the Overview's, not the
scenario's own layout priced apart (the page did that before the one layout search: it showed 1 x RTX 3090 at TP 1
and $3,373 a month while the Overview rented 12 x RTX 3090 at TP 2 for $1,445)."""

from __future__ import annotations

from gpuplan_core import api, load_pricing, to_scenario, usd
from tests.ui.apptest import COMPARE, assert_clean, differences, run_page

# Llama-3.1-8B on RTX 3090s under traffic: the search's cheapest layout is TP 2 (6 replicas, 12 GPUs, $1,445 a
# month on vast-rtx3090-2-od); the scenario's own is TP 1 (28 single-GPU replicas, $3,373).
LINK = {"model": "Llama-3.1-8B", "gpu": "RTX 3090 24GB", "rpd": "200000", "ttft_ms": "1000", "tpot_ms": "30"}


def test_compare_side_a_is_the_answers_layout_and_price():
    sc, _ = to_scenario(LINK)
    own = min(api.cost_report(sc, fixed_layout=True).offers, key=lambda r: r.monthly_always_on_usd)
    ans = api.answer_report(sc, offers=load_pricing().offers)
    assert (own.tp, ans.pick.tp) == (1, 2) and own.monthly_always_on_usd > ans.pick.monthly_usd
    at = run_page(COMPARE, LINK)
    assert_clean(at)
    side_a = [m.value for m in at.markdown][0]
    assert side_a.startswith(f"**A:** {ans.pick.gpus} x RTX 3090 24GB, {ans.pick.replicas} replicas of 2 GPUs (TP 2)")
    rows = differences(at)
    assert rows["Cost per month"]["A"] == usd(ans.pick.monthly_usd)
