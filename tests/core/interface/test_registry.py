"""interface/registry.py: every user input, one record each: every Scenario field a user can set has its record,
each record is complete (label, help, default in range, labels that tell options apart), and the option lists and
use cases are the documented ones."""

import pytest

from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.interface.registry import (
    DEFAULTS,
    GROUPS,
    INPUTS,
    MAIN,
    PAGE_COMPARE,
    PAGE_COST,
    PAGE_DATA,
    PAGE_OVERVIEW,
    RECORDS,
    SAME,
    SEQUENCE_LENGTHS,
    SIDEBAR,
    USE_CASES,
    group_inputs,
    page_inputs,
    tokens_label,
)
from gpuplan_core.scenario.profile import PROFILE_FIELDS
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
    # and every field is settable from the app: a deployment profile's by the Performance page's profile
    assert set(owners) | set(PROFILE_FIELDS) == set(FIELDS) and INPUTS["profile"].page == "Performance"
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


@pytest.mark.parametrize("n, label", [(128, "128"), (1024, "1k"), (8192, "8k"), (1_048_576, "1,024k"), (1500, "1,500")])
def test_tokens_label(n, label):
    assert tokens_label(n) == label  # whole multiples of 1,024 as "k", anything else as the count


def test_sequence_lengths_are_the_powers_of_two_from_128():
    assert SEQUENCE_LENGTHS[0] == 2**7 == 128 and SEQUENCE_LENGTHS[-1] == 2**20 == 1_048_576
    assert len(SEQUENCE_LENGTHS) == 14


@pytest.mark.parametrize(
    "case, values",
    [
        ("chat", {"in": 2000.0, "out": 300.0, "ttft_ms": 2000.0, "tpot_ms": 100.0}),
        ("rag", {"in": 8000.0, "out": 300.0, "ttft_ms": 3000.0, "tpot_ms": 100.0}),
        ("code", {"in": 1500.0, "out": 100.0, "ttft_ms": 300.0, "tpot_ms": 30.0}),
        ("summarize", {"in": 6000.0, "out": 500.0, "ttft_ms": 0.0, "tpot_ms": 0.0}),  # no first-token target
        ("agent", {"in": 4000.0, "out": 200.0, "ttft_ms": 1000.0, "tpot_ms": 50.0}),
    ],
)
def test_each_use_case_sets_a_valid_request(case, values):
    assert {k: v for k, v in USE_CASES[case].items() if k != "label"} == values
    sc, notes = to_scenario(values)
    assert notes == []
    assert (sc.request.input_tokens, sc.request.output_tokens) == (values["in"], values["out"])
    assert sc.traffic.ttft_target_s == (values["ttft_ms"] / 1000 or None)  # ms -> s; 0 = none


def test_groups_and_pages():
    assert list(GROUPS) == [
        MAIN,
        "GPU count and parallelism",
        "Training",
        "Traffic and latency targets",
        "Pricing",
        "Site and owning",
        "Assumptions",
    ]
    assert not GROUPS[MAIN].lazy and GROUPS[MAIN].expanded and GROUPS["Pricing"].lazy
    assert {i.key for i in group_inputs("GPU count and parallelism")} == {
        "gpus",
        "tp",
        "pp",
        "cp",
        "vpp",
        "pipe",
        "ep",
        "hsdp",
    }
    assert [i.key for i in page_inputs(PAGE_OVERVIEW)] == ["alt_formats"]
    assert [i.key for i in page_inputs(PAGE_COST)] == ["market", "train_bill"]
    assert [i.key for i in page_inputs(PAGE_COMPARE)] == ["b_gpu", "b_weights", "b_kv", "b_gpus", "b_batch"]
    assert [i.key for i in page_inputs(PAGE_DATA)] == ["pricefile"]
    assert [i.key for i in page_inputs("Performance")] == ["profile"]
    assert all(i.page is None for i in SIDEBAR) and len(SIDEBAR) + 10 == len(RECORDS)


def test_compare_s_b_side_starts_as_a():
    for key in ("b_gpu", "b_weights", "b_kv"):
        inp = INPUTS[key]
        assert inp.default == SAME and inp.label_of(SAME) == "same as A" and inp.option_list()[0] == SAME
        assert set(inp.option_list()[1:]) <= set(INPUTS[inp.variant_of].option_list())
    assert (INPUTS["b_gpus"].default, INPUTS["b_gpus"].hi) == (0.0, 4096)  # 0 = same as A


def test_the_gpu_and_format_options_show_their_catalog_labels():
    gpu = INPUTS["gpu"]
    assert gpu.option_list()[:3] == ["any", "B200", "H200"] and gpu.label_of("any") == "Any GPU"
    assert gpu.label_of("H100-SXM") == "H100 SXM" and gpu.field_value("any") is None
    assert INPUTS["weights"].label_of("int4-g128") == "INT4 GPTQ/AWQ group 128"
    assert INPUTS["kv"].option_list() == ["fp32", "bf16", "fp16", "fp8", "int8", "nvfp4"]
    assert INPUTS["engine"].label_of("vllm") == "vLLM (V1, defaults)"


def test_the_batch_record_reads_the_largest_batch_switch():
    batch = INPUTS["batch"]
    assert batch.fields(4.0, {"workload": "interactive", "batch_max": True}) == {"batch": "max"}
    assert batch.fields(4.0, {"workload": "pretrain", "batch_max": True}) == {"batch": 4}  # inference only
    assert batch.label_for("pretrain") == "Micro-batch per GPU" and batch.label_for("interactive") == batch.label
    assert INPUTS["workload"].fields("batch", {}) == {"mode": "inference", "serving": "batch"}
    assert INPUTS["workload"].fields("finetune", {}) == {"mode": "finetune", "serving": "interactive"}
