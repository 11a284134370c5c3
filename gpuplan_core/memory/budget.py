"""The memory engine: every byte of a job's budget, per GPU, with its scope named.

Scopes (each budget says which one it is):
  "weights only"   the parameters alone, in the weights format
  "model states"   training: weights + master weights + gradients + optimizer states
  "whole runtime"  everything the process holds: the above + KV cache or activations + workspace,
                   CUDA context and communication buffers

Formulas (one place; the Methodology page shows the same):
  weights        = params x bytes_per_weight / (tp x pp)            [/ dp with ZeRO-3]
  KV cache       = 2 x layers x kv_heads x head_dim x kv_bytes x tokens x sequences
                   (MLA: layers x (kv_lora_rank + qk_rope_head_dim) x kv_bytes x tokens x sequences;
                   sliding-window layers hold min(tokens, window); TP splits KV heads, never
                   below one per rank; sequences are rounded up to whole paged blocks)
  training       ZeRO paper accounting, 16 B/param: bf16 weights 2 + bf16 grads 2 + fp32 master 4
                   + Adam momentum 4 + variance 4. Hugging Face accounting, 18 B/param: weights 6
                   (bf16 2 + fp32 master 4) + fp32 grads 4 + Adam 8. ZeRO-1 shards master +
                   optimizer over dp, ZeRO-2 also gradients, ZeRO-3 also weights.
  activations    Korthikanti et al. 2022 per layer, generalised to GQA and gated MLPs:
                   s*b*(attention 3h + 4*a*d + 4*kv*d + MLP 3h + (6 or 4)*I + norms 4h) bytes at 2-byte
                   activations, + 5*a*s^2*b for the attention scores unless FlashAttention;
                   selective recompute drops the s^2 term, full recompute keeps 2*s*b*h per layer;
                   divided by tp (sequence parallel); pipeline stages do not reduce it (1F1B);
                   + fp32 logits s*b*V*4 / tp.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..common.units import GiB
from ..hardware.engines import ENGINES, Engine, EngineProfile
from ..model.arch import (
    ModelArch,
    _ceil_div,
    check_tp,
    kept_16bit_params,
    kv_cache_bytes,
    params_total,
)
from ..model.formats import get_format
from ..scenario.fields import (
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    MAX_GPUS,
    Accounting,
    LoraTargets,
    Method,
    Mode,
    Offload,
    Optimizer,
    Recompute,
)
from ..scenario.parts import RuntimeAssumptions


class Assumptions(BaseModel):
    """Named, adjustable overheads with their defaults' sources (see Methodology)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory_utilization: float = RuntimeAssumptions.model_fields["memory_utilization"]  # declared once, there
    cuda_context_bytes: float = Field(
        0.25 * GiB,
        ge=0,
        le=64 * GiB,
        description="CUDA context and other non-torch memory at TP=1 (vLLM 0.19 measured 0.25 GiB)",
    )
    comm_buffer_bytes: float = Field(
        1.85 * GiB,
        ge=0,
        le=64 * GiB,
        description="extra NCCL/communication buffers at TP>=2 (vLLM non-torch 2.1 GiB vs 0.25)",
    )
    cuda_graph_bytes: float = Field(
        1.0 * GiB, ge=0, le=64 * GiB, description="inference CUDA-graph pool (observed 0.51-1.85 GiB, mean 1.04)"
    )
    activation_workspace_bytes: float | None = Field(
        None, ge=0, le=1024 * GiB, description="inference activation peak; None = estimate from max_batched_tokens"
    )
    max_batched_tokens: int = Field(
        8192, ge=1, le=1_000_000, description="tokens in one engine step (vLLM profile run)"
    )
    max_sampled_sequences: int = Field(
        256, ge=1, le=100_000, description="sequences whose fp32 logits are held at once"
    )
    kv_block_tokens: int = Field(16, ge=1, le=4096, description="paged KV-cache block size (vLLM default 16)")
    framework_reserve_fraction: float = Field(
        0.0, ge=0, le=0.5, description="training: allocator fragmentation as a share of the rest"
    )
    zero3_prefetch_bucket_params: int = Field(
        50_000_000,
        ge=0,
        le=10**11,
        description="ZeRO-3: parameters fetched ahead (DeepSpeed stage3_prefetch_bucket_size 5e7)",
    )
    zero3_reduce_bucket_elements: int = Field(
        500_000_000,
        ge=0,
        le=10**11,
        description="ZeRO-3: gradient elements per reduce bucket (DeepSpeed reduce_bucket_size 5e8)",
    )
    offload_buffer_factor: float = Field(
        1.5,
        ge=1,
        le=4,
        description="host memory for offloaded states x this (DeepSpeed estimators' additional_buffer_factor)",
    )
    gpus_per_node: int = Field(8, ge=1, le=64, description="GPUs sharing one host's RAM (offload)")


class MemoryRequest(BaseModel):
    """What the user asks about. Validated; every field is named in error messages."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = "inference"
    method: Method = "full"
    weights_format: str = "bf16"
    kv_format: str = "bf16"
    activation_format: str = "bf16"
    context_tokens: int = Field(4096, ge=1, le=MAX_CONTEXT_TOKENS)
    batch: int = Field(1, ge=1, le=MAX_BATCH)
    gpus: int = Field(1, ge=1, le=MAX_GPUS)
    tp: int = Field(1, ge=1, le=1024)
    pp: int = Field(1, ge=1, le=1024)
    zero_stage: int = Field(0, ge=0, le=3)
    accounting: Accounting = "zero"
    optimizer: Optimizer = "adamw"
    recompute: Recompute = "none"
    flash_attention: bool = True
    lora_rank: int = Field(16, ge=1, le=4096)
    lora_targets: LoraTargets = "all-linear"
    offload: Offload = "none"
    engine: Engine = "vllm"
    prefill_tokens: int | None = Field(None, ge=1, le=MAX_CONTEXT_TOKENS, description="prompt tokens (inference)")
    assumptions: Assumptions = Assumptions()

    @model_validator(mode="after")
    def _check(self) -> MemoryRequest:
        for fld in ("weights_format", "kv_format", "activation_format"):
            try:
                get_format(getattr(self, fld))
            except ValueError as exc:
                raise ValueError(f"{fld}: {exc}") from None
        if self.gpus % (self.tp * self.pp):
            raise ValueError(f"gpus: {self.gpus} must be a multiple of tp x pp = {self.tp * self.pp}")
        if self.offload == "optimizer+params" and self.zero_stage != 3:
            raise ValueError("offload: parameters are offloaded only at ZeRO stage 3 (choose stage 3 or 'optimizer')")
        return self

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp)


@dataclass
class MemoryBudget:
    """Bytes per GPU by component (whole runtime), with the narrower scopes alongside."""

    components: dict[str, float]
    budgets: dict[str, float]  # scope -> per-GPU bytes ("weights only", "model states", "whole runtime")
    gpus: int
    notes: list[str] = field(default_factory=list)
    scope: str = "whole runtime"
    offloaded: dict[str, float] = field(default_factory=dict)  # per GPU's share, held in host RAM instead
    host_bytes_per_node: float = 0.0  # host RAM the offloaded states need on each machine

    @property
    def per_gpu_bytes(self) -> float:
        return sum(self.components.values())

    @property
    def total_bytes(self) -> float:
        return self.per_gpu_bytes * self.gpus


# ---- pure component functions ----------------------------------------------------------------------


def weights_bytes(n_params: float, bytes_per_weight: float) -> float:
    return n_params * bytes_per_weight


KEPT_BYTES_PER_PARAM = 2.0  # what a quantised checkpoint keeps its embeddings, lm_head and norms in (BF16)
KEPT_COMPONENT = "weights kept in 16 bit (embeddings, LM head, norms)"

# What each budget line rests on. Exact: counted from the architecture, formats and shapes (reproduces a published
# count to the byte). Estimated: a runtime's working memory, from formulas or measurements that vary by version.
ESTIMATED_COMPONENTS = {
    "activation workspace": "the engine's profiling pass (Methodology: engines); varies with kernels and version",
    "activations": "Korthikanti et al. 2022 per-layer formula; kernels (FlashAttention, fused ops) change it",
    "CUDA graphs": "measured pool size (vLLM 0.19 on H100); depends on captured batch sizes",
    "CUDA context": "measured per process (driver and library kernels); depends on CUDA version",
    "communication buffers": "NCCL buffers, measured; depend on NCCL settings",
    "allocator reserve": "PyTorch caching-allocator fragmentation, a share of the rest",
    "ZeRO-3 gathered parameters": "DeepSpeed's estimator (largest layer's weights and gradients, 4 B/param) plus "
    "the prefetch bucket; depends on stage3_* settings",
    "ZeRO-3 reduce bucket": "DeepSpeed reduce_bucket_size (default 5e8 elements); adjustable",
}


def largest_layer_params(m: ModelArch) -> int:
    """Parameters of the largest single weight matrix (what ZeRO-3 gathers at once, DeepSpeed's 'largest layer'):
    the embedding or LM head for most models, else an MLP or expert projection."""
    inter = max(m.intermediate_size or 0, m.expert_intermediate_size or 0)
    return max(m.vocab_size * m.hidden_size, m.hidden_size * inter)


def component_provenance(name: str) -> str:
    """'exact' for a component counted from the architecture, else 'estimated: <why>'."""
    why = ESTIMATED_COMPONENTS.get(name)
    return "exact: counted from the architecture, formats and shapes" if why is None else f"estimated: {why}"


def weight_split(m: ModelArch, fmt) -> tuple[float, float]:
    """(quantised body bytes, bytes kept in 16 bit) of the whole model in weights format ``fmt``. A format
    narrower than 16 bits applies to the decoder's linear layers only (model.kept_16bit_params); the ideal
    packed 4-bit lower bound applies to everything, as its name says."""
    if fmt.bits_per_value >= 16 or fmt.lower_bound:
        return params_total(m) * fmt.bytes_per_value, 0.0
    kept = kept_16bit_params(m)
    return (params_total(m) - kept) * fmt.bytes_per_value, kept * KEPT_BYTES_PER_PARAM


def model_weight_bytes(m: ModelArch, fmt) -> float:
    """The whole model's weights in ``fmt``, embeddings, lm_head and norms in 16 bit when ``fmt`` is narrower."""
    body, kept = weight_split(m, fmt)
    return body + kept


TRAINING_BYTES_PER_PARAM = {
    # accounting -> component -> bytes per trainable parameter (mixed precision, AdamW)
    "zero": {"weights": 2.0, "gradients": 2.0, "master weights": 4.0, "optimizer states": 8.0},
    "hf": {"weights": 2.0, "master weights": 4.0, "gradients": 4.0, "optimizer states": 8.0},
}
OPTIMIZER_BYTES_PER_PARAM = {"adamw": 8.0, "adam8bit": 2.0, "sgd": 4.0}


def model_state_bytes_per_param(accounting: str, optimizer: str, fp32_weights: bool = False) -> dict[str, float]:
    """Bytes per trainable parameter by component, for the named accounting."""
    per = dict(TRAINING_BYTES_PER_PARAM[accounting])
    per["optimizer states"] = OPTIMIZER_BYTES_PER_PARAM[optimizer]
    if fp32_weights:  # plain fp32 training: the weights are the master copy
        per.update({"weights": 4.0, "master weights": 0.0, "gradients": 4.0})
    return per


def lora_params(m: ModelArch, rank: int, targets: str) -> int:
    """Adapter parameters: rank x (d_in + d_out) per adapted matrix per layer."""
    h, d = m.hidden_size, m.d
    q_out = m.num_attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim if m.is_mla else d)
    kv_out = m.num_attention_heads * m.v_head_dim if m.is_mla else m.num_kv_heads * d
    o_in = m.num_attention_heads * (m.v_head_dim if m.is_mla else d)
    per_layer = rank * ((h + q_out) + 2 * (h + kv_out) + (o_in + h))
    if targets == "all-linear":
        inter = m.intermediate_size
        per_layer += rank * ((3 if m.mlp_gated else 2) * (h + inter))
    return m.num_layers * per_layer


def activation_bytes_per_layer(
    m: ModelArch, seq: int, batch: int, act_bytes: float, recompute: str, flash: bool, tp: int
) -> float:
    """Training activations stored for backward, one layer, one GPU (Korthikanti et al. 2022, generalised)."""
    s, b, h = seq, batch, m.hidden_size
    scale = act_bytes / 2.0  # the paper's coefficients are for 2-byte activations
    if recompute == "full":
        return 2 * s * b * h * scale  # only the layer input is kept
    a = m.num_attention_heads
    q_width = a * (m.qk_nope_head_dim + m.qk_rope_head_dim) if m.is_mla else a * m.d
    kv_width = a * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) // 2 if m.is_mla else m.num_kv_heads * m.d
    attn = 3 * h + 4 * q_width + 4 * kv_width
    if m.is_moe:
        inter = m.experts_per_token * m.expert_intermediate_size + (
            m.shared_expert_intermediate_size or m.expert_intermediate_size * m.num_shared_experts
        )
    else:
        inter = m.intermediate_size
    mlp = 3 * h + (6 if m.mlp_gated else 4) * inter
    per = s * b * (attn + mlp + 4 * h) * scale
    if recompute == "none" and not flash:
        per += 5 * a * s * s * b * scale
    return per / tp


def inference_activation_bytes(
    m: ModelArch,
    asm: Assumptions,
    act_bytes: float,
    tp: int,
    engine: EngineProfile | None = None,
    step_tokens: int | None = None,
    logits_sequences: int | None = None,
) -> float:
    """Peak activation workspace of one forward pass (an estimate): the widest intermediate (the MLP's) for every
    token of the largest step, plus fp32 logits. The largest step is the engine's chunked-prefill budget, or the
    whole prompt of every sequence for an engine without chunking (``step_tokens``)."""
    if asm.activation_workspace_bytes is not None:
        return asm.activation_workspace_bytes
    inter = m.expert_intermediate_size * m.experts_per_token if m.is_moe else m.intermediate_size
    width = ((2 if m.mlp_gated else 1) * inter + inter) / tp + 4 * m.hidden_size
    if engine is None or engine.name == "vllm":
        tokens, seqs = asm.max_batched_tokens, asm.max_sampled_sequences
    else:
        tokens = engine.prefill_chunk_tokens or step_tokens or asm.max_batched_tokens
        seqs = engine.logits_sequences or logits_sequences or 1
    logits = seqs * m.vocab_size * 4 / tp
    return tokens * width * act_bytes + logits


# ---- the budget ---------------------------------------------------------------------------------


def memory_budget(m: ModelArch, req: MemoryRequest) -> MemoryBudget:
    """The whole per-GPU budget of one configuration (req.gpus GPUs, tp x pp x dp)."""
    check_tp(m, req.tp)
    if req.pp > m.num_layers:
        raise ValueError(f"pp: {req.pp} pipeline stages exceed the model's {m.num_layers} layers")
    return _budget(m, req, req.batch, req.context_tokens)


def _budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
    """memory_budget with batch and context as arguments (the inverse searches call this)."""
    if req.mode == "inference":
        return _inference_budget(m, req, batch, context)
    return _training_budget(m, req, batch, context)


def _overheads(req: MemoryRequest) -> dict[str, float]:
    asm = req.assumptions
    out = {"CUDA context": asm.cuda_context_bytes}
    if req.tp > 1:
        out["communication buffers"] = asm.comm_buffer_bytes
    return out


def _stage_fraction(m: ModelArch, pp: int) -> float:
    return _ceil_div(m.num_layers, pp) / m.num_layers if pp > 1 else 1.0


def _inference_budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
    wf, kvf, af = get_format(req.weights_format), get_format(req.kv_format), get_format(req.activation_format)
    asm = req.assumptions
    shard = req.tp * req.pp
    body, kept = weight_split(m, wf)
    w = (body + kept) / shard
    weight_parts = {"weights": body / shard}
    if kept:
        weight_parts[KEPT_COMPONENT] = kept / shard
    eng = ENGINES[req.engine]
    block = asm.kv_block_tokens if eng.name == "vllm" else eng.kv_block_tokens
    ctx = _ceil_div(context, block) * block
    kv = kv_cache_bytes(m, kvf.bytes_per_value, ctx, batch, tp=req.tp, pp=req.pp)
    prompt = min(req.prefill_tokens or context, context)
    act = inference_activation_bytes(m, asm, af.bytes_per_value, req.tp, eng, batch * prompt, batch)
    comps = {
        **weight_parts,
        "KV cache": kv,
        "activation workspace": act,
        **({"CUDA graphs": asm.cuda_graph_bytes} if eng.cuda_graphs else {}),
        **_overheads(req),
    }
    notes = []
    if wf.lower_bound:
        notes.append("Ideal packed 4-bit is a lower bound: real 4-bit formats store scales on top.")
    if m.approximate:
        notes.append(
            "The architecture is derived from a bare parameter count: KV cache and activations are approximate."
        )
    if m.is_mla and req.tp > 1:
        notes.append("MLA latent KV is not split by heads: every tensor-parallel rank holds all of it.")
    if not m.is_mla and req.tp > m.num_kv_heads:
        notes.append(f"tp {req.tp} exceeds the {m.num_kv_heads} KV heads: KV heads are replicated, one per rank.")
    budgets = {"weights only": w, "whole runtime": sum(comps.values())}
    return MemoryBudget(components=comps, budgets=budgets, gpus=req.gpus, notes=notes)


def _training_budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
    af = get_format(req.activation_format)
    asm = req.assumptions
    shard = req.tp * req.pp
    dp = req.dp
    n_total = params_total(m)
    notes: list[str] = []
    comps: dict[str, float] = {}
    lora = req.mode == "finetune" and req.method in ("lora", "qlora")
    if lora:
        base_fmt = get_format("nf4-dq" if req.method == "qlora" else req.weights_format)
        trainable = lora_params(m, req.lora_rank, req.lora_targets)
        base = model_weight_bytes(m, base_fmt) / shard
        if req.zero_stage == 3:
            base /= dp
        comps["frozen base weights"] = base
        per = model_state_bytes_per_param(req.accounting, req.optimizer)
        per = {f"adapter {k}": v for k, v in per.items()}
        notes.append(
            f"{req.method.upper()}: base frozen in {base_fmt.label}; {trainable:,} adapter parameters "
            f"(rank {req.lora_rank}, {req.lora_targets}) carry gradients and optimizer states."
        )
    else:
        trainable = n_total
        per = model_state_bytes_per_param(req.accounting, req.optimizer, fp32_weights=req.weights_format == "fp32")
    offloaded: dict[str, float] = {}
    moved = {"optimizer": ("gradients", "master weights", "optimizer states")}.get(req.offload, ())
    if req.offload == "optimizer+params":
        moved = ("gradients", "master weights", "optimizer states", "weights")
    for name, bpp in per.items():
        if bpp == 0:
            continue
        val = trainable * bpp / shard
        base_name = name.removeprefix("adapter ")
        if (
            (req.zero_stage >= 1 and base_name in ("master weights", "optimizer states"))
            or (req.zero_stage >= 2 and base_name == "gradients")
            or (req.zero_stage >= 3 and base_name == "weights")
        ):
            val /= dp
        if base_name in moved:
            offloaded[name] = val
        else:
            comps[name] = val
    if lora and req.offload == "optimizer+params":
        offloaded["frozen base weights"] = comps.pop("frozen base weights")
    if req.zero_stage == 3:  # DeepSpeed's live buffers: a gathered layer (weights + gradients) and the prefetch
        gathered = 4 * largest_layer_params(m) / req.tp + 2 * asm.zero3_prefetch_bucket_params
        comps["ZeRO-3 gathered parameters"] = gathered
        comps["ZeRO-3 reduce bucket"] = 2 * min(asm.zero3_reduce_bucket_elements, trainable / shard)
    states = sum(v for k, v in comps.items() if not k.startswith("ZeRO-3"))
    per_layer = activation_bytes_per_layer(
        m, context, batch, af.bytes_per_value, req.recompute, req.flash_attention, req.tp
    )
    comps["activations"] = per_layer * m.num_layers  # 1F1B: the first stage holds pp micro-batches
    comps["logits (fp32)"] = context * batch * m.vocab_size * 4 / req.tp
    comps.update(_overheads(req))
    if asm.framework_reserve_fraction:
        comps["allocator reserve"] = asm.framework_reserve_fraction * sum(comps.values())
    acc = "ZeRO paper (16 B/param)" if req.accounting == "zero" else "Hugging Face (18 B/param)"
    notes.append(f"Model-state accounting: {acc}; optimizer {req.optimizer}; ZeRO stage {req.zero_stage} over dp={dp}.")
    if m.approximate:
        notes.append("The architecture is derived from a bare parameter count: activations are approximate.")
    host = 0.0
    if offloaded:
        per_node = min(req.gpus, asm.gpus_per_node)
        host = sum(offloaded.values()) * per_node * asm.offload_buffer_factor
        notes.append(
            f"Offloaded to host RAM ({', '.join(offloaded)}): {host / 1e9:,.1f} GB per machine of {per_node} GPU(s), "
            f"x{asm.offload_buffer_factor:g} for DeepSpeed's buffers; the optimizer step runs on the CPU, so steps "
            "are slower (the time and cost estimates do not include that)."
        )
    w_only = comps.get("weights", comps.get("frozen base weights", 0.0))
    budgets = {"weights only": w_only, "model states": states, "whole runtime": sum(comps.values())}
    return MemoryBudget(
        components=comps, budgets=budgets, gpus=req.gpus, notes=notes, offloaded=offloaded, host_bytes_per_node=host
    )
