"""Training memory as frameworks allocate it (memory/training.py, memory/activations.py): each precision recipe's
model states, each checkpointing policy's activations, LoRA adapters' saved inputs, the loss's logits and QLoRA's
overhead per library, each computed by hand here with the formula written out.

Llama-3.1-8B: h = 4,096, 32 heads of 128, 8 KV heads, I = 14,336, V = 128,256, 32 layers, 8,030,261,248 parameters.
Per layer and token it saves (values): norm inputs 2h + norm outputs 2h + q, k, v (4,096 + 2 x 1,024) + attention
output 4,096 + SwiGLU gate, activation, up 3I + the down projection's input I = 83,968 values.
"""

import pytest

from gpuplan_core.memory.activations import layer_tensors
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.request import memory_request
from gpuplan_core.memory.training import lora_params
from gpuplan_core.model.presets import get_preset
from gpuplan_core.scenario.scenario import Scenario

M = get_preset("Llama-3.1-8B")
N = 8_030_261_248
H, FFN, V, L = 4096, 14_336, 128_256, 32
EVERY = 2 * H + 2 * H + (4096 + 2 * 1024) + 4096 + 3 * FFN + FFN  # values per token per layer, no checkpointing


def _budget(**kw):
    base = dict(mode="training", batch=1, context_tokens=2048, recompute="none")
    return memory_budget(M, MemoryRequest(**{**base, **kw}))


def test_the_tensors_a_llama_layer_saves():
    t = layer_tensors(M)
    assert t.all() == EVERY == 83_968
    assert t.all(frozen_base=True) == EVERY - 2 * H - FFN  # a frozen base keeps no inputs for weight gradients


@pytest.mark.parametrize(
    ("precision", "accounting", "per_param"),
    [
        ("mixed", "zero", {"weights": 2, "gradients": 2, "master weights": 4, "optimizer states": 8}),  # 16 B
        ("mixed", "hf", {"weights": 2, "gradients": 4, "master weights": 4, "optimizer states": 8}),  # 18 B
        ("bf16", "zero", {"weights": 2, "gradients": 2, "optimizer states": 4}),  # 8 B: AdamW's two BF16 states
        ("fp32", "zero", {"weights": 4, "gradients": 4, "optimizer states": 8}),  # 16 B, no separate master
        ("fp8", "zero", {"weights": 2, "gradients": 2, "master weights": 4, "optimizer states": 8}),  # as mixed
    ],
)
def test_model_states_per_precision_recipe(precision, accounting, per_param):
    b = _budget(precision=precision, accounting=accounting)
    for name, bpp in per_param.items():
        assert b.components[name] == bpp * N, name
    assert b.budgets["model states"] == sum(per_param.values()) * N
    assert "master weights" in b.components or "master weights" not in per_param


def test_pure_bf16_adamw_full_finetune_of_an_8b_model_is_8_bytes_per_parameter():
    """The issue's test: 2 (BF16 weights) + 2 (BF16 gradients) + 4 (AdamW's two BF16 states) = 8 B/param; the
    fine-tuning job's default recipe (torchtune, TRL with a BF16 model)."""
    sc = Scenario(preset="Llama-3.1-8B", mode="finetune", method="full", sequence_tokens=2048, batch=1)
    assert sc.training.precision == "bf16"
    b = memory_budget(M, memory_request(sc))
    assert b.budgets["model states"] == (2 + 2 + 4) * N == 64_242_089_984
    pre = Scenario(preset="Llama-3.1-8B", mode="training")
    assert pre.training.precision == "mixed"  # pre-training keeps the FP32 master copy (Megatron, torchtitan)


def test_8bit_adamw_keeps_2_bytes_of_states_in_either_recipe():
    assert _budget(precision="bf16", optimizer="adam8bit").components["optimizer states"] == 2 * N
    assert _budget(precision="mixed", optimizer="adam8bit").components["optimizer states"] == 2 * N


def test_low_precision_linear_layers_hold_one_blocks_weights_and_transposes_with_scales():
    block = (N - 2 * V * H - H) / L  # 218,112,000
    assert _budget(precision="fp8").components["FP8 weight copies"] == 2 * 1.0 * block
    assert _budget(precision="mxfp8").components["MXFP8 weight copies"] == pytest.approx(2 * (1 + 1 / 32) * block)
    assert _budget(precision="nvfp4").components["NVFP4 weight copies"] == pytest.approx(2 * (0.5 + 1 / 16) * block)


S = 2048  # tokens per micro-batch below (batch 1)


@pytest.mark.parametrize(
    ("policy", "every", "kept_per_token", "working_per_token"),
    [
        ("none", 1, L * EVERY * 2, 0),  # every tensor, BF16
        # per op: the layer's input h, the attention output 4,096 and half of the matmul outputs
        # (q 4,096 + k, v 2 x 1,024 + o 4,096 + gate, up 2 x 14,336 + down 4,096) / 2; one layer recomputed
        ("selective", 1, L * (H + 4096 + (4096 + 2048 + 4096 + 2 * FFN + 4096) / 2) * 2, EVERY * 2),
        ("full", 1, L * H * 2, EVERY * 2),  # the layer's input only; one layer's tensors live again in backward
        ("full", 2, (L // 2) * H * 2 + (L - L // 2) * EVERY * 2, EVERY * 2),  # every other layer checkpointed
        ("full", 4, (L // 4) * H * 2 + (L - L // 4) * EVERY * 2, EVERY * 2),
    ],
)
def test_activations_per_checkpointing_policy(policy, every, kept_per_token, working_per_token):
    b = _budget(recompute=policy, recompute_every=every)
    assert b.components["activations"] == pytest.approx(kept_per_token * S)
    assert b.components.get("recompute working set", 0) == pytest.approx(working_per_token * S)


def test_tensor_and_context_parallel_divide_the_activations():
    one = _budget(recompute="selective")
    split = memory_budget(
        M, MemoryRequest(mode="training", batch=1, context_tokens=S, recompute="selective", gpus=8, tp=2, cp=4)
    )
    assert split.components["activations"] == pytest.approx(one.components["activations"] / 8)
    assert split.components["logits (fp32)"] == pytest.approx(one.components["logits (fp32)"] / 8)


def test_logits_full_vs_chunked_cross_entropy():
    # eager cross-entropy: the BF16 logits, their FP32 copy and the FP32 log-softmax it saves (2 + 4 + 4 bytes)
    assert _budget().components["logits (fp32)"] == S * V * (2 + 4 + 4)
    assert _budget(cross_entropy="chunked").components["logits (chunked)"] == S * V * (2 + 4 / 8)


def _lora(targets, dropout, **kw):
    req = dict(
        mode="finetune",
        method="lora",
        batch=1,
        context_tokens=S,
        lora_rank=16,
        lora_targets=targets,
        lora_dropout=dropout,
        recompute="none",
        precision="bf16",
    )
    return memory_budget(M, MemoryRequest(**{**req, **kw}))


def test_lora_adapters_keep_their_inputs_after_dropout():
    """All linear layers, dropout 0.05: each adapter keeps its input after dropout (2 B) and the mask (1 B) -
    q, k, v and gate, up read h, o reads 4,096, down reads FFN - plus its rank-16 output (2 B)."""
    per_token_layer = (3 * H + 4096 + 2 * H + FFN) * (2 + 1) + 7 * 16 * 2
    b = _lora("all-linear", 0.05)
    assert b.components["LoRA adapter activations"] == pytest.approx(per_token_layer * L * S)
    assert b.components["activations"] == pytest.approx((EVERY - 2 * H - FFN) * 2 * L * S)  # the frozen base's
    qv = _lora("qv", 0.0)  # no dropout: the adapters read the tensor the base already holds; only rank outputs
    assert qv.components["LoRA adapter activations"] == pytest.approx(2 * 16 * 2 * L * S)


def test_lora_on_the_lm_head_adds_its_parameters_and_a_logits_sized_output():
    head = _lora("all-linear+head", 0.0)
    assert lora_params(M, 16, "all-linear+head") - lora_params(M, 16, "all-linear") == 16 * (H + V)
    assert head.components["logits (fp32)"] == S * V * (10 + 2)


def test_qlora_overhead_per_library():
    """Every library dequantises one linear layer to BF16 at a time (the largest: h x I). bitsandbytes (litgpt, PEFT)
    holds 0.5 B per base parameter above the NF4 storage (fitted, Assumptions); PEFT's
    prepare_model_for_kbit_training also upcasts the unquantised weights (embeddings, LM head, norms:
    2 x 128,256 x 4,096 + 4,096 + 32 x 2 x 4,096) to FP32, +2 B each; torchao NF4 (torchtune) neither."""
    kept = 2 * V * H + H + L * 2 * H
    peft = _lora("all-linear", 0.05, method="qlora", qlora_library="peft")
    bnb = _lora("all-linear", 0.05, method="qlora", qlora_library="bitsandbytes")
    ao = _lora("all-linear", 0.05, method="qlora", qlora_library="torchao")
    assert peft.components["QLoRA 16-bit weights upcast to FP32"] == 2 * kept
    assert "QLoRA 16-bit weights upcast to FP32" not in bnb.components
    assert peft.components["QLoRA bitsandbytes buffers"] == bnb.components["QLoRA bitsandbytes buffers"] == 0.5 * N
    assert "QLoRA bitsandbytes buffers" not in ao.components
    assert bnb.components["QLoRA dequantised layer"] == ao.components["QLoRA dequantised layer"] == 2 * H * FFN
    assert peft.per_gpu_bytes - bnb.per_gpu_bytes == pytest.approx(2 * kept)
    assert bnb.per_gpu_bytes - ao.per_gpu_bytes == pytest.approx(0.5 * N)
