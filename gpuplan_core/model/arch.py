"""Model architectures and exact parameter / KV-cache counting.

Glossary (used across gpuplan_core):
  L  num_layers            h  hidden_size            a  num_attention_heads
  kv num_kv_heads          d  head_dim               I  intermediate_size (dense MLP)
  V  vocab_size            E  num_experts            k  experts_per_token
Every count here is an exact integer for the architecture given; the formulas are written out
in docs/methodology (and on the app's Methodology page).
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

NormKind = Literal["rmsnorm", "layernorm"]


class ModelArch(BaseModel):
    """A decoder-only transformer. Frozen; every size is validated on construction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    source: str = ""
    num_layers: PositiveInt = Field(le=1000)
    hidden_size: PositiveInt = Field(le=1_000_000)
    num_attention_heads: PositiveInt = Field(le=10_000)
    num_kv_heads: PositiveInt = Field(le=10_000)
    head_dim: PositiveInt | None = Field(default=None, le=100_000)
    intermediate_size: PositiveInt = Field(le=10_000_000)
    mlp_gated: bool = True
    vocab_size: PositiveInt = Field(le=10_000_000)
    tied_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    norm: NormKind = "rmsnorm"
    norms_per_layer: int = Field(default=2, ge=0, le=8)
    qk_norm: bool = False
    learned_positions: int = Field(default=0, ge=0, le=10_000_000)
    max_context_tokens: PositiveInt = Field(default=131_072, le=100_000_000)
    # a checkpoint stored quantised (a Hugging Face config's quantization_config): its weights format
    checkpoint_format: str | None = None
    checkpoint_note: str | None = None
    # Mixture of experts
    num_experts: int = Field(default=0, ge=0, le=100_000)
    experts_per_token: int = Field(default=0, ge=0, le=100_000)
    expert_intermediate_size: int = Field(default=0, ge=0, le=10_000_000)
    num_shared_experts: int = Field(default=0, ge=0, le=1000)
    shared_expert_intermediate_size: int = Field(default=0, ge=0, le=10_000_000)
    first_dense_layers: int = Field(default=0, ge=0, le=1000)
    router_bias: bool = False
    # Multi-head latent attention (DeepSeek-V2/V3)
    kv_lora_rank: int = Field(default=0, ge=0, le=100_000)
    q_lora_rank: int = Field(default=0, ge=0, le=100_000)
    qk_rope_head_dim: int = Field(default=0, ge=0, le=100_000)
    qk_nope_head_dim: int = Field(default=0, ge=0, le=100_000)
    v_head_dim: int = Field(default=0, ge=0, le=100_000)
    # Multi-token prediction (DeepSeek-V3/R1 config ``num_nextn_predict_layers``): extra transformer layers that
    # predict the next tokens, shipped with the checkpoint and not counted in its parameters (perf/speculative.py
    # runs them as a speculative-decoding draft)
    mtp_layers: int = Field(default=0, ge=0, le=100)
    # Sliding-window attention: the number of layers that use a window, and its size in tokens
    sliding_window_tokens: int = Field(default=0, ge=0, le=100_000_000)
    sliding_window_layers: int = Field(default=0, ge=0, le=1000)
    # A bare parameter count: the shape above is a plausible stand-in, the count is the user's
    declared_params: int | None = Field(default=None, gt=0)
    approximate: bool = False

    @model_validator(mode="after")
    def _check_shape(self) -> ModelArch:
        a, kv, h = self.num_attention_heads, self.num_kv_heads, self.hidden_size
        if self.head_dim is None and not self.is_mla and h % a != 0:
            raise ValueError(
                f"head_dim: not given and hidden_size {h} is not divisible by "
                f"num_attention_heads {a}; give head_dim explicitly"
            )
        if not self.is_mla and a % kv != 0:
            raise ValueError(
                f"num_kv_heads: {kv} must divide num_attention_heads {a} "
                "(grouped-query attention shares each KV head among a whole number of query heads)"
            )
        if self.num_experts:
            if not 1 <= self.experts_per_token <= self.num_experts:
                raise ValueError(
                    f"experts_per_token: must be between 1 and num_experts ({self.num_experts}), "
                    f"got {self.experts_per_token}"
                )
            if self.expert_intermediate_size <= 0:
                raise ValueError("expert_intermediate_size: must be > 0 for a mixture-of-experts model")
            if self.first_dense_layers > self.num_layers:
                raise ValueError("first_dense_layers: cannot exceed num_layers")
        if self.is_mla and (self.qk_rope_head_dim <= 0 or self.qk_nope_head_dim <= 0 or self.v_head_dim <= 0):
            raise ValueError("kv_lora_rank: MLA needs qk_rope_head_dim, qk_nope_head_dim and v_head_dim > 0")
        if self.sliding_window_layers > self.num_layers:
            raise ValueError("sliding_window_layers: cannot exceed num_layers")
        if self.sliding_window_layers and self.sliding_window_tokens <= 0:
            raise ValueError("sliding_window_tokens: must be > 0 when sliding_window_layers is set")
        return self

    # ---- derived shape -------------------------------------------------------------------------
    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def d(self) -> int:
        """Head dimension: explicit ``head_dim`` or hidden_size / heads."""
        if self.head_dim is not None:
            return self.head_dim
        return self.hidden_size // self.num_attention_heads

    @cached_property
    def counted_total(self) -> int:
        return _count(self, active_only=False)

    @cached_property
    def counted_active(self) -> int:
        return _count(self, active_only=True) if self.is_moe else self.counted_total

    @property
    def moe_layers(self) -> int:
        return self.num_layers - self.first_dense_layers if self.is_moe else 0

    @property
    def dense_layers(self) -> int:
        return self.num_layers - self.moe_layers


# ---- parameter counting (pure functions) ----------------------------------------------------------


def attention_params_per_layer(m: ModelArch) -> int:
    h, a, kv = m.hidden_size, m.num_attention_heads, m.num_kv_heads
    if m.is_mla:
        qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim
        if m.q_lora_rank:
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * a * qk_head  # down, norm, up
        else:
            q = h * a * qk_head
        kv_down = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank  # + latent norm
        kv_up = m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim)
        o = a * m.v_head_dim * h
        return q + kv_down + kv_up + o
    d = m.d
    n = h * a * d + 2 * h * kv * d + a * d * h
    if m.qkv_bias:
        n += a * d + 2 * kv * d
    if m.o_bias:
        n += h
    if m.qk_norm:
        n += 2 * d
    return n


def mlp_params(h: int, inter: int, gated: bool, bias: bool) -> int:
    n = (3 if gated else 2) * h * inter
    if bias:
        n += (2 if gated else 1) * inter + h
    return n


def norm_params_per_layer(m: ModelArch) -> int:
    per_norm = 2 * m.hidden_size if m.norm == "layernorm" else m.hidden_size
    return m.norms_per_layer * per_norm


def moe_layer_mlp_params(m: ModelArch, active_only: bool) -> int:
    h = m.hidden_size
    experts = m.experts_per_token if active_only else m.num_experts
    n = experts * mlp_params(h, m.expert_intermediate_size, m.mlp_gated, m.mlp_bias)
    shared_inter = m.shared_expert_intermediate_size or m.expert_intermediate_size * m.num_shared_experts
    if m.num_shared_experts or m.shared_expert_intermediate_size:
        n += mlp_params(h, shared_inter, m.mlp_gated, m.mlp_bias)
    n += h * m.num_experts + (m.num_experts if m.router_bias else 0)  # the router always runs
    return n


def routed_expert_params(m: ModelArch, active_only: bool = False) -> int:
    """The routed experts' MLP parameters over the MoE layers: all of them (what expert parallel spreads over its
    GPUs), or the top-k a token uses; 0 for a dense model. Shared experts and the router are not routed."""
    if not m.is_moe:
        return 0
    experts = m.experts_per_token if active_only else m.num_experts
    return m.moe_layers * experts * mlp_params(m.hidden_size, m.expert_intermediate_size, m.mlp_gated, m.mlp_bias)


def embedding_params(m: ModelArch) -> int:
    n = m.vocab_size * m.hidden_size
    if not m.tied_embeddings:
        n += m.vocab_size * m.hidden_size  # the output layer (lm_head)
    n += m.learned_positions * m.hidden_size
    final_norm = 2 * m.hidden_size if m.norm == "layernorm" else m.hidden_size
    return n + final_norm


def kept_16bit_params(m: ModelArch) -> int:
    """Parameters a quantised checkpoint keeps in 16 bit: the input embedding table, the output layer (lm_head),
    learned positions and every norm. GPTQ, AWQ, FP8 (vLLM, llm-compressor), NVFP4 (ModelOpt) and bitsandbytes
    NF4 quantise the decoder's linear layers only."""
    return embedding_params(m) + m.num_layers * norm_params_per_layer(m)


def input_embedding_params(m: ModelArch) -> int:
    """The token embedding table (plus learned positions): a step gathers rows of it, it does not stream it."""
    return m.vocab_size * m.hidden_size + m.learned_positions * m.hidden_size


def _count(m: ModelArch, active_only: bool) -> int:
    per_layer_common = attention_params_per_layer(m) + norm_params_per_layer(m)
    dense_mlp = mlp_params(m.hidden_size, m.intermediate_size, m.mlp_gated, m.mlp_bias)
    total = m.num_layers * per_layer_common + m.dense_layers * dense_mlp
    if m.is_moe:
        total += m.moe_layers * moe_layer_mlp_params(m, active_only)
    return total + embedding_params(m)


def params_total(m: ModelArch) -> int:
    """Every parameter stored (all experts), embeddings and output layer included."""
    if m.declared_params is not None:
        return m.declared_params
    return m.counted_total


def params_active(m: ModelArch) -> int:
    """Parameters used for one token (MoE: the routed top-k plus shared experts and router)."""
    if m.declared_params is not None:
        return m.declared_params
    return m.counted_active


def matmul_params_active(m: ModelArch) -> int:
    """Active parameters that take part in matmuls per token: all but the input embedding table,
    positional table and norms (the lm_head counts; with tied embeddings it is the same matrix)."""
    n = params_active(m) - m.vocab_size * m.hidden_size * (0 if m.tied_embeddings else 1)
    return n - m.learned_positions * m.hidden_size


# ---- KV cache ----------------------------------------------------------------------------------


def kv_bytes_per_token(m: ModelArch, kv_bytes_per_value: float, tp: int = 1) -> float:
    """KV-cache bytes per token with every layer at full attention, on one tensor-parallel rank.

    2 x layers x kv_heads x head_dim x bytes (MLA: layers x (kv_lora_rank + qk_rope_head_dim) x bytes).
    With tensor parallelism the KV heads are split, never below one head per rank (replication);
    an MLA latent is not split by heads, so every rank holds all of it.
    """
    return m.num_layers * kv_elements_per_rank(m, tp) * kv_bytes_per_value


def kv_elements_per_rank(m: ModelArch, tp: int) -> int:
    if m.is_mla:
        return m.kv_lora_rank + m.qk_rope_head_dim
    heads_per_rank = max(1, m.num_kv_heads // tp)
    return 2 * heads_per_rank * m.d


class KVCacheBytes:
    """KV cache bytes on one GPU of a TP x PP group, for one model and KV format: ``(context_tokens, sequences)``.

    Sliding-window layers hold at most ``sliding_window_tokens`` tokens per sequence. Pipeline stages hold their
    share of the layers (rounded up: the fullest stage). The per-context term is remembered (the step loop asks the
    same contexts again and again)."""

    __slots__ = ("per_layer", "full", "swa", "window", "share", "_per_context")

    def __init__(self, m: ModelArch, kv_bytes_per_value: float, tp: int = 1, pp: int = 1):
        self.per_layer = kv_elements_per_rank(m, tp) * kv_bytes_per_value
        self.swa = m.sliding_window_layers
        self.full = m.num_layers - self.swa
        self.window = m.sliding_window_tokens
        self.share = _ceil_div(m.num_layers, pp) / m.num_layers if pp > 1 else None
        self._per_context: dict[int, float] = {}

    def __call__(self, context_tokens: int, sequences: float) -> float:
        if context_tokens <= 0 or sequences <= 0:
            return 0.0
        per = self._per_context.get(context_tokens)
        if per is None:
            tokens_swa = min(context_tokens, self.window) if self.swa else 0
            per = self._per_context[context_tokens] = self.per_layer * (
                self.full * context_tokens + self.swa * tokens_swa
            )
        total = per * sequences
        if self.share is not None:
            total *= self.share
        return total


def kv_cache_bytes(
    m: ModelArch, kv_bytes_per_value: float, context_tokens: int, sequences: int, tp: int = 1, pp: int = 1
) -> float:
    """KV cache for ``sequences`` sequences of ``context_tokens`` tokens on one GPU of a TP x PP group
    (``KVCacheBytes``)."""
    return KVCacheBytes(m, kv_bytes_per_value, tp, pp)(context_tokens, sequences)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def valid_tp_degrees(m: ModelArch, max_tp: int = 8) -> list[int]:
    """Tensor-parallel degrees the heads allow: tp divides the attention heads, and tp divides the
    KV heads or is a multiple of them (KV heads are then replicated)."""
    out = []
    for tp in (1, 2, 4, 8, 16, 32, 64):
        if tp > max_tp:
            break
        if m.num_attention_heads % tp:
            continue
        if not m.is_mla and m.num_kv_heads % tp and tp % m.num_kv_heads:
            continue
        out.append(tp)
    return out


def check_tp(m: ModelArch, tp: int) -> None:
    if tp > m.num_attention_heads:
        raise ValueError(
            f"tp: {tp} is larger than the model's {m.num_attention_heads} attention heads; "
            f"allowed: {', '.join(map(str, valid_tp_degrees(m, 64)))}"
        )
    if m.num_attention_heads % tp or (not m.is_mla and m.num_kv_heads % tp and tp % m.num_kv_heads):
        raise ValueError(
            f"tp: {tp} does not divide the model's heads ({m.num_attention_heads} attention, "
            f"{m.num_kv_heads} KV); allowed: {', '.join(map(str, valid_tp_degrees(m, 64)))}"
        )


def model_from_param_count(n_params: int, vocab_size: int = 128_256) -> ModelArch:
    """A plausible dense Llama-style shape for a bare parameter count (approximate by design).

    Shape rules (Llama-3 family): head_dim 128, 8 KV heads, hidden a multiple of 1,024, layers =
    hidden / 128, untied 128,256-token vocabulary; the MLP width takes up the remaining parameters.
    Hidden size and layers never shrink as the count grows, so KV cache and activations grow with
    the count too. The parameter count the engine uses is exactly ``n_params``; the shape only feeds
    KV cache, activations and FLOPs, which is why the result is marked approximate.
    """
    if n_params < 500_000_000:
        raise ValueError("params: must be at least 500,000,000 (0.5B) for a derived architecture")
    if n_params > 100_000_000_000_000:
        raise ValueError("params: must be at most 100,000,000,000,000 (100T)")

    def embed(h: int) -> int:
        return 2 * vocab_size * h + h

    # per layer ~ 2h^2 (q, o) + 2h x 1024 (k, v) + 3h x 3.5h (MLP) = about 12.5 h^2; layers = h / 128
    h_cont = ((n_params - embed(1024)) * 128 / 12.5) ** (1 / 3)
    h = max(1024, int(round(h_cont / 1024)) * 1024)
    while h > 1024 and n_params - embed(h) < (h // 128) * (2 * h * h + 2 * h * 1024 + 3 * h * h):
        h -= 1024  # keep the MLP at least as wide as the hidden size
    layers = h // 128
    attn = 2 * h * h + 2 * h * 8 * 128 + 2 * h
    inter = max(1, (((n_params - embed(h)) // layers) - attn) // (3 * h))
    return ModelArch(
        name=f"{n_params / 1e9:g}B dense (derived)",
        source="derived from the parameter count with Llama-3-style proportions (approximate)",
        num_layers=layers,
        hidden_size=h,
        num_attention_heads=h // 128,
        num_kv_heads=8,
        head_dim=128,
        intermediate_size=inter,
        vocab_size=vocab_size,
        declared_params=n_params,
        approximate=True,
    )
