"""results/serving_validation.py: LeftOutSourceError, one row of validation by source (each published serving source
predicted with request costs fitted on every other source): its fields, frozen, and the stored table read into it."""

import statistics

import pytest
from pydantic import ValidationError

from gpuplan_core.perf import serving_calibration as cal
from gpuplan_core.perf.serving_loso import GROUPINGS, left_out_summary, loso_table
from gpuplan_core.results.serving_validation import LeftOutSourceError

ROW = dict(by="gpu", group="H100-SXM", metric="ttft", points=3, median_abs_error=0.2, median_error=0.1)


def test_a_row_holds_its_grouping_metric_points_and_both_medians():
    e = LeftOutSourceError(**ROW)
    assert e.model_dump() == ROW
    with pytest.raises(ValidationError):
        e.points = 4  # frozen
    with pytest.raises(ValidationError, match="extra"):
        LeftOutSourceError(**ROW, regime="online, dense")  # no key beyond its own
    with pytest.raises(ValidationError, match="median_error"):
        LeftOutSourceError(**{k: v for k, v in ROW.items() if k != "median_error"})


def test_three_hand_made_runs_give_their_medians():
    """Errors +0.1, -0.3, +0.2 of one GPU's ttft: median |error| = median(0.1, 0.3, 0.2) = 0.2, signed median 0.1."""
    table = [
        dict(source=s, engine="vllm", gpu="H100-SXM", model_class="dense", regime="online", metric="ttft", error=err)
        for s, err in (("a", 0.1), ("b", -0.3), ("c", 0.2))
    ]
    rows = {(r["by"], r["group"]): LeftOutSourceError(**r) for r in left_out_summary(table)}
    assert rows[("gpu", "H100-SXM")] == LeftOutSourceError(**ROW)
    assert rows[("all", "all")].points == 3 and rows[("source", "b")].median_error == pytest.approx(-0.3)


def test_every_row_of_the_stored_table_is_one_and_its_all_rows_are_the_medians_of_the_table():
    table = loso_table()
    rows = [LeftOutSourceError(**r) for r in left_out_summary(table)]
    assert {r.by for r in rows} <= set(GROUPINGS) and {r.metric for r in rows} <= set(cal.METRICS)
    for metric in cal.METRICS:
        errs = [t["error"] for t in table if t["metric"] == metric and t["error"] is not None]
        (all_row,) = (r for r in rows if (r.by, r.metric) == ("all", metric))
        assert all_row.points == len(errs) > 0
        assert all_row.median_abs_error == statistics.median(abs(e) for e in errs)
        assert all_row.median_error == statistics.median(errs)


def test_the_by_field_s_description_names_every_grouping():
    text = LeftOutSourceError.model_fields["by"].description
    assert all(f"'{g}'" in text for g in GROUPINGS)
