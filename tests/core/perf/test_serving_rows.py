"""perf/serving_rows.py: the limits a published run's server was started with, read from its setup."""

import pytest

from gpuplan_core.perf.replica import replica_for
from gpuplan_core.perf.serving_rows import server_limits_of, unchunked
from gpuplan_core.scenario.scenario import Scenario


def test_the_server_flags_after_server_are_read_and_the_client_s_are_not():
    trt = (
        "client --max_batch_size 8; server: trtllm-serve --backend pytorch --max_batch_size 512 --max_num_tokens 16384"
    )
    assert server_limits_of({"setup": trt}) == (("max_num_seqs", 512), ("max_num_batched_tokens", 16384))
    assert server_limits_of({"setup": "server: `trtllm-serve Qwen/Qwen3-14B --max_num_tokens=32768`"}) == (
        ("max_num_batched_tokens", 32768),
    )
    assert server_limits_of({"setup": "server: vllm serve m --enable-chunked-prefill=False"}) == (
        ("chunked_prefill", 0),
    )
    assert server_limits_of({"setup": "vllm serve m --max-num-seqs 64"}) == ()  # no 'server:': not read
    assert server_limits_of({"setup": "server: sglang.launch_server --tp 8"}) == ()
    multi = "server: vllm serve m --enable-chunked-prefill=False --num-scheduler-step 15 --max-num-seqs 1024"
    assert server_limits_of({"setup": multi}) == ()  # multi-step scheduling is not simulated: defaults kept


def test_chunked_prefill_off_schedules_whole_prompts_first():
    """vLLM 0.6 chunks a 131,072-token-context model's prompts at 512 tokens, decodes first; started with
    --enable-chunked-prefill=False it takes whole prompts first at max(131,072, 2,048) tokens a step."""
    sc = Scenario(preset="Llama-3.1-8B", gpu="H100", engine="vllm", engine_version="0.6")
    r, _ = replica_for(sc)
    assert (r.limits.policy, r.limits.max_num_batched_tokens) == ("decode_first", 512)
    off = unchunked(r, "0.6", 131_072, (("chunked_prefill", 0),))
    assert (off.policy, off.max_num_batched_tokens) == ("prefill_first", 131_072)


def test_dp_attention_is_read_from_the_server_flags_and_the_release_that_ran_them():
    """SGLang 0.4.3 with --tp 8 --enable-dp-attention ran 8 DP ranks (its server_args set dp = tp) and halved each
    rank's prefill chunk; SGLang 0.5.3 with the same flags and no --dp ran none (from 0.4.4 dp 1 turns it off), as
    TensorRT-LLM's --ep_size 8 without attention DP; an explicit --dp 4 is 4 ranks, each chunk a quarter; vLLM
    --data-parallel-size 8 --enable-expert-parallel is 8."""
    from gpuplan_core.perf.serving_rows import attention_dp_of, dp_chunk_share

    sglang = {"engine": "SGLang", "tensor_parallel": 8, "setup": "client: x; server: sglang.launch_server --tp 8 "}
    early = {**sglang, "engine_version": "0.4.3.post2", "setup": sglang["setup"] + "--enable-dp-attention"}
    late = {**early, "engine_version": "0.5.3"}
    dp4 = {**late, "setup": late["setup"] + " --dp 4"}
    trt = {"engine": "TensorRT-LLM", "tensor_parallel": 8, "setup": "server: trtllm-serve --tp_size 8 --ep_size 8"}
    vllm = {
        "engine": "vLLM",
        "tensor_parallel": 1,
        "setup": "server: vllm serve --data-parallel-size 8 --enable-expert-parallel",
    }
    assert [attention_dp_of(r) for r in (early, late, dp4, trt, vllm)] == [8, 1, 4, 1, 8]
    assert [dp_chunk_share(r) for r in (early, late, dp4, trt, vllm)] == [2, 1, 4, 1, 1]
    client_only = {**early, "setup": "client: --enable-dp-attention; server: sglang.launch_server --tp 8"}
    assert attention_dp_of(client_only) == 1


def test_sglang_dp_attention_without_ep_runs_the_experts_tensor_parallel():
    """SGLang 0.4.3 --tp 8 --enable-dp-attention: 8 DP ranks whose experts are tensor-parallel (every GPU schedules
    all 256 experts, so the step's routing floor is not divided by the ranks); with --ep 8 they are expert-parallel;
    TensorRT-LLM's attention DP with EP and a run without DP attention are neither."""
    from gpuplan_core.model.presets import get_preset
    from gpuplan_core.perf.efficiency import PerfAssumptions
    from gpuplan_core.perf.roofline import StepCost, Workload
    from gpuplan_core.perf.serving_rows import experts_tp_of

    setup = "client: x; server: sglang.launch_server --tp 8 --enable-dp-attention"
    early = {"engine": "SGLang", "engine_version": "0.4.3.post2", "tensor_parallel": 8, "setup": setup}
    ep8 = {**early, "engine_version": "0.5.7", "setup": setup + " --ep 8 --dp 8"}
    trt = {"engine": "TensorRT-LLM", "tensor_parallel": 8, "setup": "server: x --ep 8; enable_attention_dp: true"}
    tp8 = {**early, "setup": "server: sglang.launch_server --tp 8"}
    assert [experts_tp_of(r) for r in (early, ep8, trt, tp8)] == [True, False, False, False]
    from gpuplan_core.hardware.catalog import get_gpu

    m, pa, gpu = get_preset("DeepSeek-V3"), PerfAssumptions(), get_gpu("H200")
    floor = pa.moe_overhead_s_per_expert_layer * 256 * 58
    assert StepCost(m, gpu, Workload("fp8", tp=1, ep=8, experts_tp=True), pa).experts_fixed_s == pytest.approx(floor)
    assert StepCost(m, gpu, Workload("fp8", tp=1, ep=8), pa).experts_fixed_s == pytest.approx(floor / 8)


def test_a_run_s_load_is_spread_over_its_dp_ranks():
    """128 clients over 8 ranks: one rank of 16, throughput x 8; 4 clients: 4 ranks of 1 (x 4); 6 req/s: 0.75 each."""
    from gpuplan_core.perf.serving_calibration import _rank_load

    assert _rank_load(128, None, 8) == (16, None, 8)
    assert _rank_load(4, None, 8) == (1, None, 4)
    assert _rank_load(None, 6.0, 8) == (None, 0.75, 8)
    assert _rank_load(12, None, 1) == (12, None, 1)
