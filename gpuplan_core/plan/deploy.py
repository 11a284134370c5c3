"""Deployment export for a pick: the scenario's serving engine's launch command and a SkyPilot task YAML that
runs it.

Flags follow each engine's documented arguments: vLLM's engine arguments (docs.vllm.ai, "Engine Arguments"),
SGLang's server arguments (``python -m sglang.launch_server --help``, docs "Server Arguments") and ``trtllm-serve``'s
options (TensorRT-LLM docs, "trtllm-serve"); the SkyPilot task follows its YAML spec (resources.accelerators
"GPU:count", num_nodes, setup, run). vLLM and SGLang quantise FP8 weights on the fly from a 16-bit checkpoint
(``--quantization fp8``); TensorRT-LLM, INT4 GPTQ/AWQ and NVFP4 need a checkpoint already in that format, which the
command says in a comment. transformers' ``generate()`` is no server: its export is vLLM's, said so. A pick that
speculates starts the engine speculating with the plan's draft, in the flags of the scenario's release line
(plan/deploy_spec.py).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..common.text import counted
from ..model.formats import get_format
from ..results.plan import Pick
from ..scenario.scenario import Scenario
from .deploy_spec import NONE, SpecAsk, SpecFlags, sglang_spec, speculates, trtllm_spec, vllm_spec

# Hugging Face repositories of the bundled presets (their instruct or base checkpoints as published).
HF_IDS = {
    "Llama-3.1-8B": "meta-llama/Llama-3.1-8B-Instruct",
    "Llama-3.1-70B": "meta-llama/Llama-3.1-70B-Instruct",
    "Llama-3.1-405B": "meta-llama/Llama-3.1-405B-Instruct",
    "Mistral-7B-v0.1": "mistralai/Mistral-7B-v0.1",
    "Mixtral-8x7B-v0.1": "mistralai/Mixtral-8x7B-v0.1",
    "Qwen2.5-7B": "Qwen/Qwen2.5-7B-Instruct",
    "Qwen2.5-72B": "Qwen/Qwen2.5-72B-Instruct",
    "Gemma-2-9B": "google/gemma-2-9b-it",
    "Phi-3-mini-4k": "microsoft/Phi-3-mini-4k-instruct",
    "DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
    "Llama-2-7B": "meta-llama/Llama-2-7b-hf",
    "Llama-2-70B": "meta-llama/Llama-2-70b-hf",
    "GPT-J-6B": "EleutherAI/gpt-j-6b",
}
# SkyPilot's accelerator names for the catalog GPUs
SKYPILOT_GPU = {
    "B200": "B200",
    "H200": "H200",
    "H100-SXM": "H100",
    "H100-PCIe": "H100",
    "A100-80GB-SXM": "A100-80GB",
    "A100-80GB-PCIe": "A100-80GB",
    "A100-40GB": "A100",
    "L40S": "L40S",
    "L4": "L4",
    "RTX-PRO-6000": "RTXPRO6000",
    "MI300X": "MI300X",
    "RTX-4090": "RTX4090",
    "RTX-3090": "RTX3090",
    "RTX-5090": "RTX5090",
    "RTX-A6000": "A6000",
    "RTX-6000-Ada": "RTX6000-Ada",
    "A10": "A10",
    "A10G": "A10G",
    "L40": "L40",
    "A40": "A40",
    "V100-32GB": "V100-32GB",
    "T4": "T4",
}
SKYPILOT_CLOUDS = {"aws", "gcp", "azure", "lambda", "runpod", "nebius", "vast", "hyperstack", "scaleway", "crusoe"}


@dataclass(frozen=True)
class DeployAsk:
    """What the export reads of the question: the preset (its Hugging Face id), the longest sequence (input +
    output tokens), the engine's memory utilization, the KV cache's format, the engine and its release line (None:
    its latest) and the draft a replica speculates with (``SpecAsk``; None: none)."""

    preset: str | None
    max_model_len: int
    memory_utilization: float
    kv_format: str
    engine: str = "vllm"
    version: str | None = None
    spec: SpecAsk | None = None

    @classmethod
    def of(cls, sc: Scenario | DeployAsk) -> DeployAsk:
        if isinstance(sc, DeployAsk):
            return sc
        req = sc.request
        return cls(
            sc.model_source.preset,
            req.input_tokens + req.output_tokens,
            sc.assumptions.memory_utilization,
            sc.formats.kv_format,
            sc.assumptions.engine,
            sc.assumptions.engine_version,
            SpecAsk.of(sc),
        )


def model_id(scenario: Scenario | DeployAsk, hf_id: str | None = None) -> str:
    preset = DeployAsk.of(scenario).preset
    if preset:
        return HF_IDS.get(preset, preset)
    return hf_id or "<your-model-id>"


def vllm_args(
    scenario: Scenario | DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None
) -> list[str]:
    """``vllm serve`` and its flags for this pick (one replica)."""
    ask = DeployAsk.of(scenario)
    args = [
        "vllm",
        "serve",
        model_id(ask, hf_id),
        "--tensor-parallel-size",
        str(pick.tp),
        "--pipeline-parallel-size",
        str(pick.pp),
        "--max-model-len",
        str(ask.max_model_len),
        "--gpu-memory-utilization",
        f"{ask.memory_utilization:g}",
        "--kv-cache-dtype",
        "fp8" if get_format(ask.kv_format).name == "fp8" else "auto",
    ]
    w = get_format(pick.weights_format).name
    if w == "fp8":
        args += ["--quantization", "fp8"]
    elif w == "int4-g128":
        args += ["--quantization", "awq"]  # an AWQ (or GPTQ: "gptq") checkpoint of the model
    if ep := _expert_parallel(pick):  # attention data-parallel over the GPUs, the experts split over them
        args += ["--data-parallel-size", str(ep), "--enable-expert-parallel"]
    if max_num_seqs:
        args += ["--max-num-seqs", str(max_num_seqs)]
    return args + list(speculation(ask, pick).args)


def vllm_command(
    scenario: Scenario | DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None
) -> str:
    ask = DeployAsk.of(scenario)
    cmd = _with_speculation(ask, pick, shlex.join(vllm_args(ask, pick, hf_id, max_num_seqs)))
    w = get_format(pick.weights_format).name
    if w in ("int4-g128", "nvfp4", "mxfp4", "nf4", "nf4-dq"):
        cmd = f"# needs a checkpoint already quantised to {get_format(w).label}\n{cmd}"
    return cmd


def skypilot_yaml(
    scenario: Scenario | DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None
) -> str:
    """A SkyPilot task for one replica of the pick (``sky launch task.yaml``; ``sky serve`` scales replicas), set
    up and run with the scenario's engine."""
    ask = DeployAsk.of(scenario)
    per_node = pick.tp if pick.pp > 1 else pick.replica_gpus
    nodes = pick.pp if pick.pp > 1 else 1
    accel = f"{SKYPILOT_GPU.get(pick.gpu, pick.gpu)}:{per_node}"
    cloud = pick.provider.lower().split("-")[0]
    run = shlex.join(serve_args(ask, pick, hf_id, max_num_seqs))
    lines = [
        f"# gpuplan: {pick.layout}, {counted(pick.replicas, 'replica')} for the traffic; offer {pick.offer_id}",
        f"name: gpuplan-{(ask.preset or 'model').lower().replace('.', '-')}",
        "resources:",
        f"  accelerators: {accel}",
    ]
    if cloud in SKYPILOT_CLOUDS:
        lines.append(f"  cloud: {cloud}")
    lines += [
        "  ports: 8000",
        f"num_nodes: {nodes}",
        f"setup: {SETUP[_served_by(ask)]}",
        "run: |",
        *(f"  {line}" for line in (*speculation(ask, pick).setup, run)),
    ]
    return "\n".join(lines) + "\n"


SETUP = {  # each engine's documented pip install
    "vllm": "pip install vllm",
    "sglang": "pip install 'sglang[all]'",
    "trtllm": "pip install tensorrt_llm",
}
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


def _served_by(ask: DeployAsk) -> str:
    """The engine whose command the export writes: the scenario's, or vLLM for transformers (no server)."""
    return ask.engine if ask.engine in SETUP else "vllm"


def engine_name(scenario: Scenario | DeployAsk) -> str:
    """The name of the engine the export's command starts ('vLLM', 'SGLang', 'TensorRT-LLM')."""
    return ENGINE_NAMES[_served_by(DeployAsk.of(scenario))]


def _expert_parallel(pick: Pick) -> int:
    """The EP degree of an expert-parallel pick (its GPUs beyond tp x pp run attention data-parallel), else 0."""
    return pick.replica_gpus if pick.replica_gpus > pick.tp * pick.pp else 0


def speculation(scenario: Scenario | DeployAsk, pick: Pick) -> SpecFlags:
    """What the launch command adds so that the pick speculates as the plan assumed, in the flags of the
    scenario's release line of the engine serving it (plan/deploy_spec.py); nothing where it decodes plainly."""
    ask = DeployAsk.of(scenario)
    if ask.spec is None or not speculates(ask.spec, pick):
        return NONE
    engine = _served_by(ask)
    version = ask.version if engine == ask.engine else None  # transformers' export is the latest vLLM's
    if engine == "sglang":
        return sglang_spec(ask.spec, version, dp_attention=bool(_expert_parallel(pick)))
    if engine == "trtllm":
        return trtllm_spec(ask.spec, version)
    return vllm_spec(ask.spec, version, pick.pp)


def _with_speculation(ask: DeployAsk, pick: Pick, line: str) -> str:
    """The command ``line`` after its speculation's comment lines and the shell lines it runs first."""
    s = speculation(ask, pick)
    return "\n".join([*s.notes, *s.setup, line])


def sglang_args(ask: DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None) -> list[str]:
    """``python -m sglang.launch_server`` and its flags for this pick (one replica)."""
    args = ["python", "-m", "sglang.launch_server", "--model-path", model_id(ask, hf_id)]
    ep = _expert_parallel(pick)
    args += ["--tp-size", str(ep or pick.tp), "--pp-size", str(pick.pp), "--context-length", str(ask.max_model_len)]
    if ep:  # attention data-parallel over the GPUs, the experts split over them (SGLang needs --dp with it)
        args += ["--dp-size", str(ep), "--enable-dp-attention", "--ep-size", str(ep)]
    args += ["--mem-fraction-static", f"{ask.memory_utilization:g}", "--host", "0.0.0.0", "--port", "8000"]
    if get_format(ask.kv_format).name == "fp8":
        args += ["--kv-cache-dtype", "fp8_e4m3"]
    w = get_format(pick.weights_format).name
    if w == "fp8":
        args += ["--quantization", "fp8"]
    elif w == "int4-g128":
        args += ["--quantization", "awq"]
    if max_num_seqs:
        args += ["--max-running-requests", str(max_num_seqs)]
    return args + list(speculation(ask, pick).args)


def trtllm_args(ask: DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None) -> list[str]:
    """``trtllm-serve`` (PyTorch backend) and its flags for this pick (one replica). Its KV cache takes a share of
    the memory left after the weights (``--kv_cache_free_gpu_memory_fraction``, 0.9 by default), not of the whole
    GPU, so the scenario's utilization is not passed."""
    ep = _expert_parallel(pick)
    args = ["trtllm-serve", model_id(ask, hf_id), "--backend", "pytorch", "--tp_size", str(ep or pick.tp)]
    if ep:
        args += ["--ep_size", str(ep)]
    args += ["--pp_size", str(pick.pp), "--max_seq_len", str(ask.max_model_len), "--host", "0.0.0.0"]
    args += ["--port", "8000"]
    if max_num_seqs:
        args += ["--max_batch_size", str(max_num_seqs)]
    return args + list(speculation(ask, pick).args)


def serve_args(
    scenario: Scenario | DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None
) -> list[str]:
    """The scenario's engine's launch command and flags for this pick (vLLM's for transformers)."""
    ask = DeployAsk.of(scenario)
    build = {"vllm": vllm_args, "sglang": sglang_args, "trtllm": trtllm_args}[_served_by(ask)]
    return build(ask, pick, hf_id, max_num_seqs)


def serve_command(
    scenario: Scenario | DeployAsk, pick: Pick, hf_id: str | None = None, max_num_seqs: int | None = None
) -> str:
    """``serve_args`` as one shell line, after a comment where the pick needs more than the command: a checkpoint
    already quantised (TensorRT-LLM's FP8 and KV FP8 included), the engine named was transformers, or the pick is
    disaggregated (the command is one decode worker's); a pick that speculates adds its notes (the draft's
    placeholder, what the release line cannot run) and TensorRT-LLM's options file written before the command."""
    ask = DeployAsk.of(scenario)
    engine, w = _served_by(ask), get_format(pick.weights_format).name
    if engine == "vllm":
        cmd = vllm_command(ask, pick, hf_id, max_num_seqs)
    else:
        cmd = _with_speculation(ask, pick, shlex.join(serve_args(ask, pick, hf_id, max_num_seqs)))
        if w in ("int4-g128", "nvfp4", "mxfp4", "nf4", "nf4-dq") or (engine == "trtllm" and w == "fp8"):
            cmd = f"# needs a checkpoint already quantised to {get_format(w).label}\n{cmd}"
        if engine == "trtllm" and _expert_parallel(pick):
            cmd = f"# attention data-parallel: enable_attention_dp true in an --extra_llm_api_options YAML file\n{cmd}"
        if engine == "trtllm" and get_format(ask.kv_format).name == "fp8":
            cmd = f"# an FP8 KV cache: kv_cache_config dtype fp8 in an --extra_llm_api_options YAML file\n{cmd}"
    if ask.engine != engine:
        cmd = f"# {ask.engine} generate() is no server; vLLM serves the same model\n{cmd}"
    if (d := pick.disaggregated) is not None:
        cmd = (
            f"# disaggregated: this starts one of the {d.decode.workers} decode workers (TP {d.decode.tp}); the "
            f"{d.prefill.workers} prefill workers (TP {d.prefill.tp}), the KV connector between the pools (vLLM "
            "--kv-transfer-config, SGLang --disaggregation-mode) and the router are not generated\n" + cmd
        )
    return cmd
