"""A disaggregated answer's memory (memory/pools.py): each pool's worker memory per GPU is the memory engine's at
that worker's own layout, and the answer's memory figure is the decode worker's, named as such."""

from __future__ import annotations

import pytest

from gpuplan_core import Scenario, api, get_gpu, load_pricing
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.request import memory_request
from gpuplan_core.report.answers import memory_label, plan_answer
from gpuplan_core.report.memory_answer import memory_answer
from tests.core.plan.test_disaggregated import LONG

OFFERS = load_pricing().offers


@pytest.fixture(scope="module")
def split():
    sc = Scenario(**LONG)
    return sc, api.answer_report(sc, offers=OFFERS)


def test_each_pool_s_memory_is_the_memory_engine_s_at_its_own_layout(split):
    sc, ans = split
    pre, dec = ans.memory_pools
    assert (pre.role, pre.workers, pre.tp, pre.layout) == ("prefill", 4, 1, "1 x H100-SXM, TP 1")
    assert (dec.role, dec.workers, dec.tp, dec.layout) == ("decode", 1, 2, "2 x H100-SXM, TP 2")
    m = sc.model()
    for pool in (pre, dec):
        req = memory_request(sc, weights_format="bf16", tp=pool.tp, pp=1, gpus=pool.tp)
        assert pool.per_gpu_bytes == round(memory_budget(m, req).per_gpu_bytes)
    # the same figures from the public memory report at the scenario asked at each layout itself
    for pool in (pre, dec):
        own = api.memory_report(sc.with_(tp=pool.tp, gpus=pool.tp))
        assert own.per_gpu_bytes == pool.per_gpu_bytes
    assert pre.per_gpu_bytes == pytest.approx(28.03e9, rel=1e-3)  # 16 GB of weights on one GPU, the rest the batch
    assert dec.per_gpu_bytes == pytest.approx(16.81e9, rel=1e-3)  # the weights split over 2
    usable = get_gpu("H100-SXM").vram_usable_bytes  # x the runtime's 0.9 utilization
    assert pre.budget_bytes == dec.budget_bytes == round(usable * sc.assumptions.memory_utilization)
    assert sc.assumptions.memory_utilization == 0.9


def test_the_answer_s_memory_figure_is_the_decode_worker_s_and_says_so(split):
    sc, ans = split
    pre, dec = ans.memory_pools
    assert ans.memory_per_gpu_bytes == dec.per_gpu_bytes
    assert (
        ans.memory_layout == "one decode worker, 2 x H100-SXM, TP 2, of the split (P/D: 4 prefill TP 1 + 1 decode TP 2)"
    )
    head = next(h for h in plan_answer(ans, sc).headlines if h.label.startswith("Memory per GPU"))
    assert head.label == memory_label(ans) == "Memory per GPU (decode worker)"
    assert head.value == "16.8 GB" and "prefill worker (1 x H100-SXM, TP 1) holds 28.0 GB" in head.help


def test_the_memory_page_s_answer_shows_both_pools(split):
    sc, ans = split
    mem = api.memory_report(sc, offers=OFFERS, answer=ans)
    assert mem.pools == ans.memory_pools and mem.answer.per_gpu_bytes == ans.memory_per_gpu_bytes
    out = memory_answer(mem, sc)
    heads = {h.label: h.value for h in out.headlines}
    assert heads == {
        "Memory per GPU (decode worker)": "16.8 GB",
        "GPUs": "6",
        "Fits 6 x H100 SXM?": "yes",
        "Prefill worker, per GPU": "28.0 GB",
    }
    spare_p, spare_d = (pool.budget_bytes - pool.per_gpu_bytes for pool in (mem.pools))
    assert "each of the 4 prefill workers (1 x H100-SXM, TP 1) needs 28.0 GB per GPU, " in out.sentence
    assert (
        f"{spare_p / 1e9:.1f} GB to spare; the decode worker (2 x H100-SXM, TP 2) needs 16.8 GB per GPU" in out.sentence
    )
    assert out.sentence.endswith(f"{spare_d / 1e9:.1f} GB to spare.")


def test_an_aggregated_answer_has_no_pools():
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", requests_per_day=20_000, input_tokens=1500)
    ans = api.answer_report(sc, offers=OFFERS)
    assert ans.memory_pools == [] and memory_label(ans) == "Memory per GPU"
    assert api.memory_report(sc, offers=OFFERS, answer=ans).pools == []
