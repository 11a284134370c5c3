"""Serving under traffic (gpuplan_core/serving.py): one replica with continuous batching and chunked prefill."""

import math

import pytest

from gpuplan_core import api
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import max_batch
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.calibration import HEADLINE_REGIME, serving_median_abs_error, serving_summary, serving_table
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.predict import predict
from gpuplan_core.perf.replica import EngineLimits, Replica, engine_limits, replica_for
from gpuplan_core.perf.roofline import Part, Workload, decode_phase, step_phase
from gpuplan_core.perf.serving import capacity, max_request_rate, meets, serve
from gpuplan_core.scenario.scenario import Scenario

L8 = get_preset("Llama-3.1-8B")
H100 = get_gpu("H100-SXM")
PA = PerfAssumptions()


def replica(i=2000, o=300, model=L8, gpu=H100, tp=1, fmt="bf16") -> Replica:
    kv = max_batch(model, MemoryRequest(context_tokens=i + o, batch=1, tp=tp, gpus=tp, weights_format=fmt), gpu)
    return Replica(model, gpu, Workload(weights_format=fmt, tp=tp), i, o, kv, engine_limits(gpu))


def test_vllm_engine_defaults_by_gpu():
    # vLLM EngineArgs.get_batch_defaults: >= 70 GiB and not an A100: 8,192 tokens / 1,024 sequences; else 2,048 / 256
    assert engine_limits(H100) == EngineLimits(max_num_batched_tokens=8192, max_num_seqs=1024)
    assert engine_limits(get_gpu("A100-80GB-SXM")) == EngineLimits(max_num_batched_tokens=2048, max_num_seqs=256)
    assert engine_limits(get_gpu("L40S")) == EngineLimits(max_num_batched_tokens=2048, max_num_seqs=256)


@pytest.mark.parametrize("i,o,gpu", [(2000, 300, "H100-SXM"), (128, 2048, "L40S"), (8000, 64, "H200")])
def test_one_client_is_the_single_request_prediction(i, o, gpu):
    """Concurrency 1: no queue, no other sequences; the same step functions as perf.predict (prompt within the
    step budget, so one prefill step)."""
    g = get_gpu(gpu)
    r = replica(i, o, gpu=g)
    assert i <= r.limits.max_num_batched_tokens
    one = serve(r, concurrency=1)
    single = predict(L8, g, Workload(), 1, i, o, pa=PA)
    assert one.ttft_mean_s == pytest.approx(single.ttft_s, rel=1e-12)
    assert one.ttft_p95_s == pytest.approx(single.ttft_s, rel=1e-12)
    assert one.tpot_mean_s == pytest.approx(single.tpot_s, rel=1e-12)
    assert one.e2e_mean_s == pytest.approx(single.e2e_request_s, rel=1e-12)
    assert one.requests_per_s == pytest.approx(1 / single.e2e_request_s, rel=1e-9)
    assert one.output_tokens_per_s == pytest.approx(o / single.e2e_request_s, rel=1e-9)


def test_latency_never_falls_and_throughput_never_falls_as_clients_are_added():
    r = replica()
    prev = None
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 512):
        res = serve(r, concurrency=n)
        assert not res.saturated  # a closed loop queues instead
        if prev is not None:
            assert res.ttft_mean_s >= prev.ttft_mean_s - 1e-9
            assert res.ttft_p95_s >= prev.ttft_p95_s - 1e-9
            assert res.tpot_mean_s >= prev.tpot_mean_s - 1e-9
            assert res.requests_per_s >= prev.requests_per_s * (1 - 1e-6)
        prev = res
    assert prev.running_sequences == pytest.approx(r.max_running)  # the KV cache caps what runs...
    assert prev.waiting_requests == 512 - r.max_running  # ...the rest waits for a slot


def test_latency_rises_with_the_request_rate_and_saturates_above_capacity():
    r = replica()
    top = max_request_rate(r)
    prev = None
    for share in (0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.97):
        res = serve(r, request_rate=share * top)
        assert not res.saturated, share
        assert res.requests_per_s == pytest.approx(share * top)
        if prev is not None:
            assert res.ttft_mean_s >= prev.ttft_mean_s - 1e-9
            assert res.ttft_p95_s >= res.ttft_p50_s
            assert res.tpot_mean_s >= prev.tpot_mean_s - 1e-9
            assert res.output_tokens_per_s > prev.output_tokens_per_s
        prev = res
    over = serve(r, request_rate=1.1 * top)
    assert over.saturated and over.ttft_mean_s is None and over.tpot_mean_s is None and over.e2e_mean_s is None


def test_a_decode_bound_replicas_tpot_is_its_decode_step_at_that_concurrency():
    """c clients, 16-token prompts, 1,024 output tokens: decode-bound. TPOT = 1 / (f / tau_p + (1 - f) / tau_d)
    with tau_d = the decode step of c sequences (mean over the first and last context), tau_p = the same
    step carrying one 16-token prompt, f = the others' prompts per second x tau_p."""
    c, i, o = 16, 16, 1024
    r = replica(i, o)
    res = serve(r, concurrency=c)
    ctxs = [i, i + o - 2]  # the first and last of perf._mean_decode_time's sampled contexts
    n_d = res.requests_per_s * (o - 1) * res.tpot_mean_s * (c - 1) / c + 1  # the others decoding + this one
    assert n_d == pytest.approx(c, rel=0.02)  # nearly every sequence decodes at any time
    n_d = float(f"{n_d:.3g}")
    tau_d = sum(decode_phase(L8, H100, Workload(), n_d, ctx, PA).time_s for ctx in ctxs) / 2
    others = n_d - 1
    tau_p = (
        sum(
            step_phase(
                "s",
                L8,
                H100,
                Workload(),
                PA,
                [Part(others, ctx, 1, others), Part(1, 0, i, 1)],
                overhead_s=PA.prefill_overhead_s,
            ).time_s
            for ctx in ctxs
        )
        / 2
    )
    f = res.requests_per_s * (c - 1) / c * 1 * tau_p
    assert res.tpot_mean_s == pytest.approx(1 / (f / tau_p + (1 - f) / tau_d), rel=2e-3)
    assert res.tpot_mean_s == pytest.approx(tau_d, rel=0.01)  # prompts are 16 tokens: decode steps dominate


def test_capacity_times_replicas_covers_the_peak():
    sc = Scenario(preset="Llama-3.1-70B", gpu="H100-SXM", weights_format="fp8", tp=2, gpus=2, input_tokens=2000,
                  output_tokens=300, requests_per_day=400_000, peak_to_average=3, ttft_target_s=1.0,
                  tpot_target_s=0.05)  # fmt: skip
    rep = api.serve_report(sc, request_rate=1.0)
    cap = rep.capacity_requests_per_s
    peak = 400_000 / 86_400 * 3
    assert rep.peak_requests_per_s == pytest.approx(peak)
    n = rep.replicas
    assert n == math.ceil(peak / cap) and n * cap >= peak > (n - 1) * cap
    r, _ = replica_for(sc)
    assert meets(serve(r, request_rate=peak / n), 1.0, 0.05)  # each replica's share of the peak meets the targets
    assert not meets(serve(r, request_rate=cap * 1.1), 1.0, 0.05)  # and capacity is the most that does


def test_capacity_is_zero_when_a_single_prompt_misses_the_ttft_target():
    r = replica(8_000, 100, gpu=get_gpu("L4"))
    assert r.max_running >= 1
    assert capacity(r, ttft_p95_target_s=0.05) == 0.0


def test_bad_loads_name_the_field():
    r = replica()
    with pytest.raises(ValueError, match="exactly one of concurrency or request_rate"):
        serve(r)
    with pytest.raises(ValueError, match="request_rate"):
        serve(r, request_rate=0)
    with pytest.raises(ValueError, match="concurrency"):
        serve(r, concurrency=0)


def test_the_error_on_published_serving_points_stays_within_the_readme_figure():
    """Every published serving point is predicted with the defaults every user gets (no per-point fitting). The
    README states the median absolute error of the online, dense regime: 21.3%."""
    table = serving_table()
    assert len(table) >= 400
    assert all(r["source"] and r["engine"] for r in table)
    assert serving_median_abs_error(table, HEADLINE_REGIME) <= 0.213
    by = {(s["regime"], s["metric"]): s for s in serving_summary(table)}
    assert by[(HEADLINE_REGIME, "output_tokens_per_s")]["median_abs_error"] <= 0.08
    assert by[(HEADLINE_REGIME, "itl")]["median_abs_error"] <= 0.152
    assert by[(HEADLINE_REGIME, "ttft")]["median_abs_error"] <= 0.333
