"""interface/record.py: one input's record: its default, range and help read from the field it sets (converted by
``scale`` to the widget's unit), values parsed from link text with a note naming what is allowed, and written back
so that they read the same."""

import math

import pytest

from gpuplan_core.interface.record import ALL_JOBS, INFERENCE, JOBS, NO_FLAG, TRAINING, Input, plain, same_value
from gpuplan_core.interface.registry import INPUTS
from gpuplan_core.scenario.scenario import field_info


@pytest.mark.parametrize(
    "value, text",
    [
        (2000.0, "2000"),  # no trailing .0
        (3, "3"),
        (0.85, "0.85"),
        (1e-7, "0.0000001"),  # no exponent
        (2.5e20, "250000000000000000000"),
        (0.1 + 0.2, "0.30000000000000004"),  # the float itself: what is read back is what was written
        (True, "True"),  # a bool is not a number
        ("H100-SXM", "H100-SXM"),
        (math.inf, "inf"),
    ],
)
def test_plain_writes_a_plain_decimal(value, text):
    assert plain(value) == text
    if isinstance(value, float) and math.isfinite(value):
        assert float(text) == value


def test_same_value_compares_numbers_as_numbers():
    assert same_value(8, 8.0) and same_value(0, 0.0) and not same_value(8, 8.5)
    assert same_value("any", "any") and not same_value("8", 8)


def test_the_jobs():
    assert sorted(INFERENCE) == ["batch", "interactive"] and sorted(TRAINING) == ["finetune", "pretrain"]
    assert ALL_JOBS == set(JOBS) == INFERENCE | TRAINING


def test_a_record_reads_the_field_in_the_widget_s_unit():
    ttft = INPUTS["ttft_ms"]  # ttft_target_s: default 2.0 s, gt=0, le=3600 s; the widget is in ms (scale 1e-3)
    assert (ttft.default, ttft.least, ttft.hi, ttft.lo_open, ttft.whole) == (2000.0, 0.0, 3_600_000.0, True, False)
    assert ttft.lo == 0 and ttft.help == field_info("ttft_target_s").description  # 0: the "none" value
    tokens = INPUTS["tokens_b"]  # training_tokens ge=1,000, le=1e16, in billions (scale 1e9)
    assert (tokens.least, tokens.hi, tokens.default) == (1_000 / 1e9, 1e16 / 1e9, 100.0)  # pre-training's 100B
    batch = INPUTS["in"]
    assert (batch.least, batch.hi, batch.whole) == (1.0, 10_000_000.0, True)  # a count of tokens


def test_a_field_whose_default_differs_between_jobs_needs_one_record_per_job():
    # training_tokens: None for inference, 100e9 for pre-training, 100e6 for fine-tuning
    with pytest.raises(ValueError, match="tokens: the field's default differs between its jobs; give it one input"):
        Input("tokens", "Tokens", "number", field="training_tokens")
    assert Input("tokens", "Tokens", "number", field="training_tokens", jobs=frozenset({"finetune"})).default == 100e6


@pytest.mark.parametrize(
    "key, raw, value, note",
    [
        ("ttft_ms", "1500", 1500.0, None),
        ("ttft_ms", "1,500", 1500.0, None),  # thousands separators are read
        ("ttft_ms", "0", 0.0, None),  # 0 = none
        ("ttft_ms", "-5", 2000.0, "ttft_ms='-5' is outside 0 to 3600000 (0 = none); the default is used."),
        ("ttft_ms", "3600001", 2000.0, "ttft_ms='3600001' is outside 0 to 3600000 (0 = none); the default is used."),
        ("ttft_ms", "nan", 2000.0, "ttft_ms='nan' is outside 0 to 3600000 (0 = none); the default is used."),
        ("ttft_ms", "inf", 2000.0, "ttft_ms='inf' is outside 0 to 3600000 (0 = none); the default is used."),
        (
            "ttft_ms",
            "abc",
            2000.0,
            "ttft_ms='abc' is not a number (allowed: 0 to 3600000 (0 = none)); the default is used.",
        ),
        ("in", "2.6", 3.0, "in='2.6' is not a whole number; 3 is used."),
        ("mfu", "0.005", 0, "mfu='0.005' is outside 0.01 to 1 (0 = none); the default is used."),  # ge=0.01
        ("batch_max", "TRUE", True, None),
        ("batch_max", "yes", False, "batch_max='yes' must be true or false; the default is used."),
        ("weights", "FP8 (E4M3)", "fp8", None),  # the label the widget shows
        ("weights", "fp8", "fp8", None),  # or the option itself
        ("hf", "x" * 201, "", "hf is longer than 200 characters; the default is used."),
    ],
)
def test_parse_reads_link_text_or_names_what_is_allowed(key, raw, value, note):
    assert INPUTS[key].parse(raw) == (value, note)


def test_a_choice_not_offered_lists_the_first_ten_labels():
    value, note = INPUTS["weights"].parse("FP9")
    assert value == "bf16" and note == (
        "weights='FP9' is not allowed (allowed: FP32, BF16, FP16, FP8 (E4M3), INT8, INT4 GPTQ/AWQ group 128, NF4 "
        "(bitsandbytes, block 64), NF4 + double quantisation (QLoRA), MXFP4, NVFP4 ...); the default is used."
    )


def test_crafted_text_is_cut_before_it_is_echoed():
    value, note = INPUTS["in"].parse("9" * 5000)  # a number far out of range, 5,000 characters long
    assert value == 2000.0 and note == f"in={'9' * 40!r} is outside 1 to 10000000; the default is used."
    value, note = INPUTS["gpu"].parse("<script>" * 100)
    assert value == "any" and note.startswith("gpu='<script><script><script><script><script>' is not allowed")  # 40


def test_field_value_and_widget_value_are_inverse():
    ttft, tokens, spec, growth = INPUTS["ttft_ms"], INPUTS["tokens_b"], INPUTS["spec_b"], INPUTS["growth"]
    assert ttft.field_value(1500.0) == 1.5 and ttft.widget_value(0.3) == 300.0  # not 300.00000000000006
    assert ttft.field_value(0.0) is None  # "0 = none"
    assert tokens.field_value(2.5) == 2.5e9
    assert spec.field_value(1.5) == 1_500_000_000 and isinstance(spec.field_value(1.5), int)  # a parameter count
    assert growth.field_value(10.0) == 0.1 and growth.widget_value(0.07) == 7.0  # percent in the widget
    assert INPUTS["myprice"].widget_value({"a-od": 2.5, "b-od": 1.0}) == "a-od=2.5, b-od=1"


def test_link_value_and_shown():
    assert INPUTS["weights"].link_value("fp8") == "FP8 (E4M3)" and INPUTS["gpu"].link_value("H100-SXM") == "H100 SXM"
    assert INPUTS["batch_max"].link_value(True) == "true" and INPUTS["in"].link_value(2500.0) == "2500"
    assert INPUTS["util"].shown(0.85) == "85%"  # a share slider
    assert INPUTS["in"].shown(2500.0) == "2,500" and INPUTS["peak"].shown(2.5) == "2.5"


def test_allowed_in_words():
    assert INPUTS["batch_max"].allowed() == "true or false"
    assert INPUTS["hf"].allowed() == "text up to 200 characters"
    assert INPUTS["in"].allowed() == "whole numbers 1 to 10000000"
    assert INPUTS["util"].allowed() == "0.5 to 1"
    assert INPUTS["b_gpus"].allowed() == "whole numbers 0 to 4096 (0 = none)"


def test_applies_by_job_and_model_source():
    assert INPUTS["ttft_ms"].applies({"workload": "interactive"}) and not INPUTS["ttft_ms"].applies(
        {"workload": "batch"}
    )
    assert INPUTS["lora_rank"].applies({"workload": "finetune"}) and not INPUTS["lora_rank"].applies({})
    assert INPUTS["size_b"].applies({"src": "size"}) and not INPUTS["size_b"].applies({"src": "preset"})
    assert INPUTS["b_gpu"].applies({"workload": "pretrain"})  # a page's own input applies to every job


def test_the_cli_flag_is_the_field_s_name():
    assert INPUTS["ttft_ms"].flag == "--ttft-target-s" and INPUTS["in"].flag == "--input-tokens"
    assert INPUTS["batch_max"].flag is None  # sets no field of its own
    assert INPUTS["model"].flag is None and "preset" in NO_FLAG  # --preset is the CLI's own
    assert INPUTS["b_gpu"].flag is None  # a page's input
