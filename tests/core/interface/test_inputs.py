"""The input registry (gpuplan_core/interface): one record per input, links, the scenario, the scenario file."""

import json
from urllib.parse import parse_qsl

import pytest

from gpuplan_core import api
from gpuplan_core.interface.cli import build_parser, main, scenario_from_args
from gpuplan_core.interface.inputs import DEFAULTS, INPUTS, RECORDS, SIDEBAR, USE_CASES, to_scenario, variant
from gpuplan_core.interface.links import link_query, read_link, read_scenario_file, scenario_file, upgrade_link
from gpuplan_core.scenario.scenario import FIELDS, Scenario, default_for, field_info


def test_every_scenario_field_a_user_can_set_has_exactly_one_record():
    """One record per field and job: a field set by two records (pre-training tokens in billions, fine-tuning
    tokens in millions, each with its own default) has them for different jobs."""
    owners: dict[str, list[str]] = {}
    for inp in SIDEBAR:
        for f in inp.field_names():
            owners.setdefault(f, []).append(inp.key)
    shared = {f: keys for f, keys in owners.items() if len(keys) != 1}
    assert shared == {"training_tokens": ["tokens_b", "ft_tokens_m"], "precision": ["prec", "ft_prec"]}
    for keys in shared.values():
        a, b = (next(i for i in SIDEBAR if i.key == k) for k in keys)
        assert not a.jobs & b.jobs
    assert set(owners) == set(FIELDS)  # and every field is settable from the app
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
    assert (sc.model_source.preset, sc.job.mode, sc.job.serving, sc.parallelism.gpu) == (
        "Llama-3.1-8B", "inference", "interactive", None)  # any GPU  # fmt: skip
    r = sc.request
    assert (r.input_tokens, r.output_tokens, r.batch, sc.context_tokens) == (2000, 300, 8, 2300)  # context = in + out
    assert (sc.traffic.ttft_target_s, sc.traffic.tpot_target_s, sc.traffic.requests_per_day) == (2.0, 0.1, 10_000)


@pytest.mark.parametrize(
    "job,mode,serving",
    [("interactive", "inference", "interactive"), ("batch", "inference", "batch"), ("pretrain", "training", "interactive"),
     ("finetune", "finetune", "interactive")],
)  # fmt: skip
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


def test_link_values_are_labels_and_every_bad_value_is_named():
    values, notes = read_link({"workload": "Pre-training", "ctx": "8k", "weights": "FP8 (E4M3)", "gpu": "H100 SXM",
                               "tp": "4", "in": "2500", "embed": "true"})  # fmt: skip
    assert values == {"workload": "pretrain", "ctx": 8192, "weights": "fp8", "gpu": "H100-SXM", "tp": 4, "in": 2500.0}
    assert notes == []  # "embed" is Streamlit's, not an input: ignored
    _, notes = read_link({"ctx": "abc", "gpu": "H900", "batch": "-4", "mfu": "nan", "batch_max": "maybe", "in": "x"})
    assert len(notes) == 6 and all(n.startswith("Link value ") for n in notes)
    assert any("ctx='abc' is not allowed (allowed: 128, 256" in n for n in notes)
    assert any("batch='-4' is outside 1 to 1000000; the default is used." in n for n in notes)
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
    par = b.parallelism
    assert (par.gpu, b.formats.weights_format, b.request.batch, par.tp, par.gpus) == ("H200", "bf16", 32, 4, 4)
    b, notes = variant(a, {"b_gpus": 6.0})
    assert (b.parallelism.gpus, b.parallelism.tp) == (6, 1) and "not a multiple" in notes[0]


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


def test_a_record_reads_its_default_range_and_help_from_the_field_it_sets():
    """Written once, on the field (scenario/parts.py), converted to the widget's unit by the record's scale."""
    ttft = INPUTS["ttft_ms"]
    assert (ttft.default, ttft.help) == (2.0 / 1e-3, field_info("ttft_target_s").description)  # 2 s -> 2,000 ms
    assert (ttft.lo, ttft.hi) == (0, 3600 * 1000)  # 0 = none; the field's le=3600 s in ms
    assert ttft.parse("0")[1] is None and ttft.fields(0.0, DEFAULTS) == {"ttft_target_s": None}
    tokens, ft = INPUTS["tokens_b"], INPUTS["ft_tokens_m"]
    assert (tokens.default, ft.default) == (100e9 / 1e9, 100e6 / 1e6)  # the job's defaults, in billions / millions
    assert tokens.least == 1_000 / 1e9 and ft.hi == 1e16 / 1e6
    assert INPUTS["gpus"].hi == 4096 and INPUTS["b_gpus"].hi == 4096  # the one GPU cap
    assert INPUTS["util"].default == default_for("memory_utilization") == 0.90
    assert INPUTS["method"].default == default_for("method", "finetune") == "lora"
    stated = {i.key: set(i.stated) for i in RECORDS if i.field and i.stated}
    assert stated == {"size_b": {"default"}}  # every other record with a field states none of these itself
    for inp in SIDEBAR:
        if inp.field and inp.key != "size_b":  # size_b: the field's default is "no size" (a preset is the default)
            job = sorted(inp.jobs)[0]
            value = Scenario(**{**inp.fields(inp.default, DEFAULTS), "mode": "inference"}).flat()[inp.field]
            assert value == default_for(inp.field, job) or inp.jobs & {"pretrain", "finetune"}, inp.key
            assert inp.field_value(inp.default) == default_for(inp.field, job) or inp.key == "myprice", inp.key
            assert inp.help == field_info(inp.field).description, inp.key


def test_the_default_use_case_is_the_default_scenario():
    chat = {k: v for k, v in USE_CASES[DEFAULTS["usecase"]].items() if k != "label"}
    assert chat == {k: DEFAULTS[k] for k in chat}


@pytest.mark.parametrize(
    "job,argv",
    [("interactive", []), ("batch", ["--serving", "batch"]), ("pretrain", ["--mode", "training"]),
     ("finetune", ["--mode", "finetune"])],
)  # fmt: skip
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
