"""The memory question and its parts: the request, the assumptions, the budget's shape, the weights' split
between the chosen format and 16 bit, and the overheads every budget carries. Formulas: memory/budget.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..common.units import GiB
from ..model.arch import (
    ModelArch,
    _ceil_div,
    kept_16bit_params,
    params_total,
)
from ..model.formats import get_format
from ..scenario.deployment import RuntimeAssumptions
from ..scenario.fields import (
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
)
from ..scenario.layout import Parallelism, Training
from ..scenario.parts import Formats, Job, Request


class Assumptions(BaseModel):
    """Named, adjustable overheads with their defaults' sources (see Methodology). The memory a job may fill is the
    Scenario's own (``MemoryRequest.runtime.memory_utilization``), not repeated here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
    stated_engine_version: str | None = Field(
        None,
        max_length=200,
        description="the engine's version as a measurement states it ('vLLM 0.19.0') or the scenario's release "
        "line ('0.6'); None: current release",
    )
    engine_memory_fraction: float | None = Field(
        None,
        gt=0,
        le=1,
        description="the engine's own memory knob (SGLang mem_fraction_static, TensorRT-LLM "
        "free_gpu_memory_fraction); None: the engine's default (vLLM: memory_utilization)",
    )
    enforce_eager: bool = Field(False, description="vLLM --enforce-eager: no CUDA graphs captured")
    chunked_prefill: bool = Field(False, description="vLLM V0 --enable-chunked-prefill (V1 always chunks)")
    kv_block_tokens: int = Field(16, ge=1, le=4096, description="paged KV-cache block size (vLLM default 16)")
    framework_reserve_fraction: float = Field(
        0.0, ge=0, le=0.5, description="training: allocator fragmentation as a share of the rest"
    )
    fsdp_prefetch_blocks: int = Field(
        1, ge=0, le=8, description="ZeRO-3 / FSDP: blocks gathered ahead of the one running (FSDP2 prefetches 1)"
    )
    offload_buffer_factor: float = Field(
        1.5,
        ge=1,
        le=4,
        description="host memory for offloaded states x this (DeepSpeed estimators' additional_buffer_factor)",
    )
    qlora_bnb_overhead_bytes_per_param: float = Field(
        0.5,
        ge=0,
        le=4,
        description="QLoRA with bitsandbytes: working memory above the NF4 storage per base parameter (fitted by "
        "bench/fit_training_memory.py on two thirds of the measured bitsandbytes QLoRA runs: held out 11% off at the "
        "median, 34% without it)",
    )
    gpus_per_node: int = Field(8, ge=1, le=64, description="GPUs sharing one host's RAM (offload)")


# The Scenario's parts the memory engine reads, by the attribute a MemoryRequest holds them under.
MEMORY_PARTS: dict[str, type[BaseModel]] = {
    "job": Job,
    "formats": Formats,
    "parallelism": Parallelism,
    "training": Training,
    "runtime": RuntimeAssumptions,
}
PART_OF: dict[str, str] = {f: p for p, cls in MEMORY_PARTS.items() for f in cls.model_fields}  # flat name -> part
_BATCH = Request.model_fields["batch"]


class MemoryRequest(BaseModel):
    """What the user asks about, as the memory engine reads it: the Scenario's own parts (its job, formats, layout,
    training settings and runtime: one default, one bound, one description each, in scenario/), the lengths the
    budget is taken at, and the memory engine's own assumptions. ``memory_request(sc)`` builds it from a scenario.

    Flat names route to their part, as in ``Scenario``: ``MemoryRequest(tp=2, gpus=2, kv_format="fp8")`` and
    ``req.model_copy(update={"tp": 2, "gpus": 2})`` set ``req.parallelism.tp``, ``req.formats.kv_format``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job: Job = Job()
    formats: Formats = Formats()
    parallelism: Parallelism = Parallelism()
    training: Training = Training()
    runtime: RuntimeAssumptions = RuntimeAssumptions()
    # The lengths the budget is taken at (derived from the Scenario's request, not fields of it):
    context_tokens: int = Field(
        Request.model_fields["sequence_tokens"].default,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description="a sequence's tokens at its longest: input + output (inference), the training sequence length",
    )
    batch: int = Field(
        _BATCH.default,
        ge=1,
        le=MAX_BATCH,
        description="sequences held at once: the Scenario's batch resolved ('max' read as 1) or a micro-batch",
    )
    prefill_tokens: int | None = Field(None, ge=1, le=MAX_CONTEXT_TOKENS, description="prompt tokens (inference)")
    # The memory engine's own:
    activation_format: str = "bf16"
    flash_attention: bool = True
    assumptions: Assumptions = Assumptions()

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data):
        """Flat names (``tp``, ``kv_format``, ``engine``) go to their part, over the part when it is given too."""
        if not isinstance(data, dict) or not any(k in PART_OF for k in data):
            return data
        out = {k: v for k, v in data.items() if k not in PART_OF}
        for k, v in data.items():
            if k in PART_OF:
                part = out.get(PART_OF[k], {})
                out[PART_OF[k]] = {**(part.model_dump() if isinstance(part, BaseModel) else part), k: v}
        return out

    def model_copy(self, *, update=None, deep: bool = False) -> MemoryRequest:
        """A copy with these fields changed, flat names into their part (not validated, as pydantic's)."""
        if update and any(k in PART_OF for k in update):
            nested = {k: v for k, v in update.items() if k not in PART_OF}
            for k, v in update.items():
                if k in PART_OF:
                    p = PART_OF[k]
                    nested.setdefault(p, {})[k] = v
            update = {
                k: getattr(self, k).model_copy(update=v) if k in MEMORY_PARTS and isinstance(v, dict) else v
                for k, v in nested.items()
            }
        return super().model_copy(update=update, deep=deep)

    @model_validator(mode="after")
    def _check(self) -> MemoryRequest:
        try:
            get_format(self.activation_format)
        except ValueError as exc:
            raise ValueError(f"activation_format: {exc}") from None
        par = self.parallelism
        if par.offload == "optimizer+params" and par.zero_stage != 3:
            raise ValueError("offload: parameters are offloaded only at ZeRO stage 3 (choose stage 3 or 'optimizer')")
        return self

    @property
    def dp(self) -> int:
        par = self.parallelism
        return par.gpus // (par.tp * par.pp * par.cp)


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
    host_note: str | None = None  # what lives in host RAM and what each machine needs for it, in one sentence

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
    "LoRA adapter activations": "each adapter's input after dropout and its rank-r output (PEFT, torchtune)",
    "recompute working set": "one layer's tensors recomputed during its backward pass",
    "FSDP gathered block": "one transformer block's BF16 weights gathered while it runs (FSDP2, ZeRO-3)",
    "FSDP prefetched block": "the next block gathered ahead (FSDP2 prefetches one; adjustable)",
    "FSDP gradient reduce-scatter": "one block's unsharded gradients before they are reduce-scattered",
    "FP8 weight copies": "one block's weights and their transposes cast to FP8 (torchao float8)",
    "MXFP8 weight copies": "one block's weights and their transposes in MXFP8 with a scale per 32 values",
    "NVFP4 weight copies": "one block's weights and their transposes in NVFP4 with a scale per 16 values",
    "QLoRA dequantised layer": "one linear layer dequantised to BF16 for its matmul (bitsandbytes, torchao)",
    "QLoRA bitsandbytes buffers": "bitsandbytes' working memory above NF4 storage, fitted per base parameter on "
    "measured QLoRA runs",
    "QLoRA 16-bit weights upcast to FP32": "PEFT prepare_model_for_kbit_training casts the unquantised weights "
    "(embeddings, LM head, norms) to FP32",
}


def largest_layer_params(m: ModelArch, decoder_only: bool = False) -> int:
    """Parameters of the largest single weight matrix (DeepSpeed's 'largest layer'): the embedding or LM head for
    most models, else an MLP or expert projection; ``decoder_only``: the largest inside a decoder layer."""
    inter = max(m.intermediate_size or 0, m.expert_intermediate_size or 0)
    mlp = m.hidden_size * inter
    return mlp if decoder_only else max(m.vocab_size * m.hidden_size, mlp)


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


def overheads(req: MemoryRequest) -> dict[str, float]:
    asm = req.assumptions
    out = {"CUDA context": asm.cuda_context_bytes}
    if req.parallelism.tp > 1:
        out["communication buffers"] = asm.comm_buffer_bytes
    return out


def stage_fraction(m: ModelArch, pp: int) -> float:
    return _ceil_div(m.num_layers, pp) / m.num_layers if pp > 1 else 1.0
