"""The memory engine: DOMAIN.md worked numbers, the vLLM KV-capacity anchor, properties."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gpuplan_core.common.units import GB, GiB
from gpuplan_core.hardware.catalog import get_gpu, load_gpus
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.components import (
    KEPT_COMPONENT,
    Assumptions,
    MemoryRequest,
    weights_bytes,
)
from gpuplan_core.memory.fit import evaluate_catalog, kv_capacity_tokens, max_batch, max_context, min_gpus
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.arch import model_from_param_count
from gpuplan_core.model.formats import get_format
from gpuplan_core.model.presets import get_preset
from gpuplan_core.scenario.scenario import Scenario

M7 = model_from_param_count(7_000_000_000)


@pytest.mark.parametrize("accounting,total_gb,zero3_2way_gb", [("zero", 112, 56), ("hf", 126, 63)])
def test_domain_training_model_states(accounting, total_gb, zero3_2way_gb):
    one = memory_budget(M7, MemoryRequest(mode="training", accounting=accounting))
    assert one.budgets["model states"] == pytest.approx(total_gb * GB)
    assert one.scope == "whole runtime" and "model states" in one.budgets
    # both accountings exceed one 80 GB H100 before activations
    assert one.budgets["model states"] > get_gpu("H100").vram_nominal_bytes
    two = memory_budget(M7, MemoryRequest(mode="training", accounting=accounting, gpus=2, zero_stage=3))
    assert two.budgets["model states"] == pytest.approx(zero3_2way_gb * GB)


@pytest.mark.parametrize("fmt,gb", [("fp16", 14), ("bf16", 14), ("fp8", 7), ("int4-ideal", 3.5)])
def test_domain_weights_by_format(fmt, gb):
    """DOMAIN.md's rule: parameters x bytes per parameter (7e9 params: 14 / 7 / 3.5 GB)."""
    assert weights_bytes(7e9, get_format(fmt).bytes_per_value) == pytest.approx(gb * GB)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "int4-ideal"])
def test_a_16_bit_or_lower_bound_format_applies_to_every_parameter(fmt):
    b = memory_budget(M7, MemoryRequest(weights_format=fmt))
    assert b.budgets["weights only"] == pytest.approx(7e9 * get_format(fmt).bytes_per_value)
    assert list(b.components)[0] == "weights" and KEPT_COMPONENT not in b.components


@pytest.mark.parametrize("fmt", ["fp8", "int8", "int4-g128", "nf4", "nvfp4", "mxfp4"])
def test_a_quantised_checkpoint_keeps_embeddings_lm_head_and_norms_in_16_bit(fmt):
    """7e9 parameters, the derived Llama-style shape: vocab 128,256 x hidden h, untied (embedding + lm_head), plus
    the final norm and two norms per layer stay BF16; the rest takes the format's bytes (scales included)."""
    h, layers = M7.hidden_size, M7.num_layers
    kept = 2 * 128_256 * h + h + layers * 2 * h
    b = memory_budget(M7, MemoryRequest(weights_format=fmt))
    assert b.components[KEPT_COMPONENT] == kept * 2
    assert b.components["weights"] == pytest.approx((7e9 - kept) * get_format(fmt).bytes_per_value)
    assert b.budgets["weights only"] == pytest.approx((7e9 - kept) * get_format(fmt).bytes_per_value + kept * 2)


def test_real_4bit_formats_cost_more_than_the_lower_bound():
    ideal = get_format("int4-ideal").bytes_per_value
    for name, bits in [("int4-g128", 4.15625), ("nf4", 4.5), ("mxfp4", 4.25), ("nvfp4", 4.5)]:
        assert get_format(name).bits_per_value == pytest.approx(bits)
        assert get_format(name).bytes_per_value > ideal
    assert get_format("nf4-dq").bits_per_value == pytest.approx(4.127, abs=1e-3)


def test_domain_fp16_7b_fits_l4():
    l4 = get_gpu("L4")
    b = memory_budget(M7, MemoryRequest(weights_format="fp16"))
    assert b.budgets["weights only"] < l4.vram_nominal_bytes
    assert b.budgets["weights only"] < l4.vram_usable_bytes


def test_zero_stages_shard_what_they_should():
    r = dict(mode="training", gpus=4)
    s0, s1, s2, s3 = (memory_budget(M7, MemoryRequest(**r, zero_stage=z)).components for z in range(4))
    assert s1["optimizer states"] == s0["optimizer states"] / 4 and s1["gradients"] == s0["gradients"]
    assert s2["gradients"] == s0["gradients"] / 4 and s2["weights"] == s0["weights"]
    assert s3["weights"] == s0["weights"] / 4


def test_optimizers():
    adam8 = memory_budget(M7, MemoryRequest(mode="training", optimizer="adam8bit")).components
    sgd = memory_budget(M7, MemoryRequest(mode="training", optimizer="sgd")).components
    assert adam8["optimizer states"] == 7e9 * 2
    assert sgd["optimizer states"] == 7e9 * 4


def test_vllm_kv_capacity_anchor():
    """llm-d-planner report: vLLM 0.19, H100 (79.19 GiB usable), utilization 0.95, Llama-3.1-8B:
    activation 1.89 GiB (CUDA graphs inside), non-torch 0.25 GiB -> 476,016 tokens; fp8 KV 952,032."""
    m = get_preset("Llama-3.1-8B")
    asm = Assumptions(
        activation_workspace_bytes=1.89 * GiB,
        cuda_context_bytes=0.25 * GiB,
        cuda_graph_bytes=0,
    )
    h100 = get_gpu("H100")
    assert h100.vram_usable_gib == 79.19
    tokens = kv_capacity_tokens(m, MemoryRequest(memory_utilization=0.95, assumptions=asm), h100)
    assert tokens == pytest.approx(476_016, rel=0.01)
    # by hand: (79.19 x 0.95 - 2 x 8,030,261,248 / 2^30 - 1.89 - 0.25) GiB / 131,072 B
    by_hand = (79.19 * 0.95 * GiB - 2 * 8_030_261_248 - 2.14 * GiB) / 131_072
    assert tokens == int(by_hand) // 16 * 16  # whole blocks of 16 tokens, as vLLM allocates
    fp8 = kv_capacity_tokens(m, MemoryRequest(memory_utilization=0.95, assumptions=asm, kv_format="fp8"), h100)
    assert fp8 == pytest.approx(2 * tokens, abs=1)
    assert fp8 == pytest.approx(952_032, rel=0.01)


def test_default_activation_estimate_is_near_the_measured_profile():
    m = get_preset("Llama-3.1-8B")
    b = memory_budget(m, MemoryRequest())
    est = b.components["activation workspace"]  # vLLM 0.19 measured 1.89 GiB; graphs are captured after (< 0.21)
    assert est == pytest.approx(1.89 * GiB, rel=0.02)


def test_max_batch_and_context_are_tight():
    m = get_preset("Llama-3.1-8B")
    h100 = get_gpu("H100")
    req = MemoryRequest(context_tokens=8192)
    b = max_batch(m, req, h100)
    cap = h100.vram_usable_bytes * 0.9
    assert memory_budget(m, req.model_copy(update={"batch": b})).per_gpu_bytes <= cap
    assert memory_budget(m, req.model_copy(update={"batch": b + 1})).per_gpu_bytes > cap
    c = max_context(m, req.model_copy(update={"batch": 8}), h100)
    assert memory_budget(m, req.model_copy(update={"batch": 8, "context_tokens": c})).per_gpu_bytes <= cap
    assert memory_budget(m, req.model_copy(update={"batch": 8, "context_tokens": c + 16})).per_gpu_bytes > cap


def test_min_gpus_respects_head_divisibility_and_fits():
    m = get_preset("Llama-3.1-70B")
    req = MemoryRequest(context_tokens=8192, batch=8)
    for gpu in load_gpus():
        lay = min_gpus(m, req, gpu)
        assert lay is not None
        assert m.num_attention_heads % lay.tp == 0
        r = req.model_copy(update={"tp": lay.tp, "pp": lay.pp, "gpus": lay.gpus})
        assert memory_budget(m, r).per_gpu_bytes <= gpu.vram_usable_bytes * 0.9
    # 70B bf16 weights alone are 141 GB: never one 80 GB card
    assert min_gpus(m, req, get_gpu("H100")).gpus >= 2


def test_training_min_gpus_with_zero3():
    req = MemoryRequest(mode="training", zero_stage=3, context_tokens=2048)
    lay = min_gpus(M7, req, get_gpu("H100"))
    assert lay is not None and lay.gpus >= 2


def test_lora_and_qlora_are_much_smaller_than_full():
    m = get_preset("Llama-3.1-8B")
    full = memory_budget(m, MemoryRequest(mode="finetune", method="full", context_tokens=2048)).per_gpu_bytes
    lora = memory_budget(m, MemoryRequest(mode="finetune", method="lora", context_tokens=2048))
    qlora = memory_budget(m, MemoryRequest(mode="finetune", method="qlora", context_tokens=2048))
    assert qlora.per_gpu_bytes < lora.per_gpu_bytes < full / 3
    # LoRA adapters, rank 16, all linear layers of Llama-3.1-8B: 16 x per-layer (d_in + d_out) sums x 32
    h, q, kv, inter = 4096, 4096, 1024, 14336
    adapters = 32 * 16 * ((h + q) + 2 * (h + kv) + (q + h) + 3 * (h + inter))
    assert lora.components["adapter optimizer states"] == adapters * 8
    # NF4 + double quantisation on the decoder's linear layers; embeddings, lm_head and norms stay BF16 (bitsandbytes)
    kept = 2 * 128_256 * 4096 + 4096 + 32 * 2 * 4096
    assert qlora.components["frozen base weights"] == pytest.approx((8_030_261_248 - kept) * 4.126953125 / 8 + kept * 2)


@pytest.mark.parametrize(
    "bad,field",
    [
        ({"context_tokens": 0}, "context_tokens"),
        ({"context_tokens": 10**9}, "context_tokens"),
        ({"batch": -1}, "batch"),
        ({"gpus": 3, "tp": 2}, "gpus"),
        ({"weights_format": "int3"}, "weights_format"),
        ({"zero_stage": 4}, "zero_stage"),
    ],
)
def test_bad_requests_name_the_field(bad, field):
    with pytest.raises(ValidationError, match=field):
        MemoryRequest(**bad)


def test_tp_beyond_heads_is_an_error():
    with pytest.raises(ValueError, match="tp: 64"):
        memory_budget(get_preset("Llama-3.1-8B"), MemoryRequest(tp=64, gpus=64))


def test_catalog_evaluation_covers_every_gpu():
    fits = evaluate_catalog(get_preset("Llama-3.1-8B"), MemoryRequest(), load_gpus())
    assert [f.gpu.gpu for f in fits] == [g.gpu for g in load_gpus()]
    assert all(f.fits for f in fits if f.gpu.vram_usable_gib > 30)


# ---- properties ------------------------------------------------------------------------------

MODELS = [get_preset(n) for n in ("Llama-3.1-8B", "Mixtral-8x7B-v0.1", "Gemma-2-9B", "DeepSeek-V3")]
modes = st.sampled_from(["inference", "training", "finetune"])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODELS), modes, st.sampled_from([0, 1, 2, 3]), st.integers(1, 64), st.integers(1, 32768))
def test_more_gpus_never_grow_per_gpu_memory(m, mode, zero, dp, ctx):
    base = dict(mode=mode, zero_stage=zero, context_tokens=ctx)
    one = memory_budget(m, MemoryRequest(**base, gpus=dp)).per_gpu_bytes
    more = memory_budget(m, MemoryRequest(**base, gpus=dp * 2)).per_gpu_bytes
    assert more <= one
    # tensor parallel too (communication buffers are a fixed add-on, compared without them)
    asm = Assumptions(comm_buffer_bytes=0)
    t1 = memory_budget(m, MemoryRequest(**base, assumptions=asm)).per_gpu_bytes
    t2 = memory_budget(m, MemoryRequest(**base, assumptions=asm, tp=2, gpus=2)).per_gpu_bytes
    assert t2 <= t1


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(MODELS), modes, st.integers(1, 512), st.integers(1, 65536), st.sampled_from(["bf16", "fp8", "nf4"])
)
def test_monotone_in_batch_context_and_components_nonnegative(m, mode, batch, ctx, fmt):
    r = MemoryRequest(mode=mode, batch=batch, context_tokens=ctx, weights_format=fmt)
    b = memory_budget(m, r)
    assert all(v >= 0 for v in b.components.values())
    assert memory_budget(m, r.model_copy(update={"batch": batch + 1})).per_gpu_bytes >= b.per_gpu_bytes
    assert memory_budget(m, r.model_copy(update={"context_tokens": ctx + 1})).per_gpu_bytes >= b.per_gpu_bytes


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(MODELS), st.integers(1, 40), st.integers(0, 4096), modes, st.integers(1, 65536))
def test_monotone_in_parameters(m, more_layers, more_width, mode, ctx):
    """More parameters of the same architecture (deeper, or a wider MLP) never need less memory."""
    from gpuplan_core.model.arch import ModelArch

    r = MemoryRequest(mode=mode, context_tokens=ctx)
    base = memory_budget(m, r).per_gpu_bytes
    dump = m.model_dump()
    deeper = ModelArch(**{**dump, "num_layers": m.num_layers + more_layers})
    wider = ModelArch(
        **{
            **dump,
            "intermediate_size": m.intermediate_size + more_width,
            "expert_intermediate_size": m.expert_intermediate_size + (more_width if m.is_moe else 0),
        }
    )
    assert memory_budget(deeper, r).per_gpu_bytes > base
    assert memory_budget(wider, r).per_gpu_bytes >= base


@settings(max_examples=40, deadline=None)
@given(st.integers(500_000_000, 2_000_000_000_000), st.floats(1.01, 3.0))
def test_derived_models_weights_and_states_grow_with_count(n, factor):
    for mode in ("inference", "training"):
        small = memory_budget(model_from_param_count(n), MemoryRequest(mode=mode))
        big = memory_budget(model_from_param_count(int(n * factor)), MemoryRequest(mode=mode))
        assert big.budgets["weights only"] > small.budgets["weights only"]
        if mode == "training":
            assert big.budgets["model states"] > small.budgets["model states"]


def test_a_gptq_int4_config_prices_the_int4_body_and_the_16_bit_embeddings_to_the_byte():
    """Qwen2.5-7B-Instruct-GPTQ-Int4's config: quantization_config gptq, 4 bits, group 128. 7,615,616,512 parameters;
    kept in BF16: embeddings + untied lm_head 2 x 152,064 x 3,584, the final norm 3,584 and 28 x 2 norms of 3,584;
    the rest at 4 bits + one FP16 scale and a 4-bit zero per 128 values (4.15625 bits)."""
    import json

    from gpuplan_core import api
    from gpuplan_core.scenario.scenario import Scenario
    from tests.configs import QWEN2_5_7B_CONFIG

    cfg = {
        **QWEN2_5_7B_CONFIG,
        "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False},
    }
    kept = 2 * 152_064 * 3584 + 3584 + 28 * 2 * 3584
    sc = Scenario(config_text=json.dumps(cfg))  # the weights format input is bf16 by default: the config wins
    assert (
        sc.formats.weights_format == "int4-g128" and "quantization_config (gptq, 4 bits, group 128)" in sc.warnings()[0]
    )
    r = api.memory_report(sc)
    assert r.params_total == 7_615_616_512
    assert r.components[KEPT_COMPONENT] == kept * 2 == 2_180_398_080
    assert r.components["weights"] == round((7_615_616_512 - kept) * 4.15625 / 8) == 3_390_158_296
    assert r.weights_bytes_total == 3_390_158_296 + 2_180_398_080


ENGINE_CASE = dict(input_tokens=30_000, output_tokens=300, batch=2)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "transformers"])
def test_each_engine_profile_budget_by_hand(engine):
    """Llama-3.1-8B, 2 sequences of 30,000 + 300 tokens, BF16. Per engine (documented defaults, Methodology):
    activation workspace = tokens of the largest step x the MLP's width (3 x 14,336 + 4 x 4,096) x 2 bytes + fp32
    logits for the sequences the engine holds (128,256 x 4 bytes each); KV = 131,072 B/token x context rounded up
    to the engine's KV block x 2; a CUDA-graph pool (1 GiB) where the engine captures graphs."""
    from gpuplan_core import api
    from gpuplan_core.hardware.engines import ENGINES

    r = api.memory_report({"preset": "Llama-3.1-8B", "engine": engine, **ENGINE_CASE})
    width, logits = 3 * 14_336 + 4 * 4096, 128_256 * 4
    step, seqs, block, graphs = {
        "vllm": (8192, 256, 16, True),  # max_num_batched_tokens, the profile run's 256 sampled sequences
        "sglang": (8192, 160, 1, True),  # chunked_prefill_size (35-160 GB GPUs), cuda_graph_max_bs, page_size 1
        "trtllm": (8192, 2048, 32, True),  # max_num_tokens, max_batch_size, tokens_per_block
        "transformers": (2 * 30_000, 2, 1, False),  # both whole prompts at once, last-token logits per sequence
    }[engine]
    assert r.engine == engine and ENGINES[engine].source
    copies = 8 if engine == "vllm" else 1  # vLLM V1's sampler dummy run: 8 logits-sized buffers (fitted)
    assert r.components["activation workspace"] == round(step * width * 2 + copies * seqs * logits)
    assert r.components["KV cache"] == 131_072 * (-(-30_300 // block) * block) * 2
    assert ("CUDA graphs" in r.components) == graphs
    if graphs:
        assert r.components["CUDA graphs"] == 1 << 30


# ---- ZeRO-3 buffers and CPU offload (DeepSpeed) --------------------------------------------------------------


def _train_req(**kw) -> MemoryRequest:
    return MemoryRequest(mode="training", gpus=8, batch=1, context_tokens=4096, recompute="full", **kw)


def test_zero3_gathers_one_block_and_prefetches_the_next():
    """FSDP2 / ZeRO-3 gathers one transformer block's BF16 weights at a time and prefetches the next (it was 4x the
    embedding: DeepSpeed's estimator's 'largest layer'). Llama-3.1-8B's block: (8,030,261,248 - 2 x 128,256 x 4,096
    embeddings and head - 4,096 final norm) / 32 layers = 218,112,000 parameters."""
    m = get_preset("Llama-3.1-8B")
    b = memory_budget(m, _train_req(zero_stage=3))
    block = (8_030_261_248 - 2 * 128_256 * 4096 - 4096) / 32
    assert block == 218_112_000
    assert b.components["FSDP gathered block"] == 2 * block
    assert b.components["FSDP prefetched block"] == 2 * block
    assert b.components["FSDP gradient reduce-scatter"] == 4 * block  # FP32 reduce of mixed precision
    assert b.components["weights"] == 2 * 8_030_261_248 / 8
    none = memory_budget(m, _train_req(zero_stage=3, assumptions=Assumptions(fsdp_prefetch_blocks=0)))
    assert none.components["FSDP prefetched block"] == 0
    tp2 = memory_budget(m, MemoryRequest(mode="training", gpus=8, tp=2, zero_stage=3, recompute="full"))
    assert tp2.components["FSDP gathered block"] == 2 * block / 2  # tensor parallel splits the block
    assert "FSDP gathered block" not in memory_budget(m, _train_req(zero_stage=2)).components


def test_offload_optimizer_moves_states_to_host():
    n = 8_030_261_248
    b = memory_budget(get_preset("Llama-3.1-8B"), _train_req(zero_stage=2, offload="optimizer"))
    assert b.components["weights"] == 2 * n  # ZeRO-2 keeps full weights on every GPU
    assert set(b.offloaded) == {"gradients", "master weights", "optimizer states"}
    assert "optimizer states" not in b.components
    # per GPU: (2 + 4 + 8) B x n / 8 data-parallel shards; 8 GPUs per machine; DeepSpeed's 1.5x buffer factor
    assert b.host_bytes_per_node == pytest.approx(14 * n / 8 * 8 * 1.5)


def test_offload_notes_the_host_ram_with_the_buffer_factor_the_budget_used():
    n = 8_030_261_248
    b = memory_budget(get_preset("Llama-3.1-8B"), _train_req(zero_stage=2, offload="optimizer"))
    host = 14 * n / 8 * 8 * 1.5  # as above: the sentence the Memory page shows states the same figure and factor
    assert b.host_note.startswith(
        f"gradients, master weights, optimizer states live in host RAM: each machine needs "
        f"{host / 1e9:,.1f} GB of RAM for them"
    )
    assert "DeepSpeed's 1.5x buffer" in b.host_note
    three = Assumptions(offload_buffer_factor=3.0)
    b3 = memory_budget(get_preset("Llama-3.1-8B"), _train_req(zero_stage=2, offload="optimizer", assumptions=three))
    assert "DeepSpeed's 3x buffer" in b3.host_note and b3.host_bytes_per_node == pytest.approx(14 * n * 3.0)
    assert memory_budget(get_preset("Llama-3.1-8B"), _train_req(zero_stage=2)).host_note is None


def test_a_paged_optimizer_leaves_its_states_out_of_the_gpu_need_and_in_host_ram():
    """bitsandbytes' paged AdamW: the states in unified memory, paged to the host under pressure. Full fine-tuning
    of Llama-3.1-8B in pure BF16 on one GPU: AdamW's two BF16 states are 4 B x 8,030,261,248 = 32.1 GB, out of
    the GPU's hard need (with the allocator's reserve on them) and into host RAM at their own size (no buffers)."""
    n, m = 8_030_261_248, get_preset("Llama-3.1-8B")
    kw = dict(mode="finetune", method="full", precision="bf16", gpus=1, batch=1, context_tokens=4096, recompute="full")
    plain = memory_budget(m, MemoryRequest(**kw))
    paged = memory_budget(m, MemoryRequest(**kw, paged_optimizer=True))
    assert plain.components["optimizer states"] == 4 * n
    assert paged.offloaded == {"optimizer states (paged)": 4 * n} and "optimizer states" not in paged.components
    reserve = Assumptions().framework_reserve_fraction
    assert plain.per_gpu_bytes - paged.per_gpu_bytes == pytest.approx(4 * n * (1 + reserve))
    assert paged.host_bytes_per_node == 4 * n and "paged optimizer's states stay on the GPU" in paged.host_note
    assert paged.budgets["model states"] == plain.budgets["model states"] - 4 * n


def test_offload_params_at_zero3_matches_deepspeed_estimator():
    # DeepSpeed estimate_zero3_model_states_mem_needs(cpu_offload=True, cpu_offload_params=True, zero_init=True):
    # host = total_params x 18 / nodes x 1.5 (on the GPU: FSDP's gathered blocks, not DeepSpeed's 4 x largest layer)
    m, n = get_preset("Llama-3.1-8B"), 8_030_261_248
    b = memory_budget(m, _train_req(zero_stage=3, offload="optimizer+params", accounting="hf"))
    assert b.host_bytes_per_node == pytest.approx(n * 18 * 1.5)
    assert not {"weights", "gradients", "master weights", "optimizer states"} & set(b.components)
    assert b.components["FSDP gathered block"] == 2 * (n - 2 * 128_256 * 4096 - 4096) / 32


def test_offload_params_needs_zero3():
    with pytest.raises(ValueError, match="offload"):
        _train_req(zero_stage=2, offload="optimizer+params")
    sc = Scenario(preset="Llama-3.1-8B", mode="finetune", zero_stage=1, offload="optimizer+params")
    assert memory_request(sc).parallelism.offload == "optimizer"
    assert any("ZeRO stage 3" in w for w in sc.warnings())
