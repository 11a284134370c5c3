"""hardware/engines.py: each serving engine's runtime terms from its documented defaults, and what serves on the
accelerators that are not GPUs."""

import pytest

from gpuplan_core.hardware.accelerators import ACCELERATOR_SOFTWARE, accelerator_note
from gpuplan_core.hardware.engines import ENGINES


@pytest.mark.parametrize(
    "name, graphs, chunk, logits, block",
    [
        ("vllm", True, 8192, 256, 16),  # max_num_batched_tokens 8,192, 256 profiled sequences, block_size 16
        ("sglang", True, 8192, 160, 1),  # chunked_prefill_size 8,192, cuda_graph_max_bs 160, page_size 1
        ("trtllm", True, 8192, 2048, 32),  # max_num_tokens 8,192, max_batch_size 2,048, tokens_per_block 32
        ("transformers", False, None, None, 1),  # eager, the whole prompt at once, a cache grown token by token
    ],
)
def test_each_engine_s_documented_defaults(name, graphs, chunk, logits, block):
    e = ENGINES[name]
    assert (e.name, e.cuda_graphs, e.prefill_chunk_tokens, e.logits_sequences, e.kv_block_tokens) == (
        name,
        graphs,
        chunk,
        logits,
        block,
    )
    assert e.label and e.source


def test_the_engine_list_is_the_scenario_s_choice():
    from typing import get_args

    from gpuplan_core.hardware.engines import Engine

    assert set(ENGINES) == set(get_args(Engine)) == {"vllm", "sglang", "trtllm", "transformers"}


def test_every_accelerator_kind_but_the_gpu_has_its_software():
    from gpuplan_core.hardware.catalog import load_gpus

    kinds = {g.kind for g in load_gpus() if not g.is_gpu}
    assert set(ACCELERATOR_SOFTWARE) == kinds == {"tpu", "trainium", "inferentia", "gaudi"}
    assert ACCELERATOR_SOFTWARE["inferentia"].training == "none (an inference chip)"


def test_the_why_chain_line_names_the_stack_of_the_job():
    assert accelerator_note("tpu") == (
        "not a GPU: runs on vLLM TPU (tpu-inference) or JetStream rather than CUDA; its speed is a roofline "
        "estimate with no comparable published measurement"
    )
    assert accelerator_note("trainium", training=True).startswith("not a GPU: runs on NeuronX Distributed Training ")
    assert accelerator_note("gpu") is None and accelerator_note("nonsense") is None


def _gpu(name):
    from gpuplan_core.hardware.catalog import get_gpu

    return get_gpu(name)


@pytest.mark.parametrize(
    "engine, gpu, fmt, refused",
    [
        ("trtllm", "A100-80GB-SXM", "fp8", "TensorRT-LLM has no FP8 on Ampere"),  # support matrix: no FP8 on SM80
        ("trtllm", "RTX-3090", "fp8", "TensorRT-LLM has no FP8 on Ampere"),  # nor on SM86
        ("trtllm", "MI300X", "bf16", "TensorRT-LLM runs on NVIDIA GPUs only, not on the MI300X (CDNA3)"),
        ("trtllm", "TPU-v6e", "bf16", "TensorRT-LLM runs on NVIDIA GPUs only"),
        ("trtllm", "A100-80GB-SXM", "bf16", None),
        ("trtllm", "A100-80GB-SXM", "int8", None),  # Ampere: FP16, BF16, INT8, INT4
        ("trtllm", "A100-80GB-SXM", "int4-g128", None),
        ("trtllm", "L40S", "fp8", None),  # Ada: FP8 from SM 89
        ("trtllm", "H100-SXM", "fp8", None),
        ("vllm", "A100-80GB-SXM", "fp8", None),  # vLLM's weight-only FP8 (Marlin) on Ampere
        ("sglang", "RTX-3090", "fp8", None),
        ("vllm", "MI300X", "fp8", None),
    ],
)
def test_what_an_engine_cannot_serve_on_a_gpu_at_all(engine, gpu, fmt, refused):
    from gpuplan_core.hardware.engines import engine_gpu_problem

    got = engine_gpu_problem(engine, _gpu(gpu), fmt)
    assert got is None if refused is None else got.startswith(refused)


@pytest.mark.parametrize(
    "engine, version, gpu, noted",
    [
        ("trtllm", None, "RTX-3090", True),  # 1.x "Supported Hardware" lists A100, not consumer Ampere
        ("trtllm", None, "L4", True),  # ... L20 and L40/L40S of Ada, not the L4
        ("trtllm", None, "A10G", True),
        ("trtllm", None, "RTX-PRO-6000", True),  # ... B200/GB200/B300/GB300/DGX Spark of Blackwell
        ("trtllm", None, "H100-PCIe", False),
        ("trtllm", "1.x", "A100-40GB", False),
        ("trtllm", None, "L40S", False),
        ("trtllm", None, "B200", False),
        ("trtllm", "0.17", "RTX-3090", False),  # the 0.x matrix lists whole architectures: Ampere SM80/SM86
        ("trtllm", "0.14", "V100-32GB", True),  # ... not Volta
        ("vllm", None, "RTX-3090", False),  # no list kept for vLLM or SGLang
        ("sglang", "0.4", "T4", False),
    ],
)
def test_the_why_chain_says_when_the_engine_does_not_list_the_gpu(engine, version, gpu, noted):
    from gpuplan_core.hardware.engines import engine_gpu_note, release

    note = engine_gpu_note(engine, version, _gpu(gpu))
    if not noted:
        assert note is None
        return
    assert note == (
        f"{release(engine, version).label} does not list the {gpu} among the hardware it supports (community "
        "support only): check it runs there before renting"
    )
