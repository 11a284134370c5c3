"""The engine's release line changes what the step loop schedules, checked by hand: vLLM 0.6 (V0) reads a prompt
of a 128K-context model in 512-token chunks where V1 reads it in one 8,192-token step, and for a 4K-context model
it runs a waiting prompt alone (decodes wait) where V1 mixes it into the decode step."""

import dataclasses

import pytest

from gpuplan_core.perf.replica import replica_for
from gpuplan_core.perf.simulate import Load, Shape, simulate
from gpuplan_core.perf.steps import StepModel
from gpuplan_core.scenario.scenario import Scenario


def _replica(preset: str, prompt: int, output: int, version: str | None):
    sc = Scenario(preset=preset, gpu="H100-SXM", input_tokens=prompt, output_tokens=output, engine_version=version)
    r, note = replica_for(sc)
    assert note is None
    return r


def test_vllm_0_6_reads_a_long_context_model_s_prompt_in_512_token_chunks():
    v0, v1 = (_replica("Llama-3.1-8B", 1200, 4, v) for v in ("0.6", None))
    assert v0.m.max_context_tokens == 131_072  # over 32K: V0 turns chunked prefill on, 512 tokens a step
    assert (v0.limits.max_num_batched_tokens, v1.limits.max_num_batched_tokens) == (512, 8192)
    assert v0.limits.policy == "decode_first"  # V0 with chunked prefill: decodes first, as V1
    sm = StepModel(v0.m, v0.gpu, v0.wl, v0.pa, v0.engine)
    chunks = [(0, 512, 0), (512, 512, 0), (1024, 176, 1)]  # each chunk attends to the ones before; logits last
    three_s = sum(sm.step(0, 0, (c,)).time_s for c in chunks)
    one_s = sm.step(0, 0, ((0, 1200, 1),)).time_s
    t0 = simulate(v0, Load(concurrency=1, shape=Shape(requests=1))).ttft_s[0]
    t1 = simulate(v1, Load(concurrency=1, shape=Shape(requests=1))).ttft_s[0]
    assert t0 == pytest.approx(three_s, rel=1e-12)  # the engine's own request cost is 0 (schedulers.py)
    assert t1 == pytest.approx(one_s, rel=1e-12)
    assert t0 > t1


def test_vllm_0_6_runs_a_waiting_prompt_alone_where_v1_mixes_it_into_the_decodes():
    """Two requests of a 4,096-context model sent 5 ms apart: under V0 (no chunked prefill: prefills first) the
    second prompt's step carries no decode, so the first request's gap in that step is the whole prefill step plus
    the decode step after it; under V1 that step carries the first request's decode with the prompt."""
    v0, v1 = (_replica("Llama-2-7B", 1000, 40, v) for v in ("0.6", None))
    assert v0.m.max_context_tokens == 4096
    assert (v0.limits.max_num_batched_tokens, v0.limits.max_num_seqs) == (4096, 256)
    load = Load(request_rate=200.0, shape=Shape(requests=2, seed=3))
    r0, r1 = simulate(v0, load), simulate(v1, load)
    sm = StepModel(v0.m, v0.gpu, v0.wl, v0.pa, v0.engine)
    alone_s = sm.step(0, 0, ((0, 1000, 1),)).time_s
    mixed_s = sm.step(1, 1010, ((0, 1000, 1),)).time_s  # one decode at context ~1,010 beside the prompt
    decode_s = sm.decode(1, 1010).time_s
    assert decode_s < alone_s < mixed_s
    # V1: one decoding step carries the prompt (its gap is the mixed step); V0: every decoding step is a decode alone
    assert max(r1.gaps_s) == pytest.approx(mixed_s, rel=1e-2)
    two_s = sm.decode(2, 1040).time_s  # both decoding, at most 40 tokens on
    assert decode_s <= max(r0.gaps_s) <= two_s * 1.01 < alone_s
    assert (v0.limits.policy, v1.limits.policy) == (
        "prefill_first",
        None,
    )  # the line's, in the limits; V1: the engine's
    # the same replica with V1's limits but V0's budget and cap schedules as V1: the policy is what differs
    as_v1 = simulate(dataclasses.replace(v0, limits=v0.limits.model_copy(update={"policy": None})), load)
    assert max(as_v1.gaps_s) == pytest.approx(mixed_s, rel=1e-2)
