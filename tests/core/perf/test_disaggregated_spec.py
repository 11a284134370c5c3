"""A speculating decode pool by hand (perf/disaggregated.py): the 1P1D split of test_disaggregated.py (Llama-3.1-8B
BF16 on H100-SXM, TP 1, 2,000 in / 200 out, TPOT 20 ms) with a 1B draft of k = 4 tokens at acceptance 0.7, the step
loop's steps:

    E                   = 1 + 0.7 + 0.49 + 0.343 + 0.2401 = 2.7731 tokens a step a sequence
    t(b)                = the verify step of b x 5 tokens and 4 draft steps (StepModel.decode_s)
    TPOT                = t(b) / E <= 20 ms (the batch's bound: before, t(b) <= 20 ms)
    steps a request     = ceil(199 / E) = 72 after its first token (step_queues.decode_steps; before: 199)
    decode capacity     = b / (72 x t(b))                                  (Little's law over the steps)
    KV transfer bytes   = 2,000 x (131,072 + 65,536): the draft's cache (16 layers x 8 heads x 128 x 2 x 2 B) too
"""

from __future__ import annotations

import math

import pytest

from gpuplan_core import Scenario, load_pricing
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.request import memory_request
from gpuplan_core.perf.disaggregated import (
    decode_step_s,
    decode_steps_after_first,
    decode_tpot_at,
    decode_worker,
    kv_transfer_bytes,
)
from gpuplan_core.plan.capacity import replica_of
from gpuplan_core.plan.disaggregated import size_split
from gpuplan_core.plan.fitting import kv_sequences
from gpuplan_core.plan.search import ServingAsk, judge, replica_question

E = 1 + 0.7 + 0.7**2 + 0.7**3 + 0.7**4
VAST_H100 = next(o for o in load_pricing().offers if o.offer_id == "vast-h100-1-od")


def _worker(sc: Scenario):
    m, ask, gpu = sc.model(), ServingAsk.of(sc), get_gpu("H100-SXM")
    kv = kv_sequences(m, memory_request(sc, weights_format="bf16").model_copy(update={"tp": 1, "pp": 1}), gpu)
    q = replica_question(m, ask, gpu, "bf16", 1, 1, kv)
    return judge(m, ask, gpu, "bf16", 1, 1, kv), q, replica_of(q)


def _sc(**spec) -> Scenario:
    return Scenario(
        preset="Llama-3.1-8B",
        gpu="H100-SXM",
        requests_per_day=10_000,
        input_tokens=2000,
        output_tokens=200,
        ttft_target_s=1.0,
        tpot_target_s=0.02,
        **spec,
    )


def test_a_speculating_decode_worker_divides_its_step_by_the_tokens_it_writes():
    _, _, r = _worker(_sc(spec_draft_params=10**9))
    w = decode_worker(r, 0.02)
    assert w.tokens_per_step == pytest.approx(E) and decode_steps_after_first(r) == math.ceil(199 / E) == 72
    assert w.step_s == decode_step_s(r, w.batch) and w.tpot_s == w.step_s / w.tokens_per_step <= 0.02
    assert w.batch == r.max_running == 126  # the KV cache's bound (the draft's cache beside the model's) comes first
    assert decode_step_s(r, 127) / E < 0.02  # the target alone would allow more
    assert w.capacity_per_s == w.batch / (72 * w.step_s)
    assert (round(w.step_s * 1e3, 2), round(w.tpot_s * 1e3, 2), round(w.capacity_per_s, 2)) == (54.80, 19.76, 31.93)
    assert w.tokens_per_s == pytest.approx(126 * E / w.step_s)
    # before: the step itself against the target and 199 steps a request: 16 sequences, 4.06 req/s (8x understated)
    before = max(b for b in range(1, w.batch + 1) if decode_step_s(r, b) <= 0.02)
    assert (before, round(before / (199 * decode_step_s(r, before)), 2)) == (16, 4.06)
    # plain decoding holds 197 sequences of 2,200 tokens and meets 20 ms at 136: 34.18 req/s, more than speculating
    plain = decode_worker(_worker(_sc())[2], 0.02)
    assert (plain.batch, round(plain.capacity_per_s, 2), plain.tokens_per_step) == (136, 34.18, 1.0)


def test_a_speculating_1p1d_split_at_a_trickle():
    """At 0.1 requests a second one sequence decodes: TPOT = t(1) / E; the KV sent holds the draft's too."""
    lay, q, r = _worker(_sc(spec_draft_params=10**9))
    w = decode_worker(r, 0.02)
    assert decode_tpot_at(r, w, 0.1) == decode_step_s(r, 1) / w.tokens_per_step
    assert kv_transfer_bytes(r.m, "bf16", 2000, r.wl.spec_draft) == 2000 * (131_072 + 65_536)
    s = size_split(VAST_H100, lay, lay, q, w, r, 0.1, 730.0)
    assert (s.x, s.y, s.kv_bytes) == (1, 1, 2000 * 196_608)
    assert s.tpot_s == decode_step_s(r, 1) / w.tokens_per_step
