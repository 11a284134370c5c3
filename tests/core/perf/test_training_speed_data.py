"""The published training-throughput measurements (data/training_speed_measurements.csv): every row names its
source and layout, resolves to a GPU in the catalog and to a model that parses, its parallel degrees multiply to
its GPU count, and the figures agree with the published tables and with the FLOP formulas the sources state."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.arch import ModelArch, params_total
from gpuplan_core.model.hf_config import model_from_hf_config
from gpuplan_core.model.presets import load_presets

COLUMNS = [
    "id",
    "source",
    "publisher",
    "framework",
    "framework_version",
    "gpu",
    "gpu_count",
    "model_as_published",
    "model",
    "seq_len",
    "global_batch",
    "micro_batch",
    "grad_accum",
    "tp",
    "pp",
    "vp",
    "cp",
    "ep",
    "dp",
    "sharding",
    "precision",
    "recompute",
    "compile",
    "sequence_parallel",
    "interconnect",
    "tokens_per_s_per_gpu",
    "tflops_per_gpu_reported",
    "mfu_reported",
    "flops_formula",
    "notes",
]
SHARDING = {"ddp", "fsdp", "fsdp2", "hsdp", "zero1", "zero2", "zero3", "distributed_optimizer"}
PRECISION = {"bf16", "fp8", "mxfp8", "nvfp4"}
BOOL = {"true", "false", ""}


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return pd.read_csv(DATA_DIR / "training_speed_measurements.csv", keep_default_na=False, dtype=str)


@pytest.fixture(scope="module")
def configs() -> dict[str, dict]:
    return json.loads((DATA_DIR / "training_speed_models.json").read_text())["models"]


def _model(name: str, configs: dict[str, dict]) -> ModelArch:
    if name in configs:
        return model_from_hf_config({k: v for k, v in configs[name].items() if k != "source"}, name=name)
    return load_presets()[name]


def _row(rows: pd.DataFrame, row_id: str) -> pd.Series:
    hit = rows[rows["id"] == row_id]
    assert len(hit) == 1, row_id
    return hit.iloc[0]


def test_header_is_the_documented_schema(rows):
    assert list(rows.columns) == COLUMNS


def test_size_ids_and_publishers(rows):
    assert 80 <= len(rows) <= 150
    assert rows["id"].is_unique
    assert rows["id"].str.fullmatch(r"[a-z0-9]+(-[a-z0-9.]+)*").all()
    assert rows["publisher"].nunique() >= 4
    for col in ("source", "publisher", "framework", "framework_version", "model_as_published", "flops_formula"):
        assert (rows[col].str.strip() != "").all(), col


def test_every_gpu_is_in_the_catalog_and_gb200_rows_say_so(rows):
    for name in sorted(set(rows["gpu"])):
        assert get_gpu(name).gpu == name
    gb200 = rows["model_as_published"].str.contains("GB200")
    assert gb200.any()
    assert (rows.loc[gb200, "gpu"] == "B200").all()
    assert rows.loc[gb200, "notes"].str.contains("GB200 NVL72").all()


def test_every_model_resolves_and_parses(rows, configs):
    presets = load_presets()
    for name in sorted(set(rows["model"])):
        assert name in configs or name in presets, name
        assert params_total(_model(name, configs)) > 1e8, name
    assert set(configs) <= set(rows["model"])  # no config without a row
    for name, cfg in configs.items():
        assert cfg["source"].strip(), name


def test_enumerated_columns(rows):
    assert set(rows["sharding"]) <= SHARDING | {""}
    assert set(rows["precision"]) <= PRECISION  # every row states its precision
    assert rows["recompute"].str.fullmatch(r"|none|selective|full|every_k:\d+").all()
    assert set(rows["compile"]) <= BOOL and set(rows["sequence_parallel"]) <= BOOL


def test_parallel_degrees_multiply_to_the_gpu_count(rows):
    full = rows[(rows[["tp", "pp", "cp", "dp"]] != "").all(axis=1)]
    assert len(full) >= 0.9 * len(rows)
    for _, r in full.iterrows():
        tp, pp, cp, dp = (int(r[c]) for c in ("tp", "pp", "cp", "dp"))
        # expert parallelism folds into the data/context(/tensor) ranks in Megatron and torchtitan: it never multiplies
        assert tp * pp * cp * dp == int(r["gpu_count"]), r["id"]
        if r["ep"]:
            assert (tp * cp * dp) % int(r["ep"]) == 0, r["id"]


def test_batches_agree_where_all_are_given(rows):
    full = rows[(rows[["global_batch", "micro_batch", "grad_accum", "dp"]] != "").all(axis=1)]
    assert len(full) >= 100
    for _, r in full.iterrows():
        product = int(r["micro_batch"]) * int(r["grad_accum"]) * int(r["dp"])
        if "does not equal" in r["notes"]:  # a published GA that contradicts the table's own batch sizes, flagged
            assert product != int(r["global_batch"])
        else:
            assert product == int(r["global_batch"]), r["id"]


def test_every_row_has_a_measured_figure_in_range(rows):
    for _, r in rows.iterrows():
        figures = [r[c] for c in ("tokens_per_s_per_gpu", "mfu_reported", "tflops_per_gpu_reported") if r[c]]
        assert figures, r["id"]
        assert all(float(x) > 0 for x in figures), r["id"]
        if r["mfu_reported"]:
            assert 0.05 < float(r["mfu_reported"]) < 0.8, r["id"]


def test_reported_mfu_is_the_reported_tflops_over_the_catalog_peak(rows):
    """Where a source gives both, MFU = TFLOP/s / dense peak of the precision (H100 989 BF16 / 1979 FP8, A100 312):
    the catalog's peaks are the ones the sources divided by, to the rounding of the published figures."""
    both = rows[(rows["mfu_reported"] != "") & (rows["tflops_per_gpu_reported"] != "")]
    assert len(both) >= 50
    for _, r in both.iterrows():
        peak, _ = get_gpu(r["gpu"]).dense_peak_flops("fp8" if r["precision"] == "fp8" else "bf16")
        mfu = float(r["tflops_per_gpu_reported"]) * 1e12 / peak
        assert mfu == pytest.approx(float(r["mfu_reported"]), abs=0.006), r["id"]


def test_llm_foundry_70b_on_512_h100_against_its_flop_formula(rows):
    """mosaicml/llm-foundry scripts/train/benchmarking/README.md, 'H100 80GB BF16 (Large Scale)': MPT-70B, seq 2048,
    512 GPUs: 515,636 tokens/s = 1,007 per GPU, 408 TFLOP/s, MFU 41.25%. The README's MFU counts
    6 N + 12 n_layers d_model seq FLOPs per token (N = 64,862,437,376 as published)."""
    r = _row(rows, "llmfoundry-h100ls-70b-s2048-g512")
    published = r[["tokens_per_s_per_gpu", "tflops_per_gpu_reported", "mfu_reported"]].tolist()
    assert published == ["1007", "408", "0.4125"]
    assert (r["sharding"], r["recompute"], r["global_batch"], r["micro_batch"]) == ("fsdp", "full", "4096", "8")
    flops_per_token = 6 * 64_862_437_376 + 12 * 80 * 8192 * 2048  # 405.3 GFLOP
    assert flops_per_token * 515_636 / 512 / 1e12 == pytest.approx(408, abs=1)
    assert flops_per_token * 515_636 / 512 / 989e12 == pytest.approx(0.4125, abs=0.001)


def test_torchtitan_llama3_8b_table1(rows):
    """pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md Table 1: Llama 3.1 8B on 8 H100, FSDP,
    local batch 2 (global 16), selective AC: 5,762 / 6,667 (compile) / 8,532 (compile + Float8) TPS/GPU."""
    ids = ["torchtitan-2412-t1-8b-fsdp", "torchtitan-2412-t1-8b-fsdp-compile", "torchtitan-2412-t1-8b-fsdp-compile-fp8"]
    got = [(_row(rows, i)["tokens_per_s_per_gpu"], _row(rows, i)["compile"], _row(rows, i)["precision"]) for i in ids]
    assert got == [("5762", "false", "bf16"), ("6667", "true", "bf16"), ("8532", "true", "fp8")]
    assert {(_row(rows, i)["global_batch"], _row(rows, i)["recompute"], _row(rows, i)["sharding"]) for i in ids} == {
        ("16", "selective", "fsdp2")
    }


def test_megatron_bridge_gb200_405b_row(rows):
    """NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md, 26.06, LLAMA3.1_405B on DGX-GB200: 256 GPUs,
    FP8, GBS 1536, MBS 1, seq 8192, TP 4, PP 16, CP 1, VP 4: 843 tokens/s/GPU, 2,129 model TFLOP/s/GPU."""
    r = _row(rows, "bridge2606-pretrain-gb200-llama3-1-405b-fp8")
    layout = r[["gpu", "gpu_count", "tp", "pp", "cp", "vp", "dp"]].tolist()
    assert layout == ["B200", "256", "4", "16", "1", "4", "4"]
    assert r[["tokens_per_s_per_gpu", "tflops_per_gpu_reported"]].tolist() == ["843", "2129"]
    assert r["grad_accum"] == str(1536 // (1 * 4))  # derived: gbs / (mbs dp)


def test_megatron_2021_configs_have_the_published_parameter_counts(configs):
    """NVIDIA/Megatron-LM README (2021) table: parameters in billions for the GPT models with vocab 51,200 (tied
    embeddings: 12 L h^2 + V h, to the table's rounding; the parser also counts biases, LayerNorms and the learned
    positions, which the table's formula leaves out: within 0.5%)."""
    published = {"18b": 18.4, "39b": 39.1, "76b": 76.1, "145b": 145.6, "310b": 310.1, "530b": 529.6, "1t": 1008.0}
    for size, billions in published.items():
        model = _model(f"megatron-gpt-{size}-v51k", configs)
        assert params_total(model) / 1e9 == pytest.approx(billions, rel=0.005), size
