"""Serving engines: the runtime terms of the memory budget, from each engine's documented defaults; the software
that serves on the accelerators that are not GPUs is in accelerators.py (re-exported here).

On a TPU, Trainium, Inferentia or Gaudi the memory budget keeps the profile the scenario names (vLLM by default):
vLLM's hardware plugins (vllm-project/tpu-inference, vllm-project/vllm-neuron, vllm-project/vllm-gaudi) take
vLLM's engine arguments (max_num_batched_tokens, max_num_seqs, block_size), so the chunked-prefill, logits and
KV-block terms are vLLM's. Separate profiles are not added: the start-up KV pool, the scheduler defaults and the
eager flag are keyed on the engine's name in memory/engine_kv.py, memory/fit.py, perf/replica.py and
perf/workload.py, and no published start-up log or measurement on these chips is there to set them apart.
``ACCELERATOR_SOFTWARE`` names what serves on each kind, for the answer's why-chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..model.formats import get_format
from .catalog import GPU

Engine = Literal["vllm", "sglang", "trtllm", "transformers"]
EngineVersion = Literal["0.6", "0.10+", "0.4", "0.5", "0.14", "0.17", "1.x"]  # a release line where behaviour differs


@dataclass(frozen=True)
class EngineProfile:
    """The runtime terms of a serving engine's memory budget, from its documented defaults."""

    name: str
    label: str
    cuda_graphs: bool  # a CUDA-graph pool (Assumptions.cuda_graph_bytes)
    prefill_chunk_tokens: int | None  # tokens per step of chunked prefill; None: the whole prompt x batch at once
    logits_sequences: int | None  # sequences whose fp32 logits the peak holds; None: the batch
    kv_block_tokens: int  # KV cache allocated in blocks of this many tokens (1: per token)
    source: str


ENGINES: dict[str, EngineProfile] = {
    e.name: e
    for e in (
        EngineProfile(
            "vllm",
            "vLLM (V1, defaults)",
            True,
            8192,
            256,
            16,
            "vLLM engine args: max_num_batched_tokens 8,192 on >= 70 GiB GPUs (EngineArgs.get_batch_defaults), the "
            "profile run's 256 sampled sequences, block_size 16, CUDA graphs on; measured overheads from the "
            "llm-d-planner accuracy report (vLLM 0.19, H100)",
        ),
        EngineProfile(
            "sglang",
            "SGLang",
            True,
            8192,
            160,
            1,
            "SGLang server_args: chunked_prefill_size 8,192 on 35-160 GB GPUs (2,048 below, 16,384 above), "
            "cuda_graph_max_bs 160, page_size 1 (token-level KV), CUDA graphs on",
        ),
        EngineProfile(
            "trtllm",
            "TensorRT-LLM",
            True,
            8192,
            2048,
            32,
            "TensorRT-LLM LLM API: max_num_tokens 8,192, max_batch_size 2,048, KvCacheConfig.tokens_per_block 32, "
            "CUDA graphs in the PyTorch backend",
        ),
        EngineProfile(
            "transformers",
            "Hugging Face transformers generate()",
            False,
            None,
            None,
            1,
            "transformers generate(): no CUDA graphs, the whole prompt of every sequence in one forward pass, logits "
            "of the last token only (logits_to_keep, transformers >= 4.45), a KV cache that grows token by token",
        ),
    )
}


@dataclass(frozen=True)
class EngineRelease:
    """One release line of a serving engine, where its scheduling defaults differ from the other lines': the
    policy (perf/schedulers.py), whether prompts are chunked, the step's token budget and the sequences at once,
    and the CUDA-graph batch sizes, each as the release's own code sets it.

    ``chunked_prefill``: "on" (always), "long_context" (only when the model's context is over
    ``long_context_tokens``, vLLM V0's rule) or "off" (whole prompts: the budget is ``max(context,
    unchunked_min_tokens)``, or the engine's own where that is None). ``chunk_tokens`` / ``max_num_seqs``: None
    where the release sets them by the GPU (perf/replica.engine_limits). ``cuda_graphs``: False where the line
    runs its decode steps without CUDA graphs unless asked (every pass then pays the host's launch time,
    perf/roofline.py ``host_s``). ``prefill_graphs``: False where the line graphs decode-only steps and launches a
    prompt step's layers from Python (vLLM V0 ``_use_captured_graph`` needs ``decode_only``; SGLang
    ``CudaGraphRunner.can_run`` takes decode and idle batches; TensorRT-LLM's PyTorch backend graphs generation-only
    batches, piecewise prefill graphs opt-in): an MoE prompt step pays the launches (roofline ``prefill_host_s``).
    ``step_time_factor``: how much longer this line's engine steps take than the step
    model's (whose measured kernel tables are the latest lines', aiconfigurator-core 0.12: vLLM 0.24, SGLang 0.5.14,
    TensorRT-LLM 1.3), read on the line's own saturated runs (perf/serving_loso.py ``fit_step_factors``; 1.0 where
    the line has none), every step (prompt chunks and decodes) alike."""

    engine: str
    version: str
    label: str
    covers: tuple[str, ...]  # published version prefixes this line covers ("0.6", "0.7")
    policy: str  # perf/schedulers.Policy when prompts are chunked
    unchunked_policy: str  # ... and when they are not
    chunked_prefill: Literal["on", "long_context", "off"]
    chunk_tokens: int | None
    max_num_seqs: int | None
    cuda_graph_max_batch: int | None  # the largest batch a CUDA graph is captured for (None: not stated here)
    source: str
    long_context_tokens: int = 32_768
    unchunked_min_tokens: int | None = 2048
    small_gpu_chunk: tuple[float, int] | None = None  # (GPU memory in bytes, budget): below it, this budget
    cuda_graphs: bool = True  # decode steps run as CUDA graphs by default
    prefill_graphs: bool = False  # steps with prompt tokens run graphed or from C++ (no per-layer Python launches)
    listed: tuple[str, ...] | None = None  # the GPUs or architectures its support page lists (None: not stated)
    step_time_factor: float = 1.0  # its engine steps' time over the step model's (fitted, see step_time_source)
    step_time_source: str = "the step model's own (no saturated run of this line to read it on)"

    def chunked(self, max_context_tokens: int) -> bool:
        """Whether this release chunks prompts for a model of this context length (with its defaults)."""
        if self.chunked_prefill == "long_context":
            return max_context_tokens > self.long_context_tokens
        return self.chunked_prefill == "on"

    def scheduling(self, max_context_tokens: int) -> tuple[str, int | None]:
        """The policy and the step's token budget (None: the engine's rule for the GPU) for a model of this
        context length."""
        if self.chunked(max_context_tokens):
            return self.policy, self.chunk_tokens
        if self.unchunked_min_tokens is None:
            return self.unchunked_policy, None
        return self.unchunked_policy, max(max_context_tokens, self.unchunked_min_tokens)


# TensorRT-LLM's own lists of the hardware it develops and tests on ("if a GPU architecture is not listed, the
# TensorRT-LLM team does not develop or test the software on the architecture and support is limited to community
# support"). 1.x: docs "Supported Hardware" (B200, GB200, B300, GB300, DGX Spark; H100, H200, GH200; L20, L40/L40S;
# A100), the catalog's rows of those. 0.x: docs/source/reference/support-matrix.md (the 0.18-0.19 matrix, container
# 25.03): the Blackwell, Hopper, Ada Lovelace and Ampere architectures, with FP8 only from SM 89 (Ada) on.
TRTLLM_1X_GPUS = (
    "B200",
    "H100-SXM",
    "H100-PCIe",
    "H200",
    "L40",
    "L40S",
    "A100-80GB-SXM",
    "A100-80GB-PCIe",
    "A100-40GB",
)
TRTLLM_0X_ARCHITECTURES = ("Blackwell", "Hopper", "Ada", "Ampere")
TRTLLM_SOURCE = (
    "NVIDIA TensorRT-LLM docs: 'Supported Hardware' (1.x) and reference/support-matrix.md (0.x: Ampere SM80/SM86 "
    "runs FP32, FP16, BF16, INT8, INT4; FP8 from Ada SM89)"
)
NVIDIA_ARCHITECTURES = ("Blackwell", "Hopper", "Ada", "Ampere", "Turing", "Volta")
# TensorRT-LLM 0.x's C++ runtime runs TensorRT engines built by trtllm-build with that release's kernels, and its
# executor loop (cpp/tensorrt_llm/executor/executorImpl.cpp executionLoop: forwardSync, the responses, fetching new
# requests, then forwardAsync's scheduling and buffer set-up) prepares each step on the host only after the last one
# ended: the overlap scheduler, which launches step n + 1 before the host's work on step n (docs "Overlap
# Scheduler"), came with the PyTorch backend (0.17 on, opt-in as enable_overlap_scheduler in 0.18, on by default in
# 1.x). Its steps take longer than the step model's, whose kernel tables are TensorRT-LLM 1.3's. Read on TensorRT-LLM
# 0.14's own offline throughput table (trtllm-bench, fixed lengths, dense models; the training rows of
# data/serving_measurements.csv `trt014off`): the median over its runs of the predicted over the measured output
# tokens/s with every step at the step model's time (bench/fit_serving.py --steps).
TRTLLM_014_STEP_FACTOR = 1.1752
TRTLLM_014_STEP_SOURCE = (
    "TensorRT-LLM 0.14's offline throughput table (trt014off: 41 training rows of dense models at fixed lengths on "
    "H200, H100, A100 and L40S): predicted / measured output tokens/s 1.175 at the median"
)

RELEASES: dict[tuple[str, str], EngineRelease] = {
    (r.engine, r.version): r
    for r in (
        EngineRelease(
            "vllm",
            "0.6",
            "vLLM 0.6-0.7 (V0 engine)",
            ("0.6", "0.7"),
            "decode_first",
            "prefill_first",
            "long_context",
            512,
            256,
            256,
            "vLLM 0.6.3 vllm/engine/arg_utils.py: chunked prefill on by default only for a max_model_len over 32K on "
            "CUDA (ROCm included); vllm/config.py SchedulerConfig: max_num_batched_tokens 512 with chunked prefill "
            "(decodes first, then prompt chunks), else max(max_model_len, 2,048) and whole prompts before decodes "
            "(vllm/core/scheduler.py _schedule_default: prefills first, decodes wait); max_num_seqs 256; CUDA graphs "
            "for batches up to 256 (_BATCH_SIZES_TO_CAPTURE)",
        ),
        EngineRelease(
            "vllm",
            "0.10+",
            "vLLM 0.10 and later (V1 engine)",
            ("0.8", "0.9", "0.10", "0.11", "0.12", "0.13", "0.14", "0.15", "0.16", "0.17", "0.18", "0.19", "1."),
            "decode_first",
            "decode_first",
            "on",
            None,
            None,
            512,
            "vLLM V1 vllm/v1/core/sched/scheduler.py: chunked prefill always on, decodes first; "
            "EngineArgs.get_batch_defaults (0.10+): 8,192 tokens and 1,024 sequences on >= 70 GiB GPUs that are not "
            "A100s, 2,048 and 256 on others; CUDA graphs up to min(2 x max_num_seqs, 512) "
            "(compilation config cudagraph_capture_sizes). 0.8-0.9 run as V1 too (their API-server budget, 2,048, "
            "is not kept apart)",
            prefill_graphs=True,  # V1 compiles the model and replays piecewise CUDA graphs for mixed steps
        ),
        EngineRelease(
            "sglang",
            "0.4",
            "SGLang 0.4",
            ("0.4",),
            "prefill_first",
            "prefill_first",
            "on",
            8192,
            None,
            160,
            "SGLang 0.4 server_args.py: chunked_prefill_size 2,048 under 25 GB of GPU memory, 8,192 otherwise; "
            "cuda_graph_max_bs 160; prefill batches before decodes (scheduler.get_next_batch_to_run)",
            small_gpu_chunk=(25_000 * 2**20, 2048),  # gpu_mem in MiB, as torch reports it
        ),
        EngineRelease(
            "sglang",
            "0.5",
            "SGLang 0.5",
            ("0.5",),
            "prefill_first",
            "prefill_first",
            "on",
            None,
            None,
            None,
            "SGLang 0.5 server_args.py: chunked_prefill_size by GPU memory (2,048 under 35 GB, 8,192 up to 160 GB, "
            "16,384 above); cuda_graph_max_bs by GPU memory and TP (not read here); prefill batches before decodes",
        ),
        EngineRelease(
            "trtllm",
            "0.14",
            "TensorRT-LLM 0.x (C++ runtime, trtllm-build engine)",
            ("0.",),  # the C++ runtime; 0.1x rows served by the PyTorch backend run as 1.x (release_of)
            "no_evict",
            "no_evict",
            "off",
            None,
            None,
            None,
            "TensorRT-LLM 0.14 trtllm-build: max_batch_size 2,048 (the default since 0.11's release notes: "
            "'[BREAKING CHANGE] The default max_batch_size of the trtllm-build command is set to 2048'), "
            "max_num_tokens 8,192; in-flight batching with GUARANTEED_NO_EVICT; enable_chunked_context off (a "
            "prompt over the budget is refused, so the step loop chunks it). The step loop schedules it as 1.x",
            unchunked_min_tokens=None,
            listed=TRTLLM_0X_ARCHITECTURES,
            prefill_graphs=True,  # the C++ runtime enqueues the built engine: no per-layer Python launches
            step_time_factor=TRTLLM_014_STEP_FACTOR,
            step_time_source=TRTLLM_014_STEP_SOURCE,
        ),
        EngineRelease(
            "trtllm",
            "0.17",
            "TensorRT-LLM 0.17-0.21 (PyTorch backend, no CUDA graphs by default)",
            ("0.",),  # with the PyTorch backend (release_of); the C++ runtime's 0.x runs as 0.14
            "no_evict",
            "no_evict",
            "off",
            None,
            None,
            None,
            "TensorRT-LLM's PyTorch backend before 1.0 (trtllm-serve --backend pytorch): the LLM API's defaults, as "
            "1.x's, but tensorrt_llm/_torch/pyexecutor/config.py PyTorchConfig use_cuda_graph: bool = False (CUDA "
            "graphs only when the extra LLM API options ask); NVIDIA/TensorRT-LLM PR #5480 ('Breaking change: "
            "Enable cuda graph by default', merged July 2025) turned them on. NVIDIA's DeepSeek-R1 blog (blog3): CUDA "
            "graphs 22% end to end, 'particularly on the PyTorch flow, because the python host code normally "
            "executes slower than C++'",
            unchunked_min_tokens=None,
            cuda_graphs=False,
            listed=TRTLLM_0X_ARCHITECTURES,
        ),
        EngineRelease(
            "trtllm",
            "1.x",
            "TensorRT-LLM 1.x (PyTorch backend)",
            ("1.",),
            "no_evict",
            "no_evict",
            "off",
            None,
            None,
            None,
            "TensorRT-LLM 1.x LLM API / trtllm-serve: max_batch_size 2,048, max_num_tokens 8,192, "
            "GUARANTEED_NO_EVICT, enable_chunked_prefill off",
            unchunked_min_tokens=None,
            listed=TRTLLM_1X_GPUS,
        ),
    )
}
LATEST = {"vllm": "0.10+", "sglang": "0.5", "trtllm": "1.x"}  # the line an unset version means


def release(engine: str, version: str | None = None) -> EngineRelease | None:
    """The release line of ``engine`` (its latest where ``version`` is None); None for an engine with no release
    lines (transformers) or a version the engine does not have."""
    key = version or LATEST.get(engine)
    return RELEASES.get((engine, key)) if key else None


def step_time_factor(engine: str, version: str | None = None) -> float:
    """How much longer the engine's steps at this release line (its latest where None) take than the step model's
    (``EngineRelease.step_time_factor``; 1.0 for an engine with no release lines)."""
    line = release(engine, version)
    return 1.0 if line is None else line.step_time_factor


def cuda_graphs(engine: str, version: str | None = None) -> bool:
    """Whether the engine at this release line (its latest where None) runs its decode steps as CUDA graphs by
    default: the one rule the memory budget's graph pool (memory/inference.py) and the step model's launches
    (perf/workload.py ``eager``) both read."""
    line = release(engine, version)
    return ENGINES[engine].cuda_graphs and (line is None or line.cuda_graphs)


def prefill_graphs(engine: str, version: str | None = None) -> bool:
    """``EngineRelease.prefill_graphs`` of the line (its latest where None); True without lines (transformers)."""
    line = release(engine, version)
    return line is None or line.prefill_graphs


def engine_gpu_problem(engine: str, gpu: GPU, weights_format: str) -> str | None:
    """Why the engine cannot serve these weights on this GPU at all (the layout search refuses it), or None:
    TensorRT-LLM runs on NVIDIA GPUs only, and FP8 matmuls only where the GPU has FP8 tensor cores (Ada and later;
    its support matrix gives Ampere FP16, BF16, INT8 and INT4). vLLM and SGLang run FP8 weights on Ampere as
    weight-only kernels (Marlin), which the step model already times at BF16's peak."""
    if engine != "trtllm":
        return None
    if gpu.kind != "gpu" or gpu.architecture not in NVIDIA_ARCHITECTURES:
        return f"TensorRT-LLM runs on NVIDIA GPUs only, not on the {gpu.gpu} ({gpu.architecture})"
    if get_format(weights_format).math == "fp8" and not gpu.fp8_dense_tflops:
        return (
            f"TensorRT-LLM has no FP8 on {gpu.architecture} (FP8 from Ada, SM 89, on; its support matrix lists "
            "FP16, BF16, INT8 and INT4 there): BF16 or integer weights, or vLLM or SGLang, serve FP8 on it"
        )
    return None


def engine_gpu_note(engine: str, version: str | None, gpu: GPU) -> str | None:
    """The why-chain's line for a pick on a GPU the engine's release line does not list among the hardware it
    supports (``EngineRelease.listed``, GPU names or architectures): it may run, with community support only."""
    line = release(engine, version)
    if line is None or line.listed is None or gpu.gpu in line.listed or gpu.architecture in line.listed:
        return None
    return (
        f"{line.label} does not list the {gpu.gpu} among the hardware it supports (community support only): "
        "check it runs there before renting"
    )


def release_of(engine: str, published: str, pytorch_backend: bool = False) -> str | None:
    """The release line a published version string ('0.6.3.post2', '0.4.3.post2', '1.2.0rc1') runs as; None when
    none covers it. TensorRT-LLM's PyTorch backend (``pytorch_backend``) takes the LLM API's defaults: 1.x's, and
    before 1.0 (0.x) the 0.17 line's, whose decode steps run without CUDA graphs."""
    text = str(published).strip().lower()
    if engine == "trtllm" and pytorch_backend:
        return "0.17" if text.startswith("0.") else "1.x"
    for r in RELEASES.values():
        if r.engine == engine and any(text.startswith(p) for p in r.covers):
            return r.version
    return None
