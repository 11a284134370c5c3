"""Calibration: every published measurement is predicted, the errors per regime stay at or below what the README
states, and an estimate's error band comes from the residuals of its own regime."""

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from gpuplan_core import api
from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import kv_capacity_tokens
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.bands import error_band, perf_bands
from gpuplan_core.perf.calibration import (
    THROUGHPUT_MIN_BATCH,
    calibration_table,
    load_measurements,
    median_abs_error,
    regime,
    regime_summary,
    running_batch,
)
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.roofline import Workload, decode_phase

README = Path(__file__).resolve().parents[3] / "README.md"


def _readme_block() -> str:
    text = README.read_text()
    start, end = text.index("<!-- calibration:start -->"), text.index("<!-- calibration:end -->")
    return text[start:end]


def _readme_regimes() -> dict[str, tuple[int, float]]:
    rows = re.findall(r"^\| ([^|]+?) \| (\d+) \| ([\d.]+)% \| [+-][\d.]+% \|$", _readme_block(), re.M)
    return {name: (int(n), float(err) / 100) for name, n, err in rows}


def test_every_measurement_row_is_predicted_with_its_source():
    df = load_measurements()
    table = calibration_table()
    assert len(table) == len(df) >= 100
    assert df["id"].is_unique
    for row, res in zip(df.to_dict("records"), table, strict=True):
        assert res["id"] == row["id"]
        assert math.isfinite(res["predicted"]) and res["predicted"] > 0, row["id"]
        assert isinstance(row["source"], str) and row["source"].strip(), row["id"]
        assert isinstance(row["setup"], str) and row["setup"].strip(), row["id"]


def test_overall_median_error_at_most_the_readme_figure():
    stated = float(re.search(r"median absolute error ([\d.]+)%\*\* over (\d+)", _readme_block()).group(1)) / 100
    err = median_abs_error(calibration_table())
    assert err <= stated + 0.0005, f"median abs error {err:.2%} is above the README's {stated:.1%}"


def test_per_regime_errors_at_most_the_readme_figures():
    stated = _readme_regimes()
    measured = {r["regime"]: r for r in regime_summary() if r["points"]}
    assert set(measured) == set(stated), "the README's regime table is out of date: run `calibrate --markdown`"
    for name, (points, ceiling) in stated.items():
        assert measured[name]["points"] == points, name
        assert measured[name]["median_abs_error"] <= ceiling + 0.0005, f"{name} got worse"


def test_regimes_without_measurements_are_listed():
    empty = [r["regime"] for r in regime_summary() if not r["points"]]
    assert empty, "every regime measured: drop the 'No measurement yet' line"
    for name in empty:
        assert name in _readme_block()
    # formats a generation cannot run natively are not listed as gaps (no FP8 tensor math on Ampere)
    assert "Ampere · FP8 · decode" not in empty


def test_error_band_from_its_regime_residuals():
    # a synthetic table: two regimes, and nothing for Ampere FP8
    residuals = {
        "Hopper · 16-bit · decode": [0.10, -0.20, 0.05, -0.30, 0.15],
        "Ampere · 16-bit · decode": [0.02, -0.04, 0.40],
        "Hopper · 16-bit · prefill": [0.5],
    }
    b = error_band("H100-SXM", "bf16", "decode", residuals=residuals)
    assert b.regime == "Hopper · 16-bit · decode"
    assert b.points == 5
    assert b.band == pytest.approx(0.15)  # median of |0.10|, |-0.20|, |0.05|, |-0.30|, |0.15|
    assert b.bias == pytest.approx(0.05)  # median of the signed errors
    assert "±15%" in b.text and "5 comparable" in b.text
    assert b.provenance.startswith("calibrated")
    a = error_band("A100-80GB-SXM", "fp16", "decode", residuals=residuals)
    assert (a.points, a.band) == (3, pytest.approx(0.04))
    none = error_band("H200", "nvfp4", "decode", residuals=residuals)
    assert (none.points, none.band) == (0, None)
    assert none.short == "no comparable measurement"
    assert none.provenance.startswith("roofline estimate")
    # the wider figure beside it: decode across the dense regimes, median of the 8 |errors|
    assert none.phase_points == 8
    assert none.phase_band == pytest.approx(statistics_median([0.10, 0.20, 0.05, 0.30, 0.15, 0.02, 0.04, 0.40]))
    assert error_band("H100-SXM", "bf16", "decode", moe=True, residuals=residuals).points == 0  # MoE apart


def statistics_median(values):
    s = sorted(values)
    n = len(s)
    return (s[n // 2] + s[(n - 1) // 2]) / 2


def test_regime_names():
    assert regime("H100", "fp8", "decode") == "Hopper · FP8 · decode"
    assert regime("RTX 4090", "int4-g128", "prefill", moe=True) == "Ada · 8/4-bit integer · prefill · MoE"
    assert regime("B200", "nvfp4", "throughput", eager=True) == "Blackwell · FP4 · throughput · transformers eager"


def test_perf_bands_small_batches_use_decode():
    small = perf_bands("A100-80GB-SXM", "bf16", False, False, THROUGHPUT_MIN_BATCH - 1)
    big = perf_bands("A100-80GB-SXM", "bf16", False, False, THROUGHPUT_MIN_BATCH)
    assert small["output_tokens_per_s"].regime == "Ampere · 16-bit · decode"
    assert big["output_tokens_per_s"].regime == "Ampere · 16-bit · throughput"
    assert small["ttft_s"].regime == "Ampere · 16-bit · prefill"


def test_perf_json_carries_band_and_provenance():
    r = api.perf_report({"preset": "Llama-3.1-8B", "gpu": "A100-80GB-SXM", "batch": 1})
    table = calibration_table()
    decode_errs = [abs(p["error"]) for p in table if p["regime"] == "Ampere · 16-bit · decode"]
    band = r.main.error_band.tpot_s
    assert band.points == len(decode_errs)
    assert band.band == pytest.approx(pd.Series(decode_errs).median())
    assert r.main.provenance["tpot_s"].startswith("calibrated roofline")
    for k in ("ttft_s", "tpot_s", "output_tokens_per_s", "e2e_request_s"):
        assert k in r.main.error_band.model_fields_set and k in r.main.provenance
    dumped = r.model_dump()  # the CLI's JSON: the main GPU's fields at the top level, bands with their text
    assert dumped["error_band"]["tpot_s"]["short"] == band.short and dumped["tpot_s"] == r.main.tpot_s


def test_serving_json_carries_band():
    r = api.serve_report({"preset": "Llama-3.1-8B", "gpu": "H100"}, concurrency=8)
    from gpuplan_core.perf.serving_calibration import serving_table

    held = [p for p in serving_table() if p["regime"] == "online, dense" and p["metric"] == "ttft"]
    held = [p for p in held if p["split"] == "held out" and p["error"] is not None]
    assert r.error_band.ttft_p95_s.points == len(held) == 49  # the held-out online dense first-token points
    assert r.provenance["tpot_mean_s"].startswith("calibrated")


def test_memory_components_say_exact_or_estimated():
    r = api.memory_report({"preset": "Llama-3.1-8B", "weights_format": "int4-g128"})
    assert set(r.provenance) == set(r.components)
    for k in ("weights", "KV cache", "weights kept in 16 bit (embeddings, LM head, norms)"):
        assert r.provenance[k].startswith("exact")
    for k in ("activation workspace", "CUDA graphs", "CUDA context"):
        assert r.provenance[k].startswith("estimated")


def test_eager_engine_pays_host_time_when_it_exceeds_the_gpus():
    # transformers generate() without CUDA graphs: the host launches 32 layers x 0.7 ms while the GPU computes; a
    # step takes the longer of the two, plus the fixed per-step overhead
    m, pa = get_preset("Llama-3.1-8B"), PerfAssumptions()
    host = 32 * 0.7e-3
    for gpu in (get_gpu("H100"), get_gpu("L4")):
        graphs = decode_phase(m, gpu, Workload(), 1, 128, pa)
        eager = decode_phase(m, gpu, Workload(eager=True), 1, 128, pa)
        gpu_time = graphs.time_s - pa.decode_step_overhead_s
        assert eager.time_s == pytest.approx(max(gpu_time, host) + pa.decode_step_overhead_s)
    assert decode_phase(m, get_gpu("H100"), Workload(eager=True), 1, 128, pa).bound == "overhead"
    assert decode_phase(m, get_gpu("L4"), Workload(eager=True), 1, 128, pa).bound == "memory"  # 300 GB/s: GPU-bound
    r = api.perf_report({"preset": "Llama-3.1-8B", "gpu": "H100", "engine": "transformers"})
    assert r.main.error_band.tpot_s.regime == "Hopper · 16-bit · decode · transformers eager"
    # TensorRT-LLM 0.17 runs eager too, but its calibration runs are its engine's: it reads the CUDA-graph regime
    r = api.perf_report({"preset": "Llama-3.1-8B", "gpu": "H100", "engine": "trtllm", "engine_version": "0.17"})
    assert r.main.error_band.tpot_s.regime == "Hopper · 16-bit · decode"


def test_throughput_run_larger_than_the_kv_cache_runs_in_waves():
    # Llama-2-70B FP8 on 4 x H100 at 128 + 2048 tokens: the pool holds fewer than the 480 requests of the run
    m, gpu = get_preset("Llama-2-70B"), get_gpu("H100-SXM")
    req = MemoryRequest(weights_format="fp8", kv_format="fp8", tp=4, gpus=4)
    fits = kv_capacity_tokens(m, req, gpu) // (128 + 2048)
    row = {"setup": "max throughput"}
    assert running_batch(row, m, gpu, "fp8", "fp8", 4, batch=480, tokens=128 + 2048) == min(480, fits)
    assert running_batch({"setup": "enable_attention_dp"}, m, gpu, "fp8", "fp8", 4, batch=480, tokens=2176) == 480
    assert running_batch(row, m, gpu, "fp8", "fp8", 4, batch=8, tokens=2176) == 8


def test_measurement_units_are_known():
    df = pd.read_csv(DATA_DIR / "measurements.csv")
    assert set(df["unit"]) <= {"ms", "s", "tokens/s", "tokens/s/GPU", "tokens", "GB"}


def test_a_static_band_measures_the_prediction_a_page_shows():
    """The static bands' residuals are the step model's as the pages run it: with the measured engine's kernels
    where its tables cover the run (here vLLM on 4 x H100, Llama-3.1-70B: 0.53 s against the roofline kernels'
    0.62 s, measured 0.558 s), so a band describes the figure beside it, not a second model of it."""
    from gpuplan_core.perf.calibration import predict_row
    from gpuplan_core.perf.predict import predict

    row = load_measurements().set_index("id").loc["pr23197-h100x4-l33-70b-bf16-b1"].to_dict()
    m, gpu = get_preset("Llama-3.1-70B"), get_gpu("H100-SXM")
    wl = Workload(weights_format="bf16", kv_format="bf16", tp=4)
    shown = predict(m, gpu, wl, 1, 256, 32, with_compute_bound_batch=False, engine="vllm").e2e_request_s
    roofline_alone = predict(m, gpu, wl, 1, 256, 32, with_compute_bound_batch=False).e2e_request_s
    assert predict_row(row) == pytest.approx(shown, rel=1e-12)
    assert abs(shown / roofline_alone - 1) > 0.05  # the tables cover it: the two differ, and the band follows the first
