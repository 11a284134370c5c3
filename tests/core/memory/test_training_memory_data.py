"""The published peak-memory measurements of training and fine-tuning runs (data/training_memory_measurements.csv)
and the model configs they name (data/training_models.json): the file parses, every value is one the memory model
can read, and a few rows match the figure the source prints."""

import json
import re

import pandas as pd
import pytest

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import load_gpus
from gpuplan_core.model.hf_config import model_from_hf_config
from gpuplan_core.model.presets import load_presets

CSV = DATA_DIR / "training_memory_measurements.csv"
COLUMNS = [
    "id",
    "source",
    "framework",
    "framework_version",
    "gpu",
    "gpu_count",
    "model_as_published",
    "model",
    "method",
    "weights_dtype",
    "master_weights_fp32",
    "optimizer",
    "optimizer_state_dtype",
    "grad_dtype",
    "linear_fp8",
    "lora_rank",
    "lora_alpha",
    "lora_targets",
    "lora_lm_head",
    "lora_dropout",
    "qlora_library",
    "micro_batch",
    "seq_len",
    "packed",
    "grad_accum",
    "recompute",
    "cross_entropy",
    "compile",
    "sharding",
    "cpu_offload",
    "tp",
    "pp",
    "cp",
    "measured",
    "unit",
    "memory_kind",
    "setup",
    "notes",
]


@pytest.fixture(scope="module")
def runs() -> pd.DataFrame:
    return pd.read_csv(CSV, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def training_models() -> dict:
    return json.loads((DATA_DIR / "training_models.json").read_text())["models"]


def _row(runs: pd.DataFrame, run_id: str) -> dict:
    match = runs[runs["id"] == run_id]
    assert len(match) == 1, run_id
    return match.iloc[0].to_dict()


def test_columns_ids_and_size(runs):
    assert list(runs.columns) == COLUMNS
    assert runs["id"].is_unique
    assert len(runs) >= 60
    assert runs["source"].str.split().str[0].nunique() >= 4  # torchtune, litgpt, torchtitan, ao


def test_every_gpu_is_a_catalog_id(runs):
    catalog = {g.gpu for g in load_gpus()}
    assert set(runs["gpu"]) <= catalog, set(runs["gpu"]) - catalog


def test_every_model_resolves_and_parses(runs, training_models):
    presets = load_presets()
    for key in sorted(set(runs["model"])):
        if key in presets:
            continue
        assert key in training_models, f"model {key!r} is neither in models.json nor in training_models.json"
        cfg = {k: v for k, v in training_models[key].items() if k != "source"}
        arch = model_from_hf_config(cfg, key)
        assert arch.num_layers == cfg["num_hidden_layers"] and arch.vocab_size == cfg["vocab_size"]
    assert all(m["source"].split("/")[0] for m in training_models.values())


def test_falcon_config_reads_one_kv_head(training_models):
    """tiiuae/falcon-7b config.json: 71 query heads and ``multi_query: true`` (one shared K/V head)."""
    cfg = {k: v for k, v in training_models["Falcon-7B"].items() if k != "source"}
    assert model_from_hf_config(cfg).num_kv_heads == 1


@pytest.mark.parametrize(
    "column, allowed",
    [
        ("method", {"full", "lora", "qlora"}),
        ("sharding", {"none", "ddp", "fsdp", "fsdp2", "zero1", "zero2", "zero3"}),
        ("linear_fp8", {"none", "float8_tensorwise", "float8_rowwise", "mxfp8", "nvfp4"}),
        ("unit", {"GiB", "GB"}),
        ("memory_kind", {"allocated", "reserved", "active", "nvidia-smi", "unknown"}),
        ("weights_dtype", {"bf16", "fp32", "nf4", "fp8"}),
        ("cpu_offload", {"none", "optimizer", "params", "activations"}),
        ("master_weights_fp32", {"true", "false"}),
        # empty where the source does not say (the torchao optimizer rows)
        ("packed", {"true", "false", ""}),
        ("compile", {"true", "false", ""}),
        ("lora_lm_head", {"true", "false", ""}),
    ],
)
def test_categorical_columns_take_allowed_values(runs, column, allowed):
    assert set(runs[column]) <= allowed, set(runs[column]) - allowed


def test_recompute_and_cross_entropy_spellings(runs):
    recompute = re.compile(r"^(none|selective_op|full|every_k:\d+)$")
    cross_entropy = re.compile(r"^(full|chunked:\d+|chunked_tokens:\d+)$")
    # empty only where the source leaves it open (stated in the row's notes)
    assert all(v == "" or recompute.match(v) for v in runs["recompute"]), set(runs["recompute"])
    assert all(v == "" or cross_entropy.match(v) for v in runs["cross_entropy"]), set(runs["cross_entropy"])


def test_lora_columns_only_on_adapter_runs(runs):
    adapters = runs[runs["method"] != "full"]
    assert (adapters["lora_rank"] != "").all() and (adapters["lora_targets"] != "").all()
    assert (runs[runs["method"] == "full"]["lora_rank"] == "").all()
    quantized = runs[runs["method"] == "qlora"]
    assert (quantized["weights_dtype"] == "nf4").all()
    assert set(quantized["qlora_library"]) <= {"bitsandbytes", "torchao"}


def test_measured_positive_and_counts_integral(runs):
    measured = pd.to_numeric(runs["measured"])
    assert (measured > 0).all() and (measured < 200).all()
    for col in ("gpu_count", "tp", "pp", "cp", "micro_batch", "seq_len"):
        values = pd.to_numeric(runs[col][runs[col] != ""])
        assert (values >= 1).all() and (values == values.round()).all(), col
    # parallel degrees never exceed the GPUs
    full = runs[(runs["tp"] != "") & (runs["pp"] != "") & (runs["cp"] != "")]
    layout = pd.to_numeric(full["tp"]) * pd.to_numeric(full["pp"]) * pd.to_numeric(full["cp"])
    assert (layout <= pd.to_numeric(full["gpu_count"])).all()


@pytest.mark.parametrize(
    "run_id, gpu, gpus, model, method, measured, unit, source_says",
    [
        (
            "torchtune-l31-8b-qlora-rtx4090",
            "RTX-4090",
            "1",
            "Llama-3.1-8B",
            "qlora",
            "7.4",
            "GiB",
            "torchtune README @30b8519: '| Llama 3.1 8B | QLoRA | 1x 4090 | 7.4 GiB | 2413 |'",
        ),
        (
            "torchtitan-2412-t1-l31-8b-fsdp-8xh100",
            "H100-SXM",
            "8",
            "Llama-3.1-8B",
            "full",
            "82.4",
            "GiB",
            "torchtitan benchmarks/llama3_h100_202412_torchtitan.md Table 1: '| FSDP | 5,762 | 82.4 |'",
        ),
        (
            "litgpt-hub-llama-2-7b-qlora-a10g",
            "A10G",
            "1",
            "Llama-2-7B",
            "qlora",
            "13.68",
            "GB",
            "litgpt config_hub/finetune/README.md: '| llama-2-7b/qlora.yaml | ... | 1xA10G | 45.67 min | $1.4 | 13.68 GB |'",
        ),
        (
            "torchao-train-l3-8b-mxfp8-cublas-8xb200",
            "B200",
            "8",
            "Llama-3.1-8B",
            "full",
            "33.88",
            "GiB",
            "torchao docs/source/workflows/training.md, 8x B200: '| Llama3-8b | mxfp8_cublas | 33.88 | 9969.0 | 20.0%'",
        ),
    ],
)
def test_spot_checks_against_the_published_figure(runs, run_id, gpu, gpus, model, method, measured, unit, source_says):
    row = _row(runs, run_id)
    assert (row["gpu"], row["gpu_count"], row["model"], row["method"]) == (gpu, gpus, model, method), source_says
    assert (row["measured"], row["unit"]) == (measured, unit), source_says


def test_spot_check_settings_read_from_the_recipe(runs):
    """torchtune llama3_1/8B_qlora_single_device.yaml @30b8519: lora_attn_modules [q_proj, v_proj, k_proj, output_proj],
    apply_lora_to_mlp True, apply_lora_to_output False, lora_rank 8, lora_alpha 16, CEWithChunkedOutputLoss (8 chunks),
    enable_activation_checkpointing True; the README row: batch 2, packed to 2048, compile."""
    row = _row(runs, "torchtune-l31-8b-qlora-rtx4090")
    assert (row["lora_targets"], row["lora_lm_head"], row["lora_rank"], row["lora_alpha"]) == (
        "all-linear",
        "false",
        "8",
        "16",
    )
    assert (row["cross_entropy"], row["recompute"], row["micro_batch"], row["seq_len"]) == (
        "chunked:8",
        "full",
        "2",
        "2048",
    )
    assert (row["qlora_library"], row["packed"], row["compile"]) == ("torchao", "true", "true")


def test_optimizer_in_backward_tag_marks_single_gpu_torchtune_full_runs(runs):
    """torchtune's optimizer_in_bwd (fused into the backward; needs one device and no gradient accumulation) has no
    column; the rows that use it carry the tag at the start of their notes."""
    tagged = runs[runs["notes"].str.startswith("[optimizer_in_bwd]")]
    assert len(tagged) == 6
    assert set(tagged["framework"]) == {"torchtune"} and set(tagged["method"]) == {"full"}
    assert set(tagged["gpu_count"]) == {"1"}
