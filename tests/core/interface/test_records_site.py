"""interface/records_site.py: the site and owning, the assumptions, and the pages' own inputs (the Overview's formats
switch, the Cost page's, Compare's B side, the pricing file's hash). Units and "0 = the region's" reach the Scenario;
a page's input sets no Scenario field; B's inputs override A's only where set."""

import pytest

from gpuplan_core.interface.inputs import INPUTS, to_scenario, variant
from gpuplan_core.interface.records_site import SITE_RECORDS
from gpuplan_core.scenario.scenario import FIELDS

KEYS = "region pue kwh_usd gco2 server_usd amort_y host_kw own_util util engine max_seqs max_tokens prefix spec_b "
KEYS += (
    "spec_k spec_accept spec_mtp alt_formats market train_bill b_gpu b_weights b_kv b_gpus b_batch pricefile profile"
)
RECORDS = {r.key: r for r in SITE_RECORDS}
PAGE_OWN = {
    "alt_formats": "",  # the Overview: the app's root path
    "market": "Cost",
    "train_bill": "Cost",
    "b_gpu": "Compare",
    "b_weights": "Compare",
    "b_kv": "Compare",
    "b_gpus": "Compare",
    "b_batch": "Compare",
    "pricefile": "Data",
    "profile": "Performance",
}


def test_every_link_key_is_still_there_in_order():
    assert [k for k in RECORDS if k in KEYS.split(" ")] == KEYS.split(" ")


def test_a_sidebar_input_sets_its_field_and_a_page_s_input_none():
    assert {k: r.page for k, r in RECORDS.items() if r.page is not None} == PAGE_OWN
    for r in SITE_RECORDS:
        assert (r.field in FIELDS) if r.page is None else (r.field is None), r.key
    b_side = {r.key: r.variant_of for r in SITE_RECORDS if r.variant_of}
    assert b_side == {"b_gpu": "gpu", "b_weights": "weights", "b_kv": "kv", "b_gpus": "gpus", "b_batch": "batch"}
    assert all(a in INPUTS and INPUTS[a].page is None for a in b_side.values())  # each overrides a sidebar input


@pytest.mark.parametrize(
    "link,field,value",
    [
        ({"pue": "0"}, "pue", None),  # 0: the region's
        ({"pue": "1.2"}, "pue", 1.2),
        ({"kwh_usd": "0.15"}, "electricity_usd_per_kwh", 0.15),
        ({"gco2": "0"}, "grid_gco2_per_kwh", None),
        ({"server_usd": "0"}, "server_usd_per_gpu", None),  # 0: the sourced default
        ({"server_usd": "30000"}, "server_usd_per_gpu", 30_000),
        ({"amort_y": "3"}, "amortisation_years", 3),
        ({"own_util": "0.6"}, "own_utilization", 0.6),
        ({"region": "Germany"}, "region", "germany"),
        ({"util": "0.95"}, "memory_utilization", 0.95),
        ({"engine": "SGLang"}, "engine", "sglang"),
        ({"max_seqs": "0"}, "max_num_seqs", None),  # 0: the engine's default
        ({"max_seqs": "64"}, "max_num_seqs", 64),
        ({"max_tokens": "4096"}, "max_num_batched_tokens", 4096),
        ({"prefix": "0.5"}, "prefix_cache_fraction", 0.5),
        ({"spec_b": "0.5"}, "spec_draft_params", 500_000_000),  # billions of parameters
        ({"spec_b": "0"}, "spec_draft_params", None),
        ({"spec_k": "6"}, "spec_tokens", 6),
        ({"spec_accept": "0.8"}, "spec_acceptance", 0.8),
    ],
)
def test_a_link_value_reaches_its_field_in_the_field_s_unit(from_link, link, field, value):
    _, flat, notes = from_link(link)
    assert flat[field] == value and notes == []


def test_the_engine_s_inputs_are_for_inference_and_the_pages_inputs_leave_the_scenario_as_it_is(from_link):
    _, flat, _ = from_link({"workload": "Pre-training", "engine": "SGLang", "max_seqs": "64"})
    assert (flat["engine"], flat["max_num_seqs"]) == ("vllm", None)
    _, plain, _ = from_link({})
    _, pages, notes = from_link({"market": "Epoch AI (~47%/quarter)", "train_bill": "250000", "alt_formats": "true"})
    assert pages == plain and notes == []


@pytest.mark.parametrize(
    "link,note",
    [
        ({"util": "1.5"}, "Link value util='1.5' is outside 0.5 to 1; the default is used."),
        ({"max_tokens": "8"}, "Link value max_tokens='8' is outside 16 to 1000000 (0 = none); the default is used."),
        ({"spec_k": "17"}, "Link value spec_k='17' is outside 1 to 16; the default is used."),
        ({"region": "Mars"}, "Link value region='Mars' is not allowed (allowed: United States (average), "),
        ({"pricefile": "f" * 65}, "Link value pricefile is longer than 64 characters; the default is used."),
        ({"b_gpus": "2.5"}, "Link value b_gpus='2.5' is not a whole number; 2 is used."),
    ],
)
def test_a_bad_value_is_named(from_link, link, note):
    _, _, notes = from_link(link)
    assert len(notes) == 1 and notes[0].startswith(note)


def test_compare_s_b_overrides_a_only_where_set(from_link):
    values, _, _ = from_link({"model": "Llama-3.1-70B", "gpus": "4", "tp": "4"})
    a, _ = to_scenario(values)
    same, notes = variant(a, {k: r.default for k, r in RECORDS.items()})  # every B input at "same as A"
    assert same == a and notes == []
    b_values, _, _ = from_link({**values, "b_gpu": "H200", "b_weights": "FP8 (E4M3)", "b_batch": "32"})
    b, notes = variant(a, b_values)
    assert (b.parallelism.gpu, b.formats.weights_format, b.request.batch) == ("H200", "fp8", 32)
    assert (b.parallelism.gpus, b.parallelism.tp, notes) == (4, 4, [])  # A's count and layout


def test_a_site_link_reads_back_as_itself(round_trip):
    values = {
        "region": "france",
        "pue": 1.3,
        "kwh_usd": 0.2,
        "gco2": 60.0,
        "server_usd": 35_000.0,
        "amort_y": 4.0,
        "host_kw": 150.0,
        "own_util": 0.7,
        "util": 0.92,
        "engine": "trtllm",
        "max_seqs": 128.0,
        "max_tokens": 4096.0,
        "prefix": 0.3,
        "spec_b": 1.5,
        "spec_k": 5.0,
        "spec_accept": 0.6,
        "market": "epoch",
        "train_bill": 250_000.0,
        "b_gpu": "H200",
        "b_gpus": 8.0,
    }
    assert round_trip(values) == (values, [])
