"""The input registry (gpuplan_core/inputs.py): one record per input, links, the scenario, the scenario file."""

import json
from urllib.parse import parse_qsl

import pytest

from gpuplan_core import api
from gpuplan_core.interface.inputs import DEFAULTS, INPUTS, RECORDS, SIDEBAR, to_scenario, variant
from gpuplan_core.interface.links import link_query, read_link, read_scenario_file, scenario_file, upgrade_link
from gpuplan_core.scenario.scenario import Scenario


def test_every_scenario_field_a_user_can_set_has_exactly_one_record():
    """One record per field and job: a field set by two records (pre-training tokens in billions, fine-tuning
    tokens in millions, each with its own default) has them for different jobs."""
    owners: dict[str, list[str]] = {}
    for inp in SIDEBAR:
        for f in inp.field_names():
            owners.setdefault(f, []).append(inp.key)
    shared = {f: keys for f, keys in owners.items() if len(keys) != 1}
    assert shared == {"training_tokens": ["tokens_b", "ft_tokens_m"]}
    a, b = (next(i for i in SIDEBAR if i.key == k) for k in shared["training_tokens"])
    assert not a.jobs & b.jobs
    assert set(owners) == set(Scenario.model_fields)  # and every field is settable from the app
    assert len({i.key for i in RECORDS}) == len(RECORDS)  # keys (link parameters) are unique


def test_every_record_is_complete():
    for inp in RECORDS:
        assert inp.label and inp.help, inp.key
        if inp.choice:
            assert inp.default in inp.option_list(), inp.key
            labels = [inp.label_of(o) for o in inp.option_list()]
            assert len(set(labels)) == len(labels), f"{inp.key}: two options share a label (links could not tell)"
        elif inp.widget in ("number", "slider"):
            assert inp.lo <= inp.default <= inp.hi and inp.step > 0, inp.key
        assert inp.parse(inp.link_value(inp.default)) == (inp.default, None), inp.key  # the default round-trips


def test_defaults_build_the_documented_scenario():
    sc, notes = to_scenario(DEFAULTS)
    assert notes == []
    assert (sc.preset, sc.mode, sc.serving, sc.gpu) == ("Llama-3.1-8B", "inference", "interactive", None)  # any GPU
    assert (sc.input_tokens, sc.output_tokens, sc.context_tokens) == (2000, 300, 2300)  # context = input + output
    assert (sc.ttft_target_s, sc.tpot_target_s, sc.requests_per_day) == (2.0, 0.1, 10_000)


@pytest.mark.parametrize(
    "job,mode,serving",
    [("interactive", "inference", "interactive"), ("batch", "inference", "batch"), ("pretrain", "training", "interactive"),
     ("finetune", "finetune", "interactive")],
)  # fmt: skip
def test_jobs_map_to_modes_and_inputs_that_do_not_apply_keep_the_scenario_default(job, mode, serving):
    sc, _ = to_scenario({"workload": job, "method": "qlora", "ttft_ms": 500.0, "ctx": 8192})
    assert (sc.mode, sc.serving) == (mode, serving)
    assert sc.method == ("qlora" if job == "finetune" else "full")
    assert sc.ttft_target_s == (0.5 if job == "interactive" else None)  # targets are for interactive serving
    assert sc.sequence_tokens == (8192 if mode != "inference" else 4096)


def test_units_are_converted_once_in_the_registry():
    sc, _ = to_scenario({"ttft_ms": 1500.0, "tokens_b": 2.5, "workload": "pretrain", "spec_b": 0.0, "deadline_h": 0})
    assert sc.training_tokens == 2.5e9 and sc.deadline_hours is None and sc.spec_draft_params is None
    sc, _ = to_scenario({"src": "size", "size_b": 70, "spec_b": 1.5, "rpd": 0.0, "billing": "any", "provider": "any"})
    assert sc.params == 70_000_000_000 and sc.spec_draft_params == 1_500_000_000
    assert sc.requests_per_day is None and sc.billing is None and sc.provider is None
    assert api.memory_report(sc).params_total == 70_000_000_000


def test_largest_batch_switch_applies_to_inference_only():
    assert to_scenario({"batch_max": True})[0].batch == "max"
    assert to_scenario({"batch_max": True, "workload": "pretrain", "batch": 2.0})[0].batch == 2


def test_a_bad_combination_names_the_field_and_falls_back():
    sc, notes = to_scenario({"gpus": 3.0, "tp": 2})
    assert "gpus: 3 must be a multiple of tp x pp = 2" in notes[0] and sc.gpus == 1


def test_a_context_longer_than_the_model_allows_is_said():
    sc, notes = to_scenario({"model": "Phi-3-mini-4k", "in": 6000.0, "out": 500.0})
    assert sc.context_tokens == 6500  # kept: the user may extend the model (RoPE scaling)
    assert notes and "6,500" in notes[0] and "maximum context of 4,096" in notes[0]


def test_link_values_are_labels_and_every_bad_value_is_named():
    values, notes = read_link({"workload": "Pre-training", "ctx": "8k", "weights": "FP8 (E4M3)", "gpu": "H100 SXM",
                               "tp": "4", "in": "2500", "embed": "true"})  # fmt: skip
    assert values == {"workload": "pretrain", "ctx": 8192, "weights": "fp8", "gpu": "H100-SXM", "tp": 4, "in": 2500.0}
    assert notes == []  # "embed" is Streamlit's, not an input: ignored
    _, notes = read_link({"ctx": "abc", "gpu": "H900", "batch": "-4", "mfu": "nan", "batch_max": "maybe", "in": "x"})
    assert len(notes) == 6 and all(n.startswith("Link value ") for n in notes)
    assert any("ctx='abc' is not allowed (allowed: 128, 256" in n for n in notes)
    assert any("batch='-4' is outside 1 to 4096; the default is used." in n for n in notes)
    values, notes = read_link({"batch": "2.6"})
    assert values == {"batch": 3.0} and notes == ["Link value batch='2.6' is not a whole number; 3 is used."]


def test_link_query_writes_non_defaults_as_the_widgets_show_them():
    q = link_query({**DEFAULTS, "workload": "pretrain", "weights": "fp8", "in": 2500.0, "util": 0.85, "b_gpu": "L40S"})
    assert dict(parse_qsl(q)) == {"workload": "Pre-training", "weights": "FP8 (E4M3)", "in": "2500", "util": "0.85",
                                  "b_gpu": "L40S"}  # fmt: skip
    assert link_query(DEFAULTS) == ""
    assert read_link(dict(parse_qsl(q)))[0] == {"workload": "pretrain", "weights": "fp8", "in": 2500.0, "util": 0.85,
                                                "b_gpu": "L40S"}  # fmt: skip


def test_an_older_link_with_a_context_is_read_as_the_same_request():
    params, notes = upgrade_link({"model": "Llama-3.1-70B", "ctx": "8k", "batch": "4"})
    assert params == {"model": "Llama-3.1-70B", "batch": "4", "in": "7936", "out": "256"}  # 8,192 - 256 (old default)
    assert "7,936 input + 256 output tokens" in notes[0]
    assert upgrade_link({"workload": "Pre-training", "ctx": "8k"}) == ({"workload": "Pre-training", "ctx": "8k"}, [])
    sc, _ = to_scenario(read_link(params)[0])
    assert sc.context_tokens == 8192


def test_variant_b_starts_as_a_copy_of_a_and_overrides_what_is_set():
    a, _ = to_scenario({"model": "Llama-3.1-70B", "gpus": 4.0, "tp": 4, "weights": "fp8"})
    b, notes = variant(a, {})
    assert b == a and notes == []
    b, notes = variant(a, {"b_gpu": "H200", "b_weights": "bf16", "b_batch": 32.0})
    assert (b.gpu, b.weights_format, b.batch, b.tp, b.gpus) == ("H200", "bf16", 32, 4, 4)
    b, notes = variant(a, {"b_gpus": 6.0})
    assert (b.gpus, b.tp) == (6, 1) and "not a multiple" in notes[0]


def test_scenario_file_round_trips_every_input():
    values = {**DEFAULTS, "model": "Llama-3.1-70B", "in": 5000.0, "batch": 32.0, "hours": 200.0, "prices": "only",
              "method": "full", "b_gpu": "L40S", "market": "epoch", "alt_formats": True}  # fmt: skip
    sc, _ = to_scenario(values)
    text = scenario_file(values, sc, "Memory")
    data = json.loads(text)
    assert set(data["inputs"]) == set(INPUTS) and data["page"] == "Memory"
    back, notes = read_scenario_file(text)
    assert notes == [] and back == values
    assert data["scenario"]["preset"] == "Llama-3.1-70B" and data["scenario"]["input_tokens"] == 5000


@pytest.mark.parametrize(
    "text,match",
    [
        ("{oops", "not valid JSON"),
        ('{"kind": "other"}', "not a gpuplan scenario"),
        ('{"kind": "gpuplan-scenario", "inputs": {"ctx": "huge", "x": 1}}', "ctx"),
        ('{"kind": "gpuplan-scenario", "inputs": {"in": [1, 2]}}', "single value"),
    ],
)
def test_bad_scenario_files_are_reported(text, match):
    values, notes = read_scenario_file(text)
    assert any(match in n for n in notes)
    assert "ctx" not in values and "in" not in values


def test_a_version_1_scenario_file_still_imports():
    values, notes = read_scenario_file(json.dumps({"kind": "gpuplan-scenario", "version": 1,
                                                   "widgets": {"model": "Qwen2.5-7B", "batch": 16, "gpu": "L4"}}))  # fmt: skip
    assert values == {"model": "Qwen2.5-7B", "batch": 16.0, "gpu": "L4"} and notes == []
