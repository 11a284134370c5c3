"""The training and fine-tuning budget: model states by accounting and optimizer, ZeRO sharding and CPU offload,
LoRA / QLoRA adapters, activations by recompute policy, logits."""

from __future__ import annotations

from ..model.arch import ModelArch, params_total
from ..model.formats import get_format
from .components import MemoryBudget, MemoryRequest, largest_layer_params, model_weight_bytes, overheads

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
    m: ModelArch, seq: int, batch: int, act_bytes: float, recompute: str, flash: bool, *, tp: int
) -> float:
    """Training activations stored for backward, one layer, one GPU (Korthikanti et al. 2022, generalised)."""
    s, b, h = seq, batch, m.hidden_size
    scale = act_bytes / 2.0  # the paper's coefficients are for 2-byte activations
    if recompute == "full":
        return 2 * s * b * h * scale / tp  # only the layer input is kept, split by sequence parallelism
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


def training_budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
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
        m, context, batch, af.bytes_per_value, req.recompute, req.flash_attention, tp=req.tp
    )
    comps["activations"] = per_layer * m.num_layers  # 1F1B: the first stage holds pp micro-batches
    comps["logits (fp32)"] = context * batch * m.vocab_size * 4 / req.tp
    comps.update(overheads(req))
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
