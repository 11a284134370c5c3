"""Training activations as autograd keeps them: the tensors each layer saves for its backward pass, by
checkpointing policy, with LoRA adapters' own saved inputs, and the loss's logits.

Per layer and token (values; x bytes per activation value), FlashAttention, SwiGLU MLP (GELU MLP: 2 I instead of 4 I):

    norm inputs 2h + norm outputs 2h + q, k, v (q + 2 kv) + attention output q + MLP gate, act, up, product 4I

(Korthikanti et al. 2022 count the same tensors for GPT: 34 s b h at 2 bytes with dropout masks; without
FlashAttention the scores add 5 a s^2 b.) A frozen base (LoRA, QLoRA) does not keep the norm outputs or the
MLP product: a frozen linear needs no input for a weight gradient (the adapters keep their own, below).

Checkpointing policies (what is kept between forward and backward):
  none          every tensor above
  selective     per-op (torchtitan's "op" policy, Megatron's selective generalised): the layer's input, the
                attention output and every other matmul output are kept; norms, activations and the other
                matmuls are recomputed
  full          only each layer's input (h); one layer's tensors live again while its backward runs
  full, every k-th layer (recompute_every = k): L / k layers keep their input, the others keep everything

LoRA adapters (PEFT, torchtune, litgpt): each adapted linear keeps its input after dropout (2 bytes, when dropout
> 0, plus a 1-byte mask) and its rank-r intermediate; adapting the LM head adds a logits-sized output (2 bytes x V).
Tensor parallelism with sequence parallelism divides every term by tp, context parallelism by cp.

Pipeline schedules: under 1F1B the first stage holds pp micro-batches of its L / pp layers, L layers' worth of one
micro-batch whatever pp is (the terms above). Megatron's interleaved 1F1B with v model chunks per stage holds more
before its first backward: the first stage's activations are multiplied by 1 + (pp - 1) / (pp v) (Korthikanti et
al. 2022, "Reducing Activation Recomputation in Large Transformer Models", section 4.2.3; Narayanan et al. 2021's
schedule).

Logits: the full cross-entropy in eager PyTorch holds, per token, the BF16 logits, their FP32 copy and the FP32
log-softmax it saves for backward (2 + 4 + 4 = 10 bytes x V; torchtune's own flags table: turning chunking on saves
8.9 bytes x V per token on Llama 3.2 3B); a chunked loss (torchtune, compiled) keeps the BF16 logits and upcasts one
chunk at a time (2 bytes x V + 4 bytes x V / chunks).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.arch import ModelArch

LOSS_CHUNKS = 8  # torchtune CEWithChunkedOutputLoss num_output_chunks
FULL_LOSS_BYTES_PER_LOGIT = 2.0 + 4.0 + 4.0  # BF16 logits, their FP32 copy, the FP32 log-softmax
DROPOUT_MASK_BYTES = 1.0  # a bool per element


@dataclass(frozen=True)
class LayerTensors:
    """Values per token one layer saves, by tensor group (before tp / cp)."""

    norm_inputs: float
    norm_outputs: float
    qkv: float
    attention_output: float
    mlp: float  # gate, activation, up (SwiGLU) or pre- and post-activation (GELU)
    mlp_product: float  # the down projection's input
    matmul_outputs: float  # q, k, v, o, gate, up, down outputs: what the per-op policy keeps every other one of

    def all(self, frozen_base: bool = False) -> float:
        kept_for_weights = 0.0 if frozen_base else self.norm_outputs + self.mlp_product
        return self.norm_inputs + self.qkv + self.attention_output + self.mlp + kept_for_weights


def layer_tensors(m: ModelArch) -> LayerTensors:
    h, a = m.hidden_size, m.num_attention_heads
    if m.is_mla:
        q = a * (m.qk_nope_head_dim + m.qk_rope_head_dim)
        kv = a * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) / 2  # k and v of every head, halved
        o = a * m.v_head_dim
    else:
        q, kv, o = a * m.d, m.num_kv_heads * m.d, a * m.d
    if m.is_moe:  # the routed experts' tokens and the shared expert
        inter = m.experts_per_token * m.expert_intermediate_size + (
            m.shared_expert_intermediate_size or m.expert_intermediate_size * m.num_shared_experts
        )
    else:
        inter = m.intermediate_size
    gated = m.mlp_gated
    return LayerTensors(
        norm_inputs=2 * h,
        norm_outputs=2 * h,
        qkv=q + 2 * kv,
        attention_output=o,
        mlp=(3 if gated else 2) * inter,
        mlp_product=inter if gated else 0.0,
        matmul_outputs=q + 2 * kv + h + (2 if gated else 1) * inter + h,
    )


def adapted_inputs(m: ModelArch, targets: str) -> tuple[float, int]:
    """(input values per token over the adapted linears of one layer, how many linears)."""
    h, a = m.hidden_size, m.num_attention_heads
    o_in = a * (m.v_head_dim if m.is_mla else m.d)
    if targets == "qv":
        return 2.0 * h, 2
    attn = 3.0 * h + o_in
    if targets == "attention":
        return attn, 4
    inter = m.intermediate_size if not m.is_moe else m.expert_intermediate_size * m.experts_per_token
    mlp = (2.0 if m.mlp_gated else 1.0) * h + inter
    return attn + mlp, (7 if m.mlp_gated else 6)


@dataclass(frozen=True)
class ActivationSetup:
    """How the run keeps activations: the policy, the attention kernel, the adapters, the parallel split."""

    recompute: str = "none"  # none | selective | full
    recompute_every: int = 1  # full checkpointing on every k-th layer
    flash: bool = True
    frozen_base: bool = False
    lora_targets: str | None = None  # None: no adapters
    lora_rank: int = 16
    lora_dropout: float = 0.0
    tp: int = 1
    cp: int = 1
    pp: int = 1
    virtual_stages: int = 1  # interleaved 1F1B: model chunks per pipeline stage (1: plain 1F1B)

    @property
    def interleaved_factor(self) -> float:
        """The first stage's activations under interleaved 1F1B over plain 1F1B's: 1 + (pp - 1) / (pp v)
        (Korthikanti et al. 2022, section 4.2.3); 1 without interleaving."""
        if self.pp <= 1 or self.virtual_stages <= 1:
            return 1.0
        return 1.0 + (self.pp - 1) / (self.pp * self.virtual_stages)


def layer_activation_bytes(m: ModelArch, tokens: float, act_bytes: float, st: ActivationSetup) -> dict[str, float]:
    """Bytes one GPU keeps for all its layers between forward and backward, by part: 'activations' (the layers'
    own tensors), 'LoRA adapter activations', 'recompute working set' (one layer recomputed in backward)."""
    t = layer_tensors(m)
    split = st.tp * st.cp
    every = t.all(st.frozen_base)
    scores = 0.0 if st.flash else 5 * m.num_attention_heads * tokens * act_bytes / 2  # per token, Korthikanti
    per_token_layer_none = every * act_bytes + scores
    out: dict[str, float] = {}
    layers = m.num_layers
    if st.recompute == "none":
        kept = per_token_layer_none * layers
        working = 0.0
    elif st.recompute == "selective":
        kept_values = m.hidden_size + t.attention_output + t.matmul_outputs / 2
        kept = (min(kept_values, every) * act_bytes) * layers
        working = per_token_layer_none
    else:  # full, on every k-th layer
        k = max(1, st.recompute_every)
        checkpointed = layers // k if k > 1 else layers
        kept = checkpointed * m.hidden_size * act_bytes + (layers - checkpointed) * per_token_layer_none
        working = per_token_layer_none
    out["activations"] = kept * tokens / split * st.interleaved_factor
    if st.lora_targets:
        values, count = adapted_inputs(m, st.lora_targets)
        per_value = (act_bytes + DROPOUT_MASK_BYTES) if st.lora_dropout > 0 else 0.0
        adapter = values * per_value + count * st.lora_rank * act_bytes
        stored_layers = layers if st.recompute == "none" else 0
        if st.recompute == "full" and st.recompute_every > 1:
            stored_layers = layers - layers // st.recompute_every
        out["LoRA adapter activations"] = adapter * stored_layers * tokens / split * st.interleaved_factor
        if stored_layers < layers:  # the recomputed layer's adapters join the working set
            working += adapter
    if working:
        out["recompute working set"] = working * tokens / split
    return out


def logits_bytes(m: ModelArch, tokens: float, cross_entropy: str, lm_head_adapted: bool, tp: int, cp: int) -> float:
    """The loss's logits on one GPU: full FP32, or chunked (BF16 kept, FP32 one chunk at a time); an adapted LM
    head adds its BF16 output."""
    per_token = FULL_LOSS_BYTES_PER_LOGIT if cross_entropy == "full" else 2.0 + 4.0 / LOSS_CHUNKS
    if lm_head_adapted:
        per_token += 2.0
    return tokens * m.vocab_size * per_token / (tp * cp)
