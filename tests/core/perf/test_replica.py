"""perf/replica.py: one replica as the serving model takes it. The engines' scheduler defaults by GPU (vLLM's
EngineArgs.get_batch_defaults, SGLang's chunked_prefill_size, TensorRT-LLM's max_num_tokens), the user's limits in
their place, the KV-cache running limit, and the smallest layout that fits when the scenario's does not."""

import math
from dataclasses import replace

import pytest

from gpuplan_core.common.units import GiB
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.fit import kv_capacity_tokens
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.arch import params_total
from gpuplan_core.perf.replica import EngineLimits, Replica, engine_limits, replica_for, scenario_limits
from gpuplan_core.scenario.deployment import RuntimeAssumptions
from gpuplan_core.scenario.scenario import Scenario


@pytest.mark.parametrize(
    "gpu,tokens,seqs",
    [
        ("H100-SXM", 8192, 1024),  # 79.2 GiB usable: at least 70 GiB, not an A100
        ("H200", 8192, 1024),
        ("A100-80GB-SXM", 2048, 256),  # 79.2 GiB, but an A100
        ("L40S", 2048, 256),  # 44.5 GiB
        ("L4", 2048, 256),
    ],
)
def test_vllm_takes_the_larger_defaults_on_70_gib_gpus_that_are_not_a100s(gpu, tokens, seqs):
    assert engine_limits(get_gpu(gpu)) == EngineLimits(max_num_batched_tokens=tokens, max_num_seqs=seqs)


def test_the_70_gib_line_is_on_usable_memory():
    assert get_gpu("H100-SXM").vram_usable_bytes >= 70 * GiB > get_gpu("L40S").vram_usable_bytes


@pytest.mark.parametrize(
    "gpu,chunk",
    [("L4", 2048), ("H100-SXM", 8192), ("H200", 8192), ("B200", 16384)],  # nominal 25.8, 85.9, 151.4, 193.3 GB
)
def test_sglang_s_chunk_steps_at_35_and_160_gb_and_trtllm_is_8192_by_2048(gpu, chunk):
    g = get_gpu(gpu)
    assert engine_limits(g, "sglang") == EngineLimits(max_num_batched_tokens=chunk, max_num_seqs=1024)
    assert engine_limits(g, "trtllm") == EngineLimits(max_num_batched_tokens=8192, max_num_seqs=2048)
    assert engine_limits(g, "transformers") == engine_limits(g)  # no scheduler: vLLM's


def test_the_user_s_limits_replace_the_engine_s_one_by_one():
    h100 = get_gpu("H100-SXM")
    assert scenario_limits(h100, RuntimeAssumptions()) == EngineLimits()  # 8,192 tokens, 1,024 sequences
    only_seqs = scenario_limits(h100, RuntimeAssumptions(max_num_seqs=64))
    assert (only_seqs.max_num_batched_tokens, only_seqs.max_num_seqs) == (8192, 64)
    both = scenario_limits(get_gpu("L4"), RuntimeAssumptions(max_num_seqs=32, max_num_batched_tokens=4096))
    assert (both.max_num_batched_tokens, both.max_num_seqs) == (4096, 32)


@pytest.mark.parametrize("field,value", [("max_num_batched_tokens", 15), ("max_num_seqs", 0)])
def test_limits_below_the_engine_s_least_are_refused_by_name(field, value):
    with pytest.raises(ValueError, match=field):
        EngineLimits(**{field: value})


def test_one_replica_of_llama_8b_on_an_h100_and_its_kv_running_limit():
    """A sequence of 2,000 + 300 tokens takes 2,304 in 16-token blocks; the running limit is the start-up KV
    pool's tokens // 2,304; the KV the engine holds is kv_sequences x 2,300."""
    sc = Scenario(preset="Llama-3.1-8B")
    r, note = replica_for(sc, "H100-SXM")
    assert note is None and (r.wl.tp, r.wl.pp, r.gpu.gpu, r.engine) == (1, 1, "H100-SXM", "vllm")
    assert (r.input_tokens, r.output_tokens, r.limits) == (2000, 300, EngineLimits())
    pool = kv_capacity_tokens(sc.model(), memory_request(sc, batch=1), r.gpu)
    assert r.kv_sequences == pool // 2304 > 100
    assert r.kv_tokens == r.kv_sequences * 2300 and r.max_running == min(1024, r.kv_sequences)


def test_prefix_caching_reads_only_the_new_share_of_the_prompt():
    r, _ = replica_for(Scenario(preset="Llama-3.1-8B", prefix_cache_fraction=0.25), "H100-SXM")
    assert (r.cached_tokens, r.new_tokens) == (500, 1500)  # int(2,000 x 0.25), the rest
    full = Replica(r.m, r.gpu, replace(r.wl, prefix_cache_fraction=1.0), 2000, 300, 10, r.limits)
    assert (full.cached_tokens, full.new_tokens) == (2000, 1)  # at least one token is prefilled


def test_the_running_limit_is_the_smaller_of_the_engine_s_sequences_and_the_kv_s():
    r, _ = replica_for(Scenario(preset="Llama-3.1-8B"), "H100-SXM")
    few = Replica(r.m, r.gpu, r.wl, 2000, 300, 5000, EngineLimits(max_num_seqs=64), kv_tokens_total=123_456)
    assert (few.max_running, few.kv_tokens) == (64, 123_456)
    none = Replica(r.m, r.gpu, r.wl, 2000, 300, 0, r.limits)
    assert (none.max_running, none.kv_tokens) == (0, 0)


def test_a_model_that_does_not_fit_the_scenario_s_layout_takes_the_smallest_that_does_and_says_so():
    """Llama-3.1-70B (70,553,706,496 parameters) in BF16 is 141.1 GB of weights: an L4 may fill 22.03 GiB x 0.9 =
    21.3 GB, so one replica needs at least ceil(141.1 / 21.3) = 7 of them."""
    sc = Scenario(preset="Llama-3.1-70B", gpu="L4")
    assert params_total(sc.model()) == 70_553_706_496
    r, note = replica_for(sc)
    tp, pp = r.wl.tp, r.wl.pp
    assert note == f"Does not fit at tp=1 x pp=1; one replica here is tp={tp} x pp={pp}."
    least = math.ceil(70_553_706_496 * 2 / (get_gpu("L4").vram_usable_bytes * 0.9))
    assert least == 7 and tp * pp >= least and r.kv_sequences >= 1
    assert r.limits == EngineLimits(max_num_batched_tokens=2048, max_num_seqs=256)


def test_the_weights_format_argument_replaces_the_scenario_s():
    r, _ = replica_for(Scenario(preset="Llama-3.1-8B"), "H100-SXM", "fp8")
    bf16, _ = replica_for(Scenario(preset="Llama-3.1-8B"), "H100-SXM")
    assert (r.wl.weights_format, bf16.wl.weights_format) == ("fp8", "bf16")
    assert r.kv_sequences > bf16.kv_sequences  # 8 GB of weights freed for KV cache
