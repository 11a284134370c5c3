"""Expert parallel in the serving layout search (plan/search.py, capacity.py, rent.py): tried for MoE models only,
judged as one rank with ep x its rate, picked only where it is the cheaper at the targets, named in the layout and
the JSON; a dense question's answer is the one it was before EP existed."""

from __future__ import annotations

import pytest

from gpuplan_core import api
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.fit import max_batch
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.predict import StaticTimes
from gpuplan_core.plan.capacity import LoadPoint, ReplicaEval, ranks
from gpuplan_core.plan.deploy import skypilot_yaml, vllm_args
from gpuplan_core.plan.fitting import ep_layouts
from gpuplan_core.plan.rent import inference_candidates
from gpuplan_core.plan.search import ServingAsk, rentable_layouts
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.results.plan import layout_label
from gpuplan_core.scenario.scenario import Scenario

OFFERS = load_pricing().offers
# DeepSeek-V3 (MLA: its latent KV cache is not split by heads, so TP 8 holds every sequence's cache on every GPU)
# in FP8 on H200 at 500,000 requests a day of 2,000 in / 500 out, first token within 5 s, 100 ms a token; decoding
# plainly (its MTP module, which the search otherwise weighs, is plan/test_speculation.py's).
DEEPSEEK = dict(
    spec_mtp="off",
    preset="DeepSeek-V3",
    gpu="H200",
    weights_format="fp8",
    requests_per_day=500_000,
    input_tokens=2000,
    output_tokens=500,
    ttft_target_s=5.0,
    tpot_target_s=0.1,
)


def test_an_ep_replica_s_judgement_is_its_rank_s_with_ep_times_the_rates():
    """ranks(rank, 8): capacity 2 -> 16 req/s, 100 sequences at once -> 800, load points at 8 x their rates with the
    rank's latencies, static token rates x 8; so a peak of 12 req/s over one replica reads the rank at 1.5 req/s."""
    rank = ReplicaEval(
        static=StaticTimes(0.5, 0.02, 10.5, 400.0, 4000.0),
        floor_ttft_s=0.3,
        floor_tpot_s=0.015,
        capacity_per_s=2.0,
        serving_batch=100,
        points=(LoadPoint(1.0, 0.4, 0.02, 9.0), LoadPoint(2.0, 0.8, 0.03, 14.0)),
    )
    rep = ranks(rank, 8)
    assert (rep.capacity_per_s, rep.serving_batch) == (16.0, 800)
    assert [p.requests_per_s for p in rep.points] == [8.0, 16.0]
    assert (rep.static.decode_tokens_per_s, rep.static.prefill_tokens_per_s, rep.static.ttft_s) == (
        3200.0,
        32000.0,
        0.5,
    )
    assert rep.at(12.0).ttft_p95_s == pytest.approx(0.6) and rank.at(1.5).ttft_p95_s == pytest.approx(0.6)
    assert ranks(rank, 1) is rank


def test_ep_layouts_are_tried_for_moe_models_only_and_not_at_a_set_layout():
    """Mixtral (8 experts) is tried at EP 2, 4 and 8; DeepSeek-V3 (256) too; a dense model at none, and a layout the
    user set (a GPU count) is the only one tried."""
    mix, llama = get_preset("Mixtral-8x7B-v0.1"), get_preset("Llama-3.1-8B")
    assert ep_layouts(mix) == [2, 4, 8] and ep_layouts(get_preset("DeepSeek-V3")) == [2, 4, 8]
    assert ep_layouts(llama) == []
    h100 = get_gpu("H100-SXM")
    for m, q, eps in ((llama, {}, {1}), (mix, {}, {1, 2, 4, 8}), (mix, {"gpus": 2, "tp": 2}, {1})):
        sc = Scenario(preset=m.name, **q)
        kept, _ = rentable_layouts(m, ServingAsk.of(sc), h100, "bf16", memory_request(sc, weights_format="bf16"))
        assert {ep for *_, ep in kept} == eps
    assert layout_label("H100-SXM", 1, 1, 8) == "8 x H100-SXM, EP 8 (attention DP)"


def test_deepseek_on_h200_picks_ep_8_where_it_is_the_cheaper_and_says_so():
    """DeepSeek-V3 FP8 on H200: at TP 8 a replica holds 266 sequences of 2,500 tokens (the latent cache on all 8 GPUs);
    at EP 8 each GPU holds 162 of its own (1,296 a replica), so an EP 8 replica serves ~1.8x the requests and the
    answer rents 3 replicas where TP 8 needs 4. The pick's JSON says ep 8 (TP picks: null), its layout 'EP 8', the
    why-chain's capacity step names it; the Memory page budgets the pick's layout: 8 GPUs at tp 1, ep 8, the
    budget the search sized its KV cache with."""
    plan = api.plan_report(DEEPSEEK)
    top = plan.picks[0]
    assert (top.ep, top.tp, top.pp, top.layout) == (8, 1, 1, "8 x H200, EP 8 (attention DP)")
    assert top.replica_gpus == 8 and top.gpus == 8 * top.replicas
    tp8 = [p for p in plan.picks if p.ep is None and p.offer_id == top.offer_id]
    assert tp8 and all(p.tp == 8 and p.monthly_usd > top.monthly_usd for p in tp8)
    assert (top.replicas, tp8[0].replicas) == (3, 4)
    why = {w.label: w for w in plan.why}
    assert why["One replica's capacity"].detail.startswith("8 x H200, EP 8 (attention DP), FP8")
    assert plan.model_dump()["picks"][0]["ep"] == 8
    args = vllm_args(Scenario(**DEEPSEEK), top)  # one replica: 8 DP ranks with the experts spread over them
    assert args[args.index("--tensor-parallel-size") + 1] == "1" and args[-3:] == [
        "--data-parallel-size",
        "8",
        "--enable-expert-parallel",
    ]
    assert "accelerators: H200:8" in skypilot_yaml(Scenario(**DEEPSEEK), top)
    m, h200 = get_preset("DeepSeek-V3"), get_gpu("H200")
    sc = Scenario(**DEEPSEEK)
    req = memory_request(sc, weights_format="fp8").model_copy(update={"tp": 1, "gpus": 8, "ep": 8})
    assert max_batch(m, req, h200) == 162
    mem = api.memory_report(DEEPSEEK, answer=api.answer_report(DEEPSEEK))
    assert mem.answer.per_gpu_bytes == round(memory_budget(m, req).per_gpu_bytes)
    assert mem.answer.where == "8 x H200 (EP 8, attention DP); 3 replicas"
    assert api.answer_report(DEEPSEEK).memory_layout == "8 x H200 (EP 8, attention DP)"  # the Performance page's


def test_mixtral_judges_ep_but_keeps_tp_where_tp_is_the_cheaper():
    """Mixtral-8x7B on H100 at 2 M requests a day: EP 8 serves 137.4 req/s a replica (17.2 per GPU) against TP 4's
    68.8 (17.2), EP 2 24.1 against TP 2's 25.9, so on every offer EP needs as many GPUs as TP or more; where they
    cost the same (EP 2 and TP 2: 3 replicas each) TP's first token is faster (EP prefills a prompt on one GPU),
    and the ranking (cost, then first token) keeps TP: the answer is TP 2."""
    q = dict(preset="Mixtral-8x7B-v0.1", gpu="H100-SXM", requests_per_day=2_000_000, input_tokens=1000)
    q |= {"output_tokens": 200, "ttft_target_s": 2.0, "tpot_target_s": 0.1}
    plan, sc = api.plan_report(q), Scenario(**q)
    found = inference_candidates(sc.model(), sc, [o for o in OFFERS if o.gpu == "H100-SXM"], ["bf16"])
    cap = {lay.label: round(lay.replica.capacity_per_s, 1) for lay in found.layouts}
    assert cap["8 x H100-SXM, EP 8 (attention DP)"] == 137.4 and cap["4 x H100-SXM, TP 4"] == 68.8
    assert plan.picks[0].ep is None and plan.picks[0].layout == "2 x H100-SXM, TP 2"
    for o in {p.offer_id for p in found.picks}:  # on every offer TP is as cheap, and first to the first token
        ok = [p for p in found.picks if p.offer_id == o and not p.misses]
        best_tp = min((p.monthly_usd, p.ttft_s) for p in ok if p.ep is None)
        assert all(best_tp < (p.monthly_usd, p.ttft_s) for p in ok if p.ep)


def test_a_dense_question_s_answer_is_what_it_was_before_ep():
    """Llama-3.1-8B at 300,000 requests a day over every offer: the top three picks, float for float, as db1368b (the
    commit before EP) gave them, and 201 candidates."""
    q = dict(preset="Llama-3.1-8B", requests_per_day=300_000, input_tokens=1500, output_tokens=300)
    plan = api.plan_report({**q, "ttft_target_s": 1.0, "tpot_target_s": 0.05})
    got = [
        (
            p.offer_id,
            p.layout,
            p.ep,
            p.gpus,
            p.replicas,
            p.monthly_usd,
            p.ttft_s,
            p.tpot_s,
            p.requests_per_s_per_replica,
        )
        for p in plan.picks[:3]
    ]
    assert got == [
        (
            "vast-rtx6000ada-1-od",
            "1 x RTX-6000-Ada, TP 1",
            None,
            3,
            3,
            810.3,
            0.26675178677805417,
            0.04642423162772815,
            3.7004861513106198,
        ),
        (
            "vast-rtx3090-2-od",
            "2 x RTX-3090, TP 2",
            None,
            10,
            5,
            1204.5,
            0.8284131161024967,
            0.03559267285289718,
            2.4560281542848337,
        ),
        (
            "vast-h100-1-od",
            "1 x H100-SXM, TP 1",
            None,
            1,
            1,
            1365.1000000000001,
            0.09219929896718668,
            0.015445863803637737,
            14.97829213574154,
        ),
    ]
    assert plan.candidates == 201


def test_an_sglang_ep_rank_prefills_its_share_of_the_chunk_budget():
    """SGLang divides chunked_prefill_size by the DP size on each rank (H200: 8,192 // 8 = 1,024 tokens a step at EP
    8); vLLM's DP ranks keep their own 8,192; TP layouts are untouched."""
    from gpuplan_core.plan.search import replica_question

    m, h200 = get_preset("DeepSeek-V3"), get_gpu("H200")
    budget = {}
    for engine in ("sglang", "vllm"):
        ask = ServingAsk.of(Scenario(**DEEPSEEK, engine=engine))
        for ep, tp in ((8, 1), (1, 8)):
            q = replica_question(m, ask, h200, "fp8", tp, 1, 100, ep)
            budget[engine, ep] = q.limits.max_num_batched_tokens
    assert budget == {("sglang", 8): 1024, ("sglang", 1): 8192, ("vllm", 8): 8192, ("vllm", 1): 8192}


def test_an_ep_layout_an_offer_cannot_hold_is_rejected_as_expert_parallel():
    """DeepSeek-V3 FP8 on H200 over RunPod's serverless H200 (1 GPU a worker): the TP 8 layout is refused as tensor
    parallel, the EP layouts as expert parallel, each in its own words; an 8-GPU L40S machine over PCIe refuses EP 8
    for want of NVLink, and EP 2 (no NVLink needed for 2 GPUs) and a one-GPU layout pass."""
    m, h200 = get_preset("DeepSeek-V3"), get_gpu("H200")
    sc = Scenario(**DEEPSEEK)
    one = [o for o in OFFERS if o.offer_id == "runpod-sls-h200-flex"]
    _, rejected = rentable_layouts(m, ServingAsk.of(sc), h200, "fp8", memory_request(sc), offers=one)
    why = {r.layout: r.reason for r in rejected}
    assert why["8 x H200, TP 8"] == "tensor parallel 8 needs 8 GPUs in one machine; this offer rents at most 1"
    assert why["8 x H200, EP 8 (attention DP)"] == (
        "expert parallel 8 needs 8 GPUs in one machine; this offer rents at most 1"
    )
    l40s = next(o for o in OFFERS if o.offer_id == "runpod-l40s-secure-od")
    assert l40s.layout_problem(1, 1, 8) == "expert parallel 8 needs NVLink; this offer's GPUs talk over PCIe"
    assert l40s.layout_problem(8, 1) == "tensor parallel 8 needs NVLink; this offer's GPUs talk over PCIe"
    assert l40s.layout_problem(1, 1, 2) is None and l40s.layout_problem(1, 1) is None


def test_the_memory_report_names_an_ep_pick_s_layout_as_ep():
    """The Memory page's layout of the DeepSeek EP 8 pick: 8 GPUs, tp 1, pp 1, 8 attention-DP ranks, ep 8, in words
    'EP 8 (attention DP)' (a training layout keeps 'TP 2 x PP 2 x DP 16', with its EP group in brackets); the
    search's row on H200 carries ep 8 beside tp 1."""
    from gpuplan_core.results.memory import Layout

    mem = api.memory_report(DEEPSEEK, answer=api.answer_report(DEEPSEEK))
    assert mem.layout == mem.answer.layout == Layout(gpus=8, tp=1, pp=1, dp=8, ep=8)
    assert mem.layout.text == "EP 8 (attention DP)"
    assert Layout(gpus=64, tp=2, pp=2, dp=16).text == "TP 2 x PP 2 x DP 16"
    assert Layout(gpus=64, tp=1, pp=4, dp=16, ep=8).text == "TP 1 x PP 4 x DP 16 (EP 8)"
    h200 = mem.gpu_fit("H200").search
    assert (h200.tp, h200.pp, h200.dp, h200.ep, h200.answer) == (1, 1, 8, 8, True)
    assert mem.gpu_fit("H100-SXM").search.ep is None


def test_a_user_set_ep_is_the_only_serving_layout_tried_for_an_moe_model():
    """ep=8 on the DeepSeek question: only EP 8 is tried, and the answer is the searched one (EP 8, 3 replicas, the
    same cost); ep=1: tensor parallel alone, so TP 8 with its 4 replicas; Mixtral at ep=4 on H100: EP 4 alone. The
    link key ep reaches a serving scenario, and the memory question is one replica of 8 GPUs at tp 1."""
    from gpuplan_core.interface.inputs import to_scenario
    from gpuplan_core.interface.links import read_link

    m, h200 = get_preset("DeepSeek-V3"), get_gpu("H200")
    searched = api.plan_report(DEEPSEEK).picks[0]
    for ep, want in ((8, {8}), (1, {1})):
        sc = Scenario(**DEEPSEEK, ep=ep)
        kept, _ = rentable_layouts(m, ServingAsk.of(sc), h200, "fp8", memory_request(sc))
        assert {e for *_, e in kept} == want and sc.warnings() == []
    at_8 = api.plan_report(DEEPSEEK | {"ep": 8})
    assert all(p.ep == 8 for p in at_8.picks)
    top = at_8.picks[0]
    assert (top.offer_id, top.replicas, top.monthly_usd, top.ttft_s) == (
        searched.offer_id,
        searched.replicas,
        searched.monthly_usd,
        searched.ttft_s,
    )
    at_1 = api.plan_report(DEEPSEEK | {"ep": 1}).picks[0]
    assert (at_1.ep, at_1.tp, at_1.replicas) == (None, 8, 4)
    mix = Scenario(preset="Mixtral-8x7B-v0.1", ep=4)
    kept, _ = rentable_layouts(mix.model(), ServingAsk.of(mix), get_gpu("H100-SXM"), "bf16", memory_request(mix))
    assert [(tp, pp, e) for tp, pp, _, e in kept] == [(1, 1, 4)]
    values, _ = read_link({"model": "DeepSeek-V3", "ep": "8"})
    sc, _ = to_scenario(values)
    assert sc.job.mode == "inference" and sc.parallelism.ep == 8
    par = memory_request(sc).parallelism
    assert (par.ep, par.tp, par.pp, par.gpus) == (8, 1, 1, 8)


def test_ep_on_a_dense_model_or_one_that_does_not_divide_the_experts_is_ignored_and_said_so():
    """Llama-3.1-8B with ep=8: the answer is the one without it, and a warning says serving ignores it; Mixtral's 8
    experts at ep=16 the same; a layout's memory question carries no EP."""
    q = dict(preset="Llama-3.1-8B", requests_per_day=20_000)
    base, dense = api.plan_report(q).picks[0], api.plan_report(q | {"ep": 8}).picks[0]
    assert (dense.offer_id, dense.layout, dense.gpus, dense.monthly_usd, dense.ttft_s) == (
        base.offer_id,
        base.layout,
        base.gpus,
        base.monthly_usd,
        base.ttft_s,
    )
    assert Scenario(**q, ep=8).warnings() == [
        "Expert parallel 8 is for mixture-of-experts models; Llama-3.1-8B is dense, so serving ignores it."
    ]
    mix = Scenario(preset="Mixtral-8x7B-v0.1", ep=16)
    assert mix.warnings() == ["Expert parallel 16 does not divide Mixtral-8x7B-v0.1's 8 experts; serving ignores it."]
    assert memory_request(mix).parallelism.ep is None and memory_request(Scenario(**q, ep=8)).parallelism.ep is None


def test_the_performance_views_of_an_ep_pick_are_the_pick_s_replica():
    """The detail views (Performance) run the EP pick's own replica: one rank simulated, its rates x 8 (as the
    search's ``ranks``), so the curve's capacity and replicas are the pick's, and the static view is one rank of
    the 8 GPUs (it read 'On 6 x H200' at a TP 2 x PP 3 fallback beside the pick's 8 x H200, EP 8)."""
    sc = Scenario(**DEEPSEEK)
    ans = api.answer_report(sc)
    top = ans.pick
    shown = ans.detail_scenario(sc)
    assert (shown.parallelism.ep, shown.parallelism.tp, shown.parallelism.gpus) == (8, 1, 8)
    curve = api.serving_curve_report(shown, "H200")
    assert (curve.ep, curve.replica_gpus, curve.replicas) == (8, 8, top.replicas)
    assert curve.capacity_requests_per_s == pytest.approx(top.requests_per_s_per_replica, rel=1e-12)
    assert curve.max_running_sequences == 8 * 162  # 162 sequences on each GPU's KV cache
    static = api.perf_for_gpu(shown, "H200")
    assert static.gpu_count == 8 and static.notes[0].startswith("Expert parallel 8 (attention data-parallel)")
    assert not any("Does not fit" in n for n in static.notes + curve.notes)
