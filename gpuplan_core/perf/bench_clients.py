"""The benchmark clients that sent the published serving runs (perf/clients.py's module docstring says what each
adds): each client's fitted first-token cost and serial front end per engine, and which client sent each source's
runs (data/serving_measurements.md says how each was run)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchClient:
    """A benchmark client and the first-token cost it adds beyond the engine's (``request_in_s``: engine ->
    seconds; one client's path differs by the engine's front end it talks to, so it is kept per engine), fitted on
    the training runs of its own sources only (bench/fit_serving.py: the light-load rule of
    serving_loso.fit_client_costs, on its runs of dense and MoE models alike); an engine it has no light-load run
    with gets 0.0."""

    name: str
    what: str
    request_in_s: tuple[tuple[str, float], ...] = ()
    fitted_on: str = "no light-load runs"
    front_end: bool = False  # its bursts wait on a serial front end (module docstring): ``ingest`` is fitted
    ingest: tuple[tuple[str, float, float], ...] = ()  # engine, its front end's seconds per request and per token
    ingest_fitted_on: str = "no bursts"

    def cost_s(self, engine: str) -> float:
        return dict(self.request_in_s).get(engine, 0.0)

    def ingest_s(self, engine: str) -> tuple[float, float]:
        """The serial front end a burst from this client waits on with ``engine`` (seconds per request, per prompt
        token; module docstring): fitted on the bursts of its own sources (serving_loso.fit_ingest)."""
        return next(((a, b) for e, a, b in self.ingest if e == engine), (0.0, 0.0))


BENCH_CLIENTS: dict[str, BenchClient] = {
    c.name: c
    for c in (
        BenchClient(
            "triton-perf-overview",
            "TensorRT-LLM v0.14 perf-overview's online client against Triton's tensorrtllm_backend (tool not named)",
            (("trtllm", 0.0024),),
            "trt014on: 5 training rows (with TensorRT-LLM 0.14's step factor, hardware/engines.py; 11.0 ms without)",
        ),
        BenchClient("aiperf", "NVIDIA AIPerf / GenAI-Perf, closed-loop concurrency over HTTP (NIM's guide)"),
        BenchClient(
            "lmdeploy-profile-generation",
            "LMDeploy profile_generation.py: threads calling TurboMind in-process (no HTTP)",
            (("trtllm", 0.0),),
            "lmdeploy: 3 training rows (7.8 ms before TurboMind's first token came from the generation step after its "
            "prompt, schedulers.py 'turbomind')",
        ),
        BenchClient(
            "vllm-bench-serve-chat",
            "vllm bench serve --backend openai-chat (streamed /v1/chat/completions), as GPUStack ran it",
            (("vllm", 0.0401), ("sglang", 0.0268), ("trtllm", 0.0348)),
            "gpustack-q3-8b-h100 and gpustack-dsr1: 15 vLLM and 15 SGLang training rows; TensorRT-LLM (no training "
            "row) from both",
            front_end=True,
            ingest=(("vllm", 0.0157, 1.07e-5), ("sglang", 0.0007, 1.43e-5), ("trtllm", 0.0, 3.12e-5)),
            ingest_fitted_on="GPUStack's training bursts: 12 vLLM, 16 SGLang and 13 TensorRT-LLM first-token rows",
        ),
        BenchClient(
            "vllm-benchmark-serving",
            "vLLM benchmarks/benchmark_serving.py over /v1/completions (dstack's runs, one a modified copy)",
        ),
        BenchClient(
            "sglang-bench-serving",
            "SGLang bench_serving.py over HTTP (dstack's DeepSeek-R1 runs, the SGLang cookbook's)",
            (("vllm", 0.0843), ("sglang", 0.0843), ("trtllm", 0.0843)),
            "sglcb-l70b-a100 and sglcb-dsr1-b200: 6 SGLang training rows; vLLM and TensorRT-LLM (no training row) "
            "from them",
        ),
        BenchClient(
            "trtllm-bench", "trtllm-bench throughput, in-process (bursts; the DeepSeek-R1 blog's --concurrency runs)"
        ),
    )
}

# the client that sent each published source's runs (data/serving_measurements.md says how each was run)
SOURCE_CLIENTS = {
    "trt014on": "triton-perf-overview",
    "trt014off": "trtllm-bench",
    "trt10off": "trtllm-bench",
    "nim": "aiperf",
    "lmdeploy": "lmdeploy-profile-generation",
    "dstack-405b": "vllm-benchmark-serving",
    "dstack-tgi-vllm": "vllm-benchmark-serving",
    "dstack-dsr1": "sglang-bench-serving",
    "sglcb-dsr1-b200": "sglang-bench-serving",
    "sglcb-l70b-a100": "sglang-bench-serving",
    "sglcb-dsv3-mi300x": "sglang-bench-serving",
    "trtblog-dsr1": "trtllm-bench",
    **{
        s: "vllm-bench-serve-chat"
        for s in (
            "gpustack-q3-8b-h100",
            "gpustack-q3-14b-h100",
            "gpustack-q3-14b-a100",
            "gpustack-q3-32b-h100",
            "gpustack-q3-32b-a100",
            "gpustack-dsr1",
        )
    },
}


NO_CLIENT_NOTE = (
    "First-token times include no benchmark or HTTP client's cost (the published runs' clients add 0-84 ms per "
    "request, perf/clients.py); calibrate to your deployment to add yours."
)


def client_of(source: str) -> str | None:
    """The benchmark client a published source's runs were sent by (None: not known, as for your own runs)."""
    return SOURCE_CLIENTS.get(source)


def client_cost(source: str, engine: str, costs: dict[tuple[str, str], float] | None = None) -> float:
    """The first-token cost (seconds) that the client which sent ``source``'s runs adds to ``engine``'s: from
    ``costs`` ((client, engine) -> seconds, a left-out-source fit) or the fitted ``BENCH_CLIENTS``; 0.0 for a
    client neither knows."""
    client = client_of(source)
    if client is None:
        return 0.0
    if costs is not None:
        return costs.get((client, engine), 0.0)
    return BENCH_CLIENTS[client].cost_s(engine) if client in BENCH_CLIENTS else 0.0


def client_ingest(source: str, engine: str, fitted: dict | None = None) -> tuple[float, float]:
    """The serial front end (seconds per request, per prompt token) a burst from ``source``'s client waits on with
    ``engine``: from ``fitted`` ((client, engine) -> the pair, a left-out-source fit) or ``BENCH_CLIENTS``; none for
    a client neither knows."""
    client = client_of(source)
    if client is None:
        return 0.0, 0.0
    if fitted is not None:
        return fitted.get((client, engine), (0.0, 0.0))
    return BENCH_CLIENTS[client].ingest_s(engine) if client in BENCH_CLIENTS else (0.0, 0.0)
