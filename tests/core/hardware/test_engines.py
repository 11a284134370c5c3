"""hardware/engines.py: each serving engine's runtime terms from its documented defaults, and what serves on the
accelerators that are not GPUs."""

import pytest

from gpuplan_core.hardware.engines import ACCELERATOR_SOFTWARE, ENGINES, accelerator_note


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
