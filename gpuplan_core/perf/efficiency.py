"""Measured efficiency: how much of a GPU's peak FLOPs and bandwidth a kernel reaches, and the fixed overheads.

  MFU(m)   = MFU_max(format) x m / (m + m_half): m = tokens per matmul (Vidur per-op profiles)
  MBU(x)   = MBU_max(memory type, format) x x / (x + x_half): x = bytes per layer per GPU
           (aiconfigurator and Vidur per-op data: small shards and short KV reads are less efficient)
Every default is adjustable and its source is on Methodology.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..common.units import MB
from ..hardware.catalog import GPU, moe_efficiency_factors, weight_mbu_factors
from ..model.formats import NumberFormat


class PerfAssumptions(BaseModel):
    """Efficiency and overhead defaults; every one is adjustable and its source is on Methodology."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mfu_max_bf16: float = Field(
        0.75, gt=0, le=1, description="large-GEMM BF16 MFU plateau (Vidur, aiconfigurator 0.70-0.85)"
    )
    mfu_max_fp8: float = Field(0.55, gt=0, le=1, description="FP8 GEMM plateau (0.55-0.66 of FP8 peak)")
    mfu_max_fp4: float = Field(0.45, gt=0, le=1, description="FP4 GEMM plateau (NVFP4 on B200 0.42-0.47)")
    mfu_max_int8: float = Field(0.6, gt=0, le=1)
    mfu_max_tf32: float = Field(0.6, gt=0, le=1)
    mfu_half_tokens: float = Field(
        64, gt=0, le=100_000, description="tokens per matmul at which MFU is half its plateau"
    )
    mbu_max_hbm: float = Field(
        0.80, gt=0, le=1, description="decode weight-read MBU on HBM (aiconfigurator 0.8, Vidur 0.75-0.86)"
    )
    mbu_max_gddr: float = Field(0.75, gt=0, le=1, description="GDDR parts (L40S attention 0.77)")
    mbu_format_8bit_hbm: float = Field(
        0.7, gt=0, le=1, description="8-bit weight GEMMs vs 16-bit on HBM parts (aiconfigurator: H100 0.67, H200 0.6)"
    )
    mbu_format_8bit_gddr: float = Field(0.95, gt=0, le=1, description="8-bit vs 16-bit on GDDR parts (L40S 0.96)")
    mbu_format_4bit_hbm: float = Field(0.45, gt=0, le=1, description="4-bit GEMMs on HBM (B200 NVFP4 0.34 of BF16)")
    mbu_format_4bit_gddr: float = Field(0.7, gt=0, le=1, description="4-bit GEMMs on GDDR (RTX PRO 6000 NVFP4 0.5-0.8)")
    mbu_half_bytes_per_layer: float = Field(
        30 * MB, gt=0, description="per-layer bytes at which MBU is half its plateau"
    )
    kv_mbu_max: float = Field(
        0.9, gt=0, le=1, description="decode attention KV-read MBU at large batch x context (0.85-0.88)"
    )
    kv_mbu_half_bytes_per_layer: float = Field(30 * MB, gt=0)
    decode_step_overhead_s: float = Field(
        1.0e-3, ge=0, le=1, description="per decode step: launches, sampling, scheduler"
    )
    prefill_overhead_s: float = Field(3.0e-3, ge=0, le=10, description="per prefill: tokenisation, scheduling, launch")
    eager_overhead_s_per_layer: float = Field(
        0.7e-3,
        ge=0,
        le=0.1,
        description="engines without CUDA graphs (transformers generate()): host time to launch one decoder layer; "
        "a pass takes the longer of it and the GPU's time (bitsandbytes benchmarks, transformers 4.46 on H100: "
        "24.4 ms per token for Llama-3.1-8B BF16, 0.76 ms per layer; TinyChat's transformers FP16 baseline on RTX "
        "4090, GPU-bound at 17.1 ms)",
    )
    moe_overhead_s_per_expert_layer: float = Field(
        0.2e-6,
        ge=0,
        le=1e-4,
        description="per routed expert, per MoE layer and step: routing, top-k, token permutation and the grouped "
        "GEMM's per-expert scheduling (a floor under small MoE steps that grows with the number of experts: "
        "DeepSeek-V3, 256 experts x 58 layers, 3.0 ms a step; Mixtral, 8 x 32, 0.05 ms). Fitted (bench/fit_tp_moe.py "
        "--fit, grid 0-0.6 us) on the 12 training rows of MoE decode at low load (gh5929 TensorRT-LLM 0.21 on 8 x "
        "H200 / B200, gpt-fast Mixtral on A100, vLLM CI Mixtral on H200, dstack DeepSeek-R1 at 4 clients): median "
        "|error| 53.0% at 0, 32.0% at 0.2 us",
    )
    allreduce_latency_s: float = Field(
        6e-6,
        ge=0,
        le=0.01,
        description="one-shot all-reduce over NVLink (each GPU reads every peer's buffer; vLLM custom_all_reduce, "
        "TensorRT-LLM ONESHOT): fixed time per call. H100 TP4, CUDA graphs (vLLM PR #24532): 10 us at 0.5 MiB, 14 at "
        "1 MiB, 23 at 2 MiB, 38 at 4 MiB, a line of 6 us + 3 x message / (450 GB/s x 0.87); TP2 7 us at 0.5 MiB "
        "(PR #24111); SGLang PR #2904 H100 custom all-reduce 3.7-5.9 us at 512 B for TP 2-8",
    )
    allreduce_two_shot_latency_s: float = Field(
        12e-6,
        ge=0,
        le=0.01,
        description="two-shot / ring all-reduce over NVLink (reduce-scatter + all-gather, NCCL's ring bytes "
        "2 (n-1)/n x message): fixed time per call; the engines take it over one-shot for large messages. H100 TP4 "
        "(vLLM PR #24532): pynccl-symm 21 us at 2 MiB, 28 us at 4 MiB",
    )
    allreduce_sync_s: float = Field(
        16e-6,
        ge=0,
        le=0.01,
        description="time per NVLink all-reduce call in a serving engine beyond the kernel's microbenchmark (ranks "
        "wait for the slowest at every call; the residual add and norm around it). Fitted (bench/fit_tp_moe.py "
        "--fit) on the 17 training rows of dense tensor-parallel decode at low load (measurements.csv TP rows: "
        "FasterTransformer, gpt-fast, vLLM PR 23197 and nightly CI, ROCm vLLM; serving_measurements.csv: the lowest "
        "load of trt014on and nim): median |error| 16.0% at 0, 7.5% at 16 us (10-18 us all within 9.5%); the 9 "
        "held-out rows of the same kind: 8.1% (9.0% with the earlier 20 us + 2 (n-1)/n x message / (0.7 x link))",
    )
    allreduce_latency_pcie_s: float = Field(
        40e-6,
        ge=0,
        le=0.01,
        description="all-reduce over PCIe (NCCL ring; no NVLink): fixed time per call. nccl-tests all_reduce_perf "
        "at 8 B on 8 x RTX 4090: 42 us (NVIDIA/nccl #1530), on 8 x RTX 3090: 54 us (NVIDIA/nccl #1439)",
    )
    link_efficiency: float = Field(
        0.87,
        gt=0,
        le=1,
        description="share of the NVLink per-direction bandwidth an all-reduce moves: the slope of vLLM's one-shot "
        "custom all-reduce on H100 TP4 (PR #24532: 28 us more from 0.5 to 4 MiB, 3 x 3.5 MiB read from peers = "
        "0.87 x 450 GB/s); NCCL ring bus bandwidth on DGX H100 is of the same order (~390 GB/s)",
    )
    pcie_efficiency: float = Field(
        0.7, gt=0, le=1, description="share of the PCIe per-direction bandwidth an NCCL ring all-reduce moves"
    )
    pcie_link_gb_s: float = Field(
        32.0, gt=0, description="PCIe bandwidth for GPUs whose catalog row states none: Gen4 x16 per direction"
    )


def _mfu_max(pa: PerfAssumptions, math_used: str) -> float:
    return {
        "bf16": pa.mfu_max_bf16,
        "fp8": pa.mfu_max_fp8,
        "fp4": pa.mfu_max_fp4,
        "int8": pa.mfu_max_int8,
        "tf32": pa.mfu_max_tf32,
        "fp32": pa.mfu_max_tf32,  # CUDA-core FP32 on GPUs without TF32 (V100, T4)
    }[math_used]


def mfu_curve(tokens: float, pa: PerfAssumptions, math_used: str) -> float:
    return _mfu_max(pa, math_used) * tokens / (tokens + pa.mfu_half_tokens)


def mbu_curve(bytes_per_layer: float, maximum: float, half: float) -> float:
    return maximum * bytes_per_layer / (bytes_per_layer + half) if bytes_per_layer > 0 else maximum


def weight_mbu_max(gpu: GPU, fmt: NumberFormat, pa: PerfAssumptions) -> float:
    """The plateau of weight-read efficiency: the memory type's, times the format's factor, from measurements of
    that GPU generation and format family where there are some (data/efficiency.csv), else by width."""
    gddr = gpu.memory_type.upper().startswith("GDDR")
    base = pa.mbu_max_gddr if gddr else pa.mbu_max_hbm
    wbits = fmt.bits_per_value
    if wbits < 16 and (factor := weight_mbu_factors().get((gpu.architecture, fmt.family))) is not None:
        return base * factor
    if wbits <= 5:
        return base * (pa.mbu_format_4bit_gddr if gddr else pa.mbu_format_4bit_hbm)
    if wbits <= 9:
        return base * (pa.mbu_format_8bit_gddr if gddr else pa.mbu_format_8bit_hbm)
    return base


def moe_efficiency_factor(gpu: GPU, fmt: NumberFormat) -> float:
    """How much of the dense GEMMs' efficiency the routed experts' grouped GEMMs reach on this GPU generation in
    this format family, where published MoE measurements pin it (data/efficiency.csv); else 1."""
    return moe_efficiency_factors().get((gpu.architecture, fmt.family), 1.0)
