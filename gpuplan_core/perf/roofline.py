"""The performance model: prefill and decode on the roofline, with measured efficiency curves.

For one replica (tp x pp GPUs) of a model on a GPU:
  FLOPs    prefill = 2 x matmul_params x new_tokens + lm_head for the last token of each prompt
                     + attention 2 x heads x (d_qk + d_v) x sum of attended lengths (causal: a new
                     token attends to the cached prefix and the new tokens before it, so the S^2 term
                     is halved); MoE counts only the routed experts.
           decode step = 2 x matmul_params x batch + attention 2 x heads x (d_qk + d_v) x context x batch
  bytes    prefill = weights touched + KV written (+ cached prefix read)
           decode step = weights touched + KV read for every sequence + KV written
           MoE weights touched = dense part + E x (1 - (1 - k/E)^tokens) experts (the expected number
           of distinct experts a step's tokens route to): all experts at large batch, k at batch 1.
  time     max(FLOPs / (peak x MFU), bytes / (bandwidth x MBU)) + fixed overheads
           + tensor-parallel all-reduce (2 per layer: alpha + 2 (n-1)/n x message / link bandwidth)
  MFU(m)   = MFU_max(format) x m / (m + m_half): m = tokens per matmul (Vidur per-op profiles)
  MBU(x)   = MBU_max(memory type, format) x x / (x + x_half): x = bytes per layer per GPU
           (aiconfigurator and Vidur per-op data: small shards and short KV reads are less efficient)
Dense peaks only; a GPU without the math format falls back to the best one it has, and says so.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ..common.units import MB
from ..hardware.catalog import GPU, weight_mbu_factors
from ..model.arch import ModelArch, input_embedding_params, kv_cache_bytes, matmul_params_active
from ..model.formats import NumberFormat, get_format


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
    allreduce_latency_s: float = Field(
        20e-6, ge=0, le=0.01, description="all-reduce alpha over NVLink (measured 15-37 us)"
    )
    allreduce_latency_pcie_s: float = Field(30e-6, ge=0, le=0.01)
    link_efficiency: float = Field(0.7, gt=0, le=1)
    pcie_link_gb_s: float = Field(32.0, gt=0, description="link for GPUs without NVLink: PCIe Gen4 x16 per direction")


@dataclass
class Phase:
    """One phase on the roofline (per GPU of the replica)."""

    name: str
    flops: float
    bytes: float
    weight_bytes: float
    kv_bytes: float
    time_s: float
    compute_time_s: float
    memory_time_s: float
    overhead_time_s: float
    comm_time_s: float
    bound: str  # "compute" | "memory" | "overhead"
    intensity_flops_per_byte: float
    achieved_flops_per_s: float
    achieved_bytes_per_s: float
    mfu: float
    mbu: float


@dataclass
class PerfResult:
    gpu: str
    gpu_count: int
    tp: int
    pp: int
    math_format: str
    math_note: str | None
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    ridge_flops_per_byte: float
    batch: int
    prompt_tokens: int
    output_tokens: int
    prefill: Phase
    decode: Phase
    ttft_s: float
    tpot_s: float
    tpot_inclusive_s: float
    e2e_request_s: float
    decode_tokens_per_s_per_sequence: float
    decode_tokens_per_s: float
    output_tokens_per_s: float
    prefill_tokens_per_s: float
    compute_bound_batch: int | None
    moe_note: str | None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


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


def _weight_mbu_max(gpu: GPU, fmt: NumberFormat, pa: PerfAssumptions) -> float:
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


def expected_experts_touched(m: ModelArch, tokens: float) -> float:
    """Distinct routed experts per MoE layer that `tokens` tokens hit, uniform routing."""
    if not m.is_moe:
        return 0.0
    e, k = m.num_experts, m.experts_per_token
    return e * (1 - (1 - k / e) ** max(tokens, 0))


def weight_bytes_touched(m: ModelArch, fmt: NumberFormat, tokens: float) -> float:
    """Weights a step reads: every matmul weight (MoE: the dense part + the experts the tokens touch), in the
    weights format with embeddings, lm_head and norms in 16 bit when the format is narrower (memory.weight_split).
    The input embedding table is not streamed: the step gathers one row per token (the lm_head, tied or not, is
    read in full)."""
    from ..memory.budget import KEPT_BYTES_PER_PARAM, weight_split

    body, kept = weight_split(m, fmt)
    total = body + kept
    emb_bytes = KEPT_BYTES_PER_PARAM if kept else fmt.bytes_per_value
    if not m.tied_embeddings:
        total -= input_embedding_params(m) * emb_bytes
        total += min(tokens, m.vocab_size) * m.hidden_size * emb_bytes
    if not m.is_moe:
        return total
    one_expert = (
        3 * m.hidden_size * m.expert_intermediate_size
        if m.mlp_gated
        else 2 * m.hidden_size * m.expert_intermediate_size
    )
    untouched = (m.num_experts - expected_experts_touched(m, tokens)) * one_expert * m.moe_layers
    return total - untouched * fmt.bytes_per_value


def _attn_flops_per_attended_token(m: ModelArch) -> float:
    """FLOPs per (query token, attended token) pair over all layers: QK^T and AV, 2 FLOPs per MAC."""
    a = m.num_attention_heads
    if m.is_mla:
        return 2 * a * ((m.qk_nope_head_dim + m.qk_rope_head_dim) + m.v_head_dim)
    return 2 * a * (2 * m.d)


def _attended(m: ModelArch, cached: int, new: int) -> float:
    """Sum over layers of attended lengths for `new` causal tokens after `cached` ones (per layer avg x layers)."""
    full = m.num_layers - m.sliding_window_layers
    causal = new * cached + new * (new + 1) / 2
    total = full * causal
    if m.sliding_window_layers:
        w = m.sliding_window_tokens
        capped = sum(min(cached + i, w) for i in range(1, new + 1)) if new <= 4096 else (new * min(cached + new / 2, w))
        total += m.sliding_window_layers * capped
    return total


def _allreduce_time(n: int, message_bytes: float, gpu: GPU, pa: PerfAssumptions) -> float:
    if n <= 1:
        return 0.0
    link = gpu.link_bandwidth_bytes_per_s
    alpha = pa.allreduce_latency_s if link else pa.allreduce_latency_pcie_s
    bw = (link or pa.pcie_link_gb_s * 1e9) * pa.link_efficiency
    return alpha + 2 * (n - 1) / n * message_bytes / bw


@dataclass
class Workload:
    """Formats and levers of one serving configuration."""

    weights_format: str = "bf16"
    kv_format: str = "bf16"
    activation_format: str = "bf16"
    tp: int = 1
    pp: int = 1
    prefix_cache_fraction: float = 0.0
    spec_draft: ModelArch | None = None
    spec_tokens: int = 4
    spec_acceptance: float = 0.7
    eager: bool = False  # no CUDA graphs: every forward pass pays host time per layer (PerfAssumptions)


def _phase(
    name: str,
    mm_flops: float,
    attn_flops: float,
    weights_bytes: float,
    kv_bytes: float,
    other_bytes: float,
    tokens: float,
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    pa: PerfAssumptions,
    overhead_s: float,
    comm_s: float,
    host_s: float = 0.0,
) -> Phase:
    """Per-op roofline, summed: the weight matmuls and attention are separate kernels, so each takes
    max(compute, memory) on its own and the phase takes their sum (FLOPs and bytes per GPU). ``host_s``: the
    host's time to launch the pass without CUDA graphs; it runs ahead of the GPU, so the pass takes the longer
    of the two."""
    fmt = get_format(wl.weights_format)
    peak, math_used = gpu.dense_peak_flops(fmt.math)
    mfu = mfu_curve(tokens, pa, math_used)
    layers = m.num_layers / wl.pp
    w_mbu = mbu_curve(weights_bytes / layers, _weight_mbu_max(gpu, fmt, pa), pa.mbu_half_bytes_per_layer)
    kv_mbu = mbu_curve(kv_bytes / layers, pa.kv_mbu_max, pa.kv_mbu_half_bytes_per_layer)
    bw = gpu.bandwidth_bytes_per_s
    mm_comp = mm_flops / (peak * mfu)
    mm_mem = (weights_bytes + other_bytes) / (bw * w_mbu)
    attn_peak = gpu.dense_peak_flops("bf16")[0]  # attention math runs in 16-bit
    at_comp = attn_flops / (attn_peak * mfu_curve(tokens, pa, "bf16"))
    at_mem = kv_bytes / (bw * kv_mbu) if kv_bytes else 0.0
    core = (max(mm_comp, mm_mem) + max(at_comp, at_mem)) * wl.pp  # stages run one after another
    waiting = max(0.0, host_s - core - comm_s)  # the GPU idles while the host launches kernels
    t = core + comm_s + waiting + overhead_s
    compute_part = (mm_comp if mm_comp >= mm_mem else 0) + (at_comp if at_comp >= at_mem else 0)
    memory_part = (mm_mem if mm_mem > mm_comp else 0) + (at_mem if at_mem > at_comp else 0)
    if core < overhead_s + comm_s + waiting:
        bound = "overhead"
    else:
        bound = "compute" if compute_part >= memory_part else "memory"
    flops = mm_flops + attn_flops
    nbytes = weights_bytes + kv_bytes + other_bytes
    return Phase(
        name=name,
        flops=flops,
        bytes=nbytes,
        weight_bytes=weights_bytes,
        kv_bytes=kv_bytes,
        time_s=t,
        compute_time_s=(mm_comp + at_comp) * wl.pp,
        memory_time_s=(mm_mem + at_mem) * wl.pp,
        overhead_time_s=overhead_s + waiting,
        comm_time_s=comm_s,
        bound=bound,
        intensity_flops_per_byte=flops / nbytes if nbytes else math.inf,
        achieved_flops_per_s=flops * wl.pp / t,
        achieved_bytes_per_s=nbytes * wl.pp / t,
        mfu=flops * wl.pp / t / peak,
        mbu=nbytes * wl.pp / t / bw,
    )


@dataclass(frozen=True)
class Part:
    """Work of one kind in an engine step: ``sequences`` sequences each adding ``new`` tokens after ``cached``
    tokens already in the KV cache, with logits for ``lm_head_tokens`` tokens in all. Fractional sequence
    counts are averages (a serving step carries a share of a prompt's prefill)."""

    sequences: float
    cached: int
    new: int
    lm_head_tokens: float


def step_phase(
    name: str, m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, parts: list[Part], overhead_s: float
) -> Phase:
    """One forward pass of everything in ``parts`` together (one engine step): the weight matmuls run once for
    all tokens, attention per part. A static batch is one part; a continuous-batching step mixes decodes
    (new = 1 after the context) and prefill chunks (serving.py)."""
    shard = wl.tp * wl.pp
    wf = get_format(wl.weights_format)
    kvb = get_format(wl.kv_format).bytes_per_value
    act_bytes = get_format(wl.activation_format).bytes_per_value
    tokens = sum(p.sequences * p.new for p in parts)
    lm_tokens = sum(p.lm_head_tokens for p in parts)
    lm_head = m.vocab_size * m.hidden_size
    mm_flops = 2 * (matmul_params_active(m) - lm_head) * tokens + 2 * lm_head * lm_tokens
    per_pair = _attn_flops_per_attended_token(m)
    attn_flops = sum(per_pair * _attended(m, p.cached, p.new) * p.sequences for p in parts)
    w_bytes = weight_bytes_touched(m, wf, tokens) / shard
    kv = sum(
        kv_cache_bytes(m, kvb, p.cached, p.sequences, wl.tp, wl.pp)
        + kv_cache_bytes(m, kvb, p.new, p.sequences, wl.tp, wl.pp)
        for p in parts
    )
    acts = 2 * tokens * m.hidden_size * act_bytes * m.num_layers / wl.pp
    comm = 2 * m.num_layers * _allreduce_time(wl.tp, tokens * m.hidden_size * act_bytes, gpu, pa)
    host = m.num_layers * pa.eager_overhead_s_per_layer if wl.eager else 0.0
    return _phase(
        name, mm_flops / shard, attn_flops / shard, w_bytes, kv, acts, tokens, m, gpu, wl, pa, overhead_s, comm, host
    )


def _step(
    name: str,
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    pa: PerfAssumptions,
    batch: int,
    cached: int,
    new: int,
    lm_head_tokens: int,
    overhead_s: float,
) -> Phase:
    """A static batch: ``batch`` sequences of ``new`` tokens after ``cached`` tokens already in the KV cache.

    Prefill: cached = the prefix-cached share of the prompt, lm_head for the last token only.
    Decode: cached = the context, new = 1 (or k + 1 for a speculative verify step), lm_head for each.
    """
    return step_phase(name, m, gpu, wl, pa, [Part(batch, cached, new, lm_head_tokens)], overhead_s)


def prefill_phase(m: ModelArch, gpu: GPU, wl: Workload, batch: int, prompt: int, pa: PerfAssumptions) -> Phase:
    cached = int(prompt * wl.prefix_cache_fraction)
    new = max(1, prompt - cached)
    return _step("prefill", m, gpu, wl, pa, batch, cached, new, batch, pa.prefill_overhead_s)


def decode_phase(
    m: ModelArch, gpu: GPU, wl: Workload, batch: int, context: int, pa: PerfAssumptions, tokens_per_seq: int = 1
) -> Phase:
    """One decode step (or a speculative verify step of `tokens_per_seq` tokens) at `context` tokens."""
    return _step(
        "decode", m, gpu, wl, pa, batch, context, tokens_per_seq, batch * tokens_per_seq, pa.decode_step_overhead_s
    )


def _mean_decode_time(m, gpu, wl, batch, prompt, output, pa, tokens_per_seq=1) -> tuple[float, Phase]:
    """Average decode-step time over contexts prompt .. prompt + output - 1 (not first+last / 2 alone:
    sampled at up to 9 points, exact for the piecewise-linear step time)."""
    steps = max(1, output - 1)
    n = min(9, steps)
    ctxs = [prompt + round(i * (steps - 1) / max(1, n - 1)) for i in range(n)] if n > 1 else [prompt]
    phases = [decode_phase(m, gpu, wl, batch, c, pa, tokens_per_seq) for c in ctxs]
    mean = sum(p.time_s for p in phases) / len(phases)
    return mean, phases[len(phases) // 2]


def compute_bound_batch(m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, limit: int = 1 << 20) -> int | None:
    """Smallest batch at which decode's weight matmuls turn compute-bound (their FLOPs take as long
    as reading the weights); attention's KV reads stay memory-bound at any batch."""
    wf = get_format(wl.weights_format)
    peak, math_used = gpu.dense_peak_flops(get_format(wl.weights_format).math)
    shard = wl.tp * wl.pp
    w_mbu_max = _weight_mbu_max(gpu, wf, pa)

    def compute_bound(b: int) -> bool:
        w = weight_bytes_touched(m, wf, b) / shard
        mem_t = w / (
            gpu.bandwidth_bytes_per_s * mbu_curve(w / (m.num_layers / wl.pp), w_mbu_max, pa.mbu_half_bytes_per_layer)
        )
        comp_t = 2 * matmul_params_active(m) * b / shard / (peak * mfu_curve(b, pa, math_used))
        return comp_t >= mem_t

    if not compute_bound(limit):
        return None
    lo, hi = 0, 1
    while not compute_bound(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
    return hi


def predict(
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    batch: int,
    prompt: int,
    output: int,
    pa: PerfAssumptions | None = None,
    with_compute_bound_batch: bool = True,
) -> PerfResult:
    pa = pa or PerfAssumptions()
    if batch < 1 or prompt < 1 or output < 1:
        raise ValueError("batch, input_tokens and output_tokens must be >= 1")
    fmt = get_format(wl.weights_format)
    peak, math_used = gpu.dense_peak_flops(fmt.math)
    note = None
    if fmt.math == "fp32" and math_used == "fp32":
        note = f"{gpu.gpu} has no TF32 tensor cores: FP32 matmuls run on CUDA cores ({peak / 1e12:,.1f} TFLOP/s)."
    elif math_used != {"fp32": "tf32"}.get(fmt.math, fmt.math):
        note = f"{gpu.gpu} has no {fmt.math.upper()} tensor cores: matmuls run in {math_used.upper()} (dense peak)."
    pre = prefill_phase(m, gpu, wl, batch, prompt, pa)
    ttft = pre.time_s
    notes = []
    if wl.spec_draft is not None:
        k, alpha = wl.spec_tokens, wl.spec_acceptance
        expected = k + 1 if alpha >= 1 else (1 - alpha ** (k + 1)) / (1 - alpha)
        draft_t, _ = _mean_decode_time(wl.spec_draft, gpu, wl, batch, prompt, output, pa)
        verify_t, dec = _mean_decode_time(m, gpu, wl, batch, prompt, output, pa, tokens_per_seq=k + 1)
        tpot = (k * draft_t + verify_t) / expected
        notes.append(
            f"Speculative decoding: {k} draft tokens at acceptance {alpha:.2f} give {expected:.2f} tokens per "
            f"target step (Leviathan et al. 2023); TPOT includes {k} draft steps per verify step."
        )
    else:
        tpot, dec = _mean_decode_time(m, gpu, wl, batch, prompt, output, pa)
    e2e = ttft + (output - 1) * tpot
    moe_note = None
    if m.is_moe:
        touched = expected_experts_touched(m, batch)
        moe_note = (
            f"Decode reads {touched:.1f} of {m.num_experts} experts per MoE layer at batch {batch} "
            f"(active-only weight reads hold only while batch x {m.experts_per_token} is small next to "
            f"{m.num_experts})."
        )
    ridge = peak / gpu.bandwidth_bytes_per_s
    return PerfResult(
        gpu=gpu.gpu,
        gpu_count=wl.tp * wl.pp,
        tp=wl.tp,
        pp=wl.pp,
        math_format=math_used,
        math_note=note,
        peak_flops_per_s=peak,
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
        ridge_flops_per_byte=ridge,
        batch=batch,
        prompt_tokens=prompt,
        output_tokens=output,
        prefill=pre,
        decode=dec,
        ttft_s=ttft,
        tpot_s=tpot,
        tpot_inclusive_s=e2e / output,
        e2e_request_s=e2e,
        decode_tokens_per_s_per_sequence=1 / tpot,
        decode_tokens_per_s=batch / tpot,
        output_tokens_per_s=batch * output / e2e,
        prefill_tokens_per_s=batch * prompt / pre.time_s,
        compute_bound_batch=compute_bound_batch(m, gpu, wl, pa) if with_compute_bound_batch else None,
        moe_note=moe_note,
        notes=notes,
    )


def decode_sweep(
    m: ModelArch, gpu: GPU, wl: Workload, context: int, max_batch: int, pa: PerfAssumptions | None = None
) -> list[dict]:
    """Decode step at batch 1, 2, 4, ... up to max_batch (and max_batch itself): the roofline's batch sweep."""
    pa = pa or PerfAssumptions()
    out = []
    batches = [1 << i for i in range(0, 21) if (1 << i) < max(1, max_batch)] + [max(1, max_batch)]
    for b in batches:
        p = decode_phase(m, gpu, wl, b, context, pa)
        out.append(
            {
                "batch": b,
                "intensity_flops_per_byte": p.intensity_flops_per_byte,
                "achieved_flops_per_s": p.achieved_flops_per_s,
                "step_time_s": p.time_s,
                "tokens_per_s": b / p.time_s,
                "bound": p.bound,
            }
        )
    return out
