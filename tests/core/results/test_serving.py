"""The typed serving reports (results/serving.py): ``serve --json`` flattens the replica's result into its top level
and has capacity only with a target; the load curve's numbers follow from its points."""

from __future__ import annotations

import math

import pytest

from gpuplan_core import api
from gpuplan_core.perf.serving import ServingResult
from gpuplan_core.results.serving import ServeReport, ServingCurve

# no traffic estimate and no targets unless a test sets them (the scenario's defaults have both)
BASE = {"preset": "Llama-3.1-8B", "gpu": "H100", "requests_per_day": None, "ttft_target_s": None, "tpot_target_s": None}


def test_serve_report_flattens_the_result_in_place():
    r = api.serve_report(BASE | {"ttft_target_s": 2.0}, request_rate=2.0)
    assert isinstance(r, ServeReport) and isinstance(r.at_load, ServingResult)
    d = r.model_dump()
    keys = list(d)
    at = list(ServingResult.model_fields)
    assert keys[keys.index("max_num_seqs") + 1 : keys.index("max_requests_per_s")] == at  # where it always was
    assert d["ttft_p95_s"] == r.at_load.ttft_p95_s and "at_load" not in d
    assert d["error_band"]["ttft_p95_s"]["short"] == r.error_band.ttft_p95_s.short
    assert d["capacity_requests_per_s"] == r.capacity_requests_per_s > 0
    assert "replicas" not in d and "peak_requests_per_s" not in d  # no traffic estimate


def test_serve_report_without_a_target_has_no_capacity():
    d = api.serve_report(BASE, concurrency=8).model_dump()
    assert not {"capacity_requests_per_s", "peak_requests_per_s", "replicas"} & set(d)


def test_serving_curve_replicas_cover_the_peak():
    sc = BASE | {"requests_per_day": 400_000, "ttft_target_s": 1.0, "tpot_target_s": 0.05}
    c = api.serving_curve_report(sc)
    assert isinstance(c, ServingCurve) and len(c.points) > 14  # 14 on a log grid, and more around the capacity
    assert c.capacity_requests_per_s in [p.requests_per_s for p in c.points]  # the run the capacity search judged
    peak = 400_000 / 86_400 * 3  # peak-to-average 3
    assert c.peak_requests_per_s == pytest.approx(peak)
    assert c.replicas == math.ceil(peak / c.capacity_requests_per_s)
    rates = [p.requests_per_s for p in c.points if not p.saturated]
    assert rates == sorted(rates) and max(rates) < c.max_requests_per_s
    assert (c.ttft_target_s, c.tpot_target_s) == (1.0, 0.05)
    batch = api.serving_curve_report(sc | {"serving": "batch"})  # batch serving: no latency targets
    assert batch.capacity_requests_per_s is None and batch.ttft_target_s is None
