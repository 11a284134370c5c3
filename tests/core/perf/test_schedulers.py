"""perf/schedulers.py: each serving engine's scheduling policy and its per-request costs outside the GPU, with the
source of each."""

from __future__ import annotations

import pytest

from gpuplan_core.perf.schedulers import LOOPS, engine_loop


def test_each_engine_has_its_policy():
    assert engine_loop("vllm").policy == "decode_first"  # vLLM V1: running sequences first, chunked prefill
    assert engine_loop("sglang").policy == "prefill_first"  # SGLang: waiting prompts as a prefill batch first
    assert engine_loop("trtllm").policy == "no_evict"  # TensorRT-LLM: GUARANTEED_NO_EVICT


def test_an_unknown_engine_is_scheduled_as_vllm():
    assert engine_loop("someone-elses") is LOOPS["vllm"]


def test_the_engines_own_request_costs_are_zero_as_stated_and_the_clients_carry_the_gaps():
    """No engine publishes its per-request front-end cost, so the engines' own ``request_in_s`` is 0.0 (stated in
    schedulers.py); the first-token gaps the published runs show are their benchmark clients' (perf/clients.py)."""
    costs = {name: engine_loop(name).request_in_s for name in ("vllm", "sglang", "trtllm", "transformers")}
    assert costs == {"vllm": 0.0, "sglang": 0.0, "trtllm": 0.0, "transformers": 0.0}
    assert all(loop.request_out_s >= 0 and loop.source for loop in LOOPS.values())
    assert engine_loop("vllm", request_in_s=0.014).request_in_s == 0.014  # a calibrated deployment's own cost


def test_sglangs_token_ratio_decays_per_decode_step_and_jumps_on_a_retraction():
    """SGLang's defaults: 0.7 at start, down by (0.7 - 0.7 x 0.14) / 600 per decode step to 0.098; a retraction
    sets it to (tokens written + 20 per running request) / (their max_new_tokens + 1)."""
    from gpuplan_core.perf.schedulers import TokenRatio

    tr = TokenRatio()
    assert tr.ratio == 0.7
    tr.decoded(100)
    assert tr.ratio == pytest.approx(0.7 - 100 * (0.7 - 0.098) / 600, rel=1e-12)
    tr.decoded(10_000)
    assert tr.ratio == pytest.approx(0.098, rel=1e-12)
    # two requests of 400 output tokens joined at decode step 0 with 399 to write (the first came with the prompt)
    tr.join(399, 400)
    tr.join(399, 400)
    assert tr.to_write(100) == 2 * 299
    tr.retracted(100)  # written: 2 x 101; + 20 x 2 over 801
    assert tr.ratio == pytest.approx((2 * 101 + 40) / 801, rel=1e-12)
    tr.leave(399, 400)
    assert tr.running == 1 and tr.to_write(100) == 299


def test_sglang_admits_a_prompt_only_beside_what_the_running_requests_will_still_write():
    """Free 1,000 tokens, one running request with 300 to write at ratio 0.7: room 1,000 - 210 = 790, so a prompt
    of 500 with 200 to write (700) goes in and one with 300 to write (800) waits; the first prompt of a step with
    nothing running goes in whatever it will write."""
    from gpuplan_core.perf.schedulers import TokenRatio

    tr = TokenRatio()
    assert tr.admits(100, 0, 0, 5_000, 5_000)  # nothing running, first of the step
    assert not tr.admits(1_000, 400, 0, 500, 200)  # nothing running, but the step reserved 400: 700 >= 600
    tr.join(300, 301)
    assert tr.admits(1_000, 0, 0, 500, 200) and not tr.admits(1_000, 0, 0, 500, 300)
    assert tr.admits(1_000, 0, 0, 500, 10_000) is False  # max_new clipped at 4,096, still over


def test_turbomind_reads_a_waves_prompts_in_passes_of_their_own_and_gives_every_first_token_after_them():
    """LMDeploy TurboMind v0.1 ('turbomind'): 8 clients of 2,048-token prompts on an 8,192-token budget are read in
    two passes of 4 prompts with no decode between, and every first token comes from the generation step after both
    (all 8 at pass + pass + one decode step of 8); TensorRT-LLM's in-flight batching ('no_evict') gives the first 4
    theirs after the first pass. One request alone: its prompt's pass and one decode step."""
    import dataclasses

    import numpy as np

    from gpuplan_core.perf.clients import Load, Shape
    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.perf.simulate import simulate
    from gpuplan_core.perf.steps import StepTimes
    from gpuplan_core.scenario.scenario import Scenario

    sc = Scenario(preset="Llama-2-7B", input_tokens=2048, output_tokens=16, engine="trtllm")
    r, _ = replica_for(sc, "A100-80GB-SXM")
    tm = dataclasses.replace(r, limits=r.limits.model_copy(update={"policy": "turbomind"}))
    times = StepTimes(tm)
    four = times.mixed(0, 0, ((0, 2048, 1),) * 4)
    run = simulate(tm, Load(concurrency=8, shape=Shape(requests=8)))
    assert np.allclose(run.ttft_s, 2 * four + times.decode(8, 2048), rtol=1e-9)
    trt = simulate(r, Load(concurrency=8, shape=Shape(requests=8)))
    assert np.allclose(np.sort(trt.ttft_s)[:4], four, rtol=1e-9)
    alone = simulate(tm, Load(concurrency=1, shape=Shape(requests=1)))
    one = StepTimes(tm)
    assert alone.ttft_s[0] == pytest.approx(one.mixed(0, 0, ((0, 2048, 1),)) + one.decode(1, 2048), rel=1e-9)
    assert alone.tpot_s[0] > 0 and len(alone.ttft_s) == 1
