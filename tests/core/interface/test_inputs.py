"""interface/inputs.py: input values -> the Scenario (the sidebar's A, Compare's B), with a note naming each value
that cannot be used (links are in test_links.py, the records in test_record.py and test_registry.py)."""

import json

import pytest

from gpuplan_core import api
from gpuplan_core.interface.cli import build_parser, main, scenario_from_args
from gpuplan_core.interface.inputs import DEFAULTS, INPUTS, to_scenario, variant


def test_defaults_build_the_documented_scenario():
    sc, notes = to_scenario(DEFAULTS)
    assert notes == []
    assert (sc.model_source.preset, sc.job.mode, sc.job.serving, sc.parallelism.gpu) == (
        "Llama-3.1-8B",
        "inference",
        "interactive",
        None,
    )  # any GPU
    r = sc.request
    assert (r.input_tokens, r.output_tokens, r.batch, sc.context_tokens) == (2000, 300, 8, 2300)  # context = in + out
    assert (sc.traffic.ttft_target_s, sc.traffic.tpot_target_s, sc.traffic.requests_per_day) == (2.0, 0.1, 10_000)


@pytest.mark.parametrize(
    "job,mode,serving",
    [
        ("interactive", "inference", "interactive"),
        ("batch", "inference", "batch"),
        ("pretrain", "training", "interactive"),
        ("finetune", "finetune", "interactive"),
    ],
)
def test_jobs_map_to_modes_and_inputs_that_do_not_apply_keep_the_scenario_default(job, mode, serving):
    sc, _ = to_scenario({"workload": job, "method": "qlora", "ttft_ms": 500.0, "ctx": 8192})
    assert (sc.job.mode, sc.job.serving) == (mode, serving)
    assert sc.job.method == ("qlora" if job == "finetune" else "full")
    assert sc.traffic.ttft_target_s == (0.5 if job == "interactive" else None)  # targets are for interactive serving
    assert sc.request.sequence_tokens == (8192 if mode != "inference" else 4096)


def test_units_are_converted_once_in_the_registry():
    sc, _ = to_scenario({"ttft_ms": 1500.0, "tokens_b": 2.5, "workload": "pretrain", "spec_b": 0.0, "deadline_h": 0})
    assert sc.training.training_tokens == 2.5e9 and sc.training.deadline_hours is None
    assert sc.assumptions.spec_draft_params is None
    sc, _ = to_scenario({"src": "size", "size_b": 70, "spec_b": 1.5, "rpd": 0.0, "billing": "any", "provider": "any"})
    assert sc.model_source.params == 70_000_000_000 and sc.assumptions.spec_draft_params == 1_500_000_000
    assert sc.traffic.requests_per_day is None and sc.pricing.billing is None and sc.pricing.provider is None
    assert api.memory_report(sc).params_total == 70_000_000_000


def test_largest_batch_switch_applies_to_inference_only():
    assert to_scenario({"batch_max": True})[0].request.batch == "max"
    assert to_scenario({"batch_max": True, "workload": "pretrain", "batch": 2.0})[0].request.batch == 2


def test_a_bad_combination_names_the_field_and_falls_back():
    sc, notes = to_scenario({"gpus": 3.0, "tp": 2})
    assert "gpus: 3 must be a multiple of tp x pp = 2" in notes[0] and sc.parallelism.gpus == 1


def test_a_context_longer_than_the_model_allows_is_said():
    sc, notes = to_scenario({"model": "Phi-3-mini-4k", "in": 6000.0, "out": 500.0})
    assert sc.context_tokens == 6500  # kept: the user may extend the model (RoPE scaling)
    assert notes and "6,500" in notes[0] and "maximum context of 4,096" in notes[0]


def test_variant_b_starts_as_a_copy_of_a_and_overrides_what_is_set():
    a, _ = to_scenario({"model": "Llama-3.1-70B", "gpus": 4.0, "tp": 4, "weights": "fp8"})
    b, notes = variant(a, {})
    assert b == a and notes == []
    b, notes = variant(a, {"b_gpu": "H200", "b_weights": "bf16", "b_batch": 32.0})
    par = b.parallelism
    assert (par.gpu, b.formats.weights_format, b.request.batch, par.tp, par.gpus) == ("H200", "bf16", 32, 4, 4)
    b, notes = variant(a, {"b_gpus": 6.0})
    assert (b.parallelism.gpus, b.parallelism.tp) == (6, 1) and "not a multiple" in notes[0]


@pytest.mark.parametrize(
    "job,argv",
    [
        ("interactive", []),
        ("batch", ["--serving", "batch"]),
        ("pretrain", ["--mode", "training"]),
        ("finetune", ["--mode", "finetune"]),
    ],
)
def test_the_app_with_no_link_and_the_cli_with_no_flags_ask_the_same_question(job, argv):
    app, notes = to_scenario({} if job == "interactive" else {"workload": job})
    cli = scenario_from_args(build_parser().parse_args(["plan", *argv]))
    assert notes == [] and app == cli
    if job == "interactive":
        t = app.traffic
        assert (app.request.batch, t.requests_per_day, t.ttft_target_s, t.tpot_target_s) == (8, 10_000, 2.0, 0.1)


def test_plan_json_with_no_flags_is_the_report_of_the_app_s_default_scenario(capsys):
    assert main(["plan", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    sc, _ = to_scenario({})
    assert printed == json.loads(json.dumps(api.answer_report(sc).to_json()))  # the one answer, its plan's keys too


def test_your_prices_are_in_the_scenario_and_a_price_of_zero_is_refused_by_name():
    sc, notes = to_scenario({"myprice": "verda-1b200-od=2.5, runpod-h100-od=1.9", "in": 5000.0})
    assert sc.pricing.your_prices == {"verda-1b200-od": 2.5, "runpod-h100-od": 1.9} and notes == []
    assert INPUTS["myprice"].widget_value(sc.pricing.your_prices) == "verda-1b200-od=2.5, runpod-h100-od=1.9"
    for bad, named in (
        ("verda-1b200-od=0", "verda-1b200-od=0 is refused"),
        ("x=-2", "x=-2 is refused"),
        ("oops", "'oops'"),
    ):
        sc, notes = to_scenario({"myprice": bad, "in": 5000.0})
        assert sc.pricing.your_prices == {} and sc.request.input_tokens == 5000  # the rest of the scenario stands
        assert len(notes) == 1 and named in notes[0], notes
        assert notes[0].endswith(("the catalog prices are used.", "stands.")), notes
    # a refused price leaves the others: each price is judged on its own
    sc, notes = to_scenario({"myprice": "verda-1b200-od=2.5, runpod-h100-od=0"})
    assert sc.pricing.your_prices == {"verda-1b200-od": 2.5}
    assert notes == [
        "Your prices: runpod-h100-od=0 is refused (allowed: above 0 USD per GPU-hour, at most 100,000); the catalog "
        "price of runpod-h100-od stands."
    ]
    assert to_scenario({"prices": "only"})[0].pricing.price_source == "only"
