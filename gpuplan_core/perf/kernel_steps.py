"""An engine step from measured kernel times (kernels.py) where the GPU, engine, formats and model are covered, so
the step model (roofline.StepCost) can time a step by the kernels it runs instead of its calibrated roofline.

Per step of ``t`` tokens (prompt chunk tokens + decoding sequences) on one replica (tp x pp GPUs), every layer runs
  GEMMs       QKV (t x hidden -> (h + 2 kv) d / tp) and output (h d / tp -> hidden), or MLA's projections (q down
              and up, the latent's down and up, output); in dense layers gate-up (hidden -> 2 I / tp) and down (I / tp
              -> hidden), in MoE layers the shared experts' alike; at the weights' format; the LM head once (hidden ->
              vocab / tp, 16-bit)
  experts     MoE layers: ``moe_time`` of the step's t tokens (before routing) through the routed experts, split by
              tensor parallel (balanced routing; the measured kernel replaces the roofline's routing floor)
  attention   decodes: ``decode_attention_time`` (MLA: ``mla_decode_time``) at their context (a speculative verify
              step's k + 1 tokens a sequence: at its last token's context); each prompt chunk:
              ``prefill_attention_time`` (``mla_prefill_time``) of its new tokens, times the attended pairs with its
              cached prefix over those without (causal)
  all-reduce  2 per layer of t x hidden values over tp GPUs (NCCL) when tp > 1
A dimension past the tables' largest (an LM head of 128k rows, m over 16,384 tokens) is split into equal GEMMs of
a measured size. Activations between layers, norms and sampling stay on the roofline (small, not in the tables);
the engine's per-step overhead and the host's launch time are the step model's, as on the roofline.

Each of the four groups (GEMMs, experts, attention, all-reduce) of a step is measured or falls back to the calibrated
roofline on its own (a shape outside the tables); the roofline's efficiency curves are never applied on top of a
measured time. The look-ups are memoised per shape (``functools.lru_cache``), so the step loop's time is a pure
function of the step and cheap once a shape has been seen.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..hardware.catalog import GPU
from ..model.arch import ModelArch
from . import kernels

ENGINES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
_DTYPE = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8"}  # FP16 runs the BF16 kernels' speed
_MAX_DIM = 65_536  # the GEMM tables' largest n and k
_MAX_M = 16_384  # and their largest m


# MoE and MLA models stay on the calibrated roofline by default. Their kernels are in the tables (``moe_time``,
# ``mla_*_time``) and MeasuredSteps times them, but the tables' engines (vLLM 0.24, SGLang 0.5.14, TensorRT-LLM
# 1.3) run them faster than every published MoE run (engines of 2025): with them, each source left out, MoE time per
# token 22% -> 30% and output tokens/s 32% -> 41% (first token 83% -> 79%); with the roofline's routing floor kept on
# top, 24% and 38%. MEASURED_MOE = True times MoE and MLA layers from the tables.
MEASURED_MOE = False


@lru_cache(maxsize=1)
def _covered_keys() -> frozenset[tuple[str, str, str]]:
    return kernels._table("gemm").covered_keys


def covered(gpu: str, engine: str, weights_format: str) -> bool:
    """Whether the tables have GEMMs for this GPU, engine and weights format (FP16 as BF16)."""
    dtype = _DTYPE.get(weights_format)
    return dtype is not None and (gpu, engine, dtype) in _covered_keys()


def not_covered_reason(m: ModelArch, gpu: GPU, engine: str | None, weights_format: str, kv_format: str) -> str | None:
    """Why a replica's steps cannot be timed from the kernel tables (None: they can)."""
    if engine not in ENGINES:
        return f"no kernel tables for engine {engine}"
    if not covered(gpu.gpu, engine, weights_format):
        return f"no GEMM table for {gpu.gpu} {ENGINES[engine]} {weights_format}"
    if kv_format not in _DTYPE:
        return f"no attention table for a {kv_format} KV cache"
    if not m.is_mla and (m.d != kernels.HEAD_DIM or m.sliding_window_layers):
        return "attention tables are 128-wide heads without a window"
    if (m.is_moe or m.is_mla) and not MEASURED_MOE:
        return "MoE and MLA kernels measured on current engines read faster than the published runs"
    return None


@lru_cache(maxsize=200_000)
def _gemm_s(gpu: str, engine: str, dtype: str, m: int, n: int, k: int) -> float | None:
    """Seconds of one GEMM, a dimension past the tables split into equal measured pieces (None: not measured)."""
    pm, pn, pk = math.ceil(m / _MAX_M), math.ceil(n / _MAX_DIM), math.ceil(k / _MAX_DIM)
    got = kernels.gemm_time(gpu, engine, dtype, math.ceil(m / pm), math.ceil(n / pn), math.ceil(k / pk))
    return None if got.kind == "roofline" else got.time_s * pm * pn * pk


@lru_cache(maxsize=200_000)
def _decode_attn_s(gpu: str, engine: str, kv: str, batch: int, past: int, h: int, kvh: int) -> float | None:
    got = kernels.decode_attention_time(gpu, engine, batch, past, h, kvh, kv)
    return None if got.kind == "roofline" else got.time_s


@lru_cache(maxsize=200_000)
def _prefill_attn_s(gpu: str, engine: str, kv: str, batch: int, new: int, h: int, kvh: int) -> float | None:
    got = kernels.prefill_attention_time(gpu, engine, batch, new, h, kvh, kv)
    return None if got.kind == "roofline" else got.time_s


@lru_cache(maxsize=200_000)
def _mla_s(gpu: str, engine: str, kv: str, batch: int, length: int, heads: int, decode: bool) -> float | None:
    look = kernels.mla_decode_time if decode else kernels.mla_prefill_time
    got = look(gpu, engine, batch, length, heads, kv)
    return None if got.kind == "roofline" else got.time_s


@lru_cache(maxsize=200_000)
def _moe_s(gpu: str, engine: str, dtypes: tuple[str, ...], tokens: int, shape: tuple[int, int, int, int, int]):
    """Seconds of one MoE layer's routed experts, more tokens than the table's largest split into equal pieces,
    the first of ``dtypes`` the table has (None: not measured)."""
    pieces = math.ceil(tokens / _MAX_M)
    hidden, inter, topk, experts, tp = shape
    for dtype in dtypes:
        got = kernels.moe_time(
            gpu,
            engine,
            dtype,
            math.ceil(tokens / pieces),
            hidden=hidden,
            inter=inter,
            topk=topk,
            experts=experts,
            tp=tp,
        )
        if got.kind != "roofline":
            return got.time_s * pieces
    return None


@lru_cache(maxsize=20_000)
def _all_reduce_s(gpu: str, tp: int, elements: int) -> float | None:
    got = kernels.all_reduce_time(gpu, tp, elements)
    return None if got.kind == "roofline" else got.time_s


def _mlp(m: ModelArch, inter: int, tp: int) -> tuple[tuple[int, int], ...]:
    """(n, k) of a gated (or plain) MLP's gate-up and down GEMMs, split by tensor parallel."""
    return ((2 if m.mlp_gated else 1) * math.ceil(inter / tp), m.hidden_size), (m.hidden_size, math.ceil(inter / tp))


def _attention_shapes(m: ModelArch, heads: int, kv_heads: int) -> tuple[tuple[int, int], ...]:
    """(n, k) of a layer's attention projections per GPU: QKV and output, or MLA's (q down and up or q alone, the
    latent and RoPE key down, the latent's up to keys and values, output)."""
    hidden = m.hidden_size
    if not m.is_mla:
        return ((heads + 2 * kv_heads) * m.d, hidden), (hidden, heads * m.d)
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    q = ((m.q_lora_rank, hidden), (heads * qk, m.q_lora_rank)) if m.q_lora_rank else ((heads * qk, hidden),)
    latent = (
        (m.kv_lora_rank + m.qk_rope_head_dim, hidden),
        (heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank),
    )
    return (*q, *latent, (hidden, heads * m.v_head_dim))


class MeasuredSteps:
    """One replica's step times from the kernel tables: ``groups(parts)`` is (GEMMs, attention, all-reduce,
    experts) seconds over every layer of the step, each None where the tables do not cover it (experts: 0.0 for a
    dense model)."""

    def __init__(self, m: ModelArch, gpu: GPU, engine: str, weights_format: str, kv_format: str, tp: int):
        self.m, self.gpu, self.engine, self.tp = m, gpu.gpu, engine, tp
        self.dtype, self.kv = _DTYPE[weights_format], _DTYPE[kv_format]
        self.heads = max(1, m.num_attention_heads // tp)
        self.kv_heads = max(1, m.num_kv_heads // tp)
        moe_layers = m.moe_layers if m.is_moe else 0
        shared = m.shared_expert_intermediate_size or m.expert_intermediate_size * m.num_shared_experts
        # (n, k, layers that run it)
        self.shapes = tuple((n, k, m.num_layers) for n, k in _attention_shapes(m, self.heads, self.kv_heads))
        self.shapes += tuple((n, k, m.num_layers - moe_layers) for n, k in _mlp(m, m.intermediate_size, tp))
        if moe_layers and shared:
            self.shapes += tuple((n, k, moe_layers) for n, k in _mlp(m, shared, tp))
        self.moe = (
            (m.hidden_size, m.expert_intermediate_size, m.experts_per_token, m.num_experts, tp) if m.is_moe else None
        )
        self.moe_dtypes = ("bf16",) if self.dtype == "bf16" else ("fp8", "fp8_block")
        self.lm_head = (math.ceil(m.vocab_size / tp), m.hidden_size)
        self._per_tokens: dict[tuple[int, int], tuple[float | None, float | None]] = {}
        self.version = kernels._table("gemm").version((self.gpu, engine, self.dtype))

    def label(self) -> str:
        """What the UI says a measured step's figures come from."""
        return f"measured kernels ({kernels.PACKAGE}, {self.gpu}, {ENGINES[self.engine]} {self.version})"

    def _gemms_comm(self, tokens: int, lm_tokens: int) -> tuple[float | None, float | None]:
        got = self._per_tokens.get((tokens, lm_tokens))
        if got is None:
            g, layers = 0.0, self.m.num_layers
            for n, k, runs in self.shapes:
                t = _gemm_s(self.gpu, self.engine, self.dtype, tokens, n, k) if runs else 0.0
                if t is None:
                    g = None
                    break
                g += t * runs
            if g is not None and lm_tokens:
                lm = _gemm_s(self.gpu, self.engine, "bf16", lm_tokens, *self.lm_head)
                g = None if lm is None else g + lm
            comm = 0.0
            if self.tp > 1:
                ar = _all_reduce_s(self.gpu, self.tp, tokens * self.m.hidden_size)
                comm = None if ar is None else 2 * layers * ar
            got = self._per_tokens[tokens, lm_tokens] = (g, comm)
        return got

    def _attention(self, parts) -> float | None:
        total = 0.0
        for seqs, cached, new, lm in parts:
            if seqs <= 0:
                continue
            if new > 1 and lm == seqs * new:  # a speculative verify step (logits for every token): the decode
                cached, new = cached + new - 1, 1  # kernel over its context, the KV read once for its k + 1 queries
            batch = max(1, round(seqs))
            if self.m.is_mla:
                t = _mla_s(
                    self.gpu, self.engine, self.kv, batch, max(1, cached) if new == 1 else new, self.heads, new == 1
                )
            elif new == 1:
                t = _decode_attn_s(self.gpu, self.engine, self.kv, batch, max(1, cached), self.heads, self.kv_heads)
            else:
                t = _prefill_attn_s(self.gpu, self.engine, self.kv, batch, new, self.heads, self.kv_heads)
                if t is not None and cached:
                    t *= (new * cached + new * (new + 1) / 2) / (new * (new + 1) / 2)
            if t is None:
                return None
            total += t * seqs / batch
        return total * self.m.num_layers

    def _experts(self, tokens: int) -> float | None:
        if self.moe is None:
            return 0.0
        t = _moe_s(self.gpu, self.engine, self.moe_dtypes, tokens, self.moe)
        return None if t is None else t * self.m.moe_layers

    def groups(self, parts, tokens: float, lm_tokens: float) -> tuple[float | None, ...]:
        """(GEMMs, attention, all-reduce, experts) seconds of one step of ``parts`` (``(sequences, cached, new,
        logits)``)."""
        if tokens <= 0:
            return None, None, None, None
        g, comm = self._gemms_comm(max(1, round(tokens)), round(lm_tokens))
        return g, self._attention(parts), comm, self._experts(max(1, round(tokens)))


def for_replica(m: ModelArch, gpu: GPU, engine: str | None, weights_format: str, kv_format: str, tp: int):
    """The replica's measured steps, or None (with the reason) where the tables do not cover it."""
    reason = not_covered_reason(m, gpu, engine, weights_format, kv_format)
    if reason is not None:
        return None, reason
    return MeasuredSteps(m, gpu, engine, weights_format, kv_format, tp), None


def _to(pair: tuple[float, float], seconds: float) -> tuple[float, float]:
    """A roofline (compute, memory) pair rescaled so that its larger part is ``seconds`` (the split kept)."""
    top = max(pair)
    return (pair[0] * seconds / top, pair[1] * seconds / top) if top > 0 else (seconds, 0.0)


def measured_ops(ops, comm_s: float, measured, acts_s: float, pp: int, experts_fixed_s: float = 0.0):
    """The step model's per-stage (compute, memory) pairs of GEMMs, experts and attention and its all-reduce
    seconds, with each group the tables measured put at its measured time (GEMMs + the activations' roofline
    time; experts less the roofline's routing floor ``experts_fixed_s``, which the step adds back); and the names of
    the measured groups."""
    (mm, ex, at), (g, a, c, e) = ops, measured
    names = []
    if g is not None:
        mm, names = _to(mm, g / pp + acts_s), [*names, "GEMMs"]
    if e:
        ex, names = _to(ex, max(0.0, e / pp - experts_fixed_s)), [*names, "experts"]
    if a is not None:
        at, names = _to(at, a / pp), [*names, "attention"]
    if c is not None and comm_s:
        comm_s, names = c, [*names, "all-reduce"]
    return (mm, ex, at), comm_s, names


def source_label(steps: MeasuredSteps | None, reason: str | None, names: list[str]) -> str:
    """What a step's time came from: 'roofline' (and why), or the measured kernels and which groups they timed."""
    if steps is None:
        return f"roofline ({reason})" if reason else "roofline"
    if not names:
        return "roofline (shapes outside the measured kernel tables)"
    groups = ("GEMMs", "experts", "attention", "all-reduce")
    rest = [
        n
        for n in groups
        if n not in names and (n != "all-reduce" or steps.tp > 1) and (n != "experts" or steps.moe is not None)
    ]
    tail = f"; roofline for {', '.join(rest)} (outside the tables)" if rest else ""
    return f"{steps.label()}: {', '.join(names)}{tail}"
