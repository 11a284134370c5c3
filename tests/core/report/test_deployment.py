"""report/deployment.py: the calibration's rows and sentence, read from the fit (errors relative to measured)."""

from gpuplan_core.api.deployment import calibrate_deployment
from gpuplan_core.perf.bench_files import SAMPLE_BENCH_FILE


def test_rows_errors_and_summary_are_the_fit_s():
    r = calibrate_deployment(SAMPLE_BENCH_FILE.read_bytes(), SAMPLE_BENCH_FILE.name)
    first = r.run_rows()[0]  # run 1 (1 client), TTFT
    run = r.fit.runs[0]
    assert (first["run"], first["load"], first["metric"], first["measured"]) == (1, "1 client", "TTFT (ms)", 36.703)
    assert first["before error %"] == 100 * (run.before["ttft"] - 36.703) / 36.703
    assert first["held_out"] == run.held_out["ttft"]
    ttft = r.error_rows()[0]
    assert ttft["engine defaults %"] == 100 * r.fit.errors["before"]["ttft"]
    assert ttft["fitted, run held out %"] == 100 * r.fit.errors["held_out"]["ttft"]
    assert r.summary().endswith("TTFT 33% -> 1%, TPOT 15% -> 1%, output tokens/s 13% -> 2%.")
