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
  host     without CUDA graphs the pass takes the longer of the GPU's time and the host's launch time, layers x
           eager_overhead_s_per_layer (``host_s``). Where the engine graphs decode-only steps (vLLM V0, SGLang,
           TensorRT-LLM's PyTorch backend: hardware/engines.py ``EngineRelease.prefill_graphs``), an MoE model's
           step that carries prompt tokens pays it too (``prefill_host_s``): each MoE layer's router, top-k,
           token permutation and grouped-GEMM launches (Triton kernels among them) and MLA's dozen small ops are
           issued from Python one by one (NVIDIA's DeepSeek-R1 blog: CUDA graphs gain 22% end to end on the PyTorch
           flow, "because the python host code normally executes slower than C++"). Not for a dense model: its
           fused layers launch about ten kernels each, whose host time a prompt step's GPU time covers.
  MLA      prompt tokens attend in the up-projected (multi-head) form, decoding tokens in the absorbed form over the
           latent, at the efficiency of the GPU's heads as GEMM rows (mla.py); its down-projections are replicated
           on every tensor-parallel GPU (``mla.replicated_params``)
Dense peaks only; a GPU without the math format falls back to the best one it has, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..hardware.catalog import GPU
from ..model.arch import KVCacheBytes, ModelArch, matmul_params_active
from ..model.formats import get_format
from ..results.perf import PhaseReport
from . import expert_parallel, kernel_steps
from .comm import allreduce_time
from .efficiency import PerfAssumptions, mbu_curve, mfu_curve, moe_efficiency_factor, weight_mbu_max
from .mla import absorbed_attn_flops_per_attended_token, replicated_params
from .mla import attn_flops_per_attended_token as _attn_flops_per_attended_token
from .moe_weights import _one_expert_params, expert_weight_bytes, tokens_per_expert, weight_bytes_touched
from .moe_weights import expected_experts_touched as expected_experts_touched


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
    ep: int = 1  # MoE: routed experts over this many GPUs, attention data-parallel beside them (expert_parallel.py)
    eager_prefill: bool = False  # steps with prompt tokens launch each layer from Python (no CUDA graph)
    experts_tp: bool = False  # ep > 1 with the experts tensor-parallel over the ep GPUs: each schedules all E
    step_time_factor: float = 1.0  # the release line's step time over this model's (engines.EngineRelease)
    moe_efficiency: float | None = None  # routed experts' factor in place of data/efficiency.csv's (a left-out fit)
    dp_ranks: int = 1  # busy attention data-parallel ranks that run each step together (step_queues.rank_wait)


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
    absorbed_attention_flops: float = 0.0  # MLA's absorbed-form share of attention_flops (its own efficiency)


@dataclass(frozen=True)
class Part:
    """Work of one kind in an engine step: ``sequences`` sequences each adding ``new`` tokens after ``cached``
    tokens already in the KV cache, with logits for ``lm_head_tokens`` tokens in all. Fractional sequence
    counts are averages (a serving step carries a share of a prompt's prefill)."""

    sequences: float
    cached: int
    new: int
    lm_head_tokens: float


class StepCost:
    """The per-op roofline of one replica's engine steps (model, GPU, formats, layout), with what does not depend
    on a step's mix worked out once: the formats, the peaks, the efficiency plateaus, and per token count the
    weights read, the all-reduces and the matmul efficiency. ``phase`` is one step's full report (``step_phase``),
    ``seconds`` its time alone (what the step loop asks for hundreds of thousands of times): the same formula.

    Per-op roofline, summed: the weight matmuls and attention are separate kernels, so each takes
    max(compute, memory) on its own and the step takes their sum (FLOPs and bytes per GPU). ``host_s``: the
    host's time to launch the pass without CUDA graphs; it runs ahead of the GPU, so the pass takes the longer
    of the two."""

    def __init__(self, m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions, engine: str | None = None):
        self.m, self.gpu, self.wl, self.pa = m, gpu, wl, pa
        # measured kernel times where the engine's tables cover the replica (kernel_steps.py); None: roofline only
        self.ep = expert_parallel.degree(m, wl)  # 1 unless an MoE model's experts are spread over GPUs
        self.kernels, self.kernels_reason = (
            kernel_steps.for_replica(m, gpu, engine, wl.weights_format, wl.kv_format, wl.tp)
            if engine and self.ep == 1
            else (None, "expert parallel: the roofline" if engine else None)
        )
        self.shard = wl.tp * wl.pp
        self.fmt = get_format(wl.weights_format)
        self.kv_bytes = KVCacheBytes(m, get_format(wl.kv_format).bytes_per_value, wl.tp, wl.pp)
        self.act_bytes = get_format(wl.activation_format).bytes_per_value
        self.lm_head = m.vocab_size * m.hidden_size
        self.dense_params = matmul_params_active(m) - self.lm_head
        self.per_pair = _attn_flops_per_attended_token(m)
        self.per_pair_decode = absorbed_attn_flops_per_attended_token(m)
        # MLA's absorbed decode is MQA over the latent: every head on the GPU reads the same latent, so its GEMMs have
        # heads-per-GPU rows (FlashMLA's tiles), whatever the batch: its efficiency is the 16-bit curve at those rows
        self.abs_mfu = mfu_curve(m.num_attention_heads / wl.tp, pa, "bf16") if m.is_mla else 1.0
        # each GPU of a tensor-parallel replica reads and multiplies the replicated weights whole: beyond its 1 / tp
        # share of them (counted with the rest), (tp - 1) / (tp x pp) of them per GPU
        self.repl_share = replicated_params(m) * (wl.tp - 1) / (wl.tp * wl.pp) if wl.ep <= 1 else 0.0
        self.host_s = m.num_layers * pa.eager_overhead_s_per_layer if wl.eager else 0.0
        # a step with prompt tokens, where the engine graphs decode-only steps: an MoE model's layers launched from
        # Python one by one (``prefill_host_s``, the module docstring)
        eager_prefill = wl.eager_prefill and m.is_moe
        self.prefill_host_s = m.num_layers * pa.eager_overhead_s_per_layer if eager_prefill else self.host_s
        self.expert_flops_per_token = 2 * m.experts_per_token * _one_expert_params(m) * m.moe_layers if m.is_moe else 0
        self.peak, self.math_used = gpu.dense_peak_flops(self.fmt.math)
        self.attn_peak = gpu.dense_peak_flops("bf16")[0]  # attention math runs in 16-bit
        self.layers = m.num_layers / wl.pp
        self.w_mbu_max = weight_mbu_max(gpu, self.fmt, pa)
        self.ex_f = moe_efficiency_factor(gpu, self.fmt) if wl.moe_efficiency is None else wl.moe_efficiency
        self.experts_fixed_s = pa.moe_overhead_s_per_expert_layer * m.num_experts * m.moe_layers / wl.pp
        if self.ep > 1 and not wl.experts_tp:  # each GPU routes to and schedules its own E / ep experts
            self.experts_fixed_s /= self.ep
        self._per_tokens: dict[float, tuple] = {}
        self._per_part: dict[tuple, tuple[float, float]] = {}  # (seqs, cached, new, absorbed) -> attention FLOPs, KV
        self._mfus: dict[float, tuple[float, float]] = {}  # tokens -> ``_mfu``

    def _token_terms(self, tokens: float) -> tuple:
        """What a step's token count alone sets: weights read, activations, all-reduces, the experts' share and the
        matmul efficiencies (remembered: steps share their token counts)."""
        got = self._per_tokens.get(tokens)
        if got is None and self.ep > 1:
            got = self._per_tokens[tokens] = expert_parallel.token_terms(self, tokens)
        if got is None:
            m, wl, shard = self.m, self.wl, self.shard
            acts = 2 * tokens * m.hidden_size * self.act_bytes * m.num_layers / wl.pp
            comm = 2 * m.num_layers * allreduce_time(wl.tp, tokens * m.hidden_size * self.act_bytes, self.gpu, self.pa)
            got = self._per_tokens[tokens] = (
                weight_bytes_touched(m, self.fmt, tokens) / shard + self.repl_share * self.fmt.bytes_per_value,
                acts,
                comm,
                self.expert_flops_per_token * tokens / shard,
                expert_weight_bytes(m, self.fmt, tokens) / shard,
                tokens_per_expert(m, tokens),
            )
        return got

    def _parts_sums(self, parts) -> tuple[float, float, float, float, float]:
        """tokens, logits, attention FLOPs (the prompt form's; the absorbed form's last) and KV bytes of ``parts``
        (``(sequences, cached, new, logits)`` each; an MLA part whose every token has logits decodes, absorbed)."""
        per_part, tokens, lm_tokens, attn, kv, absorbed = self._per_part, 0, 0, 0, 0, 0
        for seqs, cached, new, lm in parts:
            tokens += seqs * new
            lm_tokens += lm
            decoding = self.m.is_mla and lm == seqs * new
            terms = per_part.get((seqs, cached, new, decoding))
            if terms is None:  # remembered: the step loop's steps share their decodes and prompt chunks
                kv_part = self.kv_bytes(cached, seqs) + self.kv_bytes(new, seqs)
                per_pair = self.per_pair_decode if decoding else self.per_pair
                attended = per_pair * _attended(self.m, cached, new) * seqs
                terms = per_part[seqs, cached, new, decoding] = (attended, kv_part)
            if decoding:
                absorbed, kv = absorbed + terms[0], kv + terms[1]
            else:
                attn, kv = attn + terms[0], kv + terms[1]
        return tokens, lm_tokens, attn, kv, absorbed

    def _mfu(self, tokens: float) -> tuple[float, float]:
        """The matmul efficiency at ``tokens`` tokens in the weights' math and in 16-bit (attention), remembered."""
        got = self._mfus.get(tokens)
        if got is None:
            got = self._mfus[tokens] = (mfu_curve(tokens, self.pa, self.math_used), mfu_curve(tokens, self.pa, "bf16"))
        return got

    def work(self, name: str, parts: list[Part], overhead_s: float, prompt: bool = False) -> StepWork:
        """One forward pass of everything in ``parts`` together (one engine step), each component named; ``prompt``:
        the step carries prompt tokens (its host time is ``prefill_host_s``)."""
        tokens, lm_tokens, attn, kv, absorbed = self._parts_sums(
            [(p.sequences, p.cached, p.new, p.lm_head_tokens) for p in parts]
        )
        w_bytes, acts, comm, ex_flops, ex_bytes, ex_tokens = self._token_terms(tokens)
        mm_flops = 2 * self.dense_params * tokens + 2 * self.lm_head * lm_tokens
        return StepWork(
            name=name,
            matmul_flops=mm_flops / self.shard + 2 * self.repl_share * tokens,
            attention_flops=attn / self.shard + absorbed / self.shard,
            weight_bytes=w_bytes,
            kv_bytes=kv,
            activation_bytes=acts,
            tokens=tokens,
            overhead_s=overhead_s,
            comm_s=comm,
            host_s=self.prefill_host_s if prompt else self.host_s,
            expert_flops=ex_flops,
            expert_weight_bytes=ex_bytes,
            expert_tokens=ex_tokens,
            absorbed_attention_flops=absorbed / self.shard,
        )

    def seconds(self, parts, overhead_s: float, prompt: bool = False) -> float:
        """The time of one step of ``parts`` (``(sequences, cached, new, logits)`` tuples): ``phase(...).time_s``
        without building the report (``prompt``: the step carries prompt tokens)."""
        tokens, lm_tokens, attn, kv, absorbed = self._parts_sums(parts)
        w_bytes, acts, comm, ex_flops, ex_bytes, ex_tokens = self._token_terms(tokens)
        mm_flops = (2 * self.dense_params * tokens + 2 * self.lm_head * lm_tokens) / self.shard
        mm_flops += 2 * self.repl_share * tokens
        both, absorbed = attn / self.shard + absorbed / self.shard, absorbed / self.shard  # as ``work`` stores them
        at = (both - absorbed, absorbed)
        ops = self._op_times(tokens, mm_flops, at, w_bytes, kv, acts, ex_flops, ex_bytes, ex_tokens)
        if self.kernels is not None:
            ops, comm, _ = self._measured(ops, comm, parts, tokens, lm_tokens, acts)
        return self._total(ops, comm, self.prefill_host_s if prompt else self.host_s, overhead_s)[0]

    def _measured(self, ops, comm_s, parts, tokens, lm_tokens, acts_bytes):
        """``ops`` and the all-reduce time with each group the kernel tables cover at its measured time."""
        measured = self.kernels.groups(parts, tokens, lm_tokens)
        acts_s = acts_bytes / (self.gpu.bandwidth_bytes_per_s * self.w_mbu_max)
        return kernel_steps.measured_ops(ops, comm_s, measured, acts_s, self.wl.pp, self.experts_fixed_s)

    def _op_times(self, tokens, mm_flops, attn_flops, weights_bytes, kv_bytes, other_bytes, ex_flops, ex_bytes, ex_tok):
        """(compute, memory) seconds of the dense matmuls, the routed experts and attention, per GPU (``attn_flops``:
        the prompt form's and the absorbed form's)."""
        pa, bw, peak, math_used = self.pa, self.gpu.bandwidth_bytes_per_s, self.peak, self.math_used
        mfu, mfu_16 = self._mfu(tokens)
        w_mbu = mbu_curve(weights_bytes / self.layers, self.w_mbu_max, pa.mbu_half_bytes_per_layer)
        kv_mbu = mbu_curve(kv_bytes / self.layers, pa.kv_mbu_max, pa.kv_mbu_half_bytes_per_layer)
        # the routed experts are grouped GEMMs of their own: each expert sees only its share of the tokens
        ex_f = self.ex_f if (ex_flops or ex_bytes) else 1.0
        ex_comp = ex_flops / (peak * mfu_curve(ex_tok, pa, math_used) * ex_f) if ex_flops else 0.0
        ex_mem = ex_bytes / (bw * w_mbu * ex_f)
        mm_comp = (mm_flops - ex_flops) / (peak * mfu)
        mm_mem = (weights_bytes - ex_bytes + other_bytes) / (bw * w_mbu)
        at_comp = attn_flops[0] / (self.attn_peak * mfu_16) + attn_flops[1] / (self.attn_peak * self.abs_mfu)
        at_mem = kv_bytes / (bw * kv_mbu) if kv_bytes else 0.0
        return (mm_comp, mm_mem), (ex_comp, ex_mem), (at_comp, at_mem)

    def _total(self, ops, comm_s: float, host_s: float, overhead_s: float) -> tuple[float, float, float]:
        """The step's time, its core (the kernels, stages one after another) and the GPU's wait for the host."""
        (mm_comp, mm_mem), (ex_comp, ex_mem), (at_comp, at_mem) = ops
        experts = max(ex_comp, ex_mem) + (self.experts_fixed_s if self.m.is_moe else 0.0)
        core = (max(mm_comp, mm_mem) + experts + max(at_comp, at_mem)) * self.wl.pp  # stages run one after another
        waiting = max(0.0, host_s - core - comm_s)  # the GPU idles while the host launches kernels
        # a release line whose steps run longer than the step model's (hardware/engines.py step_time_factor)
        return (core + comm_s + waiting + overhead_s) * self.wl.step_time_factor, core, waiting

    def phase(self, name: str, parts: list[Part], overhead_s: float, prompt: bool = False) -> PhaseReport:
        """One engine step of ``parts`` (measured kernels where the tables cover them, the roofline elsewhere;
        ``prompt``: it carries prompt tokens)."""
        return self.phase_of(self.work(name, parts, overhead_s, prompt), parts)

    def phase_of(self, w: StepWork, parts: list[Part] | None = None) -> PhaseReport:
        """The report of one pass's work: its time, the compute / memory / overhead split and what bounds it
        (``parts`` given: with the kernel tables' times where they cover the step, and ``kernel_source`` says
        so)."""
        ops = self._op_times(
            w.tokens,
            w.matmul_flops,
            (w.attention_flops - w.absorbed_attention_flops, w.absorbed_attention_flops),
            w.weight_bytes,
            w.kv_bytes,
            w.activation_bytes,
            w.expert_flops,
            w.expert_weight_bytes,
            w.expert_tokens,
        )
        comm_s, names = w.comm_s, []
        if parts is not None and self.kernels is not None:
            tuples = [(p.sequences, p.cached, p.new, p.lm_head_tokens) for p in parts]
            lm_tokens = sum(p.lm_head_tokens for p in parts)
            ops, comm_s, names = self._measured(ops, comm_s, tuples, w.tokens, lm_tokens, w.activation_bytes)
        t, core, waiting = self._total(ops, comm_s, w.host_s, w.overhead_s)
        longer = 0.0 if self.wl.step_time_factor == 1 else t - (core + comm_s + waiting + w.overhead_s)
        compute_part = sum(c for c, b in ops if c >= b)
        memory_part = sum(b for c, b in ops if b > c)
        if core < w.overhead_s + comm_s + waiting:
            bound = "overhead"
        else:
            bound = "compute" if compute_part >= memory_part else "memory"
        flops = w.matmul_flops + w.attention_flops
        nbytes = w.weight_bytes + w.kv_bytes + w.activation_bytes
        pp, peak, bw = self.wl.pp, self.peak, self.gpu.bandwidth_bytes_per_s
        return PhaseReport(
            name=w.name,
            flops=flops,
            bytes=nbytes,
            weight_bytes=w.weight_bytes,
            kv_bytes=w.kv_bytes,
            time_s=t,
            compute_time_s=sum(c for c, _ in ops) * pp,
            memory_time_s=sum(b for _, b in ops) * pp,
            overhead_time_s=w.overhead_s + waiting + longer,
            comm_time_s=comm_s,
            bound=bound,
            intensity_flops_per_byte=flops / nbytes if nbytes else math.inf,
            achieved_flops_per_s=flops * pp / t,
            achieved_bytes_per_s=nbytes * pp / t,
            mfu=flops * pp / t / peak,
            mbu=nbytes * pp / t / bw,
            kernel_source=kernel_steps.source_label(self.kernels, self.kernels_reason, names),
        )


def phase_of(w: StepWork, m: ModelArch, gpu: GPU, wl: Workload, pa: PerfAssumptions) -> PhaseReport:
    """The report of one pass's work on this replica (``StepCost.phase_of``)."""
    return StepCost(m, gpu, wl, pa).phase_of(w)


def step_phase(
    name: str,
    m: ModelArch,
    gpu: GPU,
    wl: Workload,
    pa: PerfAssumptions,
    parts: list[Part],
    *,
    overhead_s: float,
    prompt: bool = False,
) -> PhaseReport:
    """One forward pass of everything in ``parts`` together (one engine step): the weight matmuls run once for
    all tokens, attention per part. A static batch is one part; a continuous-batching step mixes decodes
    (new = 1 after the context) and prefill chunks (serving.py)."""
    return StepCost(m, gpu, wl, pa).phase(name, parts, overhead_s, prompt)


def prefill_phase(m: ModelArch, gpu: GPU, wl: Workload, batch: int, prompt: int, pa: PerfAssumptions) -> PhaseReport:
    """A static batch's prefill: ``batch`` prompts, the prefix-cached share already in the KV cache, logits for
    each prompt's last token only."""
    cached = int(prompt * wl.prefix_cache_fraction)
    new = max(1, prompt - cached)
    part = Part(batch, cached, new, batch)
    return step_phase("prefill", m, gpu, wl, pa, [part], overhead_s=pa.prefill_overhead_s, prompt=True)


def decode_phase(
    m: ModelArch, gpu: GPU, wl: Workload, batch: int, context: int, pa: PerfAssumptions, *, tokens_per_seq: int = 1
) -> PhaseReport:
    """One decode step (or a speculative verify step of `tokens_per_seq` tokens) at `context` tokens."""
    part = Part(batch, context, tokens_per_seq, batch * tokens_per_seq)
    return step_phase("decode", m, gpu, wl, pa, [part], overhead_s=pa.decode_step_overhead_s)
