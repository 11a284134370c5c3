"""Methodology's text (gpuplan_ui/methodology.py) against the core's figures."""

from gpuplan_core import api
from gpuplan_ui import methodology


def test_the_serving_paragraph_states_the_left_out_source_errors_of_the_report():
    cal = api.calibration_report()
    by = {(e.by, e.group, e.metric): e.median_abs_error for e in cal.serving_left_out_source}
    text = methodology.serving_trust(cal)
    assert "each of the 18 sources left out in turn" in text
    ttft, tpot, tput = (by[("regime", "online, dense", m)] for m in ("ttft", "itl", "output_tokens_per_s"))
    assert f"online dense serving TTFT {ttft:.0%}, time per token {tpot:.0%}, output tokens/s {tput:.0%}" in text
    assert text.startswith(methodology.SERVING_TRUST)


def test_the_reference_lists_one_line_per_use_case_source_and_market_estimate():
    from gpuplan_core import USE_CASE_SOURCES, MarketEstimate
    from gpuplan_ui import methodology_sources

    assert methodology_sources.use_case_sources().splitlines() == [f"- {s}" for s in USE_CASE_SOURCES]
    estimates = methodology_sources.market_estimates().splitlines()
    assert len(estimates) == len(MarketEstimate.all()) > 0 and all(e.startswith("- ") for e in estimates)
