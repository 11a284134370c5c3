"""Measured kernel times per operation where a GPU and engine are covered, the roofline elsewhere (named).

The tables (data/kernel_times/, extracted by bench/extract_kernel_times.py) are a subset of NVIDIA's
aiconfigurator-core 0.12.0 perf database (Apache-2.0; systems/data/<gpu>/<op>/<engine>/<version>/*.parquet):
dense GEMMs (BF16, per-tensor FP8) for tokens 1-16,384 and N, K 128-65,536; prefill and decode attention with
128-wide heads; NCCL all-reduce in half precision; the routed experts of a mixture-of-experts layer (``moe``: the
catalog's MoE shapes, balanced routing, experts split by tensor parallel); multi-head latent attention (``mla``:
DeepSeek's prefill and decode attention kernels, SGLang and TensorRT-LLM); on H100-SXM, H200 and B200 with vLLM
0.24.0, SGLang 0.5.14 and TensorRT-LLM 1.3.0rc20. A shape on the table's grid is its row ("measured"); between grid
points the time is interpolated multilinearly in log time over log sizes, as aiconfigurator interpolates between
measured shapes ("interpolated"); a GPU, engine, format or shape the tables do not cover gets the roofline
("roofline": the larger of FLOPs at the GPU's dense peak and bytes at its memory or link bandwidth, no efficiency),
with the reason.
"""

from __future__ import annotations

import bisect
import math
from functools import lru_cache

import pandas as pd

from ..common.data import DATA_DIR
from ..hardware.catalog import get_gpu
from ..results.kernels import KernelTime

TABLES = DATA_DIR / "kernel_times"
PACKAGE = "aiconfigurator-core 0.12.0"
HEAD_DIM = 128
_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "fp8_block": 1}
MLA_KV_WIDTH = 576  # values cached per token and layer by DeepSeek's MLA: the 512-wide latent and 64 RoPE values


class _Table:
    """One table's rows keyed by (coverage key, grid point), with each axis's grid per coverage key; a key's rows
    are indexed on first use (a replica asks for one GPU, engine and format)."""

    def __init__(self, frame: pd.DataFrame, keys: list[str], axes: list[str], label: str):
        self.axes, self.label = axes, label
        self._frame = frame
        self._positions = {
            (k if isinstance(k, tuple) else (k,)): v for k, v in frame.groupby(keys, sort=False).indices.items()
        }
        self.covered_keys = frozenset(self._positions)
        self._built: dict[tuple, tuple[dict, dict, list[list[int]]]] = {}
        self._versions: dict[tuple, str] = {}
        self._sources: dict[tuple, str] = {}

    def _data(self, key: tuple) -> tuple[dict, dict, list[list[int]]] | None:
        """(point -> ms, point -> log ms, each axis's grid) of one coverage key, or None."""
        got = self._built.get(key)
        if got is None:
            pos = self._positions.get(key)
            if pos is None:
                return None
            g = self._frame.iloc[pos]
            points = list(zip(*(g[a].astype(int).tolist() for a in self.axes), strict=True))
            ms = g["ms"].astype(float).tolist()
            rows = dict(zip(points, ms, strict=True))
            logs = {p: math.log(v) for p, v in rows.items()}
            grids = [sorted({p[i] for p in rows}) for i in range(len(self.axes))]
            got = self._built[key] = (rows, logs, grids)
        return got

    def version(self, key: tuple) -> str:
        got = self._versions.get(key)
        if got is None:
            got = self._versions[key] = str(self._frame["version"].iloc[self._positions[key][0]])
        return got

    def look_up(self, key: tuple, point: tuple[int, ...]) -> tuple[float, str] | str:
        """(seconds, 'measured' or 'interpolated') or the reason there is no figure."""
        data = self._data(key)
        if data is None:
            return f"no {self.label} table for {' '.join(map(str, key))}"
        rows, logs, grids = data
        ms = rows.get(point)
        if ms is not None:
            return ms / 1e3, "measured"
        los, his, ws = [], [], []
        for x, grid, axis in zip(point, grids, self.axes, strict=True):
            if not grid[0] <= x <= grid[-1]:
                return f"{axis} {x:,} outside the measured {grid[0]:,}-{grid[-1]:,}"
            hi = bisect.bisect_left(grid, x)
            lo, up = (x, x) if grid[hi] == x else (grid[hi - 1], grid[hi])
            los.append(lo)
            his.append(up)
            ws.append(0.0 if lo == up else (math.log(x) - math.log(lo)) / (math.log(up) - math.log(lo)))
        log_ms, d = 0.0, len(point)
        for mask in range(1 << d):  # the 2^d corners around the point, each weighted by its share on every axis
            corner, w = [], 1.0
            for i in range(d):
                if mask >> i & 1:
                    corner.append(his[i])
                    w *= ws[i]
                else:
                    corner.append(los[i])
                    w *= 1.0 - ws[i]
            if w == 0.0:
                continue
            lv = logs.get(tuple(corner))
            if lv is None:
                return f"no measured shape {tuple(corner)} beside the one asked"
            log_ms += w * lv
        return math.exp(log_ms) / 1e3, "interpolated"

    def source(self, key: tuple) -> str:
        got = self._sources.get(key)
        if got is None:
            rest = f" ({', '.join(map(str, key[2:]))})" if key[2:] else ""
            got = self._sources[key] = f"{PACKAGE} {self.label}: {key[0]} {key[1]} {self.version(key)}{rest}"
        return got


@lru_cache(maxsize=4)
def _table(name: str) -> _Table:
    frame = pd.read_csv(TABLES / f"{name}.csv.gz")
    if name == "gemm":
        return _Table(frame, ["gpu", "engine", "dtype"], ["m", "n", "k"], "GEMM")
    if name == "all_reduce":
        return _Table(frame, ["gpu", "library"], ["num_gpus", "message_elements"], "NCCL all-reduce")
    if name == "moe":
        keys = ["gpu", "engine", "dtype", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size"]
        return _Table(frame, keys, ["tokens"], "MoE experts")
    if name.startswith("mla"):
        length = "prompt_tokens" if name == "mla_prefill" else "past_tokens"
        label = "MLA prefill attention" if name == "mla_prefill" else "MLA decode attention"
        return _Table(frame, ["gpu", "engine", "kv_dtype", "num_heads"], ["batch", length], label)
    length = "prompt_tokens" if name == "attention_prefill" else "past_tokens"
    keys = ["gpu", "engine", "kv_dtype", "num_heads", "num_key_value_heads"]
    label = "prefill attention" if name == "attention_prefill" else "decode attention"
    return _Table(frame, keys, ["batch", length], label)


def _answer(op: str, table: str, key: tuple, point: tuple, roofline_s) -> KernelTime:
    """The table's answer, or ``roofline_s()`` (worked out only then) with the reason."""
    t = _table(table)
    found = t.look_up(key, point)
    if isinstance(found, str):
        return KernelTime(op, roofline_s(), "roofline", f"roofline ({found})")
    return KernelTime(op, found[0], found[1], t.source(key))


def _peak_flops(gpu: str, dtype: str) -> float:
    g = get_gpu(gpu)
    tflops = g.fp8_dense_tflops if dtype == "fp8" and g.fp8_dense_tflops else g.bf16_dense_tflops
    return tflops * 1e12


def gemm_time(gpu: str, engine: str, dtype: str, m: int, n: int, k: int) -> KernelTime:
    """A dense GEMM of m tokens x k inputs -> n outputs with ``dtype`` weights and activations ('bf16', 'fp8')."""
    b = _BYTES.get(dtype, 2)

    def roof() -> float:
        bw = get_gpu(gpu).bandwidth_gb_s * 1e9
        return max(2 * m * n * k / _peak_flops(gpu, dtype), ((m * k + k * n) * b + m * n * 2) / bw)

    return _answer("gemm", "gemm", (gpu, engine, dtype), (m, n, k), roof)


def prefill_attention_time(
    gpu: str, engine: str, batch: int, prompt_tokens: int, heads: int, kv_heads: int, kv_dtype: str = "bf16"
) -> KernelTime:
    """Causal attention over whole prompts (heads and KV heads per GPU, 128 wide)."""
    flops = 2 * 2 * batch * heads * HEAD_DIM * prompt_tokens * prompt_tokens / 2
    return _answer(
        "prefill_attention",
        "attention_prefill",
        (gpu, engine, kv_dtype, heads, kv_heads),
        (batch, prompt_tokens),
        lambda: flops / _peak_flops(gpu, "bf16"),
    )


def decode_attention_time(
    gpu: str, engine: str, batch: int, past_tokens: int, heads: int, kv_heads: int, kv_dtype: str = "bf16"
) -> KernelTime:
    """One decode step's attention: ``batch`` new tokens, each over ``past_tokens`` cached ones (aiconfigurator's
    ``step``), heads and KV heads per GPU."""
    kv_bytes = 2 * batch * past_tokens * kv_heads * HEAD_DIM * _BYTES.get(kv_dtype, 2)
    return _answer(
        "decode_attention",
        "attention_decode",
        (gpu, engine, kv_dtype, heads, kv_heads),
        (batch, past_tokens),
        lambda: kv_bytes / (get_gpu(gpu).bandwidth_gb_s * 1e9),
    )


def all_reduce_time(gpu: str, num_gpus: int, message_elements: int) -> KernelTime:
    """An all-reduce of ``message_elements`` half-precision values (tokens x hidden) over ``num_gpus`` in one node:
    the roofline moves 2 (n - 1) / n of the bytes over one GPU's link."""

    def roof() -> float:
        link = get_gpu(gpu).link_gb_s_per_direction or 32.0
        return 2 * (num_gpus - 1) / num_gpus * message_elements * 2 / (link * 1e9) if num_gpus > 1 else 0.0

    return _answer("all_reduce", "all_reduce", (gpu, "nccl"), (num_gpus, message_elements), roof)


def moe_time(
    gpu: str, engine: str, dtype: str, tokens: int, *, hidden: int, inter: int, topk: int, experts: int, tp: int
) -> KernelTime:
    """One mixture-of-experts layer's routed experts on one GPU: ``tokens`` tokens (before routing) each sent to
    ``topk`` of ``experts`` experts of ``hidden`` -> ``inter`` (gated) -> ``hidden``, the experts' weights split over
    ``tp`` GPUs, balanced routing; ``dtype`` 'bf16', 'fp8' (per tensor) or 'fp8_block'. The roofline: the routed
    FLOPs at the dense peak, or the weights of the experts the tokens touch at the memory bandwidth."""
    b = _BYTES.get(dtype, 2)

    def roof() -> float:
        one = 3 * hidden * inter / tp  # gate, up and down of one expert, per GPU
        touched = experts * (1 - (1 - topk / experts) ** tokens)
        bw = get_gpu(gpu).bandwidth_gb_s * 1e9
        return max(2 * tokens * topk * one / _peak_flops(gpu, "fp8" if b == 1 else "bf16"), touched * one * b / bw)

    key = (gpu, engine, dtype, hidden, inter, topk, experts, tp)
    return _answer("moe", "moe", key, (tokens,), roof)


def mla_prefill_time(gpu: str, engine: str, batch: int, prompt_tokens: int, heads: int, kv_dtype: str) -> KernelTime:
    """Causal multi-head latent attention over whole prompts (DeepSeek-V3/R1: 192-wide query-key heads, 128-wide
    values), ``heads`` per GPU."""
    flops = 2 * batch * heads * (192 + 128) * prompt_tokens * prompt_tokens / 2
    return _answer(
        "mla_prefill_attention",
        "mla_prefill",
        (gpu, engine, kv_dtype, heads),
        (batch, prompt_tokens),
        lambda: flops / _peak_flops(gpu, "bf16"),
    )


def mla_decode_time(gpu: str, engine: str, batch: int, past_tokens: int, heads: int, kv_dtype: str) -> KernelTime:
    """One decode step of multi-head latent attention: ``batch`` new tokens over ``past_tokens`` cached latents
    each (576 values a token), ``heads`` per GPU. The roofline reads the latents at the memory bandwidth."""
    kv_bytes = batch * past_tokens * MLA_KV_WIDTH * _BYTES.get(kv_dtype, 2)
    return _answer(
        "mla_decode_attention",
        "mla_decode",
        (gpu, engine, kv_dtype, heads),
        (batch, past_tokens),
        lambda: kv_bytes / (get_gpu(gpu).bandwidth_gb_s * 1e9),
    )
