"""bench/bench_aiconfigurator.py against a tiny fake aiconfigurator: which rows it answers and how (the load as a
batch), and the error arithmetic on hand numbers. The real comparison is the script's output."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from bench import bench_aiconfigurator as bench
from gpuplan_core.perf import serving_calibration as cal

KV_FITS = 32  # the fake's KV cache holds at most 32 sequences
WEIGHTS_FIT = 64  # and its memory 64


class FakeSummary:
    """A fake agg estimate: TTFT 10 ms + 1 ms a sequence, TPOT 5 ms, tokens/s batch x 1000 / TPOT."""

    def __init__(self, batch: int):
        self.batch = batch

    def get_result_dict(self) -> dict:
        return {"ttft": 10.0 + self.batch, "tpot": 5.0, "tokens/s": self.batch * 1000 / 5.0}

    def check_oom(self) -> bool:
        return self.batch > WEIGHTS_FIT

    def check_kv_cache_oom(self) -> bool:
        return self.batch > KV_FITS


def fake_sdk(calls: list) -> SimpleNamespace:
    def run_agg(model, db, rc, ctx_tokens):  # noqa: ARG001
        calls.append((model.path, model.mc, rc.isl, rc.osl, rc.batch_size, ctx_tokens))
        return FakeSummary(rc.batch_size)

    return SimpleNamespace(
        common=SimpleNamespace(DefaultHFModels=set(bench.MODELS.values()) | {"deepseek-ai/DeepSeek-R1"}),
        utils=None,
        get_database=lambda system, backend, version: SimpleNamespace(backend=backend, version="9.9"),
        check_is_moe=lambda path: "Mixtral" in path or "deepseek" in path,
        ModelConfig=lambda **kw: SimpleNamespace(resolve_moe_parallelism=lambda: (kw["moe_tp_size"], 1)),
        build_model_config=lambda tp, pp, dp, moe_tp, moe_ep, **kw: (
            tp,
            moe_tp,
            moe_ep,
            kw["gemm_quant_mode"],
            kw["kvcache_quant_mode"],
        ),
        resolve_context_fmha_by_data=lambda *a, **kw: None,
        resolve_nvfp4_for_system=lambda *a, **kw: None,
        get_model=lambda path, mc, backend: SimpleNamespace(path=path, mc=mc),
        RuntimeConfig=lambda isl, osl, batch_size: SimpleNamespace(isl=isl, osl=osl, batch_size=batch_size),
        get_backend=lambda name: SimpleNamespace(run_agg=run_agg),
        version="0.0 (fake)",
    )


@pytest.fixture
def aic(monkeypatch):
    calls: list = []
    monkeypatch.setattr(bench, "load_sdk", lambda: fake_sdk(calls))
    out = bench.Aic()
    out.calls = calls
    return out


def row(**kw) -> dict:
    base = dict(
        id="src-001",
        gpu="H100-SXM",
        model_preset="Llama-3.1-8B",
        model_as_published="Llama 3.1 8B",
        engine="vLLM",
        weights_format="bf16",
        kv_format="bf16 (not stated)",
        tensor_parallel=1,
        input_tokens=1000,
        output_tokens=101,
        load_kind="concurrency",
        load=4.0,
        arrival="closed",
        requests=100.0,
        metric="itl",
        statistic="mean",
        unit="ms",
        measured=20.0,
    )
    return {**base, **kw}


def test_rows_outside_aiconfigurator_say_why():
    assert bench.query_of(row(gpu="MI300X")) == "GPU MI300X not in aiconfigurator"
    assert bench.query_of(row(model_preset="Qwen3-14B")) == "model Qwen3-14B not in aiconfigurator's configs"
    assert bench.query_of(row(engine="LMDeploy (TurboMind)")) == "engine LMDeploy (TurboMind) not in aiconfigurator"
    assert bench.query_of(row(gpu="H200", engine="SGLang (ROCm)")).startswith("engine SGLang (ROCm)")


def test_rows_map_to_its_models_engines_and_formats():
    q = bench.query_of(row(gpu="H200", engine="TensorRT-LLM (Triton backend)", weights_format="fp8", kv_format="fp8"))
    assert q == bench.Query("h200_sxm", "trtllm", "meta-llama/Meta-Llama-3.1-8B", 1, "fp8", "fp8", 1000, 101)
    ds = bench.query_of(
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
    qwen = bench.query_of(row(model_preset="Qwen3-32B", weights_format="fp8 (Qwen FP8 checkpoint, block-wise)"))
    assert (qwen.model, qwen.gemm) == ("Qwen/Qwen3-32B-FP8", None)  # block-wise FP8: read from the checkpoint
    assert bench.query_of(row(weights_format="fp16")).gemm == "bfloat16"


def test_closed_loop_is_a_batch_of_its_clients(aic):
    est = aic.run(row(load=4.0))
    assert (est["batch"], est["ttft_ms"], est["tpot_ms"], est["tokens_s"], est["load"]) == (
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
    est = aic.run(row(load=float("inf"), arrival="all_at_once", requests=1000.0))
    assert (est["batch"], est["ttft_ms"], est["tpot_ms"], est["load"]) == (
        32,
        None,
        5.0,
        "burst",
    )  # KV holds 32; no burst TTFT
    assert aic.run(row(load=float("inf"), arrival="all_at_once", requests=5.0))["batch"] == 5


def test_a_request_rate_is_the_smallest_batch_that_carries_it(aic):
    # Little's law: b >= rate x (TTFT + TPOT x (output - 1)) = 10/s x (10 + b + 5 x 100) ms = 5.1 + 0.01 b: b = 6
    est = aic.run(row(load_kind="request_rate", load=10.0, arrival="poisson"))
    assert (est["batch"], est["ttft_ms"], est["load"]) == (6, 16.0, "request rate")
    # 100/s needs b >= 56.7: the KV cache holds 32, so no answer
    assert aic.run(row(load_kind="request_rate", load=100.0)) == "aiconfigurator: request rate above its capacity"


def test_its_figure_per_metric_and_statistic():
    est = {"ttft_ms": 14.0, "tpot_ms": 5.0, "tokens_s": 800.0}
    assert bench.aic_value(row(metric="ttft", statistic="median"), est) == 14.0
    assert bench.aic_value(row(metric="ttft", unit="s"), est) == 0.014
    assert bench.aic_value(row(metric="tpot", statistic="p50"), est) == 5.0
    assert bench.aic_value(row(metric="itl", statistic="p99"), est) is None  # one value, no distribution
    assert bench.aic_value(row(metric="output_tokens_per_s", statistic="value"), est) == 800.0


def test_only_rows_both_answer_count_and_the_errors_are_their_medians(aic):
    rows = [
        row(id="a-001", measured=4.0),  # aic TPOT 5 ms: +25%
        row(id="a-002", measured=10.0),  # -50%
        row(id="a-003", metric="output_tokens_per_s", statistic="value", measured=1000.0),  # aic 800: -20%
        row(id="a-004", metric="itl", statistic="p99", measured=9.0),  # aic has no p99
        row(id="a-005", measured=5.0),  # gpuplan has no prediction
        row(id="b-001", gpu="MI300X", measured=5.0),  # aiconfigurator has no MI300X
        row(id="b-002", model_preset="Mixtral-8x7B-v0.1", tensor_parallel=2, measured=4.0),  # MoE, aic +25%
    ]
    gpuplan = {"a-001": 4.4, "a-002": 9.0, "a-003": 1100.0, "a-004": 9.0, "a-005": None, "b-001": 5.0, "b-002": 3.0}
    loso = {"a-001": 5.0, "a-002": 7.0, "a-003": 1000.0}
    both, left_out = bench.compare(rows, gpuplan, loso, aic)
    assert [r["id"] for r in both] == ["a-001", "a-002", "a-003", "b-002"]
    assert left_out == {
        "aiconfigurator: no such figure (a p99, or a burst's first token)": 1,
        "gpuplan: no prediction (saturated, or a burst of unstated size)": 1,
        "GPU MI300X not in aiconfigurator": 1,
    }
    assert [round(r["gpuplan_error"], 6) for r in both] == [0.1, -0.1, 0.1, -0.25]
    assert [round(r["aic_error"], 6) for r in both] == [0.25, -0.5, -0.2, 0.25]
    table = {(s["group"], s["metric"]): s for s in bench.summary(both)}
    dense_itl = table[("dense", "itl")]  # |+10%|, |-10%| and |+25%|, |-50%|: medians 10% and 37.5%
    assert (dense_itl["rows"], dense_itl["gpuplan"], dense_itl["aic"]) == (2, pytest.approx(0.1), 0.375)
    assert dense_itl["loso"] == pytest.approx(0.275)  # |+25%|, |-30%|
    all_itl = table[("all", "itl")]  # gpuplan 10%, 10%, 25%; aic 25%, 50%, 25%
    assert (all_itl["rows"], all_itl["gpuplan"], all_itl["aic"], all_itl["loso"]) == (
        3,
        pytest.approx(0.1),
        0.25,
        pytest.approx(0.275),
    )
    assert table[("MoE", "itl")]["loso"] is None  # no left-out prediction for b-002
    assert table[("dense", "output_tokens_per_s")]["aic"] == pytest.approx(0.2)
    by_source = {(s["group"], s["metric"]): s["rows"] for s in bench.summary(both, by="source")}
    assert [(s["group"], s["rows"]) for s in bench.summary(both, by="load")] == [("closed loop", 3), ("closed loop", 1)]
    assert by_source == {("a", "itl"): 2, ("a", "output_tokens_per_s"): 1, ("b", "itl"): 1}


def test_every_published_row_is_compared_or_counted_with_its_reason(aic, monkeypatch, capsys):
    monkeypatch.setattr(bench, "Aic", lambda: aic)
    bench.main(["--json"])
    out = json.loads(capsys.readouterr().out)
    frame = cal.load_serving_measurements()
    assert out["published_rows"] == len(frame) == out["both_answer"] + sum(out["left_out"].values())
    assert out["left_out"]["GPU MI300X not in aiconfigurator"] == (frame["gpu"] == "MI300X").sum()
    assert (
        out["left_out"]["model Qwen3-14B not in aiconfigurator's configs"]
        == (frame["model_preset"] == "Qwen3-14B").sum()
    )
    assert out["databases"] == ["sglang 9.9", "trtllm 9.9", "vllm 9.9"]
    dense = next(s for s in out["class"] if (s["group"], s["metric"]) == ("dense", "itl"))
    assert dense["rows"] > 0 and dense["aic"] > 0


def test_without_the_package_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)
    with pytest.raises(SystemExit, match="pip install aiconfigurator-core==0.12.0"):
        bench.load_sdk()
