"""Serving under traffic (gpuplan_core/perf/serving.py, simulate.py): one replica's step loop, simulated."""

import math

import numpy as np
import pytest

from gpuplan_core import api
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import max_batch
from gpuplan_core.model.arch import matmul_params_active
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.predict import predict
from gpuplan_core.perf.replica import EngineLimits, Replica, engine_limits, replica_for
from gpuplan_core.perf.roofline import Part, StepCost, Workload, step_phase
from gpuplan_core.perf.schedulers import engine_loop
from gpuplan_core.perf.serving import Shape, Sim, capacity, max_request_rate, meets, open_load, serve
from gpuplan_core.perf.steps import StepTimes, nearest_ctx
from gpuplan_core.scenario.scenario import Scenario

L8 = get_preset("Llama-3.1-8B")
H100 = get_gpu("H100-SXM")
PA = PerfAssumptions()
IN = engine_loop("vllm").request_in_s  # the engine's fixed cost before a request is scheduled


def replica(i=2000, o=300, model=L8, gpu=H100, tp=1, fmt="bf16", engine="vllm") -> Replica:
    kv = max_batch(model, MemoryRequest(context_tokens=i + o, batch=1, tp=tp, gpus=tp, weights_format=fmt), gpu)
    return Replica(model, gpu, Workload(weights_format=fmt, tp=tp), i, o, kv, engine_limits(gpu), engine=engine)


def test_vllm_engine_defaults_by_gpu():
    # vLLM EngineArgs.get_batch_defaults: >= 70 GiB and not an A100: 8,192 tokens / 1,024 sequences; else 2,048 / 256
    assert engine_limits(H100) == EngineLimits(max_num_batched_tokens=8192, max_num_seqs=1024)
    assert engine_limits(get_gpu("A100-80GB-SXM")) == EngineLimits(max_num_batched_tokens=2048, max_num_seqs=256)
    assert engine_limits(get_gpu("L40S")) == EngineLimits(max_num_batched_tokens=2048, max_num_seqs=256)


def test_the_users_limits_replace_the_engines_defaults():
    r, _ = replica_for(Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", max_num_seqs=64, max_num_batched_tokens=2048))
    assert r.limits == EngineLimits(max_num_batched_tokens=2048, max_num_seqs=64)
    run = Sim(r).run(concurrency=200)
    assert run.running_max == 64  # never more than the cap runs


@pytest.mark.parametrize("i,o,gpu", [(2000, 300, "H100-SXM"), (128, 2048, "L40S"), (8000, 64, "H200")])
def test_one_client_is_the_single_request_prediction(i, o, gpu):
    """Concurrency 1: no queue, no other sequences; the same step functions as perf.predict (prompt within the
    step budget, so one prefill step), plus the engine's fixed cost before scheduling."""
    g = get_gpu(gpu)
    r = replica(i, o, gpu=g)
    assert i <= r.limits.max_num_batched_tokens
    one = serve(r, concurrency=1)
    single = predict(L8, g, Workload(), 1, i, o, pa=PA, engine="vllm")
    assert one.ttft_mean_s == pytest.approx(single.ttft_s + IN, rel=1e-9)
    assert one.ttft_p95_s == pytest.approx(single.ttft_s + IN, rel=1e-9)
    assert one.tpot_mean_s == pytest.approx(single.tpot_s, rel=2e-3)  # per-step contexts vs 9 sampled ones
    assert one.e2e_mean_s == pytest.approx(single.e2e_request_s + IN, rel=2e-3)


def test_identical_clients_fall_into_waves():
    """4 clients, fixed 2,000/300 tokens, all starting at once (as benchmark clients do): the 4 prompts share one
    step (8,000 tokens within the 8,192 budget), the 4 sequences decode together, end in the same step and send
    again together. Every request's first token therefore waits for the prefill of the whole wave:
    TTFT = request_in + step(4 prompts of 2,000 tokens), not one prompt's prefill."""
    r = replica()
    res = serve(r, concurrency=4, shape=Shape(requests=40))
    wave = StepCost(L8, H100, Workload(), PA, "vllm").phase("w", [Part(1, 0, 2000, 1)] * 4, PA.prefill_overhead_s)
    assert res.ttft_mean_s == pytest.approx(IN + wave.time_s, rel=1e-9)
    assert res.ttft_p95_s == pytest.approx(IN + wave.time_s, rel=1e-9)
    alone = serve(r, concurrency=1).ttft_mean_s
    assert res.ttft_mean_s > 2.5 * (alone - IN)  # the wave's prefill, about 4 prompts' worth


def test_a_spread_of_lengths_dissolves_the_waves():
    """8 clients: with fixed lengths every request waits for the wave; with each length drawn between 0.8 and 1.0
    of nominal, the clients drift apart: the last requests' TTFT falls toward the open-loop value at the same
    throughput."""
    r = replica()
    fixed = Sim(r, Shape(requests=400)).run(concurrency=8)
    spread = Sim(r, Shape(lengths="uniform", length_spread=0.2, requests=400)).run(concurrency=8)
    first, last = spread.ttft_s[:80].mean(), spread.ttft_s[-80:].mean()
    open_loop = serve(r, request_rate=spread.requests_per_s, shape=Shape(lengths="uniform")).ttft_mean_s
    assert fixed.ttft_s[-80:].mean() == pytest.approx(fixed.ttft_s[:80].mean(), rel=0.05)  # waves stay
    assert last < 0.8 * first
    assert last < 0.4 * fixed.ttft_s[-80:].mean()
    assert last == pytest.approx(open_loop, rel=0.25)


def test_latency_rises_with_the_request_rate_and_saturates_above_capacity():
    r = replica()
    sim = Sim(r)
    top = max_request_rate(r, sim)
    prev = None
    for share in (0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95):
        res = serve(r, request_rate=share * top, steps=sim)
        assert not res.saturated, share
        assert res.requests_per_s == pytest.approx(share * top)
        assert res.running_sequences <= r.limits.max_num_seqs
        if prev is not None:
            assert res.ttft_mean_s >= prev.ttft_mean_s
            assert res.ttft_p95_s >= prev.ttft_p95_s
            assert res.tpot_mean_s >= prev.tpot_mean_s
            assert res.output_tokens_per_s > prev.output_tokens_per_s
        assert res.ttft_p99_s >= res.ttft_p95_s >= res.ttft_p90_s >= res.ttft_p50_s
        assert res.itl_p99_s >= res.itl_p95_s >= res.itl_p90_s >= res.tpot_p50_s
        prev = res
    over = serve(r, request_rate=1.1 * top, steps=sim)
    assert over.saturated and over.ttft_mean_s is None and over.tpot_mean_s is None and over.e2e_mean_s is None


@pytest.mark.parametrize("o,shape", [(300, Shape()), (1, Shape()), (300, Shape(arrival="bursty", lengths="chat"))])
def test_an_open_loads_figures_are_serves_float_for_float(o, shape):
    """The capacity search and the load points read ``open_load``: serve's saturation, p95 TTFT, mean TPOT (None
    for one output token) and mean end to end of the same run, without its other figures."""
    r = replica(o=o)
    sim = Sim(r, shape)
    top = max_request_rate(r, sim)
    for share in (0.01, 0.3, 0.9, 1.2):
        full, lean = serve(r, request_rate=share * top, steps=sim), open_load(r, share * top, sim)
        assert lean.request_rate == full.load and lean.saturated is full.saturated
        if full.saturated:
            assert (lean.ttft_p95_s, lean.tpot_mean_s, lean.e2e_mean_s) == (math.inf, None, math.inf)
        else:
            assert (lean.ttft_p95_s, lean.tpot_mean_s, lean.e2e_mean_s) == (
                full.ttft_p95_s,
                full.tpot_mean_s,
                full.e2e_mean_s,
            )
        assert meets(lean, 0.5, 0.05) == meets(full, 0.5, 0.05)
    assert open_load(r, 1.2 * top, sim).saturated  # beyond the all-slots-busy rate
    with pytest.raises(ValueError, match="request_rate"):
        open_load(r, 0.0, sim)


def test_more_clients_never_run_more_sequences_than_the_cap():
    r = replica()
    prev = None
    for n in (1, 4, 16, 64, 256, 1500):
        run = Sim(r).run(concurrency=n)
        assert run.running_max <= r.limits.max_num_seqs
        if prev is not None and n <= 256:
            assert run.requests_per_s >= prev.requests_per_s * 0.98
        prev = run


def test_a_decode_step_carrying_a_prompt_chunk_is_slower_by_the_chunks_work():
    """8 sequences decoding at context 2,100 plus a 2,000-token prompt chunk in the same step (Llama-3.1-8B, H100,
    BF16). Per op, time = max(FLOPs / (peak x MFU(tokens)), bytes / (bandwidth x MBU)); the chunk adds 2,000 tokens
    of matmul work (the weights are read once either way: the matmuls turn compute-bound), its own attention over
    2,000 x 2,001 / 2 causal pairs, and its KV writes. (An engine without kernel tables, so the steps are the
    roofline's.)"""
    r = replica(engine="transformers")
    times = StepTimes(r)
    n, ctx, chunk = 8, nearest_ctx(2100), 2000
    assert abs(ctx - 2100) <= 11  # the context grid is 1% apart
    mixed = times.mixed(n, ctx, ((0, chunk, 1),))
    decode = times.decode(n, ctx)
    by_phase = step_phase(
        "s", L8, H100, Workload(), PA, [Part(n, ctx, 1, n), Part(1, 0, chunk, 1)], overhead_s=PA.prefill_overhead_s
    )
    assert mixed == pytest.approx(by_phase.time_s, rel=1e-12)
    # by hand: the matmuls of 2,008 tokens, compute-bound at MFU 0.75 x 2,008 / (2,008 + 64)
    lm = L8.vocab_size * L8.hidden_size
    tokens = n + chunk
    mm_flops = 2 * (matmul_params_active(L8) - lm) * tokens + 2 * lm * (n + 1)
    mfu = 0.75 * tokens / (tokens + 64)
    mm_time = mm_flops / (H100.dense_peak_flops("bf16")[0] * mfu)
    assert by_phase.compute_time_s >= mm_time  # attention adds its own part
    assert mixed - decode == pytest.approx(mm_time + PA.prefill_overhead_s - decode, rel=0.15)
    assert mixed > 4 * decode  # a decode step carrying a 2,000-token chunk is several decode steps long


def test_capacity_times_replicas_covers_the_peak():
    sc = Scenario(
        preset="Llama-3.1-70B",
        gpu="H100-SXM",
        weights_format="fp8",
        tp=2,
        gpus=2,
        input_tokens=2000,
        output_tokens=300,
        requests_per_day=400_000,
        peak_to_average=3,
        ttft_target_s=1.0,
        tpot_target_s=0.05,
    )
    rep = api.serve_report(sc, request_rate=1.0)
    cap = rep.capacity_requests_per_s
    peak = 400_000 / 86_400 * 3
    assert rep.peak_requests_per_s == pytest.approx(peak)
    n = rep.replicas
    assert n == math.ceil(peak / cap) and n * cap >= peak > (n - 1) * cap
    r, _ = replica_for(sc)
    sim = Sim(r)
    assert meets(serve(r, request_rate=peak / n, steps=sim), 1.0, 0.05)  # each replica's share meets the targets
    assert not meets(serve(r, request_rate=cap * 1.1, steps=sim), 1.0, 0.05)  # and capacity is the most that does


def test_capacity_is_zero_when_a_single_prompt_misses_the_ttft_target():
    r = replica(8_000, 100, gpu=get_gpu("L4"))
    assert r.max_running >= 1
    assert capacity(r, ttft_p95_target_s=0.05) == 0.0


def test_runs_are_reproducible_and_bursty_arrivals_wait_longer():
    r = replica()
    a = serve(r, request_rate=6.0)
    assert serve(r, request_rate=6.0) == a  # a fixed seed: the same link gives the same numbers
    bursty = serve(r, request_rate=6.0, shape=Shape(arrival="bursty"))
    assert bursty.ttft_p95_s > a.ttft_p95_s


def test_chat_lengths_have_a_long_tail():
    r = replica()
    run = Sim(r, Shape(lengths="chat", requests=400)).run(request_rate=4.0)
    assert np.quantile(run.ttft_s, 0.99) > 3 * np.median(run.ttft_s)


def test_bad_loads_name_the_field():
    r = replica()
    with pytest.raises(ValueError, match="exactly one of concurrency or request_rate"):
        serve(r)
    with pytest.raises(ValueError, match="request_rate"):
        serve(r, request_rate=0)
    with pytest.raises(ValueError, match="concurrency"):
        serve(r, concurrency=0)
    with pytest.raises(ValueError, match="length_spread"):
        serve(r, concurrency=2, shape=Shape(lengths="uniform", length_spread=1.5))
