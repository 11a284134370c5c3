"""The one-sentence answers (report/answers.py): what to rent in words, and what the numbers rest on."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from gpuplan_core.report.answers import data_answer, gpus_text


@pytest.mark.parametrize(
    "args, text",
    [
        (("RTX-3090", 1), "one RTX 3090 24GB"),
        (("H100", 8), "8 x H100 SXM"),
        (("H100", 64, 8), "8 machines of 8 x H100 SXM"),
        (("H200", 24, 3, 3), "3 machines of 8 x H200 (a copy of the model on each)"),  # 24 / 3 = 8 per copy
        (("H200", 32, 4, 2), "4 machines of 8 x H200 (2 copies of the model, 16 GPUs each)"),  # 32 / 2 = 16
        (("H200", 32, 4, 8), "4 machines of 8 x H200"),  # 8 copies of 4 GPUs share machines: the layout says it
        (("H100", 68, 9), "68 x H100 SXM on 9 machines"),  # 68 is not 9 whole machines of equal size
        (("H100", 2, 2), "2 machines of one H100 SXM"),
    ],
)
def test_gpus_text(args, text):
    assert gpus_text(*args) == text


def test_data_answer_counts_providers_and_stale_prices():
    """Four offers from three providers: one dated 100 days ago (stale past 30), one 10 days ago, two undated."""
    today = dt.date.today()
    offers = [
        SimpleNamespace(provider="A", price_as_of=(today - dt.timedelta(days=100)).isoformat()),
        SimpleNamespace(provider="A", price_as_of=(today - dt.timedelta(days=10)).isoformat()),
        SimpleNamespace(provider="B", price_as_of=None),
        SimpleNamespace(provider="C", price_as_of="undated"),
    ]
    a = data_answer(22, offers, 30)
    assert a.sentence == (
        "gpuplan sizes against 22 GPU types and prices 4 offers from 3 providers: 1 price is older than 30 days and "
        "2 undated (catalog snapshots), each with its source below."
    )
    assert [(h.label, h.value) for h in a.headlines] == [
        ("GPU types", "22"),
        ("Offers", "4"),
        ("Providers", "3"),
        ("Oldest dated price", "100 days"),
    ]
    none_dated = data_answer(1, offers[2:], 30)
    assert "0 prices are older" in none_dated.sentence and none_dated.headlines[-1].value == "n/a"


def test_the_cost_pages_compute_line_states_the_factor_the_flops_use():
    """LoRA's FLOPs are 4 x (active parameters + layers x sequence x attention width) x tokens (no weight gradients
    of the frozen base), and the sentence says 4, as the Overview's why-chain does; full training says 6."""
    from gpuplan_core import api
    from gpuplan_core.interface.inputs import to_scenario
    from gpuplan_core.model.arch import params_active
    from gpuplan_core.report.answers import training_compute_line

    sc = to_scenario({"workload": "finetune", "method": "lora", "model": "Llama-3.1-8B", "gpu": "H100-SXM"})[0]
    m = sc.model()
    flops = api.cost_report(sc).training_flops
    width = m.num_attention_heads * m.d  # 32 heads x 128 = 4,096
    by_hand = 4 * (params_active(m) + 32 * sc.context_tokens * width) * sc.training.training_tokens
    assert flops == pytest.approx(by_hand, rel=1e-12)
    line = training_compute_line(sc, flops)
    assert f"**{by_hand:.3g} FLOPs** = tokens x (4 x active parameters + causal attention) (4, not 6:" in line
    full = to_scenario({"workload": "pretrain", "src": "size", "tokens_b": 1000.0})[0]
    assert "= tokens x (6 x active parameters + causal attention), at the MFU predicted" in training_compute_line(
        full, api.cost_report(full).training_flops
    )
