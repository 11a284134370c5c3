"""perf/schedulers.py: each serving engine's scheduling policy and its per-request costs outside the GPU, with the
source of each."""

from __future__ import annotations

from gpuplan_core.perf.schedulers import LOOPS, engine_loop


def test_each_engine_has_its_policy():
    assert engine_loop("vllm").policy == "decode_first"  # vLLM V1: running sequences first, chunked prefill
    assert engine_loop("sglang").policy == "prefill_first"  # SGLang: waiting prompts as a prefill batch first
    assert engine_loop("trtllm").policy == "no_evict"  # TensorRT-LLM: GUARANTEED_NO_EVICT


def test_an_unknown_engine_is_scheduled_as_vllm():
    assert engine_loop("someone-elses") is LOOPS["vllm"]


def test_the_request_costs_are_the_fitted_ones_and_ordered_as_the_engines_front_ends():
    """vLLM's API server and tokenizer process cost more before the first token than SGLang's tokenizer manager,
    and both more than TensorRT-LLM's C++ front end (bench/fit_serving.py fits them on light-load runs)."""
    costs = {name: engine_loop(name).request_in_s for name in ("vllm", "sglang", "trtllm")}
    assert costs == {"vllm": 0.0486, "sglang": 0.0273, "trtllm": 0.0094}
    assert costs["vllm"] > costs["sglang"] > costs["trtllm"] > 0
    assert all(loop.request_out_s >= 0 and loop.source for loop in LOOPS.values())
    assert engine_loop("transformers").request_in_s == 0.0  # no server in front: served figures assume vLLM's
