"""One replica of a scenario's model: the GPU, layout and formats it runs on, the request shape, the engine's
limits and the running limit the KV cache sets. What the serving model (serving.py) takes."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..common.units import GiB
from ..hardware.catalog import GPU
from ..hardware.engines import release
from ..memory.request import memory_request
from ..model.arch import ModelArch
from ..scenario.deployment import RuntimeAssumptions
from ..scenario.scenario import Scenario
from .efficiency import PerfAssumptions
from .roofline import Workload
from .schedulers import Policy
from .workload import workload_for

MAX_CONTEXT_TOKENS = 131_072  # a model's context where none is given (ModelArch.max_context_tokens' default)


class EngineLimits(BaseModel):
    """The scheduler's limits per step (vLLM names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_num_batched_tokens: int = Field(8192, ge=16, le=1_000_000, description="token budget of one engine step")
    max_num_seqs: int = Field(1024, ge=1, le=100_000, description="sequences running at once")
    policy: Policy | None = Field(
        None, description="how a step is filled (schedulers.py), where a release line sets it; None: the engine's"
    )


def engine_limits(
    gpu: GPU, engine: str = "vllm", version: str | None = None, max_context_tokens: int = MAX_CONTEXT_TOKENS
) -> EngineLimits:
    """The scheduler's defaults of the engine's release line ``version`` (hardware/engines.py RELEASES; None: its
    latest, the engine's own rule) for a model of ``max_context_tokens``: the release's policy, and its own budget
    and sequence cap where it sets them, else the engine's rule for the GPU. The policy travels in the limits, so
    every path that builds a replica from the scenario's limits (the plan's capacity search too) schedules as the
    line does. vLLM's OpenAI-compatible server (vllm/engine/arg_utils.py,
    EngineArgs.get_batch_defaults, vLLM 0.10+): 8,192 tokens per step and 1,024 sequences on GPUs with at least
    70 GiB that are not A100s, 2,048 and 256 on the others. SGLang (server_args.py): chunked_prefill_size 2,048
    under 35 GB, 8,192 up to 160 GB, 16,384 above. TensorRT-LLM (LLM API): max_num_tokens 8,192, max_batch_size
    2,048. transformers generate() has no scheduler: it is given vLLM's (the serving figures assume one)."""
    base = _latest_limits(gpu, engine)
    rel = release(engine, version) if version is not None else None
    if rel is None:
        return base
    policy, budget = rel.scheduling(max_context_tokens)
    if rel.small_gpu_chunk and budget == rel.chunk_tokens and gpu.vram_nominal_bytes < rel.small_gpu_chunk[0]:
        budget = rel.small_gpu_chunk[1]
    update = {"max_num_batched_tokens": budget, "max_num_seqs": rel.max_num_seqs, "policy": policy}
    return base.model_copy(update={k: v for k, v in update.items() if v is not None})


def _latest_limits(gpu: GPU, engine: str) -> EngineLimits:
    if engine == "sglang":
        mem = gpu.vram_nominal_bytes
        chunk = 2048 if mem < 35e9 else (8192 if mem < 160e9 else 16384)
        return EngineLimits(max_num_batched_tokens=chunk, max_num_seqs=1024)
    if engine == "trtllm":
        return EngineLimits(max_num_batched_tokens=8192, max_num_seqs=2048)
    if gpu.vram_usable_bytes >= 70 * GiB and not gpu.gpu.upper().startswith("A100"):
        return EngineLimits(max_num_batched_tokens=8192, max_num_seqs=1024)
    return EngineLimits(max_num_batched_tokens=2048, max_num_seqs=256)


def scenario_limits(
    gpu: GPU, assumptions: RuntimeAssumptions, max_context_tokens: int = MAX_CONTEXT_TOKENS
) -> EngineLimits:
    """The engine's scheduler defaults (its release line's) on this GPU for a model of ``max_context_tokens``, with
    the limits the user set in their place."""
    a = assumptions
    limits = engine_limits(gpu, a.engine, a.engine_version, max_context_tokens)
    return limits.model_copy(update=a.engine_limit_overrides())


def rank_limits(limits: EngineLimits, engine: str, ep: int) -> EngineLimits:
    """One attention data-parallel rank's scheduler limits in an expert-parallel replica of ``ep`` GPUs
    (perf/expert_parallel.py): SGLang divides its chunked-prefill budget by the DP size (server_args
    ``_handle_data_parallelism``: chunked_prefill_size // dp_size); vLLM's DP ranks are engines of their own and
    TensorRT-LLM's attention-DP ranks schedule alike, each with the engine's limits."""
    if ep <= 1 or engine != "sglang":
        return limits
    return limits.model_copy(update={"max_num_batched_tokens": max(16, limits.max_num_batched_tokens // ep)})


@dataclass(frozen=True)
class Replica:
    """What one replica serves: the model, GPU, layout and formats, the request shape, the engine's limits and
    the running limit the KV cache sets (``kv_sequences``: sequences of I + O tokens that fit)."""

    m: ModelArch
    gpu: GPU
    wl: Workload
    input_tokens: int
    output_tokens: int
    kv_sequences: int
    limits: EngineLimits
    pa: PerfAssumptions = PerfAssumptions()
    engine: str = "vllm"
    kv_tokens_total: int | None = None  # tokens the KV cache holds; None: kv_sequences x (input + output)
    request_in_s: float | None = None  # a calibrated deployment's fixed request cost; None: the engine's
    decode_time_factor: float = 1.0  # a calibrated deployment's decode-step time over the predicted one

    @property
    def max_running(self) -> int:
        return max(0, min(self.limits.max_num_seqs, self.kv_sequences))

    @property
    def kv_tokens(self) -> int:
        """Tokens of KV cache the engine holds for running sequences (what admission and preemption see)."""
        if self.kv_tokens_total is not None:
            return self.kv_tokens_total
        return self.kv_sequences * (self.input_tokens + self.output_tokens)

    @property
    def cached_tokens(self) -> int:
        return int(self.input_tokens * self.wl.prefix_cache_fraction)

    @property
    def new_tokens(self) -> int:
        return max(1, self.input_tokens - self.cached_tokens)


DEFAULT_GPU = "H100-SXM"


def replica_for(
    sc: Scenario, gpu_name: str | None = None, weights_format: str | None = None, ep: int = 1
) -> tuple[Replica, str | None]:
    """One replica of the scenario on a GPU type: at the scenario's layout when one sequence of input + output
    tokens fits there, else at the smallest layout that fits (and a note says so). ``ep`` above 1 (an MoE model):
    one rank of an expert-parallel replica of ``ep`` GPUs (perf/expert_parallel.py), tp = pp = 1, the sequences one
    GPU's KV cache holds; ValueError where that does not fit. ``ep`` 1: the scenario's tp x pp (an MoE model's
    ``ep``, which the layout search honours, is not read here)."""
    from ..hardware.catalog import get_gpu
    from ..memory.fit import max_batch, min_gpus
    from ..model.formats import get_format

    m = sc.model()
    gpu = get_gpu(gpu_name or sc.parallelism.gpu or DEFAULT_GPU)
    fmt = get_format(weights_format or sc.formats.weights_format).name
    ep = ep if m.is_moe else 1
    par = sc.parallelism  # EP as asked here, not as the scenario set it (memory_request's)
    at_ep = (1, 1, ep, ep) if ep > 1 else (par.tp, par.pp, par.gpus, None)
    req = memory_request(sc, batch=1, weights_format=fmt, **dict(zip(("tp", "pp", "gpus", "ep"), at_ep, strict=True)))
    tp, pp, note = (1, 1, None) if ep > 1 else (sc.parallelism.tp, sc.parallelism.pp, None)
    kv = max_batch(m, req, gpu)
    if kv == 0 and ep > 1:
        raise ValueError(f"{m.name} does not fit at expert parallel {ep} on {gpu.gpu}")
    if kv == 0:
        lay = min_gpus(m, req, gpu)
        if lay is None:
            raise ValueError(f"{m.name} does not fit on any layout of {gpu.gpu}")
        tp, pp = lay.tp, lay.pp
        kv = max_batch(m, req.model_copy(update={"tp": tp, "pp": pp, "gpus": tp * pp}), gpu)
        note = (
            f"Does not fit at tp={sc.parallelism.tp} x pp={sc.parallelism.pp}; one replica here is tp={tp} x pp={pp}."
        )
    limits = scenario_limits(gpu, sc.assumptions, m.max_context_tokens)
    return Replica(
        m,
        gpu,
        workload_for(sc.formats, sc.assumptions, tp, pp, fmt, ep, m),
        sc.request.input_tokens,
        sc.request.output_tokens,
        kv,
        limits,
        engine=sc.assumptions.engine,
        request_in_s=sc.assumptions.request_in_s,
        decode_time_factor=sc.assumptions.decode_time_factor,
    ), note
