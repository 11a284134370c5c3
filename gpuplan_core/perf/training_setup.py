"""What a training step is computed from (perf/training_step.py): the step model's constants
(``TrainingEfficiency``, fitted by bench/fit_training.py) and how one step is run (``StepLayout``: the layout, the
micro-batch, the recipe and the links). Apart from the step so that its traffic (training_traffic.py) reads them
without importing the step."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


class TrainingEfficiency(BaseModel):
    """The step model's constants; defaults are the fitted ones (data/training_calibration.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gemm_max: float = Field(0.72, gt=0, le=1, description="large training GEMMs' share of the dense BF16 peak")
    gemm_max_by_architecture: dict[str, float] = Field(
        default_factory=dict, description="gemm_max per GPU generation (Ampere, Hopper, Blackwell) where fitted"
    )
    gemm_half_width: float = Field(
        600.0, gt=0, le=1e6, description="GEMM width per GPU (hidden / tp) at which it reaches half of gemm_max"
    )
    fp8_speedup: float = Field(1.45, ge=1, le=4, description="FP8 / MXFP8 linear layers: GEMM time divided by this")
    fp8_speedup_by_architecture: dict[str, float] = Field(
        default_factory=dict, description="fp8_speedup per GPU generation where measured"
    )
    attention_efficiency: float = Field(0.45, gt=0, le=1, description="FlashAttention forward+backward share of peak")
    elementwise_bytes_per_token_layer: float = Field(
        60.0, ge=0, le=1e4, description="elementwise traffic per token per layer, in units of hidden x 2 bytes"
    )
    layer_overhead_s: float = Field(
        1.5e-4, ge=0, le=0.1, description="fixed cost per layer per micro-batch (launches, small kernels)"
    )
    overlap: float = Field(0.8, ge=0, le=1, description="share of data-parallel traffic that compute hides")
    network_efficiency: float = Field(0.7, gt=0, le=1, description="achieved share of link bandwidth in collectives")
    moe_expert_efficiency: float = Field(
        1.0, gt=0, le=1, description="routed experts' grouped GEMMs (with routing and permutes) vs a dense GEMM's"
    )
    tp_overlap: float = Field(
        0.0, ge=0, le=1, description="share of tensor-parallel traffic hidden behind the GEMMs where overlapped"
    )
    tp_overlap_by_kernels: dict[str, float] = Field(
        default_factory=dict, description="tp_overlap per kernel stack (TE userbuffers, PyTorch async TP) where fitted"
    )
    attention_efficiency_by_kernels: dict[str, float] = Field(
        default_factory=dict, description="attention_efficiency per kernel stack (KERNEL_STACKS) where fitted"
    )
    elementwise_by_kernels: dict[str, float] = Field(
        default_factory=dict, description="elementwise_bytes_per_token_layer per kernel stack where fitted"
    )


@dataclass(frozen=True)
class StepLayout:
    """How one step is run: the layout, the micro-batch, the recipe and the links."""

    gpus: int
    tp: int = 1
    pp: int = 1
    cp: int = 1
    zero_stage: int = 0
    micro_batch: int = 1
    seq_len: int = 4096
    global_batch_tokens: float = 4 * 1024 * 1024
    precision: str = "mixed"  # mixed | bf16 | fp8 | mxfp8 | nvfp4 | fp32
    frozen_base: bool = False  # LoRA / QLoRA: no weight gradients of the base
    recompute: str = "none"  # none | selective | full
    recompute_every: int = 1
    virtual_stages: int = 1
    pipeline_schedule: str = "1f1b"  # 1f1b (interleaved where virtual_stages > 1) | zb-h1 (zero bubble, Qi et al.)
    ep: int = 1  # expert parallel: the routed experts spread over this many GPUs (tokens sent all-to-all)
    shard_gpus: int = 0  # ZeRO-3 hybrid sharding (HSDP): data-parallel ranks per shard group (0: all of them)
    offload_bytes_per_micro_batch: float = 0.0  # activation offloading: one micro-batch's activations to the host
    paged_bytes_per_step: float = 0.0  # paged optimizer: the states that do not fit the GPU, paged each step
    adapter_params: float = 0.0  # LoRA / QLoRA: the adapters' parameters (memory.training.lora_params)
    adapter_rank: int = 16  # their rank: the width of their matmuls
    dequant_bytes_per_param: float = 0.0  # QLoRA: HBM bytes per base linear parameter per pass to dequantise it
    gpus_per_node: int = 8
    inter_node_gbit_s_per_gpu: float = 400.0  # the network per GPU across machines
    packed_example_tokens: int | None = None  # examples packed into a sequence: attention runs within each
    tp_comm_overlap: bool = False  # tensor-parallel collectives overlapped with the GEMMs (TE userbuffers, async TP)
    kernels: str = "pytorch"  # the kernel stack (KERNEL_STACKS): its attention kernel and elementwise fusion

    @property
    def attention_tokens(self) -> int:
        """The tokens each token attends over (at most): the sequence's, or a packed example's own length."""
        return min(self.seq_len, self.packed_example_tokens or self.seq_len)

    @property
    def dp(self) -> int:
        return max(1, self.gpus // (self.tp * self.pp * self.cp))

    @property
    def micro_batches(self) -> int:
        """Micro-batches each data-parallel rank runs per step (gradient accumulation x pipeline micro-batches)."""
        per_rank = self.global_batch_tokens / (self.dp * self.micro_batch * self.seq_len)
        return max(1, round(per_rank))
