"""The weights a step reads and the routed experts' share of them (the step model's, roofline.py), with the expected
distinct experts a step's tokens touch under uniform routing: E x (1 - (1 - k/E)^tokens), all experts at large
batch, k at one token."""

from __future__ import annotations

from ..model.arch import ModelArch, input_embedding_params
from ..model.formats import NumberFormat


def expected_experts_touched(m: ModelArch, tokens: float) -> float:
    """Distinct routed experts per MoE layer that `tokens` tokens hit, uniform routing."""
    if not m.is_moe:
        return 0.0
    e, k = m.num_experts, m.experts_per_token
    return e * (1 - (1 - k / e) ** max(tokens, 0))


def _one_expert_params(m: ModelArch) -> int:
    return (3 if m.mlp_gated else 2) * m.hidden_size * m.expert_intermediate_size


def tokens_per_expert(m: ModelArch, tokens: float) -> float:
    """Tokens each routed expert's GEMM sees in a step of ``tokens`` tokens (uniform routing): tokens x k spread
    over the experts they touch, so tokens x k / E once every expert is touched, and 1 at one token."""
    touched = expected_experts_touched(m, tokens)
    return tokens * m.experts_per_token / touched if touched else 0.0


def expert_weight_bytes(m: ModelArch, fmt: NumberFormat, tokens: float) -> float:
    """The routed experts' share of ``weight_bytes_touched``: the experts the step's tokens touch, every MoE layer."""
    if not m.is_moe:
        return 0.0
    return expected_experts_touched(m, tokens) * _one_expert_params(m) * m.moe_layers * fmt.bytes_per_value


def weight_bytes_touched(m: ModelArch, fmt: NumberFormat, tokens: float) -> float:
    """Weights a step reads: every matmul weight (MoE: the dense part + the experts the tokens touch), in the
    weights format with embeddings, lm_head and norms in 16 bit when the format is narrower (memory.weight_split).
    The input embedding table is not streamed: the step gathers one row per token (the lm_head, tied or not, is
    read in full)."""
    from ..memory.components import KEPT_BYTES_PER_PARAM, weight_split

    body, kept = weight_split(m, fmt)
    total = body + kept
    emb_bytes = KEPT_BYTES_PER_PARAM if kept else fmt.bytes_per_value
    if not m.tied_embeddings:
        total -= input_embedding_params(m) * emb_bytes
        total += min(tokens, m.vocab_size) * m.hidden_size * emb_bytes
    if not m.is_moe:
        return total
    untouched = (m.num_experts - expected_experts_touched(m, tokens)) * _one_expert_params(m) * m.moe_layers
    return total - untouched * fmt.bytes_per_value
