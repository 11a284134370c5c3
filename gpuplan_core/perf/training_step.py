"""One training step on one GPU, from the roofline of its parts, and the MFU that follows (an output, not a guess).

For a layout of tp x pp x cp x dp GPUs, a micro-batch of b sequences of s tokens, and m micro-batches per GPU per
step (global batch / (b x dp)):

    matmuls      = (2 forward + 4 backward, 2 with a frozen base + recompute) x matmul params / (tp pp) x b s
                   / (dense peak x GEMM efficiency(h / tp))          GEMM efficiency = e_max x w / (w + w_half)
                   (e_max and the FP8 speedup per GPU generation measured where data/kernel_times has the GPU)
    attention    = 4 x layers / pp x s x (heads x head_dim) / tp / cp x b s x (1 forward + 2.5 backward + recompute)
                   / 2 (causal) / (BF16 peak x attention efficiency); examples packed into a sequence attend
                   within themselves: s is then an example's length (data/training_packed_samples.json)
    kernel stack = attention efficiency, elementwise traffic and tensor-parallel overlap differ by stack: Megatron-Core
                   with Transformer Engine ('megatron') or PyTorch FSDP with FlashAttention ('pytorch', the default)
    elementwise  = norms, activations, rotary, residuals: bytes moved per token per layer / HBM bandwidth
    context par. = ring attention: each rank passes its keys and values (b s / cp x 2 kv-width x 2 bytes) to the
                   next cp - 1 times per layer, forward and twice in backward; not hidden
    experts      = MoE: the routed experts' matmuls at the width of one expert x a fitted MoE efficiency; with
                   expert parallelism, 4 all-to-alls of b s x k x h x 2 bytes per MoE layer (dispatch, combine,
                   forward and backward)
    tensor par.  = 2 all-reduces of b s h x 2 bytes per layer forward, 2 backward (+2 recompute), over NVLink; where
                   overlapped with the GEMMs (TE userbuffers, async TP) the stack's overlap share is hidden
    data par.    = gradients all-reduced (DDP, ZeRO-1/2) or weights all-gathered twice and gradients
                   reduce-scattered (ZeRO-3 / FSDP) per step, over NVLink inside a machine or the network across;
                   the part that compute does not hide (overlap share) is exposed
    pipeline     = bubble (pp - 1) / (m x virtual stages) of the compute (1F1B: v = 1; Megatron's interleaved 1F1B
                   with v model chunks per stage, Narayanan et al. 2021); zero bubble ZB-H1 (Qi et al. 2023, v = 1):
                   (pp - 1) / m x (compute - 2 x W), W the weight-gradient matmuls (the bubble (p - 1)(F + B - W)
                   against 1F1B's (p - 1)(F + B + W): a third where F = B = W); and the sends between stages: 2 x v
                   x b s / cp x h x 2 bytes / tp per micro-batch (training_traffic.py)
    offloading   = activation offloading: a micro-batch's kept activations over PCIe to the host and back, what
                   the forward and backward beside them do not hide (training_traffic.py)
    paging       = a paged optimizer's states that do not fit the GPU, in and out over PCIe once a step
    optimizer    = the optimizer's read and write of its states over HBM, once per step
    adapters     = LoRA / QLoRA: (6 + 2 recompute) x adapter params / (tp pp) x b s at the GEMM efficiency of
                   their rank's width (more targets, more time; the frozen base has no weight-gradient matmuls)
    dequantise   = QLoRA: (forward + backward + recompute) x the base's linear params / (tp pp) x bytes per
                   param per pass (by library, data/training_qlora_dequantization.json) / HBM bandwidth, per
                   micro-batch (per weight, not per token)
    step         = m x (matmuls + attention + elementwise + tensor par. + a fixed cost per layer) x (1 + bubble)
                   + exposed data par. + optimizer + paging + m x (dequantise + pipeline sends + offloading)
    MFU          = 6 x active params x tokens + attention FLOPs (no recompute) / (step x GPUs x dense BF16 peak)

The efficiency constants are fitted on published runs' tokens per second per GPU (bench/fit_training.py, a third
of each publisher's runs held out; data/training_calibration.json holds them with the held-out error).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from ..common.data import DATA_DIR
from ..hardware.catalog import GPU
from ..model.arch import ModelArch, input_embedding_params, params_active, params_total, routed_expert_params
from .training_setup import StepLayout, TrainingEfficiency
from .training_traffic import (
    activation_offload_s,
    data_parallel_s,
    exchange_s,
    local_params,
    paged_optimizer_s,
    pipeline_sends_s,
)

CALIBRATION_FILE = "training_calibration.json"


@lru_cache(maxsize=1)
def fitted_efficiency() -> TrainingEfficiency:
    """The constants data/training_calibration.json holds (the defaults where it is missing)."""
    path = DATA_DIR / CALIBRATION_FILE
    if not path.exists():
        return TrainingEfficiency()
    return TrainingEfficiency(**json.loads(path.read_text())["constants"])


DEFAULT_BAND = 0.25  # before a calibration: the prediction's relative band


@lru_cache(maxsize=2)
def training_band(moe: bool = False) -> float:
    """The relative band of a predicted MFU: the 80th percentile of the held-out runs' |error| (the calibration
    file's), so four in five held-out runs fall inside it; mixture-of-experts models have their own."""
    path = DATA_DIR / CALIBRATION_FILE
    if not path.exists():
        return DEFAULT_BAND
    cal = json.loads(path.read_text())
    if moe:
        return float(cal["held_out"]["mixture of experts"]["p80_abs_error"])
    return float(cal.get("band_relative", DEFAULT_BAND))


@dataclass(frozen=True)
class TrainingStep:
    """One step's time by part (seconds, per GPU) and what follows from it."""

    matmul_s: float
    attention_s: float
    elementwise_s: float
    tensor_parallel_s: float
    layer_overhead_s: float
    bubble_s: float
    data_parallel_exposed_s: float
    optimizer_s: float
    tokens_per_step: float  # across all GPUs
    model_flops_per_step: float  # 6 N D + attention, no recompute, across all GPUs
    gpus: int
    peak_flops_per_s: float
    moe: bool = False  # a mixture-of-experts model (its own, wider band)
    dequant_s: float = 0.0  # QLoRA: dequantising the 4-bit base before each pass's matmuls
    pipeline_sends_s: float = 0.0  # activations and their gradients sent between stages, v x with interleaving
    offload_s: float = 0.0  # activation offloading: the copies to the host and back not hidden behind compute
    paging_s: float = 0.0  # paged optimizer: its states that do not fit the GPU, paged in and out once a step

    @property
    def step_s(self) -> float:
        return (
            self.matmul_s
            + self.attention_s
            + self.elementwise_s
            + self.tensor_parallel_s
            + self.layer_overhead_s
            + self.bubble_s
            + self.data_parallel_exposed_s
            + self.optimizer_s
            + self.dequant_s
            + self.pipeline_sends_s
            + self.offload_s
            + self.paging_s
        )

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.tokens_per_step / self.step_s / self.gpus

    @property
    def mfu(self) -> float:
        return self.model_flops_per_step / (self.step_s * self.gpus * self.peak_flops_per_s)

    def parts(self) -> dict[str, float]:
        """Named seconds per step, for the why-chain and the chart."""
        return (
            {
                "matmuls": self.matmul_s,
                "attention": self.attention_s,
                "elementwise ops": self.elementwise_s,
                "tensor- and context-parallel traffic": self.tensor_parallel_s,
                "per-layer fixed cost": self.layer_overhead_s,
                "pipeline bubble": self.bubble_s,
                "data-parallel traffic not hidden": self.data_parallel_exposed_s,
                "optimizer step": self.optimizer_s,
            }
            | ({"4-bit base dequantised": self.dequant_s} if self.dequant_s else {})
            | ({"pipeline sends": self.pipeline_sends_s} if self.pipeline_sends_s else {})
            | ({"activation copies to the host": self.offload_s} if self.offload_s else {})
            | ({"optimizer states paged over PCIe": self.paging_s} if self.paging_s else {})
        )


def model_flops_per_token(m: ModelArch, seq_len: int, frozen_base: bool = False) -> float:
    """6 x active matmul parameters + causal attention 6 x layers x s x (heads x head_dim) (4 with a frozen base:
    no weight gradients), the FLOPs a published MFU counts."""
    attn_width = m.num_attention_heads * (m.v_head_dim if m.is_mla else m.d)
    c = 4.0 if frozen_base else 6.0
    return c * (params_active(m) - input_embedding_params(m)) + c * m.num_layers * seq_len * attn_width


def low_precision_runs(gpu: GPU, precision: str) -> bool:
    """Whether the GPU has tensor cores for the recipe's linear-layer format: FP8 from Ada / Hopper / CDNA3 on,
    MXFP8 and NVFP4 on Blackwell only. Elsewhere the recipe runs its matmuls at BF16 speed."""
    if precision == "fp8":
        return gpu.fp8_dense_tflops is not None
    if precision in ("mxfp8", "nvfp4"):
        return gpu.architecture == "Blackwell"
    return False


def _matmul_s(m: ModelArch, gpu: GPU, lay: StepLayout, eff: TrainingEfficiency, tokens: float) -> tuple[float, float]:
    """One micro-batch's matmuls: forward, backward (input gradients only with a frozen base) and recompute, the
    dense part at a GEMM efficiency that grows with the width per GPU, the routed experts as wide as one expert; and
    the weight-gradient matmuls among them (2 of the passes of each trained weight, none of a frozen base's)."""
    peak = gpu.dense_peak_flops("bf16")[0]
    shard = lay.tp * lay.pp
    # recompute's extra forward share: full = one more forward, selective = half the matmuls, every k-th layer: 1/k
    extra = {"none": 0.0, "selective": 0.5}.get(lay.recompute, 1.0 / max(1, lay.recompute_every))
    passes = (2.0 if lay.frozen_base else 4.0) + 2.0 * (1.0 + extra)  # backward + forward (+ recompute), x N tokens
    gemm_max = eff.gemm_max_by_architecture.get(gpu.architecture, eff.gemm_max)
    fp8 = eff.fp8_speedup_by_architecture.get(gpu.architecture, eff.fp8_speedup)
    speed = fp8 if low_precision_runs(gpu, lay.precision) else 1.0

    def at_width(w: float) -> float:
        return peak * gemm_max * w / (w + eff.gemm_half_width) * speed

    expert = routed_expert_params(m, active_only=True)
    dense = params_active(m) - input_embedding_params(m) - expert
    weights = 0.0 if lay.frozen_base else 2.0  # of the passes: the weight gradients'
    one = dense / shard * tokens / at_width(m.hidden_size / lay.tp)  # one pass of the dense matmuls
    t, w = passes * one, weights * one
    if lay.adapter_params:  # adapters: forward, input and weight gradients (+ recompute), as wide as their rank
        one = lay.adapter_params / shard * tokens / at_width(lay.adapter_rank)
        t, w = t + (6.0 + 2.0 * extra) * one, w + 2.0 * one
    if expert:
        one = expert / shard * tokens / (at_width(m.expert_intermediate_size) * eff.moe_expert_efficiency)
        t, w = t + passes * one, w + weights * one
    return t, w


def bubble_s(lay: StepLayout, compute_s: float, weight_grad_s: float) -> float:
    """The pipeline bubble of a step whose micro-batches take ``compute_s`` on one GPU, ``weight_grad_s`` of it the
    weight-gradient matmuls: 1F1B (pp - 1) / (m x v) of the compute; ZB-H1 (pp - 1) / m of (compute - 2 x W), the
    weight-gradient halves filling the warm-up and cool-down slots (Qi et al. 2023: (p - 1)(F + B - W))."""
    if lay.pp <= 1:
        return 0.0
    if lay.pipeline_schedule == "zb-h1":
        return max(0.0, compute_s - 2.0 * weight_grad_s) * (lay.pp - 1) / lay.micro_batches
    return compute_s * (lay.pp - 1) / (lay.micro_batches * lay.virtual_stages)


def _attention_s(m: ModelArch, gpu: GPU, lay: StepLayout, eff: TrainingEfficiency, tokens: float) -> float:
    """FlashAttention: causal 2 x layers x s x (heads x head_dim) FLOPs per token forward, 2.5 x that backward."""
    width = m.num_attention_heads * (m.v_head_dim if m.is_mla else m.d)
    forward = 2 * m.num_layers / lay.pp * lay.attention_tokens * width / lay.tp * tokens
    passes = 1.0 + 2.5 + (1.0 if lay.recompute in ("full", "selective") else 0.0) / max(1, lay.recompute_every)
    attn_eff = eff.attention_efficiency_by_kernels.get(lay.kernels, eff.attention_efficiency)
    return forward * passes / (gpu.dense_peak_flops("bf16")[0] * attn_eff)


def _optimizer_s(m: ModelArch, gpu: GPU, lay: StepLayout) -> float:
    """The optimizer reads and writes its states (16 B/param mixed, 8 pure BF16) once a step over HBM."""
    if lay.frozen_base:
        return 0.0
    state_bytes = {"bf16": 8.0, "fp32": 16.0}.get(lay.precision, 16.0)
    held = params_total(m) / (lay.tp * lay.pp) / (lay.dp * lay.cp) if lay.zero_stage >= 1 else local_params(m, lay)
    return 2 * state_bytes * held / (gpu.bandwidth_gb_s * 1e9)


DEQUANT_FILE = "training_qlora_dequantization.json"


@lru_cache(maxsize=4)
def dequant_bytes_per_param(library: str) -> float:
    """QLoRA: HBM bytes per base linear parameter per pass that dequantising the 4-bit base costs, by library
    (data/training_qlora_dequantization.json: bitsandbytes measured; PEFT runs it; torchao unmeasured, the same)."""
    libs = json.loads((DATA_DIR / DEQUANT_FILE).read_text())["libraries"]
    row = libs[library]
    return float(
        libs[row["same_as"]]["bytes_per_param_per_pass"] if "same_as" in row else row["bytes_per_param_per_pass"]
    )


def dequant_s(m: ModelArch, gpu: GPU, lay: StepLayout) -> float:
    """One micro-batch's dequantisation: (forward + backward + recompute) x the base's linear parameters per GPU x
    bytes per parameter per pass / HBM bandwidth; it does not grow with the tokens."""
    if not lay.dequant_bytes_per_param:
        return 0.0
    extra = {"none": 0.0}.get(lay.recompute, 1.0 / max(1, lay.recompute_every))
    linear = params_active(m) - input_embedding_params(m)
    return (2.0 + extra) * linear / (lay.tp * lay.pp) * lay.dequant_bytes_per_param / (gpu.bandwidth_gb_s * 1e9)


def training_step(m: ModelArch, gpu: GPU, lay: StepLayout, eff: TrainingEfficiency | None = None) -> TrainingStep:
    """The step of one GPU of ``lay`` training ``m`` on ``gpu`` (module docstring)."""
    eff = eff or fitted_efficiency()
    tokens = lay.micro_batch * lay.seq_len / lay.cp  # one micro-batch of one rank, its share of the sequence
    layers = m.num_layers / lay.pp
    matmul, weight_grad = _matmul_s(m, gpu, lay, eff, tokens)
    attention = _attention_s(m, gpu, lay, eff, tokens)
    elementwise = (
        eff.elementwise_by_kernels.get(lay.kernels, eff.elementwise_bytes_per_token_layer)
        * 2
        * m.hidden_size
        / lay.tp
        * layers
        * tokens
        / (gpu.bandwidth_gb_s * 1e9)
    )
    exchange = exchange_s(m, gpu, lay, eff, tokens)
    fixed = eff.layer_overhead_s * layers
    sends = pipeline_sends_s(m, gpu, lay, eff, tokens, matmul + attention + elementwise)
    offload = activation_offload_s(gpu, lay, matmul + attention + elementwise)
    mbs = lay.micro_batches
    compute = (matmul + attention + elementwise + exchange + fixed) * mbs
    tokens_step = lay.micro_batch * lay.seq_len * mbs * lay.dp
    return TrainingStep(
        matmul_s=matmul * mbs,
        attention_s=attention * mbs,
        elementwise_s=elementwise * mbs,
        tensor_parallel_s=exchange * mbs,
        layer_overhead_s=fixed * mbs,
        bubble_s=bubble_s(lay, compute, weight_grad * mbs),
        data_parallel_exposed_s=data_parallel_s(m, gpu, lay, eff, compute),
        pipeline_sends_s=sends * mbs,
        offload_s=offload * mbs,
        optimizer_s=_optimizer_s(m, gpu, lay),
        tokens_per_step=tokens_step,
        model_flops_per_step=model_flops_per_token(m, lay.attention_tokens, lay.frozen_base) * tokens_step,
        gpus=lay.gpus,
        peak_flops_per_s=gpu.dense_peak_flops("bf16")[0],
        moe=m.is_moe,
        dequant_s=dequant_s(m, gpu, lay) * mbs,
        paging_s=paged_optimizer_s(gpu, lay),
    )
