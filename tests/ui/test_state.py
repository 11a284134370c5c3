"""Widget values -> Scenario (pure), URL validation, scenario JSON round trip, CSV export, figures."""

import json

import pytest

from gpuplan_core import api
from gpuplan_ui.export import rows_to_csv, safe_cell
from gpuplan_ui.figures import latency_figure, memory_figure, roofline_figure, sweep_figure
from gpuplan_ui.state import (
    DEFAULTS,
    build_scenario,
    check_query_params,
    option_for,
    scenario_json,
    scenario_to_widgets,
    url_values,
)


def test_defaults_build_a_valid_scenario():
    sc, notes = build_scenario(dict(DEFAULTS))
    assert notes == []
    assert sc.preset == "Llama-3.1-8B" and sc.mode == "inference"
    assert sc.input_tokens + sc.output_tokens == DEFAULTS["ctx"]
    assert sc.ttft_target_s == 2.0 and sc.tpot_target_s == 0.1


@pytest.mark.parametrize(
    "workload,mode",
    [("interactive", "inference"), ("batch", "inference"), ("pretrain", "training"), ("finetune", "finetune")],
)
def test_workloads_map_to_modes(workload, mode):
    sc, _ = build_scenario({**DEFAULTS, "workload": workload})
    assert sc.mode == mode
    if workload == "batch":
        assert sc.ttft_target_s is None and sc.serving == "batch"


def test_size_slider_gives_exact_params():
    sc, _ = build_scenario({**DEFAULTS, "src": "size", "size_b": 70})
    assert sc.params == 70_000_000_000
    assert api.memory_report(sc)["params_total"] == 70_000_000_000


def test_bad_combination_falls_back_with_a_message():
    sc, notes = build_scenario({**DEFAULTS, "gpus": 3, "tp": 2})
    assert notes and "gpus" in notes[0]
    assert sc.gpus == 1


def test_url_values_are_labels_and_validated():
    assert "Pre-training" in url_values("workload")
    assert option_for("workload", "Pre-training") == "pretrain"
    assert option_for("ctx", "8k") == 8192
    assert option_for("gpu", "H100 SXM") == "H100-SXM"
    assert check_query_params({"workload": "Pre-training", "ctx": "8k", "batch": "16"}) == []
    notes = check_query_params({"ctx": "abc", "gpu": "H900", "batch": "-4", "mfu": "nan", "batch_max": "maybe"})
    assert len(notes) == 5
    assert all("default is used" in n for n in notes)
    assert any("ctx='abc'" in n and "allowed" in n for n in notes)


def test_scenario_json_round_trip():
    values = {**DEFAULTS, "model": "Llama-3.1-70B", "ctx": 8192, "batch": 32}
    sc, _ = build_scenario(values)
    text = scenario_json(values, sc)
    back, notes = scenario_to_widgets(text)
    assert notes == []
    assert back["model"] == "Llama-3.1-70B" and back["ctx"] == 8192 and back["batch"] == 32
    assert json.loads(text)["scenario"]["preset"] == "Llama-3.1-70B"


@pytest.mark.parametrize(
    "text,match",
    [
        ("{oops", "not valid JSON"),
        ('{"kind": "other"}', "not a gpuplan scenario"),
        ('{"kind": "gpuplan-scenario", "widgets": {"ctx": "huge", "x": 1}}', "ctx"),
    ],
)
def test_bad_scenario_files_are_reported(text, match):
    values, notes = scenario_to_widgets(text)
    assert any(match in n for n in notes)
    assert "ctx" not in values


def test_csv_export_neutralises_formulas():
    assert safe_cell('=HYPERLINK("x")') == '\'=HYPERLINK("x")'
    assert safe_cell("+1+1") == "'+1+1"
    assert safe_cell("@SUM(A1)") == "'@SUM(A1)"
    assert safe_cell("-5.5") == "-5.5"  # a negative number stays a number
    text = rows_to_csv([{"a": "=1+2", "b": 3}])
    assert text.splitlines() == ["a,b", "'=1+2,3"]


def test_figures_build_from_reports():
    sc, _ = build_scenario(dict(DEFAULTS))
    mem = api.memory_report(sc)
    fig = memory_figure(mem)
    assert len(fig.data) == len(mem["components"]) + 2
    perf = api.perf_report(sc, gpus=["H100-SXM", "L4"])
    p = perf["gpus"][0]
    roof = roofline_figure(p)
    names = [t.name for t in roof.data]
    assert any("BF16 roof" in n for n in names) and any(n.startswith("prefill") for n in names)
    assert sweep_figure(p).data[0].x[-1] == p["max_batch"]
    assert len(latency_figure(perf["gpus"]).data) == 2
