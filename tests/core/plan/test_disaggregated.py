"""The recommender weighs disaggregated prefill/decode pools (plan/disaggregated.py) against aggregated serving and
leads with them only where they cost less at the same targets; elsewhere the answer is the one it was, bit for bit."""

from __future__ import annotations

import math

import pytest

from gpuplan_core import Scenario, load_pricing, serve_command
from gpuplan_core.plan import disaggregated as disaggregated_module
from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.cost import offers_for
from gpuplan_core.plan.disaggregated import cheapest_split
from gpuplan_core.plan.recommend import search
from tests.core.plan.test_why import check_chain

OFFERS = load_pricing().offers
# long prompts and a tight time per token: aggregated replicas lose their decode steps to prompt chunks
LONG = dict(
    preset="Llama-3.1-8B",
    gpu="H100-SXM",
    requests_per_day=500_000,
    input_tokens=8000,
    output_tokens=200,
    ttft_target_s=2.0,
    tpot_target_s=0.015,
)


def test_the_split_leads_where_it_is_cheaper_and_the_why_chain_says_by_how_much():
    sc = Scenario(**LONG)
    ans = answer(sc, OFFERS)
    p = ans.pick
    assert p.disaggregated is not None
    assert p.layout == "P/D: 4 x (1 x H100-SXM, TP 1) prefill + 1 x (2 x H100-SXM, TP 2) decode"
    d = p.disaggregated
    peak = 500_000 * 3 / 86_400  # 17.36 req/s
    assert d.prefill.workers == math.ceil(peak / d.prefill.requests_per_s_per_worker) == 4
    assert d.decode.workers == math.ceil(peak / d.decode.requests_per_s_per_worker) == 1
    assert (d.prefill.gpus, d.decode.gpus, p.gpus, p.running_gpus) == (4, 2, 6, 6)
    assert d.shared_machines and d.kv_transfer_bytes == 8000 * 131_072
    assert p.offer_id == "vast-h100-1-od"
    assert p.monthly_usd == pytest.approx(6 * 1.87 * 730)  # one machine, 6 GPUs rented per GPU
    assert p.ttft_s <= 2.0 and p.tpot_s <= 0.015
    assert p.ttft_s == pytest.approx(d.prefill_ttft_p95_s + d.kv_transfer_s)
    # the cheapest aggregated pick at the same targets: 4 replicas of TP 2 on the same offer, 8 GPUs
    agg = ans.runners_up[0]
    assert agg.disaggregated is None and (agg.replicas, agg.layout) == (4, "2 x H100-SXM, TP 2")
    assert agg.monthly_usd == pytest.approx(8 * 1.87 * 730) == d.aggregated_monthly_usd
    last = ans.why[[w.label for w in ans.why].index("Disaggregated")]
    assert (
        "cheaper than the best aggregated layout (4 replicas of 2 x H100-SXM, TP 2 on vast-h100-1-od, " in last.detail
    )
    assert "by $2,730 a month at p95 TTFT 2,000 ms and TPOT 15.0 ms" in last.detail
    check_chain(sc, ans)  # workers = ceil(peak / capacity), the month = GPUs x price x hours, as printed
    assert ans.energy.gpus == 6
    dumped = ans.model_dump()
    assert dumped["pick"]["disaggregated"]["decode"]["layout"] == "2 x H100-SXM, TP 2"
    assert dumped["pick"]["layout"] == p.layout and dumped["pick"]["replicas"] == 1  # the old keys kept
    cmd = serve_command(sc, p)
    assert cmd.startswith("# disaggregated: this starts one of the 1 decode workers (TP 2); the 4 prefill workers")
    assert "--tensor-parallel-size 2" in cmd


def test_a_short_prompt_keeps_its_aggregated_pick_though_the_split_was_weighed():
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", requests_per_day=20_000, input_tokens=1500)
    ans = answer(sc, OFFERS)
    assert ans.pick.disaggregated is None and ans.pick.layout == "1 x H100-SXM, TP 1"
    assert ans.pick.monthly_usd == pytest.approx(1.87 * 730)
    offers = offers_for(OFFERS, sc.job, sc.pricing, sc.parallelism)
    split = cheapest_split(sc.model(), sc, offers, search(sc, OFFERS), math.inf)
    assert split is not None and split.monthly_usd >= ans.pick.monthly_usd  # two GPUs at least, against one
    assert cheapest_split(sc.model(), sc, offers, search(sc, OFFERS), ans.pick.monthly_usd) is None
    assert "disaggregated" not in ans.model_dump()["pick"]


def test_the_long_prompt_split_loses_to_aggregated_at_a_lax_time_per_token():
    sc = Scenario(**{**LONG, "tpot_target_s": 0.1})
    ans = answer(sc, OFFERS)
    assert ans.pick.disaggregated is None


@pytest.mark.parametrize(
    "kw",
    [
        dict(preset="Llama-3.1-8B", requests_per_day=50_000),
        dict(preset="Qwen2.5-7B", gpu="L40S", requests_per_day=40_000, input_tokens=1000, output_tokens=400),
        dict(preset="Llama-3.1-8B", gpu="H100-SXM", requests_per_day=20_000, input_tokens=1500),
    ],
)
def test_answers_the_split_does_not_win_are_unchanged_bit_for_bit(kw, monkeypatch):
    sc = Scenario(**kw)
    weighed = answer(sc, OFFERS).model_dump_json()
    monkeypatch.setattr(disaggregated_module, "weigh_disaggregated", lambda *a, **k: None)  # the answer's and the rows'

    assert answer(sc, OFFERS).model_dump_json() == weighed
