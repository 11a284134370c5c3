"""DeepSeek's multi-head latent attention (MLA) in the step model (roofline.StepCost): the FLOPs a decoding token
spends attending in the absorbed form, and the weights every tensor-parallel GPU holds whole.

Engines run MLA two ways (vLLM vllm/attention/backends/mla/common.py, "compute friendly" and "data-movement
friendly"; SGLang deepseek_v2.py ``forward_normal`` / ``forward_absorb``): a prompt's tokens attend as multi-head
attention over keys and values up-projected from the cached latent (``attn_flops_per_attended_token``),
decoding tokens in the absorbed form, every head's query folded into the latent space, which makes decode
multi-query attention over the latent: its GEMMs have the GPU's heads as rows whatever the batch (FlashMLA's
tiles), so their efficiency is the 16-bit curve at heads per GPU (``StepCost.abs_mfu``), not at the step's tokens.
"""

from __future__ import annotations

from ..model.arch import ModelArch


def attn_flops_per_attended_token(m: ModelArch) -> float:
    """FLOPs per (query token, attended token) pair over all layers: QK^T and AV, 2 FLOPs per MAC. MLA: a prompt's
    tokens attend as multi-head attention over keys and values up-projected from the latent (qk_nope + qk_rope per
    head for QK^T, v_head_dim for AV): the compute-friendly form the engines run for prefill."""
    a = m.num_attention_heads
    if m.is_mla:
        return 2 * a * ((m.qk_nope_head_dim + m.qk_rope_head_dim) + m.v_head_dim)
    return 2 * a * (2 * m.d)


def absorbed_attn_flops_per_attended_token(m: ModelArch) -> float:
    """FLOPs per (decoding token, attended token) pair: MLA decodes in the absorbed form, every head's query
    projected into the latent space (W_UK folded into the query, W_UV applied after), so QK^T runs over the latent
    and its RoPE key (kv_lora_rank + qk_rope_head_dim) and AV over the latent (kv_lora_rank) per head: DeepSeek-V2
    (arXiv 2405.04434) section 2.1.3; vLLM vllm/attention/backends/mla/common.py ("data-movement friendly" decode
    path, MQA over the cached latent); FlashMLA. 2 x 128 x (576 + 512) for DeepSeek-V3, 3.4 x its prefill form.
    Other attention: the prefill form."""
    if not m.is_mla:
        return attn_flops_per_attended_token(m)
    return 2 * m.num_attention_heads * ((m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank)


def replicated_params(m: ModelArch) -> int:
    """Matmul weights every tensor-parallel GPU holds whole: MLA's down-projections of the query and of the latent
    with its RoPE key (``q_a_proj``, ``kv_a_proj_with_mqa``: ReplicatedLinear in vLLM's and SGLang's
    deepseek_v2.py, as their outputs, 1,536 and 576 wide, are not split by heads), every layer. 0 for other
    models."""
    if not m.is_mla:
        return 0
    return m.hidden_size * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) * m.num_layers
