"""Validation by source (perf/serving_loso.py): each published source predicted with its client's cost fitted on the
others, stored in data/serving_loso.csv (bench/fit_serving.py --write-loso)."""

import pandas as pd
import pytest

from gpuplan_core.perf.serving_calibration import load_serving_measurements, moe_key, predict_row
from gpuplan_core.perf.serving_loso import (
    FIT_MAX_INPUT_TOKENS,
    LOSO_FILE,
    fit_client_costs,
    fit_ingest,
    left_out_summary,
    loso_table,
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


def test_a_client_cost_is_the_median_over_its_other_sources_then_its_other_engines_else_zero():
    """fit_client_costs by hand: client A's vLLM cost is the median of its two sources' medians (10 and 30 ms: 20);
    its SGLang cost, with no SGLang row, the median over its (source, engine) medians (10, 30, 40: 30); client B has
    no rows: 0.0, 'none'; a negative gap counts as 0."""
    rows = [{"client": "A", "engine": "vllm", "source": "s1", "gap_s": g} for g in (0.008, 0.010, 0.012)] + [
        {"client": "A", "engine": "vllm", "source": "s2", "gap_s": 0.030},
        {"client": "A", "engine": "trtllm", "source": "s2", "gap_s": 0.040},
        {"client": "C", "engine": "vllm", "source": "s3", "gap_s": -0.005},
    ]
    got = fit_client_costs(rows, [("A", "vllm"), ("A", "sglang"), ("B", "vllm"), ("C", "vllm")])
    assert got[("A", "vllm")] == (pytest.approx(0.020), "client and engine", 4)
    assert got[("A", "sglang")] == (pytest.approx(0.030), "client", 5)
    assert got[("B", "vllm")] == (0.0, "none", 0)
    assert got[("C", "vllm")][0] == 0.0


def test_a_left_out_sources_client_cost_comes_only_from_other_sources_of_its_client():
    """Each stored row's client cost is the rule's over OTHER sources sent by the same client, read on the
    light-load first-token rows of online serving of dense and MoE models alike (at most 4 clients or 2 requests/s,
    prompts of at most 1,024 tokens). Nine sources have such rows; five of them were each sent by a client of its
    own (TensorRT-LLM's Triton client, LMDeploy's, AIPerf to NIM, dstack's benchmark_serving.py), so they get 0.0
    ('none'). GPUStack's Qwen3-8B latency runs take the median gap of its DeepSeek-R1 run sent by the same `vllm
    bench serve` chat client (vLLM; its other engines take the same, the client's only vote), and the DeepSeek-R1
    runs take the Qwen3-8B runs' median gap per engine; SGLang's bench_serving: the cookbook's Llama-3.1-70B runs
    take its DeepSeek-R1 B200 runs' gap and the reverse, its other sources the median of the two. Gaps recomputed
    here (measured - predicted with no client cost). The request cost a row was simulated with is the engine's
    own (0.0) plus the client's."""
    frame, meta = stored(), load_serving_measurements().set_index("id")
    light = pd.Series(
        [
            (meta.loc[i, "load_kind"] == "concurrency" and meta.loc[i, "load"] <= 4)
            or (meta.loc[i, "load_kind"] == "request_rate" and meta.loc[i, "load"] <= 2)
            for i in frame["id"]
        ],
        index=frame.index,
    )
    short = pd.Series([meta.loc[i, "input_tokens"] <= FIT_MAX_INPUT_TOKENS for i in frame["id"]], index=frame.index)
    scale = pd.Series([1e3 if meta.loc[i, "unit"] == "ms" else 1.0 for i in frame["id"]], index=frame.index)
    online = frame["regime"].isin(["online, dense", "MoE"])
    fit = frame[(frame["metric"] == "ttft") & online & light & short]
    fitting = sorted(fit["source"].unique())
    assert fitting == [
        "dstack-tgi-vllm",  # its run's time per token is 36% off: left out of the fit (FIT_MAX_ITL_ERROR)
        "gpustack-dsr1",
        "gpustack-q3-8b-h100",
        "lmdeploy",
        "nim",
        "sglcb-dsr1-b200",
        "sglcb-l70b-a100",
        "trt014on",
    ]
    alone = ["dstack-405b", "dstack-tgi-vllm", "lmdeploy", "nim", "trt014on"]
    own = frame[frame["source"].isin(alone)]
    assert (own["client_in_s"] == 0.0).all() and (own["fit_from"] == "none").all()

    def gap(source: str) -> pd.Series:
        g = fit[fit["source"] == source]
        return ((g["measured"] - g["predicted_zero_cost"]) / scale[g.index]).groupby(g["engine"]).median()

    q8, r1 = gap("gpustack-q3-8b-h100"), gap("gpustack-dsr1")
    assert list(r1.index) == ["vllm"]
    g8 = frame[frame["source"] == "gpustack-q3-8b-h100"]
    assert g8["client_in_s"].to_numpy() == pytest.approx(r1["vllm"], rel=1e-4)  # every engine: the only vote
    assert set(g8["fit_from"]) == {"client and engine", "client"}
    dsr1 = frame[frame["source"] == "gpustack-dsr1"]
    for engine, g in dsr1.groupby("engine"):
        assert g["client_in_s"].to_numpy() == pytest.approx(q8[engine], rel=1e-4)
    bursts = frame[frame["source"].str.startswith("gpustack-q3") & (frame["source"] != "gpustack-q3-8b-h100")]
    assert set(bursts["client"]) == {"vllm-bench-serve-chat"} and len(set(bursts["source"])) == 4
    both = {"vllm": (q8["vllm"] + r1["vllm"]) / 2, "sglang": q8["sglang"], "trtllm": q8["trtllm"]}
    for engine, g in bursts.groupby("engine"):
        assert g["client_in_s"].to_numpy() == pytest.approx(both[engine], rel=1e-4)
    assert q8["vllm"] == pytest.approx(0.0486, abs=5e-5) and r1["vllm"] == pytest.approx(0.0369, abs=5e-5)
    l70, b200 = gap("sglcb-l70b-a100")["sglang"], gap("sglcb-dsr1-b200")["sglang"]
    cost = frame.set_index("source")["client_in_s"]
    assert cost["sglcb-l70b-a100"].to_numpy() == pytest.approx(b200, rel=1e-4)
    assert cost["sglcb-dsr1-b200"].to_numpy() == pytest.approx(l70, rel=1e-4)
    sent = frame[(frame["client"] == "sglang-bench-serving") & ~frame["source"].str.startswith("sglcb-l70b")]
    sent = sent[sent["source"] != "sglcb-dsr1-b200"]
    assert set(sent["source"]) == {"dstack-dsr1", "sglcb-dsv3-mi300x"}
    assert sent["client_in_s"].to_numpy() == pytest.approx((l70 + b200) / 2, rel=1e-4)
    rest = frame[~frame["source"].str.startswith("gpustack") & (frame["client"] != "sglang-bench-serving")]
    assert (rest["client_in_s"] == 0.0).all()
    assert (frame["request_in_s"] == frame["engine_in_s"] + frame["client_in_s"]).all()


@pytest.mark.parametrize(
    "row_id",
    ["lmdeploy-002", "lmdeploy-003", "nim-001", "gpustack-q3-8b-h100-001", "gpustack-dsr1-001", "dstack-dsr1-002"],
)
def test_a_stored_prediction_is_what_the_engine_predicts_now(row_id):
    """The file is current: a few rows re-predicted with the client cost, front end and MoE constants stored beside
    them (dstack's DeepSeek-R1 on MI300X: its MoE constants fitted without it, perf/moe_loso.py)."""
    frame = stored().set_index("id")
    row = load_serving_measurements().set_index("id").loc[row_id].to_dict() | {"id": row_id}
    key = (frame.loc[row_id, "client"], frame.loc[row_id, "engine"])
    ingest = (float(frame.loc[row_id, "ingest_s_per_request"]), float(frame.loc[row_id, "ingest_s_per_token"]))
    moe = None
    if not pd.isna(frame.loc[row_id, "moe_factor"]):
        moe = {
            moe_key(row): float(frame.loc[row_id, "moe_factor"]),
            "overhead": float(frame.loc[row_id, "moe_overhead_s"]),
        }
    cost = {key: float(frame.loc[row_id, "client_in_s"])}
    now = predict_row(row, client_costs=cost, ingests={key: ingest}, moe_factors=moe)
    assert now["predicted"] == pytest.approx(frame.loc[row_id, "predicted"], rel=1e-5)
    assert predict_row(row, client_costs={}, ingests={}, moe_factors=moe)["predicted"] == pytest.approx(
        frame.loc[row_id, "predicted_zero_cost"], rel=1e-5
    )


def test_the_readme_states_the_left_out_source_errors():
    """README's serving accuracy section states the online dense and MLA left-out-source figures as computed."""
    by = {(s["by"], s["group"], s["metric"]): s for s in left_out_summary(loso_table())}
    text = " ".join(README.read_text().split())
    for group in ("online, dense", "MoE"):
        figures = [by[("regime", group, m)]["median_abs_error"] for m in ("ttft", "itl", "output_tokens_per_s")]
        assert "TTFT {:.0%}, time per token {:.0%}, output tokens/s {:.0%}".format(*figures) in text


def test_a_front_end_is_fitted_by_least_squares_of_relative_errors_and_never_below_zero():
    """fit_ingest by hand: bursts whose gaps are exactly 10 ms a request + 20 us a prompt token give those back;
    gaps that fall as the burst grows give no front end at all; a client with no burst gets none, and one with
    bursts to other engines only gets theirs ('client')."""
    rows = [
        {"client": "A", "engine": "vllm", "source": "s", "requests": n, "tokens": n * i, "measured_s": 10.0 + n}
        | {"gap_s": 0.01 * n + 2e-5 * n * i}
        for n, i in ((100, 128), (1000, 219), (500, 2000))
    ]
    falling = [
        {"client": "C", "engine": "vllm", "source": "s", "requests": n, "tokens": 100 * n, "measured_s": 5.0}
        | {"gap_s": -0.001 * n}
        for n in (100, 1000)
    ]
    got = fit_ingest(rows + falling, [("A", "vllm"), ("A", "sglang"), ("B", "vllm"), ("C", "vllm")])
    assert got[("A", "vllm")][:2] == pytest.approx((0.01, 2e-5), rel=1e-6)
    assert got[("A", "vllm")][2:] == ("client and engine", 3)
    assert got[("A", "sglang")][2] == "client"
    assert got[("B", "vllm")] == (0.0, 0.0, "none", 0)
    assert got[("C", "vllm")][:2] == (0.0, 0.0)


def test_a_release_lines_step_factor_is_read_on_its_other_sources_fixed_length_dense_bursts():
    """fit_step_factors by hand on TensorRT-LLM 0.14's rows predicted at factor 1: the median per source of
    predicted / measured output tokens/s over its dense bursts at fixed, stated lengths, then over sources; the
    Triton online runs (lengths not stated) are never read, so trt014off left out takes none and trt014on left out
    takes trt014off's; the stored rows carry the factor they were predicted with."""
    import statistics

    from gpuplan_core.perf.serving_loso import fit_step_factors, step_fit_run

    meta = load_serving_measurements().set_index("id")
    rows = [
        {"id": i, "predicted": p, "measured": float(meta.loc[i, "measured"])}
        for i, p in (
            ("trt014off-001", 1.2 * 16414.7),
            ("trt014off-002", 1.1 * 14108.0),
            ("trt014off-003", 1.3 * 7054.52),
        )
    ] + [{"id": "trt014on-018", "predicted": 9000.0, "measured": 4103.0}]
    assert not step_fit_run(meta.loc["trt014on-018"].to_dict())  # lengths not stated
    assert not step_fit_run(meta.loc["trt014off-065"].to_dict())  # Mixtral: MoE
    assert not step_fit_run(meta.loc["gpustack-q3-14b-h100-032"].to_dict())  # a vLLM 0.11 burst: the tables' line
    got = fit_step_factors(rows, meta)
    assert got[("trtllm", "0.14")] == (pytest.approx(statistics.median([1.2, 1.1, 1.3])), "trt014off", 3)
    assert fit_step_factors(rows, meta, "trt014off") == {}
    frame = stored()
    assert set(frame.loc[frame["source"] == "trt014off", "step_time_factor"]) == {1.0}
    on = frame.loc[frame["source"] == "trt014on", "step_time_factor"]
    assert on.nunique() == 1 and on.iloc[0] == pytest.approx(1.1784, abs=1e-4)
    assert set(frame.loc[~frame["source"].str.startswith("trt014"), "step_time_factor"]) == {1.0}
