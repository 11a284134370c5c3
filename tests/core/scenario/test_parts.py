"""scenario/parts.py: what is run, one frozen part each: the job's key, one model source, known formats, a request's
shape (batch as a count or 'max'), a layout that multiplies out, and a training run's defaults."""

import pytest

from gpuplan_core.scenario.fields import MAX_BATCH, MAX_CONTEXT_TOKENS
from gpuplan_core.scenario.layout import Parallelism, Training
from gpuplan_core.scenario.parts import DEFAULT_PRESET, Formats, Job, ModelSource, Request


@pytest.mark.parametrize(
    "mode, serving, method, key, training_method",
    [
        ("inference", "interactive", "full", "interactive", "full"),
        ("inference", "batch", "lora", "batch", "full"),  # inference trains nothing
        ("training", "interactive", "lora", "pretrain", "full"),  # pre-training trains every weight
        ("finetune", "batch", "qlora", "finetune", "qlora"),
    ],
)
def test_the_job_s_key_and_method(mode, serving, method, key, training_method):
    job = Job(mode=mode, serving=serving, method=method)
    assert (job.key, job.training_method) == (key, training_method)


def test_job_errors_name_the_allowed_values(refused):
    assert refused(Job, mode="serve") == (
        "mode: Input should be 'inference', 'training' or 'finetune' (allowed: 'inference', 'training' or 'finetune')"
    )


def test_one_model_source():
    assert ModelSource().preset == DEFAULT_PRESET == "Llama-3.1-8B"
    sized = ModelSource(params=7e9)
    assert (sized.preset, sized.params) == (None, 7_000_000_000)  # a size replaces the default preset
    assert ModelSource(config_text="{}").preset is None


def test_model_source_errors(refused):
    assert refused(ModelSource, preset="Llama-3.1-8B", params=7e9) == "model: give only one of preset, config, params"
    assert refused(ModelSource, preset="Llama-3.1-8B", config_text="{}").startswith("model: give only one of")
    assert refused(ModelSource, params=99_999_999).startswith(
        "params: Input should be greater than or equal to 100000000"
    )  # 100 million parameters at least
    assert refused(ModelSource, params=1e15).startswith("params: Input should be less than or equal to 100000000000000")


def test_formats_are_known_names(refused):
    assert (Formats().weights_format, Formats().kv_format) == ("bf16", "bf16")
    assert refused(Formats, kv_format="int3").startswith(
        "kv_format: unknown format 'int3'; allowed: fp32, bf16, fp16, fp8, int8, int4-g128, nf4,"
    )
    assert refused(Formats, weights_format="q4_k_m").startswith("weights_format: unknown format 'q4_k_m'")


def test_a_format_is_stored_by_its_name_whatever_the_spelling():
    """The question is the same whatever the case: 'FP8' and 'fp8' are one Formats (one cache key, one JSON)."""
    assert Formats(weights_format="FP8", kv_format=" NVFP4 ") == Formats(weights_format="fp8", kv_format="nvfp4")


def test_request_defaults_and_batch_or_one():
    r = Request()
    assert (r.input_tokens, r.output_tokens, r.sequence_tokens, r.batch) == (2000, 300, 4096, 8)
    assert Request(batch="max").batch_or_one == 1 and Request(batch=32).batch_or_one == 32


@pytest.mark.parametrize("raw, batch", [(" MAX ", "max"), ("16", 16), (3.0, 3), (MAX_BATCH, MAX_BATCH), (1, 1)])
def test_batch_is_a_whole_number_or_max(raw, batch):
    assert Request(batch=raw).batch == batch


@pytest.mark.parametrize(
    "raw, sentence",
    [
        ("abc", "batch: 'abc' is not a whole number or 'max'"),
        ("2.5", "batch: '2.5' is not a whole number or 'max'"),
        (2.5, "batch: 2.5 is not a whole number"),
        (0, "batch: must be between 1 and 1,000,000, or 'max'"),
        (MAX_BATCH + 1, "batch: must be between 1 and 1,000,000, or 'max'"),
        ("0", "batch: must be between 1 and 1,000,000, or 'max'"),  # parsed, then checked as a number
    ],
)
def test_a_bad_batch_names_what_is_allowed(refused, raw, sentence):
    assert refused(Request, batch=raw).startswith(sentence)


def test_input_and_output_together_stay_within_the_longest_context(refused):
    assert Request(input_tokens=MAX_CONTEXT_TOKENS - 1, output_tokens=1).input_tokens == 9_999_999
    assert refused(Request, input_tokens=9_999_900, output_tokens=200) == (
        "input_tokens + output_tokens: 10,000,100 is more than 10,000,000 tokens"
    )
    assert refused(Request, output_tokens=0).startswith("output_tokens: Input should be greater than or equal to 1")


def test_a_layout_multiplies_out(refused):
    assert Parallelism(gpus=16, tp=4, pp=2).gpus == 16  # 2 data-parallel replicas of tp 4 x pp 2
    assert Parallelism(gpus=24, tp=2, pp=2, cp=3).cp == 3
    assert refused(Parallelism, gpus=6, tp=4) == "gpus: 6 must be a multiple of tp x pp = 4"
    assert refused(Parallelism, gpus=8, tp=2, pp=2, cp=3) == "gpus: 8 must be a multiple of tp x pp x cp = 12"
    assert refused(Parallelism, zero_stage=4).startswith("zero_stage: Input should be less than or equal to 3")


def test_the_gpu_is_checked_against_the_catalog(refused):
    assert Parallelism(gpu="H100").gpu == "H100"  # kept as given; the catalog resolves it
    assert refused(Parallelism, gpu="H900").startswith("gpu: unknown GPU 'H900'; allowed: B200, H200, H100-SXM,")


@pytest.mark.parametrize(
    "offload, stage, effective",
    [
        ("optimizer+params", 3, "optimizer+params"),
        ("optimizer+params", 2, "optimizer"),  # parameters are offloaded at ZeRO-3 only
        ("optimizer", 0, "optimizer"),
        ("none", 3, "none"),
    ],
)
def test_effective_offload(offload, stage, effective):
    assert Parallelism(offload=offload, zero_stage=stage).effective_offload == effective


def test_training_defaults_and_bounds(refused):
    t = Training()
    assert (t.training_tokens, t.mfu, t.precision, t.recompute, t.recompute_every) == (None, None, "mixed", "full", 1)
    assert (t.lora_rank, t.lora_dropout, t.lora_targets, t.optimizer, t.accounting) == (
        16,
        0.05,
        "all-linear",
        "adamw",
        "zero",
    )
    assert t.overhead_factor == 0.3  # DOMAIN.md: failed runs and sweeps, 30-50% of compute
    assert refused(Training, lora_rank=0).startswith("lora_rank: Input should be greater than or equal to 1")
    assert refused(Training, mfu=1.5).startswith("mfu: Input should be less than or equal to 1")
    assert refused(Training, deadline_hours=0).startswith("deadline_hours: Input should be greater than 0")
    assert refused(Training, precision="int8").startswith("precision: Input should be 'mixed', 'bf16', 'fp8', ")


def test_parts_are_frozen_and_take_no_other_field(refused):
    assert refused(Request, prompt_tokens=5).startswith("prompt_tokens: Extra inputs are not permitted")
    with pytest.raises(ValueError):
        Request().batch = 4
