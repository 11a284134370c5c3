"""perf/serving_rows.py: the limits a published run's server was started with, read from its setup."""

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
