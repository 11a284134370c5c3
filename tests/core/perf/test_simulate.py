"""The step loop, checked by hand: one request alone takes the engine steps the static view adds up, a full KV cache
queues a request instead of admitting it, and a saturated replica makes max running sequences tokens per decode
step."""

import dataclasses
import math

import numpy as np
import pytest

from gpuplan_core.perf.predict import predict
from gpuplan_core.perf.replica import EngineLimits, replica_for
from gpuplan_core.perf.schedulers import engine_loop
from gpuplan_core.perf.simulate import Load, Shape, mean, median, quantiles, simulate
from gpuplan_core.perf.steps import StepModel, StepTimes
from gpuplan_core.scenario.scenario import Scenario


def _replica(prompt: int, output: int, **update):
    r, note = replica_for(Scenario(preset="Llama-3.1-8B", gpu="H100-SXM", input_tokens=prompt, output_tokens=output))
    assert note is None
    return dataclasses.replace(r, **update)


def _alone(r):
    return simulate(r, Load(concurrency=1, shape=Shape(requests=1)))


def test_one_request_alone_waits_for_its_prefill_step_and_then_one_decode_step_per_token():
    r = _replica(2000, 300)
    run = _alone(r)
    sm = StepModel(r.m, r.gpu, r.wl, r.pa, r.engine)
    prefill_s = sm.step(0, 0, ((0, 2000, 1),)).time_s  # the whole prompt in one step: 2,000 < 8,192 per step
    assert prefill_s == sm.prefill(1, 2000).time_s  # the static view's prefill is that same step
    assert run.ttft_s[0] == pytest.approx(engine_loop("vllm").request_in_s + prefill_s, rel=1e-12)
    # 299 decode steps at contexts 2,000 .. 2,298, taken together: the mean of the first and last (linear in context)
    times = StepTimes(r)
    first, last = times.decode(1, 2000), times.decode(1, 2298)
    assert run.tpot_s[0] == pytest.approx((first + last) / 2, rel=1e-9)
    assert run.tpot_s[0] == pytest.approx(sm.decode(1, 2149).time_s, rel=2e-3)  # the step at the mean context
    # one request alone, the static view: the same
    static = predict(r.m, r.gpu, r.wl, 1, 2000, 300, pa=r.pa, engine=r.engine)
    assert run.ttft_s[0] - engine_loop("vllm").request_in_s == pytest.approx(static.ttft_s, rel=1e-12)
    assert run.tpot_s[0] == pytest.approx(static.tpot_s, rel=2e-3)
    assert run.preemptions == 0 and run.running_max == 1


def test_a_prompt_longer_than_the_step_budget_is_read_in_chunks():
    r = _replica(20000, 10)
    run = _alone(r)
    sm = StepModel(r.m, r.gpu, r.wl, r.pa, r.engine)
    # 8,192 + 8,192 + 3,616 prompt tokens, each chunk attending to the ones before; logits on the last only
    chunks = [(0, 8192, 0), (8192, 8192, 0), (16384, 3616, 1)]
    steps_s = sum(sm.step(0, 0, (c,)).time_s for c in chunks)
    assert run.ttft_s[0] == pytest.approx(engine_loop("vllm").request_in_s + steps_s, rel=1e-12)


def test_a_full_kv_cache_queues_a_request_instead_of_admitting_it():
    """TensorRT-LLM's no-evict admission with room for exactly two requests at full length: the third waits for
    the first to end, nothing is preempted."""
    r = _replica(500, 200, engine="trtllm", kv_tokens_total=2 * 700)
    run = simulate(r, Load(concurrency=3, shape=Shape(requests=3)))
    assert run.running_max == 2 and run.preemptions == 0
    arrive_s = engine_loop("trtllm").request_in_s  # send -> the engine sees it
    assert run.waits_s[0] == run.waits_s[1] == pytest.approx(arrive_s, rel=1e-12)  # admitted on arrival
    # all sent at 0, so the third is admitted in the step the first request's last token ends
    assert run.waits_s[2] == pytest.approx(min(run.e2e_s[:2]), rel=1e-12) and run.waits_s[2] > 10 * arrive_s


def test_vllm_preempts_the_last_admitted_sequence_when_the_cache_fills():
    """Decode-first admits prompts that fit now; when decoding sequences outgrow the cache, the last admitted one
    is preempted and recomputed later: every request still finishes."""
    r = _replica(500, 400, kv_tokens_total=2000)  # three prompts fit, three full lengths (2,700) do not
    run = simulate(r, Load(concurrency=3, shape=Shape(requests=3)))
    assert run.preemptions >= 1
    assert len(run.e2e_s) == 3 and all(math.isfinite(x) for x in run.e2e_s)


def test_a_saturated_replica_makes_max_running_sequences_tokens_per_decode_step():
    """Clients that keep 4 sequences busy (max_num_seqs 4) on short prompts and long answers: output tokens per
    second = 4 / the decode step of 4 sequences at the mean context (prefill is one step in a thousand)."""
    r = _replica(16, 1000, limits=EngineLimits(max_num_seqs=4))
    run = simulate(r, Load(concurrency=4, shape=Shape(requests=40)))
    step_s = StepModel(r.m, r.gpu, r.wl, r.pa, r.engine).decode(4, 16 + 500).time_s
    assert run.running_max == 4
    assert run.output_tokens_per_s == pytest.approx(4 / step_s, rel=0.01)


def test_a_run_gives_up_exactly_when_its_p95_first_token_is_certainly_late():
    """Of 400 open-loop arrivals the middle 320 are measured; numpy's linear p95 of 320 values lies at or above the
    value at floor(0.95 x 319) = 303 in sorted order, so 320 - 303 = 17 late first tokens decide it. A run given a
    target stops (None) exactly at the rates whose full run has a p95 over the target, and runs on otherwise."""
    import numpy as np

    from gpuplan_core.perf.simulate import late_enough_to_miss, measured_window

    assert late_enough_to_miss(320) == 17 and len(measured_window(400, closed=False)) == 320
    assert late_enough_to_miss(1) == 1 and len(measured_window(10, closed=False)) == 10
    r = _replica(2000, 200)
    target_s = 1.0
    outcomes = set()
    for rate in (2.0, 8.0, 14.0, 20.0, 40.0):
        full = simulate(r, Load(request_rate=rate))
        late = float(np.quantile(full.ttft_s, 0.95)) > target_s
        stopped = simulate(r, Load(request_rate=rate), give_up_ttft_s=target_s)
        assert (stopped is None) == late, rate
        if stopped is not None:
            assert np.array_equal(stopped.ttft_s, full.ttft_s)
        outcomes.add(late)
    assert outcomes == {True, False}  # the rates span both sides of the target


def test_sglang_queues_a_prompt_the_cache_cannot_hold_to_its_end_instead_of_preempting():
    """Room for 2,000 tokens, three requests of 500 + 400 sent at once: SGLang admits the first (nothing running),
    the second (500 + 400 < 2,000 - 500 read - 400 reserved by the first) and not the third (room 200); while the
    two decode, 0.7 x their tokens still to write keep it out, so it starts when they end, and nothing is
    preempted. vLLM admits all three prompts and preempts (the test above)."""
    r = _replica(500, 400, engine="sglang", kv_tokens_total=2000)
    run = simulate(r, Load(concurrency=3, shape=Shape(requests=3)))
    assert run.preemptions == 0 and run.running_max == 2
    arrive_s = engine_loop("sglang").request_in_s
    assert run.waits_s[0] == run.waits_s[1] == pytest.approx(arrive_s, rel=1e-12)
    assert run.waits_s[2] == pytest.approx(min(run.e2e_s[:2]), rel=1e-12)


def test_a_runs_measures_are_numpys_float_for_float():
    """``mean``, ``median`` and ``quantiles`` (a run's measures, without numpy's dispatch) equal np.mean, np.median
    and np.quantile's linear method exactly on first-token-like samples of 1 to 600 values, odd and even counts,
    ties and a value repeated; a NaN among them gives NaN quantiles, as numpy's do."""
    rng = np.random.default_rng(7)
    qs = (0.5, 0.9, 0.95, 0.99)
    samples = [rng.lognormal(-3, 1.5, n) for n in (1, 2, 3, 4, 5, 19, 20, 320, 321, 600)]
    samples += [np.array([0.25] * 7 + [0.5] * 3), np.round(rng.uniform(0, 1, 101), 2)]
    for x in samples:
        assert quantiles(x, qs) == [float(v) for v in np.quantile(x, qs)]
        assert mean(x) == float(np.mean(x)) and median(x) == float(np.median(x))
    with_nan = np.array([0.1, math.nan, 0.3])
    assert all(math.isnan(v) for v in quantiles(with_nan, qs))
