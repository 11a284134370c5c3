"""An engine step from measured kernel times (kernels.py) where the GPU, engine, formats and model are covered, so
the step model (roofline.StepCost) can time a step by the kernels it runs instead of its calibrated roofline.

Per step of ``t`` tokens (prompt chunk tokens + decoding sequences) on one replica (tp x pp GPUs), every layer runs
  GEMMs       QKV (t x hidden -> (h + 2 kv) d / tp), output (h d / tp -> hidden), gate-up (hidden -> 2 I / tp) and
              down (I / tp -> hidden), at the weights' format; the LM head once (hidden -> vocab / tp, 16-bit)
  attention   decodes: ``decode_attention_time`` at their context; each prompt chunk: ``prefill_attention_time`` of
              its new tokens, times the attended pairs with its cached prefix over those without (causal)
  all-reduce  2 per layer of t x hidden values over tp GPUs (NCCL) when tp > 1
A dimension past the tables' largest (an LM head of 128k rows, m over 16,384 tokens) is split into equal GEMMs of
a measured size. Activations between layers, norms and sampling stay on the roofline (small, not in the tables);
the engine's per-step overhead and the host's launch time are the step model's, as on the roofline.

Each of the three groups (GEMMs, attention, all-reduce) of a step is measured or falls back to the calibrated
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
    if m.is_moe or m.is_mla:
        return "MoE and MLA kernels are not in the tables"
    if m.d != kernels.HEAD_DIM or m.sliding_window_layers:
        return "attention tables are 128-wide heads without a window"
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


@lru_cache(maxsize=20_000)
def _all_reduce_s(gpu: str, tp: int, elements: int) -> float | None:
    got = kernels.all_reduce_time(gpu, tp, elements)
    return None if got.kind == "roofline" else got.time_s


class MeasuredSteps:
    """One replica's step times from the kernel tables: ``groups(parts)`` is (GEMMs, attention, all-reduce) seconds
    over every layer of the step, each None where the tables do not cover it."""

    def __init__(self, m: ModelArch, gpu: GPU, engine: str, weights_format: str, kv_format: str, tp: int):
        self.m, self.gpu, self.engine, self.tp = m, gpu.gpu, engine, tp
        self.dtype, self.kv = _DTYPE[weights_format], _DTYPE[kv_format]
        self.heads = max(1, m.num_attention_heads // tp)
        self.kv_heads = max(1, m.num_kv_heads // tp)
        d, hidden, inter = m.d, m.hidden_size, m.intermediate_size
        self.shapes = (
            ((self.heads + 2 * self.kv_heads) * d, hidden),  # QKV
            (hidden, self.heads * d),  # output
            ((2 if m.mlp_gated else 1) * math.ceil(inter / tp), hidden),  # gate-up
            (hidden, math.ceil(inter / tp)),  # down
        )
        self.lm_head = (math.ceil(m.vocab_size / tp), hidden)
        self._per_tokens: dict[tuple[int, int], tuple[float | None, float | None]] = {}
        self.version = kernels._table("gemm").version((self.gpu, engine, self.dtype))

    def label(self) -> str:
        """What the UI says a measured step's figures come from."""
        return f"measured kernels ({kernels.PACKAGE}, {self.gpu}, {ENGINES[self.engine]} {self.version})"

    def _gemms_comm(self, tokens: int, lm_tokens: int) -> tuple[float | None, float | None]:
        got = self._per_tokens.get((tokens, lm_tokens))
        if got is None:
            g, layers = 0.0, self.m.num_layers
            for n, k in self.shapes:
                t = _gemm_s(self.gpu, self.engine, self.dtype, tokens, n, k)
                if t is None:
                    g = None
                    break
                g += t * layers
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
        for seqs, cached, new, _ in parts:
            if seqs <= 0:
                continue
            batch = max(1, round(seqs))
            if new == 1:
                t = _decode_attn_s(self.gpu, self.engine, self.kv, batch, max(1, cached), self.heads, self.kv_heads)
            else:
                t = _prefill_attn_s(self.gpu, self.engine, self.kv, batch, new, self.heads, self.kv_heads)
                if t is not None and cached:
                    t *= (new * cached + new * (new + 1) / 2) / (new * (new + 1) / 2)
            if t is None:
                return None
            total += t * seqs / batch
        return total * self.m.num_layers

    def groups(self, parts, tokens: float, lm_tokens: float) -> tuple[float | None, float | None, float | None]:
        """(GEMMs, attention, all-reduce) seconds of one step of ``parts`` (``(sequences, cached, new, logits)``)."""
        if tokens <= 0:
            return None, None, None
        g, comm = self._gemms_comm(max(1, round(tokens)), round(lm_tokens))
        return g, self._attention(parts), comm


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


def measured_ops(ops, comm_s: float, measured, acts_s: float, pp: int):
    """The step model's per-stage (compute, memory) pairs of GEMMs, experts and attention and its all-reduce
    seconds, with each group the tables measured put at its measured time (GEMMs + the activations' roofline
    time); and the names of the measured groups."""
    (mm, ex, at), (g, a, c) = ops, measured
    names = []
    if g is not None:
        mm, names = _to(mm, g / pp + acts_s), [*names, "GEMMs"]
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
    rest = [n for n in ("GEMMs", "attention", "all-reduce") if n not in names and (n != "all-reduce" or steps.tp > 1)]
    tail = f"; roofline for {', '.join(rest)} (outside the tables)" if rest else ""
    return f"{steps.label()}: {', '.join(names)}{tail}"
