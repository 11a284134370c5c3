"""scenario/fields.py: the question's vocabulary and the limits beyond reason."""

from typing import get_args

from gpuplan_core.scenario import fields


def test_the_choices_a_scenario_names():
    assert get_args(fields.Mode) == ("inference", "training", "finetune")
    assert get_args(fields.Serving) == ("interactive", "batch")
    assert get_args(fields.Method) == ("full", "lora", "qlora")
    assert get_args(fields.Accounting) == ("zero", "hf")  # DOMAIN.md: ZeRO 16 B/param, Hugging Face 18
    assert get_args(fields.Optimizer) == ("adamw", "adam8bit", "sgd")
    assert get_args(fields.Recompute) == ("none", "selective", "full")
    assert get_args(fields.Billing) == ("on_demand", "spot", "reserved", "serverless")
    assert get_args(fields.Offload) == ("none", "optimizer", "optimizer+params")
    assert get_args(fields.PriceSource) == ("add", "only")


def test_the_limits_beyond_reason():
    assert fields.MAX_CONTEXT_TOKENS == 10**7
    assert fields.MAX_BATCH == 10**6
    assert fields.MAX_GPUS == 10**5
    assert fields.MAX_LAYOUT_GPUS == 2**12 == 4096  # the layout search's largest job
    assert fields.MAX_LAYOUT_GPUS < fields.MAX_GPUS


def test_the_scenario_s_fields_take_these_choices():
    from gpuplan_core.scenario.scenario import field_choices

    assert field_choices("mode") == get_args(fields.Mode)
    assert field_choices("billing") == get_args(fields.Billing)  # None (any billing) is not a choice
    assert field_choices("precision") == ("mixed", "bf16", "fp8", "mxfp8", "nvfp4", "fp32")
    assert field_choices("gpus") is None
