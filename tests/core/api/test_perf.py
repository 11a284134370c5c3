"""api/perf.py: every GPU type as the plan runs it at the scenario's load (the Performance page's per-GPU table)."""

from gpuplan_core import api, load_pricing, read_link, to_scenario
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.scenario.scenario import Scenario

OFFERS = load_pricing().offers


def _scenario(link: dict):
    values, problems = read_link(link)
    assert not problems
    return to_scenario(values)[0]


def test_the_picks_gpu_type_reads_the_pick_and_every_row_is_that_types_own_recommendation():
    sc = _scenario({"model": "Llama-3.1-70B", "rpd": "50000"})
    ans = api.answer_report(sc, offers=OFFERS)
    rows, missing = api.gpus_at_load(sc, OFFERS, answer=ans)
    picks = [r for r in rows if r.is_pick]
    assert len(picks) == 1
    p = picks[0]
    assert (p.gpu, p.layout, p.replicas, p.ttft_s, p.tpot_s) == (
        ans.pick.gpu,
        ans.pick.layout,
        ans.pick.replicas,
        ans.pick.ttft_s,
        ans.pick.tpot_s,
    )
    # without the answer, the pick's GPU type searched over its own offers alone gives the same configuration
    alone, _ = api.gpus_at_load(sc, OFFERS)
    same = next(r for r in alone if r.gpu == ans.pick.gpu)
    assert (same.layout, same.replicas, same.ttft_s, same.tpot_s, same.offer_id) == (
        p.layout,
        p.replicas,
        p.ttft_s,
        p.tpot_s,
        ans.pick.offer_id,
    )
    assert [r.ttft_s for r in rows] == sorted(r.ttft_s for r in rows)  # fastest first token first
    # every catalog GPU type is either a row or said why not; a type without an offer says so
    listed = {r.gpu for r in rows} | set(missing)
    assert len(listed) == len(rows) + len(missing)
    offered = {get_gpu(o.gpu).gpu for o in OFFERS}
    assert all(why == "no offer in the price list" for g, why in missing.items() if g not in offered)
    assert all(why != "no offer in the price list" for g, why in missing.items() if g in offered)


def test_at_the_peak_each_row_serves_its_share_within_the_targets():
    """A row that meets the targets has p95 first token and time per token within them, and its replicas carry the
    peak: replicas x capacity >= peak requests per second."""
    sc = _scenario({"model": "Llama-3.1-70B", "rpd": "50000"})
    rows, _ = api.gpus_at_load(sc, OFFERS, answer=api.answer_report(sc, offers=OFFERS))
    peak = sc.traffic.peak_requests_per_s
    for r in rows:
        if r.meets_target:
            assert r.ttft_s <= sc.traffic.ttft_target_s and r.tpot_s <= sc.traffic.tpot_target_s, r.gpu
            assert r.replicas * r.requests_per_s_per_replica >= peak, r.gpu


def test_the_curve_and_a_load_count_the_replicas_the_answer_runs_at_a_set_count():
    """Llama-3.1-8B on 2 x H100 SXM set (TP 1): 10,000 requests a day peak at 10,000 / 86,400 x 3 = 0.347 req/s, which
    one replica carries; the 2 GPUs set hold 2, so the answer runs 2 and each carries half the peak."""
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", gpus=2)
    ans = api.answer_report(sc, offers=load_pricing().offers)
    curve = api.serving_curve_report(sc)
    assert ans.pick.replicas == curve.replicas == api.serve_report(sc, request_rate=0.2).replicas == 2
    assert curve.peak_per_replica_requests_per_s == 10_000 / 86_400 * 3 / 2


def test_a_gpu_the_engine_cannot_serve_the_format_on_shows_why_and_no_speed():
    from gpuplan_core.api.perf import perf_for_gpu
    from gpuplan_core.results.perf import GpuPerf, NoFit

    sc = Scenario(preset="Llama-3.1-8B", engine="trtllm", weights_format="fp8", gpu="A100-80GB-SXM")
    p = perf_for_gpu(sc, "A100-80GB-SXM")
    assert isinstance(p, NoFit) and p.notes[0].startswith("TensorRT-LLM has no FP8 on Ampere")
    assert isinstance(perf_for_gpu(sc, "H100-SXM"), GpuPerf)  # FP8 from Hopper on
    assert isinstance(perf_for_gpu(sc.with_(engine="vllm"), "A100-80GB-SXM"), GpuPerf)  # vLLM: weight-only FP8
