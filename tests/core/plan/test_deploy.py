"""The deployment export (plan/deploy.py): what it reads of the question (DeployAsk) and the serving engine's flags
(vLLM, SGLang, TensorRT-LLM) and SkyPilot task it writes for a pick."""

import yaml

from gpuplan_core.plan.deploy import (
    DeployAsk,
    engine_name,
    model_id,
    serve_args,
    serve_command,
    skypilot_yaml,
    vllm_args,
    vllm_command,
)
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import pick

SC = Scenario(preset="Llama-3.1-70B", input_tokens=8000, output_tokens=500, memory_utilization=0.85)


def _pick(tp=4, pp=1, fmt="bf16", gpu="H100-SXM", provider="aws"):
    return pick(
        gpu,
        tp * pp,
        tp,
        pp,
        weights_format=fmt,
        offer_id="aws-p5",
        provider=provider,
        nodes=pp,
        replicas=3,
        monthly_usd=1.0,
        price_per_gpu_hour_usd=1.0,
    )


def test_the_ask_is_what_the_export_reads():
    ask = DeployAsk.of(SC)
    assert ask == DeployAsk("Llama-3.1-70B", 8500, 0.85, "bf16")  # 8,000 input + 500 output tokens
    assert DeployAsk.of(ask) is ask
    assert DeployAsk.of(SC.with_(requests_per_day=9e5, region="germany")) == ask  # the traffic and site are not read


def test_the_vllm_flags_by_hand():
    args = vllm_args(SC, _pick(tp=4))
    flags = dict(zip(args[3::2], args[4::2], strict=True))
    assert args[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct"]
    assert flags == {
        "--tensor-parallel-size": "4",
        "--pipeline-parallel-size": "1",
        "--max-model-len": "8500",
        "--gpu-memory-utilization": "0.85",
        "--kv-cache-dtype": "auto",
    }
    assert vllm_args(DeployAsk.of(SC), _pick(tp=4)) == args
    assert vllm_args(SC.with_(kv_format="fp8"), _pick())[-1] == "fp8"
    assert "--quantization awq" in vllm_command(SC, _pick(fmt="int4-g128"))
    assert vllm_command(SC, _pick(fmt="nvfp4")).startswith("# needs a checkpoint already quantised to")


def test_a_model_without_a_preset_is_named_by_its_id_or_a_placeholder():
    bare = DeployAsk(None, 2300, 0.9, "bf16")
    assert model_id(bare) == "<your-model-id>" and model_id(bare, "org/model") == "org/model"
    assert model_id(DeployAsk("Not-a-bundled-one", 1, 0.9, "bf16")) == "Not-a-bundled-one"


def test_the_skypilot_task_puts_each_stage_on_its_own_node():
    """TP 8 x PP 2: 2 nodes of 8 accelerators; TP 4 alone: one node of 4."""
    task = yaml.safe_load(skypilot_yaml(SC, _pick(tp=8, pp=2)))
    assert task["resources"]["accelerators"] == "H100:8" and task["num_nodes"] == 2
    assert task["resources"]["cloud"] == "aws" and task["name"] == "gpuplan-llama-3-1-70b"
    one = yaml.safe_load(skypilot_yaml(SC, _pick(tp=4, provider="some-neocloud")))
    assert one["resources"]["accelerators"] == "H100:4" and one["num_nodes"] == 1 and "cloud" not in one["resources"]


def _flags(args: list[str], start: int) -> dict[str, str]:
    return dict(zip(args[start::2], args[start + 1 :: 2], strict=True))


def test_the_sglang_flags_by_hand():
    sc = SC.with_(engine="sglang")
    args = serve_args(sc, _pick(tp=4, fmt="fp8"), max_num_seqs=256)
    assert args[:5] == ["python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-70B-Instruct"]
    assert _flags(args, 5) == {
        "--tp-size": "4",
        "--pp-size": "1",
        "--context-length": "8500",  # 8,000 input + 500 output tokens
        "--mem-fraction-static": "0.85",
        "--host": "0.0.0.0",
        "--port": "8000",  # the SkyPilot task's port (SGLang's own default is 30000)
        "--quantization": "fp8",
        "--max-running-requests": "256",
    }
    assert _flags(serve_args(sc.with_(kv_format="fp8"), _pick()), 5)["--kv-cache-dtype"] == "fp8_e4m3"
    assert engine_name(sc) == "SGLang"


def test_the_trtllm_flags_by_hand_and_what_the_command_cannot_say():
    sc = SC.with_(engine="trtllm")
    args = serve_args(sc, _pick(tp=8, pp=2))
    assert args[:2] == ["trtllm-serve", "meta-llama/Llama-3.1-70B-Instruct"]
    assert _flags(args, 2) == {
        "--backend": "pytorch",
        "--tp_size": "8",
        "--pp_size": "2",
        "--max_seq_len": "8500",
        "--host": "0.0.0.0",
        "--port": "8000",
    }
    fp8 = serve_command(sc.with_(kv_format="fp8"), _pick(fmt="fp8")).splitlines()
    assert fp8[0] == "# an FP8 KV cache: kv_cache_config dtype fp8 in an --extra_llm_api_options YAML file"
    assert fp8[1] == "# needs a checkpoint already quantised to FP8 (E4M3)"  # TensorRT-LLM does not quantise at load
    assert fp8[2].startswith("trtllm-serve ")
    task = yaml.safe_load(skypilot_yaml(sc, _pick(tp=8, pp=2)))
    assert task["setup"] == "pip install tensorrt_llm" and task["run"].startswith("trtllm-serve ")
    assert engine_name(sc) == "TensorRT-LLM"


def test_vllm_stays_as_it_was_and_transformers_gets_vllm_said_so():
    assert serve_command(SC, _pick()) == vllm_command(SC, _pick())
    hf = SC.with_(engine="transformers")
    lines = serve_command(hf, _pick()).splitlines()
    assert lines == ["# transformers generate() is no server; vLLM serves the same model", vllm_command(SC, _pick())]
    assert yaml.safe_load(skypilot_yaml(hf, _pick()))["setup"] == "pip install vllm"
    assert engine_name(hf) == "vLLM"


def test_an_expert_parallel_pick_starts_attention_data_parallel_on_every_engine():
    """One replica of 8 GPUs at EP 8 (tp 1): each engine's own spelling of 8 attention DP ranks with the experts
    spread over them."""
    ep8 = _pick(tp=1).model_copy(update={"ep": 8, "gpus": 8})
    assert ep8.replica_gpus == 8
    vllm = serve_args(SC, ep8)
    assert vllm[vllm.index("--tensor-parallel-size") + 1] == "1"
    assert vllm[-3:] == ["--data-parallel-size", "8", "--enable-expert-parallel"]
    sglang = serve_args(SC.with_(engine="sglang"), ep8)
    assert [sglang[sglang.index(f) + 1] for f in ("--tp-size", "--dp-size", "--ep-size")] == ["8", "8", "8"]
    assert "--enable-dp-attention" in sglang
    trt = serve_args(SC.with_(engine="trtllm"), ep8)
    assert (_flags(trt, 2)["--tp_size"], _flags(trt, 2)["--ep_size"]) == ("8", "8")
    comment = serve_command(SC.with_(engine="trtllm"), ep8).splitlines()[0]
    assert comment == "# attention data-parallel: enable_attention_dp true in an --extra_llm_api_options YAML file"
    assert "--ep_size" not in serve_args(SC.with_(engine="trtllm"), _pick(tp=8))  # plain tensor parallel
