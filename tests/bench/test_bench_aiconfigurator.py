"""bench/bench_aiconfigurator.py: the rows both answer, the error arithmetic on hand numbers (a fake aiconfigurator,
tests/bench/fake_aic.py), the stored answers, and README's table. The real comparison is the script's output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import bench_aiconfigurator as bench
from gpuplan_core.perf import serving_calibration as cal
from gpuplan_core.perf import serving_loso
from tests.bench.fake_aic import row


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
    both, left_out = bench.compare(rows, gpuplan, loso, {r["id"]: aic.answer(r) for r in rows})
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


def test_its_answers_survive_the_stored_file(aic, tmp_path):
    rows = [row(id="a-001"), row(id="a-002", gpu="MI300X"), row(id="a-003", load=float("inf"), arrival="all_at_once")]
    answers = {r["id"]: aic.answer(r) for r in rows}
    assert answers["a-001"] == {
        "predicted": 5.0,
        "batch": 4,
        "load": "closed loop",
        "database": "vllm 9.9",
        "kv_full": False,
    }
    bench.write_answers(answers, tmp_path / "answers.csv")
    assert bench.stored_answers(tmp_path / "answers.csv") == answers


def test_the_readme_table_is_what_the_stored_answers_give():
    """README's Benchmarks table, from data/aiconfigurator_predictions.csv and gpuplan's stored predictions:
    the same rows and aiconfigurator's errors; gpuplan's at most the stated figures (rounded to the percent)."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = text[text.index("<!-- aiconfigurator:start -->") : text.index("<!-- aiconfigurator:end -->")]
    cells = re.findall(r"^\| (all|dense|MoE) \| (\w+) \| (\d+) \| (\d+)% \| (\d+)% \| (\d+)% \|$", block, re.M)
    stated = {(g, m): (int(n), int(gp) / 100, int(lo) / 100, aic) for g, m, n, gp, lo, aic in cells}
    measurements = cal.load_serving_measurements().to_dict("records")
    gpuplan = {r["id"]: r["predicted"] for r in cal.serving_table()}
    loso = {r["id"]: r["predicted"] for r in serving_loso.loso_table()}
    rows, _ = bench.compare(measurements, gpuplan, loso, bench.stored_answers())
    table = {(s["group"], s["metric"]): s for s in bench.summary(rows)}
    assert set(table) == set(stated) and len(stated) == 9
    for key, (n, gp, lo, aic) in stated.items():
        s = table[key]
        assert (s["rows"], f"{100 * s['aic']:.0f}") == (n, aic), key
        assert s["gpuplan"] <= gp + 0.005 and s["loso"] <= lo + 0.005, f"{key}: gpuplan's error grew; rerun --stored"
