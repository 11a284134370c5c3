"""interface/records_job.py: the job, model, request, GPU count and training inputs. Their link keys (public: never
renamed), the field each sets in its unit (billions of tokens, millions, hours; 0 = none), the composite ones (job,
ZeRO stage, recompute, largest batch), bad values named, and a link read back as itself."""

import pytest

from gpuplan_core.interface.records_job import JOB_RECORDS
from gpuplan_core.model.formats import get_format
from gpuplan_core.scenario.scenario import FIELDS

KEYS = (  # one line of the keys, space-separated
    "workload usecase src model size_b hf method weights kv in out ctx batch_max batch gpu meeting gpus tp pp tokens_b "
    "ft_tokens_m mfu prec ft_prec zero acct opt offload recompute ac_every ce cp lora_rank lora_targets lora_dropout "
    "qlora_lib deadline_h default_deadline_h overhead"
)
RECORDS = {r.key: r for r in JOB_RECORDS}


def test_every_link_key_is_still_there_in_the_sidebar_s_order():
    """A key may be added; none of these may go (old links name them)."""
    assert [k for k in RECORDS if k in KEYS.split(" ")] == KEYS.split(" ")


def test_each_record_sets_a_scenario_field_or_states_what_it_sets():
    for r in JOB_RECORDS:
        assert set(r.field_names()) <= set(FIELDS), r.key
    assert RECORDS["workload"].field_names() == ("mode", "serving")
    assert RECORDS["zero"].field_names() == ("zero_stage", "zero_auto")
    assert {k for k, r in RECORDS.items() if not r.field_names()} == {"usecase", "src", "batch_max", "meeting"}


@pytest.mark.parametrize(
    "link,field,value",
    [
        ({"src": "Model size only", "size_b": "70"}, "params", 70_000_000_000),
        ({"src": "Model size only", "size_b": "70B"}, "params", 70_000_000_000),  # the older link form
        ({"workload": "Pre-training", "tokens_b": "2.5"}, "training_tokens", 2.5e9),
        ({"workload": "Fine-tuning", "ft_tokens_m": "50"}, "training_tokens", 5e7),
        ({"workload": "Pre-training", "ctx": "8k"}, "sequence_tokens", 8192),
        ({"workload": "Pre-training", "mfu": "0"}, "mfu", None),
        ({"workload": "Pre-training", "mfu": "0.4"}, "mfu", 0.4),
        ({"workload": "Pre-training", "deadline_h": "0"}, "deadline_hours", None),
        ({"workload": "Pre-training", "deadline_h": "48"}, "deadline_hours", 48),
        ({"in": "3000", "out": "500"}, "input_tokens", 3000),
        ({"gpu": "H100"}, "gpu", "H100-SXM"),  # an alias
        ({"gpu": "Any GPU"}, "gpu", None),
        ({"weights": "FP8 (E4M3)"}, "weights_format", "fp8"),
        ({"workload": "Fine-tuning", "method": "QLoRA (4-bit base)"}, "method", "qlora"),
        ({"workload": "Batch inference (offline jobs)"}, "serving", "batch"),
        ({"batch_max": "true"}, "batch", "max"),
        ({"workload": "Pre-training", "batch_max": "true", "batch": "4"}, "batch", 4),  # training: a micro-batch
    ],
)
def test_a_link_value_reaches_its_field_in_the_field_s_unit(from_link, link, field, value):
    _, flat, notes = from_link(link)
    assert flat[field] == value and notes == []


@pytest.mark.parametrize(
    "zero,recompute,fields",
    [
        ("auto", "Searched with the layout: the cheapest that fits", {"zero_auto": True, "recompute_auto": True}),
        ("2", "None (keep every activation)", {"zero_stage": 2, "zero_auto": False, "recompute": "none"}),
    ],
)
def test_zero_stage_and_recompute_are_a_choice_or_searched(from_link, zero, recompute, fields):
    _, flat, _ = from_link({"workload": "Pre-training", "zero": zero, "recompute": recompute})
    assert {k: flat[k] for k in fields} == fields


def test_an_input_of_another_job_stays_in_the_link_and_out_of_the_scenario(from_link):
    values, flat, _ = from_link({"workload": "Pre-training", "in": "5000"})
    assert values["in"] == 5000 and flat["input_tokens"] == 2000  # the Scenario's default
    assert RECORDS["in"].jobs == {"interactive", "batch"} and RECORDS["tokens_b"].jobs == {"pretrain"}


@pytest.mark.parametrize(
    "link,note",
    [
        ({"in": "abc"}, "in='abc' is not a number (allowed: whole numbers 1 to 10000000); the default is used."),
        ({"gpus": "0"}, "gpus='0' is outside 1 to 4096; the default is used."),
        ({"tp": "3"}, "tp='3' is not allowed (allowed: 1, 2, 4, 8, 16, 32, 64); the default is used."),
        ({"batch": "1.5"}, "batch='1.5' is not a whole number; 2 is used."),
        ({"weights": "FP9"}, "weights='FP9' is not allowed (allowed: FP32, BF16, FP16, FP8 (E4M3), INT8, "),
    ],
)
def test_a_bad_value_is_named_with_what_is_allowed(from_link, link, note):
    _, _, notes = from_link(link)
    assert len(notes) == 1 and notes[0].startswith("Link value " + note)


def test_a_training_link_reads_back_as_itself(round_trip):
    values = {
        "workload": "pretrain",
        "tokens_b": 2.5,
        "ctx": 8192,
        "gpus": 64.0,
        "tp": 8,
        "pp": 2,
        "zero": 2,
        "recompute": "selective",
        "acct": "hf",
        "opt": "adam8bit",
        "deadline_h": 72.0,
        "weights": "fp8",
        "model": "Llama-3.1-70B",
    }
    assert round_trip(values) == (values, [])


def test_the_weights_slider_runs_from_32_bits_down_to_4():
    """By the bits of the values themselves (a 4-bit format's scales add a fraction of a bit: 4.16 .. 4.5)."""
    bits = [int(get_format(f).bits_per_value) for f in RECORDS["weights"].option_list()]
    assert bits == [32, 16, 16, 8, 8, 4, 4, 4, 4, 4, 4]


def test_the_batch_is_a_micro_batch_in_training():
    b = RECORDS["batch"]
    assert (b.label_for("interactive"), b.label_for("pretrain"), b.label_for("finetune")) == (
        "Batch (concurrent sequences)",
        "Micro-batch per GPU",
        "Micro-batch per GPU",
    )


def test_a_number_reads_its_range_and_default_from_its_field_in_the_widget_s_unit():
    """tokens_b is billions (field: tokens, > 0); mfu 0 means predicted, else 0.01 .. 1; GPUs 1 .. 4,096."""
    t, mfu, gpus = RECORDS["tokens_b"], RECORDS["mfu"], RECORDS["gpus"]
    assert (t.scale, t.default, t.hi) == (1e9, 100.0, 1e7)
    assert (mfu.lo, mfu.least, mfu.hi, mfu.default) == (0, 0.01, 1.0, 0)
    assert (gpus.least, gpus.hi, gpus.default, gpus.whole) == (1, 4096, 1, True)
