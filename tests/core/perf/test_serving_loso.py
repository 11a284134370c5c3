"""Validation by source (perf/serving_loso.py): each published source predicted with request costs fitted on the
others, stored in data/serving_loso.csv (bench/fit_serving.py --write-loso)."""

import statistics

import pandas as pd
import pytest

from gpuplan_core.perf.serving_calibration import load_serving_measurements, predict_row, setup_key
from gpuplan_core.perf.serving_loso import (
    FIT_MAX_INPUT_TOKENS,
    FIT_MAX_ITL_ERROR,
    LOSO_FILE,
    left_out_summary,
    loso_table,
    request_costs,
)

README = LOSO_FILE.parents[1] / "README.md"


def stored() -> pd.DataFrame:
    return pd.read_csv(LOSO_FILE)


def test_every_published_point_is_predicted_with_its_source_left_out():
    frame, measured = stored(), load_serving_measurements()
    assert len(frame) >= 1000
    assert set(frame["source"]) == {i.rsplit("-", 1)[0] for i in measured["id"]}
    assert len(set(frame["source"])) >= 14
    both = frame.dropna(subset=["predicted"])
    # the error is (predicted - measured) / measured, as stored
    assert both["error"].to_numpy() == pytest.approx(
        ((both["predicted"] - both["measured"]) / both["measured"]).to_numpy(), rel=1e-4, abs=1e-4
    )


def test_the_reported_per_source_errors_are_recomputed_from_the_stored_predictions():
    """calibrate --json's serving_left_out_source rows: the median |error| and median error of each source, engine,
    GPU and model class, per metric, recomputed here from the file with pandas."""
    frame = stored().dropna(subset=["error"])
    reported = {(s["by"], s["group"], s["metric"]): s for s in left_out_summary(loso_table())}
    for by in ("source", "engine", "gpu", "model_class", "regime"):
        for (group, metric), g in frame.groupby([by, "metric"]):
            s = reported[(by, str(group), metric)]
            assert s["points"] == len(g)
            assert s["median_abs_error"] == pytest.approx(g["error"].abs().median())
            assert s["median_error"] == pytest.approx(g["error"].median())
    assert reported[("source", "lmdeploy", "itl")]["points"] == 32  # 2 models x 4 lengths x 4 concurrencies
    assert {"dense", "MoE", "MLA"} <= {g for (by, g, _) in reported if by == "model_class"}


def test_a_sources_request_cost_was_fitted_on_the_other_sources_only():
    """TensorRT-LLM's request cost for trt014on: over every OTHER source's light-load online dense first-token rows
    with prompts of at most 1,024 tokens in runs whose time per token (zero request costs) is within 25%, the
    median of each source's median measured - predicted gap, then the median over those sources; with trt014on's
    own rows it would differ."""
    frame, meta = stored(), load_serving_measurements().set_index("id")
    frame = frame.assign(
        light=[
            (meta.loc[i, "load_kind"] == "concurrency" and meta.loc[i, "load"] <= 4)
            or (meta.loc[i, "load_kind"] == "request_rate" and meta.loc[i, "load"] <= 2)
            for i in frame["id"]
        ],
        scale=[1e3 if meta.loc[i, "unit"] == "ms" else 1.0 for i in frame["id"]],
        short=[meta.loc[i, "input_tokens"] <= FIT_MAX_INPUT_TOKENS for i in frame["id"]],
        run=[setup_key(meta.loc[i].to_dict() | {"id": i}) for i in frame["id"]],
    )
    # each run's time-per-token error with zero request costs: its mean's (a run publishing both ITL and TPOT means:
    # the later row, as the fit reads them), else the median over its statistics
    itl = frame[(frame["metric"] == "itl") & frame["predicted_zero_cost"].notna()]
    itl = itl.assign(e=(itl["predicted_zero_cost"] - itl["measured"]) / itl["measured"])
    err = {
        run: g[g["statistic"] == "mean"]["e"].iloc[-1] if (g["statistic"] == "mean").any() else g["e"].median()
        for run, g in itl.groupby("run")
    }
    rows = frame[
        (frame["metric"] == "ttft")
        & (frame["regime"] == "online, dense")
        & frame["light"]
        & frame["short"]
        & (frame["engine"] == "trtllm")
        & frame["predicted_zero_cost"].notna()
    ]
    rows = rows[[abs(err.get(r, float("inf"))) <= FIT_MAX_ITL_ERROR for r in rows["run"]]]
    rows = rows.assign(gap_s=(rows["measured"] - rows["predicted_zero_cost"]) / rows["scale"])
    per_source = rows.groupby("source")["gap_s"].median()
    others = per_source.drop("trt014on")
    used = frame[(frame["source"] == "trt014on") & (frame["engine"] == "trtllm")]
    assert sorted(others.index) == ["gpustack-q3-8b-h100", "lmdeploy", "nim"]
    assert used["request_in_s"].iloc[0] == pytest.approx(statistics.median(others), rel=1e-4)
    assert used["fit_rows"].iloc[0] == len(rows[rows["source"] != "trt014on"])
    assert statistics.median(per_source) != pytest.approx(used["request_in_s"].iloc[0], rel=1e-3)
    # dstack's TGI-vs-vLLM runs (ROCm vLLM 0.6 on MI300X, time per token 2x the prediction) give vLLM nothing
    vllm = frame[(frame["source"] == "gpustack-q3-8b-h100") & (frame["engine"] == "vllm")]
    assert vllm["fit_from"].iloc[0] == "pooled"


@pytest.mark.parametrize("row_id", ["lmdeploy-002", "lmdeploy-003", "nim-001"])
def test_a_stored_prediction_is_what_the_engine_predicts_now(row_id):
    """The file is current: a few rows re-predicted with the request cost stored beside them."""
    frame = stored().set_index("id")
    row = load_serving_measurements().set_index("id").loc[row_id].to_dict() | {"id": row_id}
    with request_costs({frame.loc[row_id, "engine"]: float(frame.loc[row_id, "request_in_s"])}):
        now = predict_row(row)
    assert now["predicted"] == pytest.approx(frame.loc[row_id, "predicted"], rel=1e-5)


def test_the_readme_states_the_left_out_source_errors():
    """README's serving accuracy section states the online dense and MLA left-out-source figures as computed."""
    by = {(s["by"], s["group"], s["metric"]): s for s in left_out_summary(loso_table())}
    text = " ".join(README.read_text().split())
    for group in ("online, dense", "MoE"):
        figures = [by[("regime", group, m)]["median_abs_error"] for m in ("ttft", "itl", "output_tokens_per_s")]
        assert "TTFT {:.0%}, time per token {:.0%}, output tokens/s {:.0%}".format(*figures) in text
