"""KV-cache capacity as each engine computes it at start-up, per engine and version.

An engine sizes its KV pool once, when it starts, from the memory left after what it reserves. The pool caps how
many sequences run at once, so it sets serving capacity. The terms are the inference budget's own components
(memory/inference.py: weights, activation workspace, CUDA graphs, context, communication buffers), so the budget a
page shows and the capacity agree; what differs per engine is the fraction it may fill and which components count
inside it.

vLLM (vllm/v1/worker/gpu_worker.py ``determine_available_memory``; vllm/utils ``memory_profiling``; V0:
vllm/worker/worker.py): pool = gpu_memory_utilization x total - weights - the profiling run's activation peak
(a dummy forward of ``max_num_batched_tokens`` tokens; V1 then runs the sampler on ``max_num_seqs`` dummy
sequences: fp32 logits and their sort/softmax copies) - non-torch memory (CUDA context; NCCL buffers at TP > 1).
CUDA graphs are captured after the pool is sized and sit outside the fraction, except from vLLM 0.21, where
"CUDA graph memory profiling is enabled (default since v0.21.0)" subtracts their estimate
(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS). V0 without chunked prefill profiles max(max_model_len, 2,048) tokens.
The pool is cut into whole blocks of 16 tokens.

SGLang (python/sglang/srt/model_executor/model_runner.py ``profile_max_num_token``): pool = free memory after
the weights load - total x (1 - mem_fraction_static) = mem_fraction_static x total - weights - context; token
pages of 1. The default mem_fraction_static (server_args.py ``__post_init__``) is (total - reserved) / total with
reserved 2.8 + TP x PP / 10 GiB below 35 GiB, 9.5 + TP x PP / 2 GiB below 90 GiB, 12 + TP x PP / 2 GiB below
160 GiB, else 32 GiB; releases before that rule used 0.88 at TP 1, 0.87 at TP 2, 0.85 at TP 4, 0.81 at TP 8.

TensorRT-LLM (KvCacheConfig.free_gpu_memory_fraction, default 0.9; tensorrt_llm/_torch/pyexecutor/_util.py
``estimate_max_kv_cache_tokens``): pool = fraction x the memory still free after the weights and the engine's
activation workspace at ``max_num_tokens`` (8,192) are in place.

Speculative decoding: the draft's weights are loaded with the model's (subtracted like them; inside SGLang's
fraction), and its KV cache shares the pool: each token takes the model's and the draft's bytes (vLLM sizes one
pool over both models' layers; SGLang's draft worker takes its own token pool of the same size out of the same
fraction), so the pool holds pool / (model's + draft's bytes per token) tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..hardware.catalog import GPU
from ..model.arch import ModelArch, check_tp, kv_cache_bytes
from ..model.formats import get_format
from .components import KEPT_COMPONENT, MemoryRequest, stage_fraction
from .inference import DRAFT_WEIGHTS, KV_COMPONENTS, draft_components, inference_budget, parse_version

METHODOLOGY_TEXT = (
    "Every serving engine sizes its KV cache once, at start-up, and that pool caps how many requests run at "
    "once. vLLM takes gpu_memory_utilization (default 0.9) of the GPU's memory and subtracts the weights, the "
    "activation peak of a dummy forward pass over max_num_batched_tokens tokens (plus the sampler's logits for "
    "max_num_seqs dummy requests) and memory outside PyTorch (CUDA context, NCCL buffers with tensor "
    "parallelism); from vLLM 0.21 it also subtracts its CUDA-graph estimate, earlier versions capture the graphs "
    "outside that fraction. SGLang keeps mem_fraction_static of the GPU for weights plus KV cache (default from "
    "the GPU's memory and TP size: about 0.84 on an 80 GB GPU at TP 1), so the pool is that share minus the "
    "weights. TensorRT-LLM gives free_gpu_memory_fraction (0.9) of what is still free after the weights and its "
    "activation workspace. Sources: vllm/v1/worker/gpu_worker.py determine_available_memory, "
    "sglang model_runner.py profile_max_num_token and server_args.py, TensorRT-LLM KvCacheConfig; checked "
    "against the start-up lines users post ('GPU KV cache size: N tokens', '# GPU blocks', 'KV Cache is "
    "allocated. #tokens', 'Using N tokens in paged KV cache')."
)

STARTUP_ENGINES = ("vllm", "sglang", "trtllm")  # engines that size a KV pool once at start-up
TRTLLM_DEFAULT_FREE_FRACTION = 0.9  # tensorrt_llm KvCacheConfig.free_gpu_memory_fraction
VLLM_GRAPHS_PROFILED_FROM = (0, 21)  # "CUDA graph memory profiling is enabled (default since v0.21.0)"


def vllm_counts_cuda_graphs(version: tuple[int, int] | None, enforce_eager: bool = False) -> bool:
    """Whether vLLM subtracts its CUDA-graph pool before sizing the KV cache (None: the current release, yes)."""
    return not enforce_eager and (version is None or version >= VLLM_GRAPHS_PROFILED_FROM)


def sglang_default_mem_fraction(total_bytes: float, tp: int = 1, pp: int = 1, *, legacy: bool = False) -> float:
    """SGLang's default mem_fraction_static (server_args.py ``__post_init__``): from the GPU's total memory and the
    TP x PP size; ``legacy`` gives the older TP-only table (0.88 / 0.87 / 0.85 / 0.81 / 0.79)."""
    if legacy:
        return 0.79 if tp >= 16 else 0.81 if tp >= 8 else 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
    mib, size = total_bytes / 2**20, tp * pp
    if mib < 35 * 1024:
        reserved = (2.8 + size / 10) * 1024
    elif mib < 90 * 1024:
        reserved = (9.5 + size / 2) * 1024
    elif mib < 160 * 1024:
        reserved = (12 + size / 2) * 1024
    else:
        reserved = 32 * 1024
    return round((mib - reserved) / mib, 3)


def engine_memory_fraction(req: MemoryRequest, gpu: GPU) -> float:
    """The fraction the engine's start-up rule uses: vLLM gpu_memory_utilization (the request's memory
    utilization), SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction; an explicit
    ``assumptions.engine_memory_fraction`` wins."""
    asm = req.assumptions
    if asm.engine_memory_fraction is not None:
        return asm.engine_memory_fraction
    if req.runtime.engine == "sglang":
        par = req.parallelism  # an EP replica is launched at --tp N (attention DP): its size is N
        return sglang_default_mem_fraction(gpu.vram_usable_bytes, par.tp * par.ep_or_one, par.pp)
    if req.runtime.engine == "trtllm":
        return TRTLLM_DEFAULT_FREE_FRACTION
    return req.runtime.memory_utilization


@dataclass(frozen=True)
class StartupKV:
    """What an engine reserves at start-up on one GPU, and the KV pool that is left (bytes per GPU)."""

    engine: str
    fraction: float  # the engine's memory fraction (see engine_memory_fraction)
    total_bytes: float  # the GPU's memory as torch reports it
    subtracted: dict[str, float] = field(default_factory=dict)  # the budget components inside the fraction
    outside: dict[str, float] = field(default_factory=dict)  # components the engine holds beyond the fraction
    pool_bytes: float = 0.0
    bytes_per_token: float = 0.0
    block_tokens: int = 1
    tokens: int = 0


def _bytes_per_token(m: ModelArch, req: MemoryRequest) -> float:
    """KV bytes one token of one sequence takes on one GPU: the model's, and a speculating replica's draft's beside
    it (memory/inference.py ``draft_components``: both caches hold every token)."""
    kvf = get_format(req.formats.kv_format).bytes_per_value
    one = kv_cache_bytes(
        m, kvf, 1, 1, tp=req.parallelism.tp, pp=req.parallelism.pp
    )  # every layer holds the token (windows >= 1)
    one = one if one > 0 else kvf * stage_fraction(m, req.parallelism.pp)
    draft = draft_components(m, req, 1, 1)
    return one + draft[KV_COMPONENTS[1]] if draft else one


def startup_kv(m: ModelArch, req: MemoryRequest, gpu: GPU) -> StartupKV:
    """The KV pool the engine of ``req`` allocates at start-up on one GPU of the layout (module docstring)."""
    check_tp(m, req.parallelism.tp)
    asm = req.assumptions
    b = inference_budget(m, req, 1, req.context_tokens)
    comps = {k: v for k, v in b.components.items() if k not in KV_COMPONENTS}
    total = gpu.vram_usable_bytes
    frac = engine_memory_fraction(req, gpu)
    version = parse_version(asm.stated_engine_version)
    outside: dict[str, float] = {}
    if (
        req.runtime.engine == "vllm"
        and "CUDA graphs" in comps
        and not vllm_counts_cuda_graphs(version, asm.enforce_eager)
    ):
        outside["CUDA graphs"] = comps.pop("CUDA graphs")
    if req.runtime.engine == "sglang":  # only weights (and the context) sit inside mem_fraction_static
        inside = {k: v for k, v in comps.items() if k in ("weights", KEPT_COMPONENT, DRAFT_WEIGHTS, "CUDA context")}
        outside.update({k: v for k, v in comps.items() if k not in inside})
        comps = inside
        pool = frac * total - sum(comps.values())
    elif req.runtime.engine == "trtllm":
        pool = frac * (total - sum(comps.values()))
    else:
        pool = frac * total - sum(comps.values())
    per_tok = _bytes_per_token(m, req)
    block = (
        asm.kv_block_tokens if req.runtime.engine == "vllm" else 1
    )  # SGLang pages of 1; TRT-LLM logs unrounded tokens
    tokens = max(0, int(pool // (per_tok * block)) * block)
    return StartupKV(req.runtime.engine, frac, total, comps, outside, max(0.0, pool), per_tok, block, tokens)


def startup_settings(setup: str) -> dict[str, float | bool]:
    """Engine settings written as 'name value' or 'name=value' in a measurement's setup text, e.g.
    'gpu_memory_utilization 0.95; max_model_len=20000; enforce_eager=true'."""
    out: dict[str, float | bool] = {}
    for key, val in re.findall(r"([a-z_]+)[ =]+([0-9]*\.?[0-9]+|true|false)\b", str(setup).lower()):
        out[key] = val == "true" if val in ("true", "false") else float(val)
    return out


_FRACTION_KEYS = (
    "gpu_memory_utilization",
    "mem_fraction_static",
    "free_gpu_memory_fraction",
    "kv_cache_free_gpu_mem_fraction",
)


def startup_request(
    engine: str, framework: str, setup: str, *, weights_format: str, kv_format: str, tp: int, pp: int = 1
) -> MemoryRequest:
    """The MemoryRequest of a logged start-up: engine, version (from ``framework``) and the settings in ``setup``
    (memory fraction, max_model_len, max_num_batched_tokens, max_num_seqs, enforce_eager, chunked prefill)."""
    s = startup_settings(setup)
    frac = next((float(s[k]) for k in _FRACTION_KEYS if k in s), None)
    asm: dict = {"stated_engine_version": framework, "engine_memory_fraction": frac}
    runtime: dict = {"engine": engine}
    if engine == "vllm" and frac is not None:
        runtime["memory_utilization"] = frac
    for key, name in (("max_num_batched_tokens", "max_batched_tokens"), ("max_num_seqs", "max_sampled_sequences")):
        if key in s:
            asm[name] = int(s[key])
    if "enforce_eager" in s:
        asm["enforce_eager"] = bool(s["enforce_eager"])
    if "enable_chunked_prefill" in s:
        asm["chunked_prefill"] = bool(s["enable_chunked_prefill"])
    ctx = int(s.get("max_model_len", 4096))
    from .components import Assumptions  # local: keeps the import list short

    return MemoryRequest(
        runtime=runtime,
        weights_format=weights_format,
        kv_format=kv_format,
        tp=tp,
        pp=pp,
        gpus=tp * pp,
        context_tokens=ctx,
        assumptions=Assumptions(**asm),
    )
