"""A speculating replica's draft in the memory budget (memory/inference.py ``draft_components``, engine_kv.py,
fit.py): the draft's weights and its KV cache for every sequence, their own components, the KV pool shared by both
caches and so fewer sequences; the plain budget unchanged."""

from __future__ import annotations

import pytest

from gpuplan_core.common.units import GiB
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.engine_kv import startup_kv
from gpuplan_core.memory.fit import kv_capacity_tokens, max_batch
from gpuplan_core.memory.inference import DRAFT_KV, DRAFT_WEIGHTS
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.arch import embedding_params, params_total
from gpuplan_core.model.draft import mtp_draft
from gpuplan_core.scenario.scenario import Scenario

H100 = get_gpu("H100-SXM")


def _sc(**spec) -> Scenario:
    return Scenario(preset="Llama-3.1-8B", input_tokens=1000, output_tokens=301, **spec)


def test_a_1b_draft_s_weights_and_kv_are_their_own_components_by_hand():
    """Llama-3.1-8B BF16 with a 1B draft (model_from_param_count: 16 layers, 8 KV heads of 128), 1,301 tokens of
    context rounded to whole 16-token blocks (1,312), the scenario's batch of 8 sequences:
        draft weights  = 1,000,000,000 params x 2 B / (tp 1 x pp 1)               = 2.000e9 B (1.863 GiB)
        draft KV cache = 2 x 16 layers x 8 heads x 128 x 2 B x 1,312 tokens x 8   = 687,865,856 B (the 8B's is
                         twice: 2 x 32 x 8 x 128 x 2 x 1,312 x 8 = 1,375,731,712 B)
    and every other component as the plain budget's."""
    m = _sc().model()
    plain = memory_budget(m, memory_request(_sc()))
    spec = memory_budget(m, memory_request(_sc(spec_draft_params=10**9)))
    assert DRAFT_WEIGHTS not in plain.components and DRAFT_KV not in plain.components
    assert spec.components[DRAFT_WEIGHTS] == 1_000_000_000 * 2
    assert spec.components[DRAFT_KV] == 2 * 16 * 8 * 128 * 2 * 1312 * 8 == 687_865_856
    assert spec.components["KV cache"] == plain.components["KV cache"] == 2 * 32 * 8 * 128 * 2 * 1312 * 8
    assert spec.per_gpu_bytes == pytest.approx(plain.per_gpu_bytes + 2e9 + 687_865_856, rel=1e-15)
    assert {k: v for k, v in spec.components.items() if k not in (DRAFT_WEIGHTS, DRAFT_KV)} == plain.components
    assert any("draft model (1.00B parameters)" in n for n in spec.notes)


def test_the_draft_lowers_the_kv_pool_and_the_sequences_by_hand():
    """vLLM's start-up pool (engine_kv.py): 0.9 x usable - weights - activation peak - CUDA graphs - context, now
    less the draft's 2e9 B of weights; each token takes the 8B's 131,072 B and the draft's 65,536 B, so the pool
    holds pool // (196,608 x 16) x 16 tokens and pool // (1,312 x 196,608) sequences of 1,301 tokens: 213 where
    plain decoding holds 332 (pool // (1,312 x 131,072))."""
    m = _sc().model()
    req_plain, req_spec = memory_request(_sc()), memory_request(_sc(spec_draft_params=10**9))
    plain, spec = startup_kv(m, req_plain, H100), startup_kv(m, req_spec, H100)
    assert spec.subtracted[DRAFT_WEIGHTS] == 2e9 and DRAFT_KV not in spec.subtracted
    assert spec.pool_bytes == pytest.approx(plain.pool_bytes - 2e9, abs=1e-3)
    assert (plain.bytes_per_token, spec.bytes_per_token) == (131_072, 131_072 + 65_536)
    assert spec.tokens == int(spec.pool_bytes // (196_608 * 16)) * 16
    assert kv_capacity_tokens(m, req_spec, H100) == spec.tokens
    assert max_batch(m, req_spec, H100) == int(spec.pool_bytes // (1312 * 196_608)) == 213
    assert max_batch(m, req_plain, H100) == int(plain.pool_bytes // (1312 * 131_072)) == 332
    assert plain.pool_bytes / GiB == pytest.approx(53.18, abs=0.01)


def test_deepseek_v3_s_mtp_module_in_the_budget_where_the_replica_runs_it():
    """DeepSeek-V3 FP8 on 8 H200 (TP 8) with ``spec_mtp`` "on": the MTP module's one MoE layer without the embedding
    and head it shares (13,360,651,520 - 1,853,365,248 = 11,507,286,272 params) x 1 B / 8, and its one MLA layer's
    KV, 1 x (512 + 64) x 1 B (FP8 KV) per token, whole on every rank (MLA is not split by heads), for the
    scenario's 8 sequences at the context in whole blocks. "weigh" or "off":
    no draft in the budget (the recommender weighs it: plan/speculation.py)."""
    sc = Scenario(preset="DeepSeek-V3", weights_format="fp8", kv_format="fp8", tp=8, gpus=8, gpu="H200")
    m = sc.model()
    d = mtp_draft(m)
    assert params_total(d.arch) - embedding_params(d.arch) == d.weight_params == 11_507_286_272
    on = sc.model_copy(update={"assumptions": sc.assumptions.model_copy(update={"spec_mtp": "on"})})
    b = memory_budget(m, memory_request(on))
    ctx = -(-sc.context_tokens // 16) * 16
    assert b.components[DRAFT_WEIGHTS] == 11_507_286_272 * 1 / 8
    assert b.components[DRAFT_KV] == (512 + 64) * 1 * ctx * 8
    assert DRAFT_WEIGHTS not in memory_budget(m, memory_request(sc)).components
