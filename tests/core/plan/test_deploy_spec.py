"""A pick that speculates starts its engine speculating as the plan assumed (plan/deploy_spec.py): the exact command
lines per engine, for a named draft model and for DeepSeek-V3's MTP module, with and without speculation, and the
notes where a release line cannot run it."""

import yaml

from gpuplan_core.plan.deploy import DeployAsk, serve_command, skypilot_yaml
from gpuplan_core.plan.deploy_spec import SpecAsk
from gpuplan_core.plan.recommend import recommend
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.results.plan import Speculation
from gpuplan_core.scenario.scenario import Scenario
from tests.picks import pick

LLAMA = Scenario(preset="Llama-3.1-70B", input_tokens=8000, output_tokens=500, memory_utilization=0.85)
DRAFT = LLAMA.with_(spec_draft_params=1_000_000_000, spec_tokens=4, spec_acceptance=0.7)  # a 1B draft, k = 4
DEEPSEEK = Scenario(preset="DeepSeek-V3", input_tokens=2000, output_tokens=500, memory_utilization=0.9)


def _pick(tp: int, runs: bool | None, gpu: str = "H100-SXM"):
    """A pick at TP ``tp``; ``runs``: what its weighing decided (None: not weighed)."""
    s = None if runs is None else Speculation(runs=runs, draft="d", monthly_usd_with=1.0, monthly_usd_without=2.0)
    return pick(gpu, tp, tp, speculation=s)


def _on(sc: Scenario, engine: str, version: str | None = None) -> Scenario:
    return sc.with_(engine=engine, engine_version=version)


DRAFT_NOTE = (
    "# <your-draft-model-path>: your draft model's checkpoint, the 1B draft the plan assumed proposing 4 tokens a "
    "step (it must share the model's tokenizer)"
)
VLLM_LLAMA = (
    "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --pipeline-parallel-size 1 "
    "--max-model-len 8500 --gpu-memory-utilization 0.85 --kv-cache-dtype auto"
)
VLLM_DEEPSEEK = (
    "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 --pipeline-parallel-size 1 --max-model-len 2500 "
    "--gpu-memory-utilization 0.9 --kv-cache-dtype auto"
)
SGLANG_LLAMA = (
    "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct --tp-size 4 --pp-size 1 "
    "--context-length 8500 --mem-fraction-static 0.85 --host 0.0.0.0 --port 8000"
)
SGLANG_DEEPSEEK = (
    "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 --pp-size 1 "
    "--context-length 2500 --mem-fraction-static 0.9 --host 0.0.0.0 --port 8000"
)
TRTLLM_LLAMA = (
    "trtllm-serve meta-llama/Llama-3.1-70B-Instruct --backend pytorch --tp_size 4 --pp_size 1 --max_seq_len 8500 "
    "--host 0.0.0.0 --port 8000"
)
TRTLLM_DEEPSEEK = (
    "trtllm-serve deepseek-ai/DeepSeek-V3 --backend pytorch --tp_size 8 --pp_size 1 --max_seq_len 2500 "
    "--host 0.0.0.0 --port 8000"
)


def test_what_the_export_reads_of_the_speculation():
    assert DeployAsk.of(DRAFT).spec == SpecAsk(4, 1_000_000_000, always=True)
    assert DeployAsk.of(DEEPSEEK).spec == SpecAsk(1, None, always=False)  # spec_mtp weigh: as the pick decided
    assert DeployAsk.of(DEEPSEEK.with_(spec_mtp="on")).spec == SpecAsk(1, None, always=True)
    assert DeployAsk.of(DEEPSEEK.with_(spec_mtp="off")).spec is None
    assert DeployAsk.of(LLAMA).spec is None  # no draft, no MTP module
    assert DeployAsk.of(_on(LLAMA, "sglang", "0.4")).version == "0.4"


def test_without_speculation_every_command_is_as_before():
    """Plain decoding (weighed and not kept, or no draft at all): the command and task byte for byte as a scenario
    without a draft gives them."""
    for engine in ("vllm", "sglang", "trtllm"):
        for sc, plain, tp in ((DRAFT, LLAMA, 4), (DEEPSEEK, DEEPSEEK.with_(spec_mtp="off"), 8)):
            p = _pick(tp, runs=False)
            assert serve_command(_on(sc, engine), p) == serve_command(_on(plain, engine), p)
            assert skypilot_yaml(_on(sc, engine), p) == skypilot_yaml(_on(plain, engine), p)
    assert serve_command(LLAMA, _pick(4, None)) == VLLM_LLAMA
    assert serve_command(DEEPSEEK, _pick(8, None)) == VLLM_DEEPSEEK  # MTP weighed: the pick alone says it runs


def test_vllm_speculates_with_the_draft_or_the_mtp_module():
    assert serve_command(DRAFT, _pick(4, True)).splitlines() == [
        DRAFT_NOTE,
        "# vLLM 0.11-0.13 refuse a draft model (V1 had none until PR #24322); earlier releases of the line run it on "
        "the V0 engine, later ones on V1",
        VLLM_LLAMA + " --speculative-config "
        '\'{"method": "draft_model", "model": "<your-draft-model-path>", "num_speculative_tokens": 4}\'',
    ]
    mtp = VLLM_DEEPSEEK + ' --speculative-config \'{"method": "deepseek_mtp", "num_speculative_tokens": 1}\''
    assert serve_command(DEEPSEEK, _pick(8, True)) == mtp
    assert serve_command(DEEPSEEK.with_(spec_mtp="on"), _pick(8, None)) == mtp  # every replica speculates


def test_vllm_06_names_the_draft_with_its_own_flags_and_says_it_cannot_run_mtp():
    old = serve_command(_on(DRAFT, "vllm", "0.6"), _pick(4, True)).splitlines()
    assert old == [DRAFT_NOTE, VLLM_LLAMA + " --speculative-model '<your-draft-model-path>' --num-speculative-tokens 4"]
    assert serve_command(_on(DEEPSEEK, "vllm", "0.6"), _pick(8, True)).splitlines() == [
        "# not generated: speculative decoding with the model's MTP module (1 token a step), as the plan assumes: "
        "vLLM 0.6-0.7's --speculative-model names a separate draft checkpoint; the V1 line (0.10+) runs the module "
        'with --speculative-config \'{"method": "deepseek_mtp"}\'',
        VLLM_DEEPSEEK,
    ]


def test_sglang_speculates_standalone_with_the_draft_and_eagle_with_the_mtp_module():
    chain4 = "--speculative-num-steps 4 --speculative-eagle-topk 1 --speculative-num-draft-tokens 5"
    assert serve_command(_on(DRAFT, "sglang"), _pick(4, True)).splitlines() == [
        DRAFT_NOTE,
        "# STANDALONE: SGLang 0.5 releases from September 2025 on (PR #10090)",
        SGLANG_LLAMA
        + " --speculative-algorithm STANDALONE --speculative-draft-model-path '<your-draft-model-path>' "
        + chain4,
    ]
    assert serve_command(_on(DEEPSEEK, "sglang"), _pick(8, True)) == (
        SGLANG_DEEPSEEK + " --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 2"
    )


def test_sglang_04_has_no_draft_model_algorithm():
    assert serve_command(_on(DRAFT, "sglang", "0.4"), _pick(4, True)).splitlines() == [
        "# not generated: speculative decoding with a 1B draft model, as the plan assumes: SGLang 0.4's algorithms "
        "(EAGLE, EAGLE3, NEXTN) need an EAGLE head or an MTP module; STANDALONE, a separate draft model, came with "
        "0.5 (PR #10090)",
        SGLANG_LLAMA,
    ]
    mtp = serve_command(_on(DEEPSEEK, "sglang", "0.4"), _pick(8, True)).splitlines()
    assert mtp[0].startswith("# early SGLang 0.4 releases read the MTP module from its own checkpoint")
    assert mtp[1].endswith(
        " --speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 2"
    )


def test_sglang_standalone_is_not_started_with_attention_data_parallel():
    ep8 = _pick(1, True).model_copy(update={"ep": 8, "gpus": 8})
    cmd = serve_command(_on(DRAFT, "sglang"), ep8).splitlines()
    assert cmd[0] == (
        "# not generated: speculative decoding with a 1B draft model, as the plan assumes: SGLang's STANDALONE draft "
        "does not run with --enable-dp-attention"
    )
    assert "--speculative-algorithm" not in cmd[1] and "--enable-dp-attention" in cmd[1]
    assert "--speculative-algorithm EAGLE" in serve_command(_on(DEEPSEEK, "sglang"), ep8)  # MTP does


def test_trtllm_writes_the_speculative_config_and_points_trtllm_serve_at_it():
    assert serve_command(_on(DRAFT, "trtllm"), _pick(4, True)).splitlines() == [
        DRAFT_NOTE,
        "cat > speculative.yaml <<'EOF'",
        "speculative_config:",
        "  decoding_type: Draft_Target",
        "  max_draft_len: 4",
        "  speculative_model_dir: <your-draft-model-path>",
        "EOF",
        TRTLLM_LLAMA + " --extra_llm_api_options speculative.yaml",
    ]
    assert serve_command(_on(DEEPSEEK, "trtllm"), _pick(8, True, "H200")).splitlines() == [
        "cat > speculative.yaml <<'EOF'",
        "speculative_config:",
        "  decoding_type: MTP",
        "  num_nextn_predict_layers: 1",
        "EOF",
        TRTLLM_DEEPSEEK + " --extra_llm_api_options speculative.yaml",
    ]


def test_the_skypilot_task_writes_the_file_before_the_server_starts():
    task = yaml.safe_load(skypilot_yaml(_on(DEEPSEEK, "trtllm"), _pick(8, True, "H200")))
    run = task["run"].splitlines()
    assert run[0] == "cat > speculative.yaml <<'EOF'" and run[4] == "EOF"
    assert yaml.safe_load("\n".join(run[1:4])) == {
        "speculative_config": {"decoding_type": "MTP", "num_nextn_predict_layers": 1}
    }
    assert run[5] == TRTLLM_DEEPSEEK + " --extra_llm_api_options speculative.yaml"
    vllm = yaml.safe_load(skypilot_yaml(DEEPSEEK, _pick(8, True, "H200")))["run"]
    assert vllm.strip().endswith('--speculative-config \'{"method": "deepseek_mtp", "num_speculative_tokens": 1}\'')


def test_trtllm_0x_c_runtime_cannot_and_the_pre_1_0_pytorch_backend_is_flagged():
    old = serve_command(_on(DEEPSEEK, "trtllm", "0.14"), _pick(8, True, "H200")).splitlines()
    assert old == [
        "# not generated: speculative decoding with the model's MTP module (1 token a step), as the plan assumes: "
        "TensorRT-LLM 0.x's C++ runtime builds speculation into the engines (trtllm-build "
        "--speculative_decoding_mode, --max_draft_len), not a trtllm-serve option",
        TRTLLM_DEEPSEEK,
    ]
    beta = serve_command(_on(DRAFT, "trtllm", "0.17"), _pick(4, True)).splitlines()
    assert beta[1].startswith("# TensorRT-LLM 0.17-0.21's PyTorch backend (beta)")
    assert beta[-1] == TRTLLM_LLAMA + " --extra_llm_api_options speculative.yaml"


def test_the_recommenders_own_picks_launch_as_they_were_planned():
    """End to end: the picks plan/test_speculation.py holds. Llama-3.1-8B at 12 ms a token speculates with the 1B
    draft on one RTX 5090; DeepSeek-V3 FP8 at 50 ms a token speculates with its MTP module on 8 x H200, and with
    spec_mtp off decodes plainly (its command has no speculation)."""
    llama = Scenario(
        preset="Llama-3.1-8B", input_tokens=1000, output_tokens=300, requests_per_day=20_000, tpot_target_s=0.012
    ).with_(spec_draft_params=10**9)
    offers = [o for o in load_pricing().offers if o.gpu in ("RTX-5090", "RTX-3090", "H100-SXM", "L40S")]
    top = recommend(llama, offers).picks[0]
    assert top.speculation.runs and top.layout == "1 x RTX-5090, TP 1"
    assert (
        serve_command(llama, top)
        .splitlines()[-1]
        .endswith(
            ' --speculative-config \'{"method": "draft_model", "model": "<your-draft-model-path>", '
            '"num_speculative_tokens": 4}\''
        )
    )
    ds = dict(preset="DeepSeek-V3", weights_format="fp8", kv_format="fp8", input_tokens=1000, output_tokens=300)
    ds.update(requests_per_day=200_000, tpot_target_s=0.05)
    h200 = [o for o in load_pricing().offers if o.gpu == "H200"]
    mtp = recommend(Scenario(**ds), h200).picks[0]
    assert mtp.speculation.runs and mtp.layout == "8 x H200, TP 8"
    assert serve_command(Scenario(**ds), mtp) == (
        "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 --pipeline-parallel-size 1 --max-model-len 1300 "
        "--gpu-memory-utilization 0.9 --kv-cache-dtype fp8 --quantization fp8 "
        '--speculative-config \'{"method": "deepseek_mtp", "num_speculative_tokens": 1}\''
    )
    off = Scenario(**ds, spec_mtp="off")
    assert "--speculative" not in serve_command(off, recommend(off, h200).picks[0])


def test_vllm_does_not_speculate_with_pipeline_parallelism_and_says_so():
    pp2 = pick("H100-SXM", 8, 4, 2, speculation=_pick(4, True).speculation)
    cmd = serve_command(DRAFT, pp2).splitlines()
    assert cmd[0] == (
        "# not generated: speculative decoding with a 1B draft model, as the plan assumes: vLLM does not speculate "
        "with pipeline parallelism (its docs 0.7-0.10: 'not compatible with pipeline parallelism'; issues #14117, "
        "#49355, #57755 on later releases)"
    )
    assert cmd[1].startswith("vllm serve ") and "--speculative" not in cmd[1] and len(cmd) == 2
