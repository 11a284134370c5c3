"""The software that serves and trains on the accelerators that are not GPUs (TPU, Trainium, Inferentia, Gaudi), by
their public repositories: named in the answer's why-chain (engines.py's module docstring says why their memory
budget keeps the vLLM profile)."""

from __future__ import annotations

from dataclasses import dataclass


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
