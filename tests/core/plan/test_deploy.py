"""The deployment export (plan/deploy.py): what it reads of the question (DeployAsk) and the vLLM flags and
SkyPilot task it writes for a pick."""

import yaml

from gpuplan_core.plan.deploy import DeployAsk, model_id, skypilot_yaml, vllm_args, vllm_command
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
