"""The training and fine-tuning budget as frameworks allocate it: model states by precision recipe and optimizer,
ZeRO / FSDP sharding and what FSDP gathers, CPU offload, LoRA / QLoRA adapters and each library's QLoRA overhead,
activations by checkpointing policy (memory/activations.py), logits, and the model-loading peak.

Model states, bytes per trainable parameter (weights / gradients / FP32 master / optimizer states):
  mixed      BF16 compute with an FP32 master copy (Megatron, torchtitan's FSDP mixed precision, HF Trainer with an
             FP32 model): ZeRO accounting 2 / 2 / 4 / 8 = 16; Hugging Face accounting 2 / 4 / 4 / 8 = 18
  bf16       pure BF16 (torchtune's default, TRL with a BF16 model): 2 / 2 / 0 / 4 (AdamW's two states in BF16) = 8
  fp8, mxfp8, nvfp4
             mixed precision with the linear layers' matmuls in FP8 (torchao float8), MXFP8 or NVFP4 (Blackwell):
             the same states, plus one block's weights cast to the low format with their scales while it runs
  fp32       plain FP32: 4 / 4 / 0 / 8
  8-bit AdamW (bitsandbytes, paged or not) keeps 2 bytes of states per parameter; SGD with momentum one state.
ZeRO-1 shards master + optimizer over the data-parallel ranks (x context-parallel ranks, which FSDP shards over
too), ZeRO-2 also gradients, ZeRO-3 / FSDP also weights (hybrid sharding, HSDP: over a group of ``shard_gpus``
data-parallel ranks only, the states replicated across the groups); FSDP then gathers one block (transformer
layer) at a time and prefetches the next, and reduce-scatters one block's gradients.

QLoRA overheads by library: every library dequantises one linear layer to BF16 at a time; bitsandbytes (litgpt,
PEFT) holds working memory above the NF4 storage, fitted per base parameter on two thirds of 24 measured litgpt
runs (0.5 B; bench/fit_training_memory.py);
PEFT's prepare_model_for_kbit_training also upcasts the weights kept in 16 bit (embeddings, LM head, norms) to FP32;
torchao NF4 (torchtune) keeps them in BF16.
"""

from __future__ import annotations

from ..common.text import counted, gb, gib
from ..model.arch import ModelArch, embedding_params, kept_16bit_params, params_total, routed_expert_params
from ..model.formats import get_format
from .activations import ActivationSetup, layer_activation_bytes, logits_bytes
from .components import MemoryBudget, MemoryRequest, largest_layer_params, model_weight_bytes, overheads

TRAINING_BYTES_PER_PARAM = {
    # accounting -> component -> bytes per trainable parameter (mixed precision, AdamW)
    "zero": {"weights": 2.0, "gradients": 2.0, "master weights": 4.0, "optimizer states": 8.0},
    "hf": {"weights": 2.0, "master weights": 4.0, "gradients": 4.0, "optimizer states": 8.0},
}
OPTIMIZER_BYTES_PER_PARAM = {"adamw": 8.0, "adam8bit": 2.0, "sgd": 4.0}  # FP32 states
PURE_BF16_OPTIMIZER_BYTES_PER_PARAM = {"adamw": 4.0, "adam8bit": 2.0, "sgd": 2.0}
LOW_PRECISION_LINEAR_BYTES = {"fp8": 1.0, "mxfp8": 1.0 + 1 / 32, "nvfp4": 0.5 + 1 / 16}  # value + its block scale


def model_state_bytes_per_param(
    accounting: str, optimizer: str, fp32_weights: bool = False, precision: str = "mixed"
) -> dict[str, float]:
    """Bytes per trainable parameter by component, for the precision recipe (and, mixed, the accounting)."""
    if fp32_weights or precision == "fp32":  # plain fp32 training: the weights are the master copy
        return {
            "weights": 4.0,
            "gradients": 4.0,
            "master weights": 0.0,
            "optimizer states": OPTIMIZER_BYTES_PER_PARAM[optimizer],
        }
    if precision == "bf16":
        return {
            "weights": 2.0,
            "gradients": 2.0,
            "master weights": 0.0,
            "optimizer states": PURE_BF16_OPTIMIZER_BYTES_PER_PARAM[optimizer],
        }
    per = dict(TRAINING_BYTES_PER_PARAM[accounting])
    per["optimizer states"] = OPTIMIZER_BYTES_PER_PARAM[optimizer]
    return per


def lora_params(m: ModelArch, rank: int, targets: str) -> int:
    """Adapter parameters: rank x (d_in + d_out) per adapted matrix per layer (+ the LM head when adapted)."""
    h, d = m.hidden_size, m.d
    q_out = m.num_attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim if m.is_mla else d)
    kv_out = m.num_attention_heads * m.v_head_dim if m.is_mla else m.num_kv_heads * d
    o_in = m.num_attention_heads * (m.v_head_dim if m.is_mla else d)
    if targets == "qv":
        per_layer = rank * ((h + q_out) + (h + kv_out))
    else:
        per_layer = rank * ((h + q_out) + 2 * (h + kv_out) + (o_in + h))
    if targets.startswith("all-linear"):
        inter = m.intermediate_size
        per_layer += rank * ((3 if m.mlp_gated else 2) * (h + inter))
    head = rank * (h + m.vocab_size) if targets == "all-linear+head" else 0
    return m.num_layers * per_layer + head


def block_params(m: ModelArch) -> float:
    """Parameters of one transformer block (what FSDP gathers at once): the decoder's layers' share."""
    return (params_total(m) - embedding_params(m)) / m.num_layers


def expert_parallel_share(m: ModelArch, ep: int) -> float:
    """The share of the model's parameters one GPU holds under expert parallel ``ep`` (before tp x pp and ZeRO): the
    dense part whole, the routed experts' 1 / ep (Megatron: each EP rank holds num_experts / ep of them)."""
    if ep <= 1 or not m.is_moe:
        return 1.0
    return 1.0 - routed_expert_params(m) / params_total(m) * (1.0 - 1.0 / ep)


def _shard_of(name: str, zero_stage: int) -> bool:
    """Whether ZeRO at this stage shards the component over the data-parallel ranks."""
    return (
        (zero_stage >= 1 and name in ("master weights", "optimizer states"))
        or (zero_stage >= 2 and name == "gradients")
        or (zero_stage >= 3 and name == "weights")
    )


def _model_states(m: ModelArch, req: MemoryRequest, notes: list[str]) -> tuple[dict, dict, int]:
    """(on the GPU, offloaded to the host, trainable parameters): the model states per GPU."""
    # FSDP shards over the data- and context-parallel ranks (HSDP: over its group of data-parallel ranks)
    shard, dp = req.parallelism.tp * req.parallelism.pp, req.parallelism.shard_group(req.dp) * req.parallelism.cp
    if dp < req.dp * req.parallelism.cp:
        notes.append(
            f"Hybrid sharding (HSDP): the states sharded over groups of {req.parallelism.shard_gpus} data-parallel "
            f"ranks, replicated {req.dp // req.parallelism.shard_gpus} times."
        )
    comps: dict[str, float] = {}
    lora = req.job.mode == "finetune" and req.job.method in ("lora", "qlora")
    precision = req.training.precision
    ep = req.parallelism.ep_or_one
    experts = expert_parallel_share(m, ep)  # EP: each GPU holds 1 / ep of the routed experts
    if ep > 1 and m.is_moe:
        notes.append(
            f"Expert parallel {ep}: each GPU holds {m.num_experts // ep if m.num_experts % ep == 0 else '1/' + str(ep)}"
            f" of the {m.num_experts} routed experts per layer; ZeRO shards them over the {req.dp * req.parallelism.cp}"
            f" / {ep} expert-data-parallel ranks (per GPU, sharded states are the same as without EP)."
        )
    if lora:
        base_fmt = get_format("nf4-dq" if req.job.method == "qlora" else req.formats.weights_format)
        trainable = lora_params(m, req.training.lora_rank, req.training.lora_targets)
        base = model_weight_bytes(m, base_fmt) / shard
        base = base / dp if req.parallelism.zero_stage == 3 else base * experts
        comps["frozen base weights"] = base
        per = {
            f"adapter {k}": v
            for k, v in model_state_bytes_per_param(
                req.training.accounting, req.training.optimizer, precision=precision
            ).items()
        }
        notes.append(
            f"{req.job.method.upper()}: base frozen in {base_fmt.label}; {trainable:,} adapter parameters "
            f"(rank {req.training.lora_rank}, {req.training.lora_targets}) carry gradients and optimizer states."
        )
    else:
        trainable = params_total(m)
        per = model_state_bytes_per_param(
            req.training.accounting,
            req.training.optimizer,
            fp32_weights=req.formats.weights_format == "fp32",
            precision=precision,
        )
    moved = {"optimizer": ("gradients", "master weights", "optimizer states")}.get(req.parallelism.offload, ())
    if req.parallelism.offload == "optimizer+params":
        moved = ("gradients", "master weights", "optimizer states", "weights")
    offloaded: dict[str, float] = {}
    for name, bpp in per.items():
        if bpp == 0:
            continue
        val = trainable * bpp / shard
        base_name = name.removeprefix("adapter ")
        if _shard_of(base_name, req.parallelism.zero_stage):
            val /= dp  # the routed experts: / (ep x dp / ep) over EP and the expert-data-parallel ranks, the same
        elif not lora:
            val *= experts
        (offloaded if base_name in moved else comps)[name] = val
    if lora and req.parallelism.offload == "optimizer+params":
        offloaded["frozen base weights"] = comps.pop("frozen base weights")
    return comps, offloaded, trainable


def _paged(comps: dict[str, float], req: MemoryRequest) -> dict[str, float]:
    """A paged optimizer (bitsandbytes): its states leave the GPU's hard need for unified memory, which pages them
    to host RAM when the GPU runs short (none where CPU offload already holds them)."""
    if not req.training.paged_optimizer:
        return {}
    return {f"{k} (paged)": comps.pop(k) for k in [k for k in comps if k.endswith("optimizer states")]}


def _working_buffers(m: ModelArch, req: MemoryRequest) -> dict[str, float]:
    """What the framework holds while a block runs: FSDP's gathered and prefetched blocks, its gradient
    reduce-scatter, a low-precision copy of one block's weights, QLoRA's per-library buffers."""
    out: dict[str, float] = {}
    ep = req.parallelism.ep_or_one  # the block's routed experts: 1 / ep of them on this GPU
    block = (block_params(m) - routed_expert_params(m) / m.num_layers * (1 - 1 / ep)) / req.parallelism.tp
    if req.parallelism.zero_stage == 3:
        out["FSDP gathered block"] = 2.0 * block
        out["FSDP prefetched block"] = 2.0 * block * req.assumptions.fsdp_prefetch_blocks
        grad_bytes = 2.0 if req.training.precision == "bf16" else 4.0
        if not (req.job.mode == "finetune" and req.job.method in ("lora", "qlora")):
            out["FSDP gradient reduce-scatter"] = grad_bytes * block
    if req.training.precision in LOW_PRECISION_LINEAR_BYTES:
        out[f"{req.training.precision.upper()} weight copies"] = (
            2 * LOW_PRECISION_LINEAR_BYTES[req.training.precision] * block
        )
    if req.job.mode == "finetune" and req.job.method == "qlora":
        largest = largest_layer_params(m, decoder_only=True) / req.parallelism.tp
        out["QLoRA dequantised layer"] = 2.0 * largest
        if req.training.qlora_library in ("peft", "bitsandbytes"):
            per = req.assumptions.qlora_bnb_overhead_bytes_per_param
            out["QLoRA bitsandbytes buffers"] = per * params_total(m) / (req.parallelism.tp * req.parallelism.pp)
        if req.training.qlora_library == "peft":
            out["QLoRA 16-bit weights upcast to FP32"] = (
                2.0 * kept_16bit_params(m) / (req.parallelism.tp * req.parallelism.pp)
            )
    return out


def training_budget(m: ModelArch, req: MemoryRequest, batch: int, context: int) -> MemoryBudget:
    af = get_format(req.activation_format)
    asm = req.assumptions
    notes: list[str] = []
    comps, offloaded, trainable = _model_states(m, req, notes)
    paged = _paged(comps, req)
    states = sum(comps.values())
    comps.update(_working_buffers(m, req))
    lora = req.job.mode == "finetune" and req.job.method in ("lora", "qlora")
    setup = _activation_setup(req)
    tokens = float(context) * batch
    acts = layer_activation_bytes(m, tokens, af.bytes_per_value, setup)  # 1F1B: pp micro-batches in flight
    moved = _offload_activations(m, req, acts, setup, notes) if req.training.activation_offload else {}
    comps.update(acts)
    head = lora and req.training.lora_targets == "all-linear+head"
    ce = "fp32" if req.training.cross_entropy == "full" else "chunked"
    comps[f"logits ({ce})"] = logits_bytes(
        m, tokens, req.training.cross_entropy, head, req.parallelism.tp, req.parallelism.cp
    )
    comps.update(overheads(req))
    if asm.framework_reserve_fraction:
        comps["allocator reserve"] = asm.framework_reserve_fraction * sum(comps.values())
    if req.training.precision == "mixed":
        acc = "ZeRO paper (16 B/param)" if req.training.accounting == "zero" else "Hugging Face (18 B/param)"
        notes.append(
            f"Mixed precision, accounting {acc}; optimizer {req.training.optimizer}; "
            f"ZeRO stage {req.parallelism.zero_stage}."
        )
    else:
        notes.append(
            f"Precision recipe {req.training.precision}; optimizer {req.training.optimizer}; "
            f"ZeRO stage {req.parallelism.zero_stage}."
        )
    if m.approximate:
        notes.append("The architecture is derived from a bare parameter count: activations are approximate.")
    per_node = min(req.parallelism.gpus, asm.gpus_per_node)
    copied = sum(moved.values()) * per_node  # activation offloading's pinned buffers
    states_host = sum(offloaded.values()) * per_node * asm.offload_buffer_factor
    paged_host = sum(paged.values()) * per_node  # unified memory: the states' own bytes, no staging buffers
    host = copied + states_host + paged_host
    if moved:
        where = f"{copied / 1e9:,.1f} GB per machine of {counted(per_node, 'GPU')}"
        notes.append(f"Activations copied to host RAM: {where}; the copies' time is in the step.")
    if offloaded:
        notes.append(
            f"Offloaded to host RAM ({', '.join(offloaded)}): {states_host / 1e9:,.1f} GB per machine of "
            f"{counted(per_node, 'GPU')}, "
            f"x{asm.offload_buffer_factor:g} for DeepSpeed's buffers; the optimizer step runs on the CPU, so steps "
            "are slower (the time and cost estimates do not include that)."
        )
    if paged:
        notes.append(
            f"Paged optimizer: the optimizer states ({sum(paged.values()) / 1e9:,.2f} GB per GPU) live in unified "
            f"memory, paged to host RAM when the GPU runs short ({paged_host / 1e9:,.1f} GB per machine of "
            f"{counted(per_node, 'GPU')} at most); the GPU budget above leaves them out, and the step pays the pages "
            "it moves over PCIe where they do not fit beside the rest."
        )
    w_only = comps.get("weights", comps.get("frozen base weights", 0.0))
    runtime = sum(comps.values())
    loading = loading_peak_bytes(m, req, w_only)
    budgets = {"weights only": w_only, "model states": states, "whole runtime": runtime, "loading": loading}
    if loading > runtime:
        notes.append(
            f"Loading the model peaks at {loading / 1e9:,.1f} GB per GPU, above the {runtime / 1e9:,.1f} GB the run "
            "then holds: the GPU must hold the loading peak."
        )
    return MemoryBudget(
        components=comps,
        budgets=budgets,
        gpus=req.parallelism.gpus,
        notes=notes,
        offloaded=offloaded | moved | paged,
        host_bytes_per_node=host,
        host_note=_host_note(offloaded, moved, paged, host, asm.offload_buffer_factor),
    )


def _host_note(offloaded: dict, moved: dict, paged: dict, host_bytes: float, factor: float) -> str | None:
    """What lives in host RAM and what each machine needs for it, in one sentence (the Memory page's; None: nothing
    does): DeepSpeed's offloaded states with its buffer factor, activation offloading's copies, a paged optimizer's
    states."""
    if not (offloaded or moved or paged):
        return None
    names = ", ".join([*offloaded, *moved, *paged])
    how = []
    if offloaded:
        how.append(
            f"DeepSpeed's {factor:g}x buffer for the offloaded states; steps run slower, as the optimizer steps "
            "on the CPU (the time and cost leave that out)"
        )
    if moved:
        how.append("the step time includes the activation copies over PCIe that the passes do not hide")
    if paged:
        how.append(
            "the paged optimizer's states stay on the GPU while it has room and page to host RAM when it runs "
            "short; the step pays the pages moved over PCIe"
        )
    return (
        f"{names} live in host RAM: each machine needs {gb(host_bytes)} of RAM for them ({gib(host_bytes)}). The GPU "
        f"budget above leaves them out; " + "; ".join(how) + "."
    )


OFFLOAD_LAYERS_ON_GPU = 2  # activation offloading: the layer computing and the next layer's copy in flight
_OFFLOADABLE = ("activations", "LoRA adapter activations")


def _activation_setup(req: MemoryRequest) -> ActivationSetup:
    lora = req.job.mode == "finetune" and req.job.method in ("lora", "qlora")
    return ActivationSetup(
        recompute=req.training.recompute,
        recompute_every=req.training.recompute_every,
        flash=req.flash_attention,
        frozen_base=lora,
        lora_targets=req.training.lora_targets if lora else None,
        lora_rank=req.training.lora_rank,
        lora_dropout=req.training.lora_dropout,
        tp=req.parallelism.tp,
        cp=req.parallelism.cp,
        pp=req.parallelism.pp,
        virtual_stages=req.parallelism.virtual_stages_or_one,
    )


def _offload_activations(m: ModelArch, req: MemoryRequest, acts: dict, setup: ActivationSetup, notes: list) -> dict:
    """Activation offloading: of the layers' kept activations the GPU holds OFFLOAD_LAYERS_ON_GPU layers of one
    micro-batch, the rest moves to host RAM (``acts`` is changed in place; the moved bytes are returned)."""
    moved = {}
    for k in _OFFLOADABLE:
        if k in acts:
            keep = min(acts[k], OFFLOAD_LAYERS_ON_GPU * acts[k] / setup.interleaved_factor / m.num_layers)
            moved[f"{k} (offloaded)"], acts[k] = acts[k] - keep, keep
    notes.append(
        f"Activation offloading: the GPU holds {OFFLOAD_LAYERS_ON_GPU} layers' activations, the rest in host RAM."
    )
    return moved


def micro_batch_activation_bytes(m: ModelArch, req: MemoryRequest) -> float:
    """One micro-batch's kept activations on one GPU (its layers / pp): what activation offloading copies to the
    host in the forward and back in the backward (perf/training_traffic.py times the copies)."""
    setup = _activation_setup(req)
    tokens = float(req.context_tokens) * req.batch
    acts = layer_activation_bytes(m, tokens, get_format(req.activation_format).bytes_per_value, setup)
    return sum(acts.get(k, 0.0) for k in _OFFLOADABLE) / setup.interleaved_factor / req.parallelism.pp


def loading_peak_bytes(m: ModelArch, req: MemoryRequest, weights_bytes: float) -> float:
    """Loading the checkpoint: the GPU's share of the weights, plus the largest tensor read in 16 bit before it is
    quantised (QLoRA) or sharded, plus the CUDA context."""
    largest = largest_layer_params(m) * 2.0 / req.parallelism.tp
    return weights_bytes + largest + req.assumptions.cuda_context_bytes
