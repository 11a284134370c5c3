"""memory/inference.py: the serving budget's terms by hand. Llama-3.1-8B (hidden 4,096, MLP 14,336 gated, vocabulary
128,256): the widest intermediate per token is (2 x 14,336 + 14,336) / tp + 4 x 4,096 values; the engine's largest
step holds it for every token, plus fp32 logits of the sequences it samples."""

import pytest

from gpuplan_core.common.units import GiB
from gpuplan_core.hardware.engines import ENGINES
from gpuplan_core.memory.components import KEPT_COMPONENT, Assumptions, MemoryRequest
from gpuplan_core.memory.inference import (
    VLLM_V0_MIN_PROFILE_TOKENS,
    VLLM_V1_SAMPLER_LOGIT_COPIES,
    inference_activation_bytes,
    inference_budget,
    parse_version,
    vllm_is_v0,
)
from gpuplan_core.model.presets import get_preset

L8 = get_preset("Llama-3.1-8B")
WIDTH_TP1 = 3 * 14336 + 4 * 4096  # 59,392 values per token
LOGITS = 128_256 * 4  # fp32 logits of one sequence


@pytest.mark.parametrize(
    "text,version",
    [("vLLM 0.19.0", (0, 19)), ("v0.7.3", (0, 7)), ("sglang==1.2", (1, 2)), ("latest", None), (None, None), ("", None)],
)
def test_parse_version_reads_major_and_minor_anywhere(text, version):
    assert parse_version(text) == version


def test_vllm_v0_is_before_0_8():
    assert [vllm_is_v0(v) for v in ((0, 7), (0, 8), (0, 19), (1, 0), None)] == [True, False, False, False, False]


def test_vllm_v1_profiles_its_token_budget_and_eight_logit_buffers_per_sampled_sequence():
    """8,192 tokens x 59,392 x 2 B = 973,078,528; 8 copies x 256 sequences x 128,256 x 4 B = 1,050,673,152."""
    assert (VLLM_V1_SAMPLER_LOGIT_COPIES, Assumptions().max_batched_tokens, Assumptions().max_sampled_sequences) == (
        8,
        8192,
        256,
    )
    got = inference_activation_bytes(L8, Assumptions(), 2, 1, ENGINES["vllm"])
    assert got == 8192 * WIDTH_TP1 * 2 + 8 * 256 * LOGITS == 2_023_751_680
    no_engine = inference_activation_bytes(L8, Assumptions(), 2, 1)  # the training-free estimate: one logits copy
    assert no_engine == 8192 * WIDTH_TP1 * 2 + 256 * LOGITS


def test_tensor_parallel_splits_the_mlp_and_the_logits_but_not_the_hidden_terms():
    got = inference_activation_bytes(L8, Assumptions(), 2, 2, ENGINES["vllm"])
    assert got == 8192 * (3 * 14336 / 2 + 4 * 4096) * 2 + 8 * 256 * LOGITS / 2


@pytest.mark.parametrize("context,tokens", [(32_768, 32_768), (1000, VLLM_V0_MIN_PROFILE_TOKENS)])
def test_vllm_v0_without_chunked_prefill_profiles_the_whole_context_and_at_least_2048(context, tokens):
    asm = Assumptions(stated_engine_version="vLLM 0.6.3")
    got = inference_activation_bytes(L8, asm, 2, 1, ENGINES["vllm"], context_tokens=context)
    assert got == tokens * WIDTH_TP1 * 2 + 256 * LOGITS  # V0's sampler: one logits buffer
    chunked = asm.model_copy(update={"chunked_prefill": True})
    assert inference_activation_bytes(L8, chunked, 2, 1, ENGINES["vllm"], context_tokens=context) == (
        8192 * WIDTH_TP1 * 2 + 256 * LOGITS
    )


def test_a_scenarios_release_line_is_the_version_the_memory_rules_read():
    """One input: the scenario's vLLM 0.6 line (engine_v) makes the Memory budget V0's (a 32,768-token context
    profiled whole, one logits buffer); no line set, V1's 8,192-token step with its sampler's copies."""
    from gpuplan_core.memory.request import memory_request
    from gpuplan_core.scenario.scenario import Scenario

    base = dict(preset="Llama-3.1-8B", gpu="H100-SXM", input_tokens=32_000, output_tokens=768, engine="vllm")
    v0 = memory_request(Scenario(**base, engine_version="0.6"))
    assert v0.assumptions.stated_engine_version == "0.6" and v0.context_tokens == 32_768
    got = inference_activation_bytes(L8, v0.assumptions, 2, 1, ENGINES["vllm"], context_tokens=v0.context_tokens)
    assert got == 32_768 * WIDTH_TP1 * 2 + 256 * LOGITS
    assert memory_request(Scenario(**base)).assumptions.stated_engine_version is None
    # the latest line is the current release (its '0.10' read as a version would be older than vLLM's graph rule)
    assert memory_request(Scenario(**base, engine_version="0.10+")).assumptions.stated_engine_version is None


def test_other_engines_use_their_prefill_chunk_and_sampled_sequences():
    """SGLang: 8,192-token chunks, 160 sequences' logits; transformers: no chunking, the whole prompt of every
    sequence (8 x 2,000 tokens) and the logits of the batch."""
    sg = inference_activation_bytes(L8, Assumptions(), 2, 1, ENGINES["sglang"], 16_000, logits_sequences=8)
    assert sg == 8192 * WIDTH_TP1 * 2 + 160 * LOGITS
    hf = inference_activation_bytes(L8, Assumptions(), 2, 1, ENGINES["transformers"], 16_000, logits_sequences=8)
    assert hf == 16_000 * WIDTH_TP1 * 2 + 8 * LOGITS


def test_a_stated_workspace_is_used_as_it_is():
    asm = Assumptions(activation_workspace_bytes=3 * GiB)
    assert inference_activation_bytes(L8, asm, 2, 4, ENGINES["vllm"]) == 3 * GiB


def test_a_mixture_of_experts_layer_holds_the_experts_each_token_is_routed_to():
    """Mixtral-8x7B: 2 experts of 14,336 per token, hidden 4,096, vocabulary 32,000."""
    mx = get_preset("Mixtral-8x7B-v0.1")
    assert (mx.experts_per_token, mx.expert_intermediate_size, mx.hidden_size, mx.vocab_size) == (2, 14336, 4096, 32000)
    got = inference_activation_bytes(mx, Assumptions(), 2, 1)
    assert got == 8192 * (3 * 2 * 14336 + 4 * 4096) * 2 + 256 * 32000 * 4


def test_the_budget_adds_weights_kv_workspace_graphs_and_context():
    """Batch 8 x 2,300 tokens (2,304 in blocks of 16) at 131,072 B per token; BF16 weights 2 x 8,030,261,248."""
    b = inference_budget(L8, MemoryRequest(prefill_tokens=2000), 8, 2300)
    assert b.components == {
        "weights": 2 * 8_030_261_248,
        "KV cache": 131_072 * 2304 * 8,
        "activation workspace": 2_023_751_680,
        "CUDA graphs": 1 * GiB,
        "CUDA context": 0.25 * GiB,
    }
    assert b.budgets == {"weights only": 2 * 8_030_261_248, "whole runtime": sum(b.components.values())}
    assert (b.gpus, b.notes) == (1, [])


def test_tensor_parallel_adds_communication_buffers_and_splits_weights_and_kv():
    b = inference_budget(L8, MemoryRequest(tp=2, gpus=2), 1, 4096)
    assert b.components["weights"] == 8_030_261_248 and b.components["KV cache"] == 131_072 * 4096 / 2
    assert b.components["communication buffers"] == 1.85 * GiB and b.gpus == 2


def test_an_engine_without_cuda_graphs_holds_no_graph_pool_and_its_own_kv_block():
    """transformers: no CUDA graphs, KV in 1-token blocks (2,300 tokens exactly)."""
    b = inference_budget(L8, MemoryRequest(engine="transformers"), 1, 2300)
    assert "CUDA graphs" not in b.components and b.components["KV cache"] == 131_072 * 2300


def test_a_quantised_body_keeps_16_bit_parts_and_the_ideal_4_bit_says_it_is_a_lower_bound():
    fp8 = inference_budget(L8, MemoryRequest(weights_format="fp8"), 1, 2300)
    kept = 2 * 128_256 * 4096 + 4096 + 32 * 2 * 4096  # embedding + LM head, final norm, 2 norms per layer
    assert fp8.components[KEPT_COMPONENT] == kept * 2
    assert fp8.components["weights"] == pytest.approx(8_030_261_248 - kept)
    ideal = inference_budget(L8, MemoryRequest(weights_format="int4-ideal"), 1, 2300)
    assert ideal.components["weights"] == 8_030_261_248 * 0.5 and KEPT_COMPONENT not in ideal.components
    assert ideal.notes == ["Ideal packed 4-bit is a lower bound: real 4-bit formats store scales on top."]


def test_more_tensor_ranks_than_kv_heads_and_mla_are_said():
    over = inference_budget(L8, MemoryRequest(tp=16, gpus=16), 1, 2300)
    assert "tp 16 exceeds the 8 KV heads: KV heads are replicated, one per rank." in over.notes
    mla = inference_budget(get_preset("DeepSeek-V3"), MemoryRequest(tp=8, gpus=8), 1, 2300)
    assert "MLA latent KV is not split by heads: every tensor-parallel rank holds all of it." in mla.notes


def test_an_expert_parallel_budget_holds_the_routed_experts_over_ep_and_the_rest_whole():
    """Mixtral-8x7B in BF16 at EP 8 (attention data-parallel, tp 1): 46,702,792,704 parameters of which
    45,097,156,608 are routed experts (8 x 3 x 4,096 x 14,336 x 32 layers); a GPU holds 1 of the 8 experts and the
    rest whole: (46,702,792,704 - 45,097,156,608 x 7/8) x 2 = 14,485,561,344 bytes, against TP 8's 1/8 of
    everything (11,675,698,176). Its KV cache holds its own sequences whole: 2 x 32 x 8 x 128 x 2 = 131,072 bytes per
    token (TP 8: one KV head a GPU, 16,384), with NCCL buffers as at TP > 1. A dense model ignores ep."""
    mix = get_preset("Mixtral-8x7B-v0.1")
    common = dict(job={"mode": "inference"}, context_tokens=1024, batch=1)
    ep8 = inference_budget(mix, MemoryRequest(**common, gpus=8, ep=8), 1, 1024)
    tp8 = inference_budget(mix, MemoryRequest(**common, gpus=8, tp=8), 1, 1024)
    assert ep8.components["weights"] == (46_702_792_704 - 45_097_156_608 * 7 / 8) * 2 == 14_485_561_344
    assert tp8.components["weights"] == 46_702_792_704 * 2 / 8 == 11_675_698_176
    assert ep8.components["KV cache"] == 131_072 * 1024 and tp8.components["KV cache"] == 16_384 * 1024
    assert ep8.components["communication buffers"] == Assumptions().comm_buffer_bytes
    assert any("Expert parallel 8: each GPU holds 1 of the 8 routed experts" in n for n in ep8.notes)
    dense = dict(job={"mode": "inference"}, context_tokens=1024)
    plain, at_ep = (inference_budget(L8, MemoryRequest(**dense, **kw), 1, 1024) for kw in ({}, {"gpus": 8, "ep": 8}))
    assert (at_ep.components, at_ep.notes) == (plain.components, plain.notes)
    with pytest.raises(ValueError, match="attention data-parallel"):
        inference_budget(mix, MemoryRequest(**common, gpus=8, tp=2, ep=4), 1, 1024)
