"""Serving engines: the runtime terms of the memory budget, from each engine's documented defaults; and the
software that serves on the accelerators that are not GPUs.

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

Engine = Literal["vllm", "sglang", "trtllm", "transformers"]


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
class AcceleratorSoftware:
    """What serves and trains on an accelerator kind, by its public repositories."""

    kind: str
    serving: str
    training: str
    source: str


ACCELERATOR_SOFTWARE: dict[str, AcceleratorSoftware] = {
    a.kind: a
    for a in (
        AcceleratorSoftware(
            "tpu",
            "vLLM TPU (tpu-inference) or JetStream",
            "JAX (MaxText) or PyTorch/XLA",
            "vllm-project/tpu-inference; AI-Hypercomputer/JetStream; AI-Hypercomputer/maxtext",
        ),
        AcceleratorSoftware(
            "trainium",
            "vLLM Neuron (NxD Inference)",
            "NeuronX Distributed Training",
            "vllm-project/vllm-neuron; aws-neuron/aws-neuron-sdk",
        ),
        AcceleratorSoftware(
            "inferentia",
            "vLLM Neuron (NxD Inference)",
            "none (an inference chip)",
            "vllm-project/vllm-neuron; aws-neuron/aws-neuron-sdk",
        ),
        AcceleratorSoftware(
            "gaudi",
            "vLLM Gaudi plugin",
            "Optimum Habana / PyTorch on Gaudi",
            "vllm-project/vllm-gaudi; huggingface/optimum-habana",
        ),
    )
}


def accelerator_note(kind: str, training: bool = False) -> str | None:
    """The why-chain's line for a pick that is not a GPU: the software it needs and how far to trust its speed."""
    sw = ACCELERATOR_SOFTWARE.get(kind)
    if sw is None:
        return None
    stack = sw.training if training else sw.serving
    return (
        f"not a GPU: runs on {stack} rather than CUDA; its speed is a roofline estimate with no comparable "
        "published measurement"
    )
