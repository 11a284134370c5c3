"""perf/deployment_fit.py: a deployment's runs replayed on the one serving path, and its constants fitted and
checked on runs held out of the fit."""

import statistics

import pytest

from gpuplan_core.perf import serving_calibration as cal
from gpuplan_core.perf.bench_files import SAMPLE_BENCH_FILE, BenchRun, read_bench_file
from gpuplan_core.perf.deployment_fit import Deployment, _row, fit_constants, fit_deployment, replay

DEP = Deployment(model="Llama-3.1-8B", gpu="H100-SXM", tp=1, engine="vllm")
RUNS = read_bench_file(SAMPLE_BENCH_FILE.read_bytes()).runs


def test_a_run_is_replayed_as_a_published_row_is():
    run = RUNS[4]  # 1 request/s, Poisson, 1,024 in / 128 out, 200 requests
    row = _row(run, DEP, "ttft")
    assert cal.shape_of(row) == ("poisson", "fixed", 0.0, 200)
    assert replay(run, DEP)["ttft"] == cal.predict_row(row)["predicted"]


def test_a_request_cost_adds_to_each_first_token_under_open_loop_arrivals():
    """Arrivals at the engine shift by the cost; nothing else moves: TTFT(c) - TTFT(0) = c exactly."""
    run = RUNS[4]
    t0, t50 = replay(run, DEP, (0.0, 1.0))["ttft"], replay(run, DEP, (0.05, 1.0))["ttft"]
    assert t50 - t0 == pytest.approx(50.0, abs=1e-6)


def test_the_fit_recovers_the_sample_s_constants():
    """The sample was simulated with 15 ms per request and decode steps x 1.2, then +-3% noise."""
    cost, factor, identified, fit_from = fit_constants(RUNS, DEP)
    assert identified and fit_from == "light load"
    assert cost == pytest.approx(0.015, rel=0.1) and factor == pytest.approx(1.2, rel=0.03)


def test_fitted_errors_are_lower_than_before_and_held_out_runs_never_see_their_own_fit():
    fit = fit_deployment(RUNS, DEP)
    e = fit.errors
    for m in ("ttft", "tpot", "output_tokens_per_s"):
        assert e["held_out"][m] < e["before"][m] and e["fitted"][m] <= e["held_out"][m] + 0.01
    assert e["before"]["ttft"] > 0.3 and e["held_out"]["ttft"] < 0.05  # 33% -> 1.2% on the sample
    # run 3 held out: its prediction is the one with the constants fitted on the six other runs
    others = RUNS[:2] + RUNS[3:]
    assert fit.runs[2].held_out == replay(RUNS[2], DEP, fit_constants(others, DEP)[:2])
    errs = [abs(r.held_out["ttft"] - r.measured["ttft"]) / r.measured["ttft"] for r in fit.runs]
    assert e["held_out"]["ttft"] == statistics.median(errs)


def test_one_run_fits_a_cost_but_no_factor_and_has_nothing_held_out():
    fit = fit_deployment(RUNS[:1], DEP)
    assert not fit.factor_identified and fit.decode_time_factor == 1.0
    assert fit.runs[0].held_out == {"ttft": None, "tpot": None, "output_tokens_per_s": None}
    assert fit.errors["held_out"]["ttft"] is None


def test_a_burst_gives_no_request_cost():
    shape = {"load_kind": "burst", "load": float("inf"), "arrival": "all_at_once", "requests": 50}
    burst = BenchRun(line=1, label="all at once", input_tokens=512, output_tokens=64, ttft_mean_ms=900.0, **shape)
    assert fit_constants([burst], DEP)[0] == 0.0
