"""hardware/engines.py RELEASES: each engine release line's scheduling defaults as its own code sets them, read
back; the published version strings of the calibration runs mapped to their lines; and the scenario refusing a
line its engine does not have."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.hardware.engines import LATEST, RELEASES, cuda_graphs, release, release_of
from gpuplan_core.perf.replica import EngineLimits, engine_limits
from gpuplan_core.perf.schedulers import engine_loop
from gpuplan_core.scenario.scenario import Scenario


def test_vllm_0_6_chunks_only_contexts_over_32k_at_512_tokens_with_256_sequences():
    v0 = release("vllm", "0.6")
    assert (v0.chunked(32_768), v0.chunked(32_769)) == (False, True)  # arg_utils: max_model_len > 32K
    assert v0.scheduling(131_072) == ("decode_first", 512)  # SchedulerConfig: 512 with chunked prefill
    assert v0.scheduling(4096) == ("prefill_first", 4096)  # max(max_model_len, 2,048), whole prompts first
    assert v0.scheduling(1024) == ("prefill_first", 2048)
    assert (v0.max_num_seqs, v0.cuda_graph_max_batch) == (256, 256)  # _BATCH_SIZES_TO_CAPTURE up to 256
    h100 = get_gpu("H100-SXM")
    chunked = EngineLimits(max_num_batched_tokens=512, max_num_seqs=256, policy="decode_first")
    whole = EngineLimits(max_num_batched_tokens=4096, max_num_seqs=256, policy="prefill_first")
    assert engine_limits(h100, "vllm", "0.6", 131_072) == chunked
    assert engine_limits(h100, "vllm", "0.6", 4096) == whole


def test_the_latest_lines_keep_the_engines_current_defaults():
    assert LATEST == {"vllm": "0.10+", "sglang": "0.5", "trtllm": "1.x"}
    for gpu in ("H100-SXM", "A100-80GB-SXM", "L4", "B200"):
        g = get_gpu(gpu)
        for engine, version in LATEST.items():
            named = engine_limits(g, engine, version)
            assert named.model_copy(update={"policy": None}) == engine_limits(g, engine)
            assert named.policy == engine_loop(engine).policy  # the line's policy is the engine's own
    assert engine_limits(get_gpu("H100-SXM"), "vllm", "0.10+") == EngineLimits(policy="decode_first")
    assert release("vllm").cuda_graph_max_batch == 512  # min(2 x max_num_seqs, 512)
    assert release("transformers") is None and release("vllm", "0.5") is None


@pytest.mark.parametrize("gpu,chunk", [("L4", 2048), ("H100-SXM", 8192), ("B200", 8192), ("MI300X", 8192)])
def test_sglang_0_4_chunks_8192_tokens_from_25_gb_where_0_5_steps_by_memory(gpu, chunk):
    g = get_gpu(gpu)
    assert engine_limits(g, "sglang", "0.4").max_num_batched_tokens == chunk  # L4: 24 GB nominal, under 25 GB
    assert release("sglang", "0.4").cuda_graph_max_batch == 160
    assert engine_limits(get_gpu("B200"), "sglang", "0.5").max_num_batched_tokens == 16384  # over 160 GB


def test_trtllm_0_14_builds_for_2048_requests_and_8192_tokens_as_1_x_runs():
    g = get_gpu("H100-SXM")
    want = EngineLimits(max_num_batched_tokens=8192, max_num_seqs=2048, policy="no_evict")
    assert engine_limits(g, "trtllm", "0.14") == engine_limits(g, "trtllm", "1.x") == want
    assert engine_loop("trtllm", version="0.14").policy == engine_loop("trtllm", version="1.x").policy == "no_evict"


def test_a_line_s_policy_follows_its_chunking():
    assert engine_loop("vllm", version="0.6", max_context_tokens=4096).policy == "prefill_first"
    assert engine_loop("vllm", version="0.6", max_context_tokens=131_072).policy == "decode_first"
    assert engine_loop("vllm", version="0.10+", max_context_tokens=4096).policy == "decode_first"
    assert engine_loop("sglang", version="0.4").policy == "prefill_first"


@pytest.mark.parametrize(
    "engine,published,pytorch,line",
    [
        ("vllm", "0.6.3.post2.dev308+gb489fc3c", False, "0.6"),
        ("vllm", "0.7.4.dev181+gf35f8e22 (nightly)", False, "0.6"),  # V0 is still the default engine in 0.7
        ("vllm", "0.11.0", False, "0.10+"),
        ("sglang", "0.4.3.post2", False, "0.4"),
        ("sglang", "0.5.5.post1", False, "0.5"),
        ("trtllm", "0.14.0", False, "0.14"),
        ("trtllm", "0.17.post1.dev (commit 9b931c0f)", True, "0.17"),  # trtllm-serve's PyTorch backend before 1.0
        ("trtllm", "1.0.0", True, "1.x"),
        ("trtllm", "1.2.0rc1", True, "1.x"),
        ("vllm", "not stated", False, None),
    ],
)
def test_published_versions_map_to_their_lines(engine, published, pytorch, line):
    assert release_of(engine, published, pytorch) == line


def test_the_scenario_takes_a_line_of_its_engine_and_refuses_another_s():
    assert Scenario(engine="vllm", engine_version="0.6").assumptions.engine_version == "0.6"
    assert Scenario().assumptions.engine_version is None
    with pytest.raises(ValueError, match="engine_version: sglang has no release line 0.6"):
        Scenario(engine="sglang", engine_version="0.6")
    assert {v for _, v in RELEASES} == {"0.6", "0.10+", "0.4", "0.5", "0.14", "0.17", "1.x"}
    for r in RELEASES.values():
        assert r.label and r.source and r.covers


def test_a_run_schedules_at_the_context_its_server_was_started_with():
    from gpuplan_core.perf.serving_calibration import max_model_len_of

    assert max_model_len_of({"setup": "server: vllm serve R1 --tensor-parallel-size 8 --max-model-len 32768"}) == 32768
    assert max_model_len_of({"setup": "vllm serve m --max-model-len=91680 --foo"}) == 91680
    assert max_model_len_of({"setup": "vllm serve m"}) is None and max_model_len_of({}) is None
    v0 = release("vllm", "0.6")  # 32,768 is not over 32K: whole prompts; DeepSeek-R1's own 163,840 is
    assert v0.scheduling(32_768)[0] == "prefill_first" and v0.scheduling(163_840) == ("decode_first", 512)


def test_the_pytorch_backend_before_1_0_runs_without_cuda_graphs():
    """TensorRT-LLM's PyTorch backend before PR #5480 (July 2025): PyTorchConfig use_cuda_graph False by default,
    so its replica is eager and every pass takes at least the host's launch time (layers x the per-layer time);
    its scheduling is 1.x's."""
    from gpuplan_core.perf.efficiency import PerfAssumptions
    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.perf.roofline import decode_phase

    early, late = release("trtllm", "0.17"), release("trtllm", "1.x")
    assert not early.cuda_graphs and late.cuda_graphs
    assert early.scheduling(163_840) == late.scheduling(163_840) == ("no_evict", None)
    g = get_gpu("H200")
    assert engine_limits(g, "trtllm", "0.17") == engine_limits(g, "trtllm", "1.x")
    reps = {
        v: replica_for(Scenario(preset="Llama-3.1-8B", gpu="H200", engine="trtllm", engine_version=v))[0]
        for v in ("0.17", "1.x")
    }
    assert reps["0.17"].wl.eager and not reps["1.x"].wl.eager
    r = reps["0.17"]
    host_s = r.m.num_layers * PerfAssumptions().eager_overhead_s_per_layer  # 32 x 0.7 ms = 22.4 ms
    assert host_s == pytest.approx(0.0224)
    eager = decode_phase(r.m, r.gpu, r.wl, 1, 1024, r.pa).time_s
    graphed = decode_phase(r.m, r.gpu, reps["1.x"].wl, 1, 1024, r.pa).time_s
    assert graphed < host_s <= eager  # one sequence of an 8B model on H200: ~6 ms on the GPU, launch-bound eager


def test_a_line_without_cuda_graphs_reserves_no_graph_pool_as_its_steps_pay_the_launches():
    """One rule (engines.cuda_graphs) for both: TensorRT-LLM 0.17's Memory budget has no CUDA-graph pool and its
    replica is eager; 1.x holds the pool (Assumptions.cuda_graph_bytes) and runs graphs. Everything else in the
    two budgets is equal, so 0.17's total is 1.x's less the pool."""
    from gpuplan_core.memory.budget import memory_budget
    from gpuplan_core.memory.components import Assumptions
    from gpuplan_core.memory.request import memory_request

    assert not cuda_graphs("trtllm", "0.17") and cuda_graphs("trtllm", "1.x") and cuda_graphs("trtllm")
    assert not cuda_graphs("transformers")
    budgets = {}
    for v in ("0.17", "1.x"):
        sc = Scenario(preset="Llama-3.1-8B", gpu="H200", engine="trtllm", engine_version=v)
        budgets[v] = memory_budget(sc.model(), memory_request(sc))
    parts = {v: b.components for v, b in budgets.items()}
    assert "CUDA graphs" not in parts["0.17"]
    assert parts["1.x"]["CUDA graphs"] == Assumptions().cuda_graph_bytes
    assert budgets["0.17"].per_gpu_bytes == pytest.approx(budgets["1.x"].per_gpu_bytes - Assumptions().cuda_graph_bytes)


def test_only_tensorrt_llm_0_x_takes_a_step_factor_read_on_its_own_offline_table():
    """TensorRT-LLM 0.x's C++ runtime steps take 1.1752 x the step model's (trt014off's training rows: the median of
    predicted / measured output tokens/s); every other line, whose kernels the tables measure or which has no
    saturated run of its own, 1.0; the replica's workload carries it."""
    from gpuplan_core.hardware.engines import RELEASES, step_time_factor
    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.scenario.scenario import Scenario

    assert step_time_factor("trtllm", "0.14") == 1.1752
    assert {k for k, r in RELEASES.items() if r.step_time_factor != 1.0} == {("trtllm", "0.14")}
    assert step_time_factor("trtllm") == step_time_factor("vllm") == step_time_factor("transformers") == 1.0
    sc = Scenario(preset="Llama-3.1-8B", engine="trtllm", engine_version="0.14")
    assert replica_for(sc, "H100-SXM")[0].wl.step_time_factor == 1.1752
