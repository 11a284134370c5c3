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
           + tensor-parallel all-reduce, 2 per layer (allreduce_time: one-shot or two-shot over NVLink by
             message size, NCCL's ring over PCIe)
  MFU(m)   = MFU_max(format) x m / (m + m_half): m = tokens per matmul (Vidur per-op profiles)
  MBU(x)   = MBU_max(memory type, format) x x / (x + x_half): x = bytes per layer per GPU
           (aiconfigurator and Vidur per-op data: small shards and short KV reads are less efficient)
Dense peaks only; a GPU without the math format falls back to the best one it has, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware.catalog import GPU
from ..model.arch import ModelArch, input_embedding_params, kv_cache_bytes, matmul_params_active
from ..model.formats import NumberFormat, get_format
from ..results.perf import PhaseReport
from .efficiency import PerfAssumptions, mbu_curve, mfu_curve, moe_efficiency_factor, weight_mbu_max

Phase = PhaseReport  # one phase on the roofline, per GPU of the replica (results/perf.py)


def expected_experts_touched(m: ModelArch, tokens: float) -> float:
    """Distinct routed experts per MoE layer that `tokens` tokens hit, uniform routing."""
    if not m.is_moe:
        return 0.0
    e, k = m.num_experts, m.experts_per_token
    return e * (1 - (1 - k / e) ** max(tokens, 0))


def _one_expert_params(m: ModelArch) -> int:
    return (3 if m.mlp_gated else 2) * m.hidden_size * m.expert_intermediate_size


def tokens_per_expert(m: ModelArch, tokens: float) -> float:
    """Tokens each routed expert's GEMM sees in a step of ``tokens`` tokens (uniform routing): tokens x k spread
    over the experts they touch, so tokens x k / E once every expert is touched, and 1 at one token."""
    touched = expected_experts_touched(m, tokens)
    return tokens * m.experts_per_token / touched if touched else 0.0


def expert_weight_bytes(m: ModelArch, fmt: NumberFormat, tokens: float) -> float:
    """The routed experts' share of ``weight_bytes_touched``: the experts the step's tokens touch, every MoE layer."""
    if not m.is_moe:
        return 0.0
    return expected_experts_touched(m, tokens) * _one_expert_params(m) * m.moe_layers * fmt.bytes_per_value


def weight_bytes_touched(m: ModelArch, fmt: NumberFormat, tokens: float) -> float:
    """Weights a step reads: every matmul weight (MoE: the dense part + the experts the tokens touch), in the
    weights format with embeddings, lm_head and norms in 16 bit when the format is narrower (memory.weight_split).
    The input embedding table is not streamed: the step gathers one row per token (the lm_head, tied or not, is
    read in full)."""
    from ..memory.components import KEPT_BYTES_PER_PARAM, weight_split

    body, kept = weight_split(m, fmt)
    total = body + kept
    emb_bytes = KEPT_BYTES_PER_PARAM if kept else fmt.bytes_per_value
    if not m.tied_embeddings:
        total -= input_embedding_params(m) * emb_bytes
        total += min(tokens, m.vocab_size) * m.hidden_size * emb_bytes
    if not m.is_moe:
        return total
    untouched = (m.num_experts - expected_experts_touched(m, tokens)) * _one_expert_params(m) * m.moe_layers
    return total - untouched * fmt.bytes_per_value


def _attn_flops_per_attended_token(m: ModelArch) -> float:
    """FLOPs per (query token, attended token) pair over all layers: QK^T and AV, 2 FLOPs per MAC."""
    a = m.num_attention_heads
    if m.is_mla:
        return 2 * a * ((m.qk_nope_head_dim + m.qk_rope_head_dim) + m.v_head_dim)
    return 2 * a * (2 * m.d)


def _window_capped(cached: int, new: int, w: int) -> int:
    """sum(min(cached + i, w) for i in 1..new), in closed form: the first k tokens (those still inside the window,
    k = clamp(w - cached, 0, new)) attend to cached + i each, the rest to the whole window."""
    k = min(max(w - cached, 0), new)
    return k * cached + k * (k + 1) // 2 + (new - k) * w


def _attended(m: ModelArch, cached: int, new: int) -> float:
    """Sum over layers of attended lengths for `new` causal tokens after `cached` ones (per layer avg x layers)."""
    full = m.num_layers - m.sliding_window_layers
    causal = new * cached + new * (new + 1) / 2
    total = full * causal
    if m.sliding_window_layers:
        w = m.sliding_window_tokens
        total += m.sliding_window_layers * _window_capped(cached, new, w)
    return total


def allreduce_time(n: int, message_bytes: float, gpu: GPU, pa: PerfAssumptions) -> float:
    """One all-reduce of ``message_bytes`` over ``n`` GPUs of one server, as the engines run it.

    NVLink (through NVSwitch; Infinity Fabric; a bridge for 2 GPUs): the faster of one-shot (each GPU reads every
    peer's buffer: alpha_1 + (n-1) x message / link) and two-shot / ring (reduce-scatter + all-gather: alpha_2 +
    2 (n-1)/n x message / link), link = per-direction bandwidth x link efficiency. vLLM's custom all-reduce and
    TensorRT-LLM's ONESHOT/TWOSHOT pick by size the same way; NCCL's ring moves the two-shot's bytes.
    PCIe (no NVLink, or more GPUs than a bridge joins): NCCL's ring, alpha_pcie + 2 (n-1)/n x message / PCIe."""
    if n <= 1:
        return 0.0
    kind, link = gpu.peer_link(n)
    ring_bytes = 2 * (n - 1) / n * message_bytes
    if kind == "pcie":
        bw = (link or pa.pcie_link_gb_s * 1e9) * pa.pcie_efficiency
        return pa.allreduce_latency_pcie_s + ring_bytes / bw
    bw = link * pa.link_efficiency
    one_shot = pa.allreduce_latency_s + (n - 1) * message_bytes / bw
    two_shot = pa.allreduce_two_shot_latency_s + ring_bytes / bw
    return min(one_shot, two_shot) + pa.allreduce_sync_s


_allreduce_time = allreduce_time  # the earlier private name


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


@dataclass(frozen=True)
class StepWork:
    """What one forward pass does, per GPU of the replica, each component named (as vidur's execution_time)."""

    name: str  # "prefill", "decode", or a serving step's label
    matmul_flops: float  # the weight matmuls (dense part + routed experts + LM head)
    attention_flops: float  # QK^T and AV over the attended lengths
    weight_bytes: float  # weights the pass reads
    kv_bytes: float  # KV cache read and written
    activation_bytes: float  # activations written and read between layers
    tokens: float  # tokens in the pass (sets the matmul efficiency)
    overhead_s: float  # fixed per pass: launches, sampling, scheduling
    comm_s: float  # tensor-parallel all-reduces
    host_s: float = 0.0  # host time to launch the pass without CUDA graphs
    expert_flops: float = 0.0  # the routed experts' share of matmul_flops (MoE): grouped GEMMs, their own kernels
    expert_weight_bytes: float = 0.0  # the routed experts' share of weight_bytes
    expert_tokens: float = 0.0  # tokens each routed expert's GEMM sees (sets the experts' matmul efficiency)


def phase_of(w: StepWork, m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions) -> Phase:
    """Per-op roofline, summed: the weight matmuls and attention are separate kernels, so each takes
    max(compute, memory) on its own and the phase takes their sum (FLOPs and bytes per GPU). ``host_s``: the
    host's time to launch the pass without CUDA graphs; it runs ahead of the GPU, so the pass takes the longer
    of the two."""
    name, tokens, overhead_s, comm_s, host_s = w.name, w.tokens, w.overhead_s, w.comm_s, w.host_s
    mm_flops, attn_flops, weights_bytes, kv_bytes = w.matmul_flops, w.attention_flops, w.weight_bytes, w.kv_bytes
    other_bytes = w.activation_bytes
    fmt = get_format(wl.weights_format)
    peak, math_used = gpu.dense_peak_flops(fmt.math)
    mfu = mfu_curve(tokens, pa, math_used)
    layers = m.num_layers / wl.pp
    w_mbu = mbu_curve(weights_bytes / layers, weight_mbu_max(gpu, fmt, pa), pa.mbu_half_bytes_per_layer)
    kv_mbu = mbu_curve(kv_bytes / layers, pa.kv_mbu_max, pa.kv_mbu_half_bytes_per_layer)
    bw = gpu.bandwidth_bytes_per_s
    # the routed experts are grouped GEMMs of their own: each expert sees only its share of the tokens
    ex_flops, ex_bytes = w.expert_flops, w.expert_weight_bytes
    ex_f = moe_efficiency_factor(gpu, fmt) if (ex_flops or ex_bytes) else 1.0
    ex_comp = ex_flops / (peak * mfu_curve(w.expert_tokens, pa, math_used) * ex_f) if ex_flops else 0.0
    ex_mem = ex_bytes / (bw * w_mbu * ex_f)
    mm_comp = (mm_flops - ex_flops) / (peak * mfu)
    mm_mem = (weights_bytes - ex_bytes + other_bytes) / (bw * w_mbu)
    attn_peak = gpu.dense_peak_flops("bf16")[0]  # attention math runs in 16-bit
    at_comp = attn_flops / (attn_peak * mfu_curve(tokens, pa, "bf16"))
    at_mem = kv_bytes / (bw * kv_mbu) if kv_bytes else 0.0
    experts = max(ex_comp, ex_mem) + (
        pa.moe_overhead_s_per_expert_layer * m.num_experts * m.moe_layers / wl.pp if m.is_moe else 0.0
    )
    core = (max(mm_comp, mm_mem) + experts + max(at_comp, at_mem)) * wl.pp  # stages run one after another
    waiting = max(0.0, host_s - core - comm_s)  # the GPU idles while the host launches kernels
    t = core + comm_s + waiting + overhead_s
    compute_part = sum(c for c, b in ((mm_comp, mm_mem), (ex_comp, ex_mem), (at_comp, at_mem)) if c >= b)
    memory_part = sum(b for c, b in ((mm_comp, mm_mem), (ex_comp, ex_mem), (at_comp, at_mem)) if b > c)
    if core < overhead_s + comm_s + waiting:
        bound = "overhead"
    else:
        bound = "compute" if compute_part >= memory_part else "memory"
    flops = mm_flops + attn_flops
    nbytes = weights_bytes + kv_bytes + other_bytes
    return PhaseReport(
        name=name,
        flops=flops,
        bytes=nbytes,
        weight_bytes=weights_bytes,
        kv_bytes=kv_bytes,
        time_s=t,
        compute_time_s=(mm_comp + ex_comp + at_comp) * wl.pp,
        memory_time_s=(mm_mem + ex_mem + at_mem) * wl.pp,
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
    name: str, m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, parts: list[Part], *, overhead_s: float
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
    ex_flops = 2 * m.experts_per_token * _one_expert_params(m) * m.moe_layers * tokens if m.is_moe else 0.0
    work = StepWork(
        name=name,
        matmul_flops=mm_flops / shard,
        attention_flops=attn_flops / shard,
        weight_bytes=w_bytes,
        kv_bytes=kv,
        activation_bytes=acts,
        tokens=tokens,
        overhead_s=overhead_s,
        comm_s=comm,
        host_s=host,
        expert_flops=ex_flops / shard,
        expert_weight_bytes=expert_weight_bytes(m, wf, tokens) / shard,
        expert_tokens=tokens_per_expert(m, tokens),
    )
    return phase_of(work, m, gpu, wl, pa)


def prefill_phase(m: ModelArch, gpu: GPU, wl: Workload, batch: int, prompt: int, pa: PerfAssumptions) -> Phase:
    """A static batch's prefill: ``batch`` prompts, the prefix-cached share already in the KV cache, logits for
    each prompt's last token only."""
    cached = int(prompt * wl.prefix_cache_fraction)
    new = max(1, prompt - cached)
    return step_phase("prefill", m, gpu, wl, pa, [Part(batch, cached, new, batch)], overhead_s=pa.prefill_overhead_s)


def decode_phase(
    m: ModelArch, gpu: GPU, wl: Workload, batch: int, context: int, pa: PerfAssumptions, *, tokens_per_seq: int = 1
) -> Phase:
    """One decode step (or a speculative verify step of `tokens_per_seq` tokens) at `context` tokens."""
    part = Part(batch, context, tokens_per_seq, batch * tokens_per_seq)
    return step_phase("decode", m, gpu, wl, pa, [part], overhead_s=pa.decode_step_overhead_s)
