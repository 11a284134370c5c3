"""bench/aic_estimator.py against a tiny fake aiconfigurator (tests/bench/fake_aic.py): which rows it answers and
how (the load as a batch), on hand numbers."""

from __future__ import annotations

import sys

import pytest

from bench import aic_estimator as est
from tests.bench.fake_aic import row


def test_rows_outside_aiconfigurator_say_why():
    assert est.query_of(row(gpu="MI300X")) == "GPU MI300X not in aiconfigurator"
    assert est.query_of(row(model_preset="Qwen3-14B")) == "model Qwen3-14B not in aiconfigurator's configs"
    assert est.query_of(row(engine="LMDeploy (TurboMind)")) == "engine LMDeploy (TurboMind) not in aiconfigurator"
    assert est.query_of(row(gpu="H200", engine="SGLang (ROCm)")).startswith("engine SGLang (ROCm)")


def test_rows_map_to_its_models_engines_and_formats():
    q = est.query_of(row(gpu="H200", engine="TensorRT-LLM (Triton backend)", weights_format="fp8", kv_format="fp8"))
    assert q == est.Query("h200_sxm", "trtllm", "meta-llama/Meta-Llama-3.1-8B", 1, "fp8", "fp8", 1000, 101)
    ds = est.query_of(
        row(
            model_preset="DeepSeek-V3",
            model_as_published="DeepSeek-R1-0528",
            tensor_parallel=8,
            weights_format="fp8 (native FP8 checkpoint)",
            kv_format="auto (not stated)",
            engine="SGLang",
        )
    )
    assert (ds.model, ds.backend, ds.tp, ds.gemm, ds.kv) == ("deepseek-ai/DeepSeek-R1", "sglang", 8, None, "bfloat16")
    qwen = est.query_of(row(model_preset="Qwen3-32B", weights_format="fp8 (Qwen FP8 checkpoint, block-wise)"))
    assert (qwen.model, qwen.gemm) == ("Qwen/Qwen3-32B-FP8", None)  # block-wise FP8: read from the checkpoint
    assert est.query_of(row(weights_format="fp16")).gemm == "bfloat16"


def test_closed_loop_is_a_batch_of_its_clients(aic):
    got = aic.run(row(load=4.0))
    assert (got["batch"], got["ttft_ms"], got["tpot_ms"], got["tokens_s"], got["load"]) == (
        4,
        14.0,
        5.0,
        800.0,
        "closed loop",
    )
    path, mc, isl, osl, batch, ctx_tokens = aic.calls[-1]
    assert (path, mc, isl, osl, batch, ctx_tokens) == (
        "meta-llama/Meta-Llama-3.1-8B",
        (1, 1, 1, "bfloat16", "bfloat16"),
        1000,
        101,
        4,
        1000,
    )
    assert aic.run(row(load=100.0)) == "aiconfigurator: out of memory at the clients' batch"  # 100 > 64


def test_a_moe_model_keeps_its_experts_tensor_parallel(aic):
    aic.run(row(model_preset="Mixtral-8x7B-v0.1", tensor_parallel=2))
    assert aic.calls[-1][1][:3] == (2, 2, 1)  # tp 2, MoE tp 2, EP 1


def test_a_burst_runs_at_the_largest_batch_whose_kv_fits(aic):
    got = aic.run(row(load=float("inf"), arrival="all_at_once", requests=1000.0))
    assert (got["batch"], got["ttft_ms"], got["tpot_ms"], got["load"]) == (
        32,
        None,
        5.0,
        "burst",
    )  # KV holds 32; no burst TTFT
    assert aic.run(row(load=float("inf"), arrival="all_at_once", requests=5.0))["batch"] == 5


def test_a_request_rate_is_the_smallest_batch_that_carries_it(aic):
    # Little's law: b >= rate x (TTFT + TPOT x (output - 1)) = 10/s x (10 + b + 5 x 100) ms = 5.1 + 0.01 b: b = 6
    got = aic.run(row(load_kind="request_rate", load=10.0, arrival="poisson"))
    assert (got["batch"], got["ttft_ms"], got["load"]) == (6, 16.0, "request rate")
    # 100/s needs b >= 56.7: the KV cache holds 32, so no answer
    assert aic.run(row(load_kind="request_rate", load=100.0)) == "aiconfigurator: request rate above its capacity"


def test_its_figure_per_metric_and_statistic():
    figures = {"ttft_ms": 14.0, "tpot_ms": 5.0, "tokens_s": 800.0}
    assert est.aic_value(row(metric="ttft", statistic="median"), figures) == 14.0
    assert est.aic_value(row(metric="ttft", unit="s"), figures) == 0.014
    assert est.aic_value(row(metric="tpot", statistic="p50"), figures) == 5.0
    assert est.aic_value(row(metric="itl", statistic="p99"), figures) is None  # one value, no distribution
    assert est.aic_value(row(metric="output_tokens_per_s", statistic="value"), figures) == 800.0


def test_without_the_package_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)
    with pytest.raises(SystemExit, match="pip install aiconfigurator-core==0.12.0"):
        est.load_sdk()
