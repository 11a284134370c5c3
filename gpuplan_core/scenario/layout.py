"""The parts of a scenario that say where and how the job runs: the GPU type and count and how the job is split
over them (``Parallelism``), and the training run (``Training``). The rules of parts.py hold: one frozen model
each, every field's default, bounds and help written once, a field's name unique across the parts.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from ..hardware.catalog import get_gpu
from .fields import (
    MAX_LAYOUT_GPUS,
    Accounting,
    CrossEntropy,
    LoraTargets,
    Offload,
    Optimizer,
    PipelineSchedule,
    Precision,
    QloraLibrary,
    Recompute,
)
from .parts import Part


class Parallelism(Part):
    """The GPU type and count, and how the job is split over them."""

    gpu: str | None = Field(
        None,
        description="A GPU type: only its offers are priced, and the detail views show it. None (Any): the "
        "recommendation searches every GPU type (detail views show an H100 SXM).",
    )
    gpus: int = Field(
        1,
        ge=1,
        le=MAX_LAYOUT_GPUS,
        description="GPUs in the job: tensor parallel x pipeline stages x data-parallel replicas.",
    )
    tp: int = Field(
        1,
        ge=1,
        le=1024,
        description="Tensor parallel: splits every layer across GPUs (must divide the attention heads). Adds two "
        "all-reduces per layer.",
    )
    pp: int = Field(1, ge=1, le=1024, description="Pipeline stages: splits the layers into stages.")
    cp: int = Field(
        1,
        ge=1,
        le=1024,
        description="Context parallel (training): splits each sequence across GPUs (ring attention); divides the "
        "activations, adds the keys' and values' exchange. 1 (the default): the planner tries 1, 2 and 4 for "
        "sequences of 32,768 tokens or more; a degree above 1 is kept.",
    )
    virtual_stages: int | None = Field(
        None,
        ge=1,
        le=64,
        description="Training, pipeline schedule: model chunks per pipeline stage. 1: plain 1F1B; 2 or more: "
        "Megatron's interleaved 1F1B (bubble (pp - 1) / (micro-batches x v), v x the pipeline sends, more "
        "activations held). None (the link's vpp=auto): the planner tries 1, 2 and 4 where the layers divide.",
    )
    pipeline_schedule: PipelineSchedule | None = Field(
        None,
        description="Training, pipeline schedule: 1f1b (one forward, one backward; interleaved with virtual_stages "
        "above 1) or zb-h1 (zero bubble, Qi et al. 2023: each backward split into its input- and weight-gradient "
        "halves, the weight halves filling the bubble: bubble (pp - 1) / micro-batches x (F + B - W) / (F + B + W), "
        "a third of 1F1B's where the three are equal; 1F1B's activation memory; one chunk per stage). None (the "
        "link's pipe=auto): the planner tries both.",
    )
    ep: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="Mixture of experts: expert parallel, the routed experts spread over this many GPUs (all-to-all "
        "of the routed tokens). Training: over the data-parallel group (Megatron style). Serving: a fixed layout, "
        "one replica of ep GPUs at tensor parallel 1 with attention data-parallel (1: tensor parallel only); "
        "ignored, and said so, for a dense model or an ep that does not divide the experts. None (the link's "
        "ep=auto): the planner tries the powers of 2 that divide the experts (training: and the data-parallel "
        "ranks; serving: 2, 4 and 8 GPUs of one machine).",
    )
    zero_stage: int = Field(
        0,
        ge=0,
        le=3,
        description="ZeRO: 1 shards optimizer states, 2 also gradients, 3 also weights over the data-parallel GPUs.",
    )
    zero_auto: bool = Field(
        True,
        description="Training: the planner searches ZeRO stages 0-3 with the layout and keeps the cheapest (the "
        "link's zero=auto). A stage given explicitly (zero_stage, the link's zero=0-3) is kept, and the cheaper "
        "stage is shown beside it.",
    )
    shard_gpus: int | None = Field(
        None,
        ge=0,
        le=MAX_LAYOUT_GPUS,
        description="Training at ZeRO-3 / FSDP, hybrid sharding (HSDP): the states sharded over groups of this many "
        "data-parallel ranks and replicated across the groups (gathers and reduce-scatters inside a group, an "
        "all-reduce of each shard's gradients across groups). 0: sharded over all the ranks (plain ZeRO-3). None "
        "(the link's hsdp=auto): the planner tries both, a group being one 8-GPU machine's data-parallel ranks.",
    )
    offload: Offload = Field(
        "none",
        description="DeepSpeed can keep the optimizer states, master weights and gradients in the host's RAM (and, "
        "at ZeRO-3, the weights too): far less GPU memory, slower steps. The app shows the host RAM each machine "
        "then needs.",
    )

    @model_validator(mode="before")
    @classmethod
    def _zero_given(cls, data):
        """A ZeRO stage given without saying whether to search is a stage the user set."""
        if isinstance(data, dict) and "zero_stage" in data and "zero_auto" not in data:
            return {**data, "zero_auto": False}
        return data

    @model_validator(mode="after")
    def _layout(self) -> Parallelism:
        if self.gpus % (self.tp * self.pp * self.cp):
            n = self.tp * self.pp * self.cp
            what = "tp x pp x cp" if self.cp > 1 else "tp x pp"
            raise ValueError(f"gpus: {self.gpus} must be a multiple of {what} = {n}")
        if self.pipeline_schedule == "zb-h1" and (self.virtual_stages or 1) > 1:
            raise ValueError("pipeline_schedule: zb-h1 runs one model chunk per stage (virtual_stages 1 or auto)")
        if self.gpu is not None:
            get_gpu(self.gpu)
        return self

    @property
    def virtual_stages_or_one(self) -> int:
        """The model chunks per stage a memory budget or step is taken at (1 when searched and not yet chosen)."""
        return self.virtual_stages or 1

    def shard_group(self, ranks: int) -> int:
        """The data-parallel ranks ZeRO-3 shards over out of ``ranks``: the HSDP group where one is set, else all."""
        return min(ranks, self.shard_gpus) if self.zero_stage == 3 and self.shard_gpus else ranks

    def serving_ep(self, m) -> int | None:
        """Serving a model ``m`` (a ModelArch): the expert-parallel degree the user set, honoured as a fixed layout
        (1: tensor parallel only; above 1: one replica of ep GPUs at tp = pp = 1, attention data-parallel); None
        where unset (the search tries EP 2, 4, 8) or ignored (``serving_ep_problem`` says why)."""
        return self.ep if self.ep is not None and self.serving_ep_problem(m) is None else None

    def serving_ep_problem(self, m) -> str | None:
        """Why serving ignores the expert parallel set here (None: it honours it, or none is set)."""
        ep = self.ep
        if ep is None:
            return None
        if not m.is_moe:
            return f"Expert parallel {ep} is for mixture-of-experts models; {m.name} is dense, so serving ignores it."
        if m.num_experts % ep:
            return f"Expert parallel {ep} does not divide {m.name}'s {m.num_experts} experts; serving ignores it."
        if ep > 1 and (self.tp, self.pp) != (1, 1):
            return (
                f"Expert parallel {ep} serves with attention data-parallel at tensor parallel 1 and one stage; with "
                f"tensor parallel {self.tp} and {self.pp} stage(s) set, serving ignores it."
            )
        return None

    @property
    def ep_or_one(self) -> int:
        """The expert-parallel degree a budget or step is taken at (1 when searched and not yet chosen)."""
        return self.ep or 1

    @property
    def effective_offload(self) -> Offload:
        """What is offloaded: parameters only at ZeRO-3 (elsewhere the optimizer alone; Scenario.warnings says so)."""
        return "optimizer" if self.offload == "optimizer+params" and self.zero_stage != 3 else self.offload


class Training(Part):
    """A training or fine-tuning run."""

    training_tokens: float | None = Field(
        None,
        ge=1_000,
        le=1e16,
        description="Tokens processed in the run (epochs x dataset). Pre-training: Chinchilla's rule of thumb is 20 "
        "per parameter (100 billion unless given). Fine-tuning: examples x tokens per example x epochs, 100 million "
        "(unless given) is about 50,000 examples of 1,000 tokens, twice. None: 20 per parameter.",
    )
    mfu: float | None = Field(
        None,
        ge=0.01,
        le=1,
        description="Share of the dense BF16 peak the run achieves (model FLOPs utilization). None: predicted from "
        "the step's roofline, its communication and pipeline bubbles (published runs: 0.18-0.75, median 0.45); "
        "a value overrides the prediction.",
    )
    precision: Precision = Field(
        "mixed",
        description="Precision recipe. Mixed: BF16 compute with an FP32 master copy and FP32 Adam states (Megatron, "
        "torchtitan; pre-training's default). BF16: weights, gradients and AdamW states in BF16, no master copy "
        "(torchtune, TRL with a BF16 model; fine-tuning's default). FP8 / MXFP8 / NVFP4: mixed precision with the "
        "linear layers' matmuls in that format (torchao float8, Blackwell). FP32: plain single precision.",
    )
    cross_entropy: CrossEntropy = Field(
        "full",
        description="The loss: full holds the FP32 logits of every token; chunked (torchtune's default) keeps BF16 "
        "logits and upcasts 8 chunks one at a time.",
    )
    activation_offload: bool = Field(
        False,
        description="Activation offloading (Megatron-Core, torchtune): the activations kept for backward copied to "
        "host RAM as the forward goes and back for the backward, the GPU holding two layers' worth; the copies cross "
        "PCIe, hidden behind the pass they run beside where it is the longer.",
    )
    recompute_every: int = Field(
        1,
        ge=1,
        le=1000,
        description="With full checkpointing: checkpoint every k-th layer (1: every layer; 2: half of them, the "
        "others keep their activations).",
    )
    lora_targets: LoraTargets = Field(
        "all-linear",
        description="Which linear layers get adapters: q and v (PEFT's and litgpt's default), all attention "
        "projections, all linear layers (QLoRA paper, torchtune with MLP), or all linear plus the LM head.",
    )
    lora_dropout: float = Field(
        0.05, ge=0, le=0.9, description="Adapter dropout: above 0 each adapter keeps its own copy of its input."
    )
    qlora_library: QloraLibrary = Field(
        "peft",
        description="QLoRA's 4-bit library: bitsandbytes through PEFT (Hugging Face: prepare_model_for_kbit_training "
        "upcasts the unquantised weights to FP32), bitsandbytes alone (litgpt, Lightning), or torchao NF4 (torchtune).",
    )
    accounting: Accounting = Field(
        "zero", description="Memory accounting: two published rules for mixed-precision Adam; the app says which."
    )
    optimizer: Optimizer = Field(
        "adamw", description="AdamW keeps two FP32 states per parameter (8 bytes), 8-bit Adam 2, SGD 4."
    )
    paged_optimizer: bool = Field(
        False,
        description="Paged optimizer (bitsandbytes' paged AdamW / paged 8-bit AdamW, the QLoRA paper's): the "
        "optimizer states in CUDA unified memory, paged to host RAM when the GPU runs short, so they need not fit "
        "the GPU beside the activations; where they do not, each optimizer step pages them in and out over PCIe.",
    )
    recompute: Recompute = Field(
        "full",
        description="Activation checkpointing. Full: keep only each layer's input and recompute the rest in the "
        "backward pass (one more forward pass, far less memory; torchtune's and litgpt's setting). Selective, per op "
        "(torchtitan's default): keep the matmul and attention outputs, every other matmul and the elementwise ops "
        "recomputed (about a third of the activations, half a forward pass more). None: keep every activation.",
    )
    lora_rank: int = Field(
        16, ge=1, le=4096, description="Rank of the adapters (LoRA and QLoRA): adapter parameters grow with it."
    )
    recompute_auto: bool = Field(
        True,
        description="Training: the planner searches activation checkpointing (none, selective, full) with the ZeRO "
        "stage, layout and micro-batch and keeps the cheapest that fits (memory vs speed; the link's recompute=auto, "
        "the default). False (a recompute given explicitly): the recompute set is kept, and a cheaper policy is "
        "shown beside it.",
    )
    deadline_hours: float | None = Field(None, gt=0, le=1e6, description="The run's completion-time target.")
    default_deadline_hours: float | None = Field(
        720.0,
        gt=0,
        le=1e6,
        description="Without a GPU count or a deadline: the wall time the planner aims at (30 days), growing the "
        "count to finish within it; the smallest count that holds the job is stated as the alternative. Never a "
        "miss. None: the smallest count that holds the job.",
    )
    overhead_factor: float = Field(
        0.3,
        ge=0,
        le=2,
        description="Compute spent on top of the final run: failed runs and sweeps (industry estimates 30-50%).",
    )

    @model_validator(mode="before")
    @classmethod
    def _recompute_given(cls, data):
        """A recompute policy given without saying whether to search is a policy the user set (as a ZeRO stage)."""
        if isinstance(data, dict) and "recompute" in data and "recompute_auto" not in data:
            return {**data, "recompute_auto": False}
        return data
