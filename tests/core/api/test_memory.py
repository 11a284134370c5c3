"""api/memory.py: the memory report alone (the scenario's own layout) and with the answer (the pick's layout, the
scenario's own need beside it, and the layout search's count per GPU type). Hand-checked against the architecture
and DOMAIN.md's worked numbers."""

import pytest

from gpuplan_core import api, load_pricing, read_link, to_scenario
from gpuplan_core.api._shared import model_summary
from gpuplan_core.results.memory import ModelSummary

OFFERS = load_pricing().offers


def _sc(params: dict):
    values, problems = read_link(params)
    assert not problems, problems
    return to_scenario(values)[0]


def test_model_summary_is_typed_with_llama_8b_counts():
    """Llama-3.1-8B: 8,030,261,248 parameters; KV per token in BF16 = 2 (K, V) x 32 layers x 8 KV heads x 128 x 2
    bytes = 131,072."""
    s = model_summary(_sc({"model": "Llama-3.1-8B"}))
    assert isinstance(s, ModelSummary)
    assert s.params_total == 8_030_261_248
    assert s.kv_cache_bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131_072


def test_without_prices_the_report_is_the_scenarios_own_layout():
    r = api.memory_report({"preset": "Llama-3.1-8B"})
    assert r.layout_source == "scenario" and r.answer is None and r.scenario_per_gpu_bytes is None
    assert r.components["weights"] == 8_030_261_248 * 2  # BF16, one GPU
    assert all(g.search is None for g in r.gpus)


PRETRAIN_64 = {
    "workload": "Pre-training",
    "src": "Model size only",
    "tokens_b": "1000",
    "gpu": "H100 SXM",
    "gpus": "64",
}


def _model_states_per_gpu(stage: int, tp: int, pp: int, dp: int, params: int = 7_000_000_000) -> float:
    """ZeRO paper (DOMAIN.md): 2 B weights + 2 B gradients + 12 B optimizer states (FP32 master, momentum, variance)
    per parameter; stage 1 shards the 12 over DP, stage 2 also the gradients, stage 3 also the weights; TP x PP
    split the model."""
    per_param = {0: 2 + 2 + 12, 1: 2 + 2 + 12 / dp, 2: 2 + (2 + 12) / dp, 3: (2 + 2 + 12) / dp}[stage]
    return per_param * params / (tp * pp)


@pytest.mark.parametrize("zero", ["auto", "0", "3"])
def test_pre_training_64_h100_is_budgeted_at_the_answers_layout(zero):
    """The issue's link: 7e9 parameters on 64 x H100 SXM. The scenario's own layout (TP 1, PP 1, ZeRO 0) needs 112 GB
    of model states on one GPU (DOMAIN.md: 16 B/param), more than an H100; the answer runs its own layout (ZeRO stage
    searched, or the one the link sets), and the Memory page budgets that: a count that runs is never short."""
    sc = _sc({**PRETRAIN_64, "zero": zero})
    ans = api.answer_report(sc, offers=OFFERS)
    r = api.memory_report(sc, offers=OFFERS, answer=ans)
    own = api.memory_report(sc)
    p = ans.pick
    assert r.params_total == 7_000_000_000
    own_stage = sc.parallelism.zero_stage  # the scenario's own layout: TP 1, PP 1 over 64 GPUs at its stage
    assert own.budgets["model states"] == pytest.approx(_model_states_per_gpu(own_stage, 1, 1, 64), abs=1)
    if own_stage == 0:
        assert own.budgets["model states"] == 16 * 7_000_000_000 == 112_000_000_000
        assert r.scenario_per_gpu_bytes == own.per_gpu_bytes > r.gpu_fit("H100-SXM").budget_bytes
    assert r.layout_source == "answer" and r.answer.gpus == p.gpus == 64
    if zero != "auto":
        assert p.zero_stage == int(zero)
    dp = 64 // (p.tp * p.pp)
    assert (r.layout.tp, r.layout.pp, r.layout.dp, r.answer.zero_stage) == (p.tp, p.pp, dp, p.zero_stage)
    assert r.budgets["model states"] == pytest.approx(_model_states_per_gpu(p.zero_stage, p.tp, p.pp, dp), abs=1)
    assert r.per_gpu_bytes == r.answer.per_gpu_bytes == ans.memory_per_gpu_bytes
    assert r.per_gpu_bytes <= r.answer.budget_bytes  # a count that runs is never short
    assert r.scenario_per_gpu_bytes == own.per_gpu_bytes
    h100 = r.gpu_fit("H100-SXM")
    assert h100.selected and h100.fits and h100.search.answer and h100.search.gpus == 64
    assert h100.search.layout.startswith("64 x H100 SXM (") and f"ZeRO-{p.zero_stage}" in h100.search.layout


def test_70b_serving_is_budgeted_on_the_picks_replica_with_one_gpus_need_beside_it():
    """/?model=Llama-3.1-70B&rpd=500000&in=8000: the answer runs B200s at TP 2 (at 50,000 a day, with measured
    kernel times, one B200 per serverless worker). Weights per GPU = 70,553,706,496 parameters x 2 bytes / 2 ranks;
    the scenario's own need (one GPU) is the secondary figure."""
    sc = _sc({"model": "Llama-3.1-70B", "rpd": "500000", "in": "8000"})
    ans = api.answer_report(sc, offers=OFFERS)
    assert ans.pick.tp == 2
    r = api.memory_report(sc, offers=OFFERS, answer=ans)
    p = ans.pick
    assert (r.answer.gpu, r.answer.gpus, r.layout.tp) == (p.gpu, p.gpus, p.tp)
    assert r.components["weights"] == 70_553_706_496 * 2 // p.tp
    assert r.per_gpu_bytes == ans.memory_per_gpu_bytes
    assert r.scenario_per_gpu_bytes == api.memory_report(sc).per_gpu_bytes > r.per_gpu_bytes


def test_every_gpu_type_has_the_searchs_layout_or_says_why_not():
    sc = _sc({"model": "Llama-3.1-70B", "rpd": "50000", "in": "8000"})
    r = api.memory_report(sc, offers=OFFERS)
    searched = [g.search for g in r.gpus]
    assert all(s is not None for s in searched)
    assert sum(s.answer for s in searched) == 1
    for s in searched:
        if s.gpus is None:
            assert s.note.startswith("the layout search has no candidate: ") and s.per_gpu_bytes is None
        else:
            assert s.layout and s.per_gpu_bytes > 0
    offered = {o.gpu for o in OFFERS}
    for g in r.gpus:
        if g.gpu not in offered:
            assert g.search.gpus is None and "no offer of this GPU type" in g.search.note


@pytest.mark.parametrize("accounting, bytes_per_param", [("zero", 16), ("hf", 18)])
def test_memory_at_pick_keeps_the_picks_layout(accounting, bytes_per_param):
    """DOMAIN.md: ZeRO 16 B/param, Hugging Face 18 B/param of model states; at a ZeRO-0 pick (set in the link) its
    TP x PP splits them (PP 2 x DP 32 here: half)."""
    sc = _sc({**PRETRAIN_64, "zero": "0"})
    pick = api.answer_report(sc, offers=OFFERS).pick
    assert pick.zero_stage == 0
    r = api.memory_at_pick(sc.with_(accounting=accounting), pick)
    assert r.budgets["model states"] == bytes_per_param * 7_000_000_000 // (pick.tp * pick.pp)
