"""interface/links.py: links and scenario files: the inputs as text and back. A link writes every value that
differs from its default as the widget shows it; a crafted or stale value is named in a note and its input keeps
its default; a link read into a Scenario and written again is the same link."""

import json
from urllib.parse import parse_qsl, urlencode

import pytest

from gpuplan_core.interface.inputs import DEFAULTS, INPUTS, to_scenario
from gpuplan_core.interface.links import (
    FILE_KIND,
    apply_use_case,
    link_query,
    read_link,
    read_scenario_file,
    scenario_file,
    scenario_pricing_file,
    upgrade_link,
)
from gpuplan_core.pricing.store import content_hash

CSV = "offer_id,provider\r\nteam-1,acme\r\n"


def test_link_values_are_labels_and_every_bad_value_is_named():
    values, notes = read_link(
        {
            "workload": "Pre-training",
            "ctx": "8k",
            "weights": "FP8 (E4M3)",
            "gpu": "H100 SXM",
            "tp": "4",
            "in": "2500",
            "embed": "true",
        }
    )
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
    assert dict(parse_qsl(q)) == {
        "workload": "Pre-training",
        "weights": "FP8 (E4M3)",
        "in": "2500",
        "util": "0.85",
        "b_gpu": "L40S",
    }
    assert link_query(DEFAULTS) == ""
    assert read_link(dict(parse_qsl(q)))[0] == {
        "workload": "pretrain",
        "weights": "fp8",
        "in": 2500.0,
        "util": 0.85,
        "b_gpu": "L40S",
    }


def test_an_older_link_with_a_context_is_read_as_the_same_request():
    params, notes = upgrade_link({"model": "Llama-3.1-70B", "ctx": "8k", "batch": "4"})
    assert params == {"model": "Llama-3.1-70B", "batch": "4", "in": "7936", "out": "256"}  # 8,192 - 256 (old default)
    assert "7,936 input + 256 output tokens" in notes[0]
    assert upgrade_link({"workload": "Pre-training", "ctx": "8k"}) == ({"workload": "Pre-training", "ctx": "8k"}, [])
    sc, _ = to_scenario(read_link(params)[0])
    assert sc.context_tokens == 8192


def test_scenario_file_round_trips_every_input():
    values = {
        **DEFAULTS,
        "model": "Llama-3.1-70B",
        "in": 5000.0,
        "batch": 32.0,
        "hours": 200.0,
        "prices": "only",
        "method": "full",
        "b_gpu": "L40S",
        "market": "epoch",
        "alt_formats": True,
    }
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
    values, notes = read_scenario_file(
        json.dumps(
            {"kind": "gpuplan-scenario", "version": 1, "widgets": {"model": "Qwen2.5-7B", "batch": 16, "gpu": "L4"}}
        )
    )
    assert values == {"model": "Qwen2.5-7B", "batch": 16.0, "gpu": "L4"} and notes == []


@pytest.mark.parametrize(
    "query",
    [
        "workload=Pre-training&tokens_b=1000&gpu=H100+SXM&gpus=64",
        "workload=Fine-tuning&method=QLoRA+%284-bit+base%29&gpu=L4&gpus=4",
        "model=Llama-3.1-70B&rpd=50000&in=8000",
        "model=Llama-3.1-70B&weights=FP8+%28E4M3%29&gpu=H100+SXM&b_gpu=H200",
        "src=Model+size+only&size_b=70&spec_b=1.5&ttft_ms=0",  # the labels the widgets show
        "src=Model+size+only&size_b=12.5",  # between two of the slider's stops: the number box holds it
    ],
)
def test_a_link_read_into_a_scenario_and_written_again_is_the_same_link(query):
    values, notes = read_link(dict(parse_qsl(query)))
    assert notes == []
    sc, _ = to_scenario(values)
    again = link_query({**DEFAULTS, **values})
    assert dict(parse_qsl(again)) == dict(parse_qsl(query))  # the same keys and values
    assert to_scenario(read_link(dict(parse_qsl(again)))[0])[0] == sc  # the same question


def test_a_model_size_in_the_older_link_form_is_read_and_written_as_a_number():
    """Links made while the model size was a slider of labels said size_b=70B; the number box writes size_b=70."""
    values, notes = read_link({"src": "Model size only", "size_b": "70B"})
    assert values["size_b"] == 70.0 and notes == []
    assert dict(parse_qsl(link_query({**DEFAULTS, **values}))) == {"src": "Model size only", "size_b": "70"}
    assert to_scenario(values)[0].model_source.params == 70_000_000_000


def test_the_issue_s_links_reach_the_scenario_they_name():
    sc, _ = to_scenario(read_link(dict(parse_qsl("workload=Pre-training&tokens_b=1000&gpu=H100+SXM&gpus=64")))[0])
    assert (sc.job.mode, sc.training.training_tokens, sc.parallelism.gpu, sc.parallelism.gpus) == (
        "training",
        1000e9,  # 1,000 billion tokens
        "H100-SXM",
        64,
    )
    sc, _ = to_scenario(read_link({"model": "Llama-3.1-70B", "rpd": "50000", "in": "8000"})[0])
    assert (sc.model_source.preset, sc.traffic.requests_per_day, sc.request.input_tokens) == (
        "Llama-3.1-70B",
        5e4,
        8000,
    )


@pytest.mark.parametrize(
    "key, raw, note",
    [
        ("in", "1e400", "in='1e400' is outside 1 to 10000000; the default is used."),  # overflows to inf
        ("tp", "3", "tp='3' is not allowed (allowed: 1, 2, 4, 8, 16, 32, 64); the default is used."),
        ("gpu", "H100\x00", "gpu='H100\\x00' is not allowed (allowed: Any GPU, B200, H200, H100 SXM,"),
        ("workload", "<script>", "workload='<script>' is not allowed (allowed: Interactive inference (chat, APIs),"),
        ("batch_max", "1", "batch_max='1' must be true or false; the default is used."),
        ("util", "0.49", "util='0.49' is outside 0.5 to 1; the default is used."),
    ],
)
def test_a_crafted_link_value_is_named_and_its_input_keeps_its_default(key, raw, note):
    values, notes = read_link({key: raw})
    assert values == {} and len(notes) == 1 and notes[0].startswith("Link value " + note)


def test_a_value_not_allowed_leaves_no_entry_and_an_allowed_one_is_kept():
    assert read_link({"in": "2000", "gpu": "Any GPU", "batch_max": "false"}) == (
        {"in": 2000.0, "gpu": "any", "batch_max": False},  # given, so kept, even at the default
        [],
    )
    assert read_link({"in": " 2,500 "}) == ({"in": 2500.0}, [])  # spaces and separators are read
    assert read_link({"in": "0"})[0] == {}  # not allowed: the input keeps its default
    assert read_link({"embed": "true", "embed_options": "dark"}) == ({}, [])  # Streamlit's, not inputs


def test_a_link_read_twice_gives_fresh_values():
    values, _ = read_link({"in": "2500"})
    values["in"] = 1.0  # a caller may change what it got; the cached reading stands
    assert read_link({"in": "2500"}) == ({"in": 2500.0}, [])


def test_a_use_case_fills_what_the_link_does_not_give():
    rag = INPUTS["usecase"].link_value("rag")
    assert apply_use_case({"usecase": rag, "in": "9000"}) == {
        "usecase": rag,
        "in": "9000",  # given: kept
        "out": "300",
        "ttft_ms": "3000",
        "tpot_ms": "100",
    }
    assert apply_use_case({"usecase": "nope"}) == {"usecase": "nope"}  # not a use case: left to read_link's note
    assert apply_use_case({"in": "10"}) == {"in": "10"}


def test_an_older_link_keeps_input_plus_output_equal_to_its_context():
    # 128 tokens with 500 output: the output is cut to 127 so that one input token remains (128 = 1 + 127)
    params, notes = upgrade_link({"ctx": "128", "out": "500"})
    assert params == {"out": "127", "in": "1"}
    assert notes == [
        "This link gives a context of 128 tokens (an older link form): read as 1 input + 127 output tokens."
    ]
    params, notes = upgrade_link({"ctx": "huge"})
    assert params == {} and notes[0].startswith("Link value ctx='huge' is not allowed (allowed: 128, 256, 512, 1k,")


def test_a_scenario_file_names_its_kind_and_version():
    sc, _ = to_scenario(DEFAULTS)
    data = json.loads(scenario_file(DEFAULTS, sc))
    assert (data["kind"], data["version"], data["page"]) == (FILE_KIND, 2, "") and FILE_KIND == "gpuplan-scenario"
    assert data["inputs"]["weights"] == "BF16" and data["inputs"]["in"] == "2000"  # link form, defaults included
    assert "config_text" not in data["scenario"] and data["scenario"]["input_tokens"] == 2000


def test_a_scenario_file_s_crafted_entries_are_named():
    text = json.dumps({"kind": FILE_KIND, "inputs": {"k" * 100: 1, "in": "3000", "gpu": None}}).encode()
    values, notes = read_scenario_file(text)  # bytes are read as well
    assert values == {"in": 3000.0}
    assert notes == [
        f"scenario file: unknown input {'k' * 40!r} ignored",  # the name is cut at 40 characters
        "scenario file: gpu must be a single value; kept the current value",
    ]
    assert read_scenario_file(json.dumps({"kind": FILE_KIND, "inputs": []})) == (
        {},
        ["scenario file: 'inputs' must be an object"],
    )
    assert read_scenario_file("[1]") == (
        {},
        ['scenario file: not a gpuplan scenario (missing "kind": "gpuplan-scenario")'],
    )


def test_link_query_writes_only_the_keys_asked_for():
    values = {**DEFAULTS, "in": 5000.0, "gpu": "L4"}
    assert link_query(values, keys=["gpu"]) == urlencode([("gpu", "L4")])


def test_the_scenario_file_carries_the_pricing_file_and_its_hash():
    values = {**DEFAULTS, "pricefile": content_hash(CSV)[:16]}
    sc, _ = to_scenario(values)
    text = scenario_file(values, sc, "Cost", ("team.csv", CSV))
    doc = json.loads(text)
    assert doc["pricing_file"] == {"name": "team.csv", "sha256": content_hash(CSV), "csv": CSV}
    assert doc["inputs"]["pricefile"] == content_hash(CSV)[:16]
    assert scenario_pricing_file(text) == (("team.csv", CSV), [])
    back, notes = read_scenario_file(text)
    assert back["pricefile"] == content_hash(CSV)[:16] and not notes  # the extra key is not an unknown input


def test_a_scenario_file_without_a_pricing_file_or_with_a_broken_one():
    sc, _ = to_scenario(DEFAULTS)
    assert "pricing_file" not in json.loads(scenario_file(DEFAULTS, sc))
    assert scenario_pricing_file(scenario_file(DEFAULTS, sc)) == (None, [])
    broken = json.dumps({"kind": "gpuplan-scenario", "pricing_file": {"csv": 3}})
    assert scenario_pricing_file(broken) == (
        None,
        ["scenario file: 'pricing_file' must be an object with its 'csv' text; its prices are not used"],
    )
    assert scenario_pricing_file("not json") == (None, [])


def test_a_gpu_named_by_its_alias_in_a_link_is_that_gpu():
    """gpu=TPU v6e (the catalog's label is 'TPU v6e (Trillium)'), gpu=H100, b_gpu=Gaudi 3: the catalog's aliases."""
    values, notes = read_link({"gpu": "TPU v6e", "accel": "true", "b_gpu": "Gaudi 3"})
    assert (values["gpu"], values["b_gpu"], notes) == ("TPU-v6e", "Gaudi3", [])
    assert read_link({"gpu": "H100"})[0]["gpu"] == "H100-SXM"
    assert dict(parse_qsl(link_query({**DEFAULTS, **values}))) == {
        "gpu": "TPU v6e (Trillium)",  # written again as the selector shows it
        "accel": "true",
        "b_gpu": "Gaudi 3 OAM",
    }
    values, notes = read_link({"gpu": "TPU v9"})
    assert "gpu" not in values and "not allowed" in notes[0]


def test_the_scenario_file_carries_the_deployment_profile(profile):
    from gpuplan_core.interface.links import scenario_file, scenario_profile

    values = {"profile": "0123456789abcdef"}
    sc, _ = to_scenario(values)
    text = scenario_file(values, sc.with_(**profile.constants()), profile=profile)
    assert scenario_profile(text) == (profile, [])
    assert json.loads(text)["inputs"]["profile"] == "0123456789abcdef"
    assert scenario_profile(scenario_file(values, sc)) == (None, [])
    doc = json.loads(text) | {"deployment_profile": {"kind": "gpuplan-deployment-profile", "tp": 0}}
    got, notes = scenario_profile(json.dumps(doc))
    assert got is None and "is not a deployment profile" in notes[0]
