"""The Scenario: parts with every default, bound and help written once; flat names routed to their part."""

import json

import pytest
from pydantic import ValidationError

from gpuplan_core.common.errors import describe
from gpuplan_core.memory.components import Assumptions, MemoryRequest
from gpuplan_core.memory.request import memory_request
from gpuplan_core.scenario.deployment import Traffic
from gpuplan_core.scenario.fields import MAX_LAYOUT_GPUS
from gpuplan_core.scenario.scenario import FIELDS, JOB_DEFAULTS, PARTS, Scenario, default_for, field_bounds
from tests.configs import LLAMA_3_1_8B_CONFIG

LLAMA_8B_CONFIG = json.dumps(LLAMA_3_1_8B_CONFIG)


def test_every_field_of_every_part_has_a_description_and_a_name_no_other_part_uses():
    assert (
        len(FIELDS) == sum(len(p.model_fields) for p in PARTS.values()) == 80
    )  # issue 19: precision, cross_entropy, recompute_every, lora_targets/dropout, qlora_library, cp; issue 20:
    # Site (8 fields), monthly_growth, spike_month, spike_factor, allow_accelerators; issue 29: zero_auto,
    # default_deadline_hours, recompute_auto, virtual_stages, ep, shard_gpus, activation_offload,
    # pipeline_schedule, paged_optimizer; issue 28: request_in_s, decode_time_factor (a deployment profile),
    # engine_version (the engine's release line)
    for part, cls in PARTS.items():
        for name, info in cls.model_fields.items():
            assert FIELDS[name] == part and info.description, name
    assert set(PARTS) == {
        "job",
        "model_source",
        "formats",
        "request",
        "parallelism",
        "training",
        "traffic",
        "pricing",
        "assumptions",
        "site",
    }


def test_flat_names_go_to_their_part():
    sc = Scenario(requests_per_day=50_000, gpu="H100", batch="max", mode="inference", weights_format="fp8")
    assert (sc.traffic.requests_per_day, sc.parallelism.gpu, sc.request.batch) == (50_000, "H100", "max")
    assert sc.formats.weights_format == "fp8" and sc.job.mode == "inference"
    assert Scenario(traffic={"requests_per_day": 5}, peak_to_average=2).traffic == Traffic(
        requests_per_day=5, peak_to_average=2
    )  # a flat name on top of a whole part
    assert Scenario(**Scenario().flat()) == Scenario()


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"mode": "finetune", "method": "qlora", "params": 7e9, "your_prices": {"a-b-od": 1.25}},
        {"batch": "max", "gpu": "H200", "ttft_target_s": None, "spec_draft_params": 1e9},
        {"config_text": LLAMA_8B_CONFIG, "mode": "training", "training_tokens": 2e12},
    ],
)
def test_a_scenario_round_trips_through_json_and_its_flat_form(fields):
    sc = Scenario(**fields)
    assert Scenario.model_validate_json(sc.model_dump_json()) == sc  # the UI caches by this
    assert Scenario(**json.loads(json.dumps(sc.flat()))) == sc


def test_with_routes_flat_names_and_validates_again():
    sc = Scenario(gpu="H100", gpus=4, tp=4)
    assert sc.with_(gpu=None).parallelism.gpu is None and sc.with_(gpu=None).parallelism.tp == 4
    assert sc.with_(mode="inference", batch=8).request.batch == 8
    with pytest.raises(ValidationError) as exc:
        sc.with_(gpus=6)
    assert describe(exc.value) == "gpus: 6 must be a multiple of tp x pp = 4"
    with pytest.raises(ValidationError, match="nonsense"):
        sc.with_(nonsense=1)


@pytest.mark.parametrize(
    "fields,named",
    [
        ({"input_tokens": 0}, "input_tokens: Input should be greater than or equal to 1"),
        ({"gpus": 3, "tp": 2}, "gpus: 3 must be a multiple of tp x pp = 2"),
        ({"weights_format": "int3"}, "weights_format: unknown format 'int3'"),
        ({"batch": 0}, "batch: must be between 1 and 1,000,000, or 'max'"),
        ({"gpus": MAX_LAYOUT_GPUS + 1}, "gpus: Input should be less than or equal to 4096"),
        ({"preset": "Llama-3.1-8B", "params": 7e9}, "model: give only one of preset, config, params"),
        ({"ttft_target_s": 0}, "ttft_target_s: Input should be greater than 0"),
    ],
)
def test_an_error_names_the_field_by_its_flat_name(fields, named):
    with pytest.raises(ValidationError) as exc:
        Scenario(**fields)
    assert describe(exc.value).startswith(named)


def test_defaults_that_depend_on_the_job_fill_only_what_is_not_given():
    pre, ft, batch = Scenario(mode="training"), Scenario(mode="finetune"), Scenario(serving="batch")
    assert pre.training.training_tokens == 100e9 and pre.job.method == "full" and pre.traffic.requests_per_day is None
    assert (ft.training.training_tokens, ft.job.method, ft.job.training_method) == (100e6, "lora", "lora")
    assert (batch.traffic.ttft_target_s, batch.traffic.tpot_target_s, batch.traffic.requests_per_day) == (
        None,
        None,
        10_000,
    )
    given = Scenario(mode="finetune", method="full", training_tokens=5e6, serving="batch", ttft_target_s=1.0)
    assert (given.job.method, given.training.training_tokens, given.traffic.ttft_target_s) == ("full", 5e6, 1.0)
    assert default_for("training_tokens", "pretrain") == JOB_DEFAULTS["pretrain"]["training_tokens"] == 100e9
    assert Scenario(mode="training", method="lora").job.training_method == "full"  # pre-training trains every weight


def test_the_peak_rate_and_the_context_are_derived_in_one_place():
    t = Traffic(requests_per_day=50_000, peak_to_average=3.0)
    assert t.peak_requests_per_s == pytest.approx(50_000 / 86_400 * 3.0)  # 1.736 requests/s at the peak
    assert (
        Traffic(requests_per_day=0).peak_requests_per_s is None
        and Traffic(requests_per_day=None).peak_requests_per_s is None
    )
    assert Scenario(input_tokens=8000, output_tokens=192).context_tokens == 8192  # inference: input + output
    assert Scenario(mode="training", sequence_tokens=2048, input_tokens=8000).context_tokens == 2048
    assert Scenario(batch="max").request.batch_or_one == 1 and Scenario(batch=4).request.batch_or_one == 4


def test_a_config_or_a_size_replaces_the_default_preset():
    assert Scenario().model().name == "Llama-3.1-8B"
    sized = Scenario(params=70e9)
    assert sized.model_source.preset is None and sized.model().approximate
    assert Scenario(config_text=LLAMA_8B_CONFIG).model_source.preset is None


def test_your_prices_are_a_validated_mapping():
    assert Scenario(your_prices="a-od=2.10, b-od=0.85").pricing.your_prices == {"a-od": 2.10, "b-od": 0.85}
    for bad, named in (
        ({"verda-1b200-od": 0}, "verda-1b200-od at 0 USD"),
        ({"x": -1.0}, "x at -1 USD"),
        ("no-equals-sign", "'no-equals-sign' is not 'offer-id=USD per GPU-hour'"),
    ):
        with pytest.raises(ValidationError) as exc:
            Scenario(your_prices=bad)
        assert describe(exc.value).startswith("your_prices: ") or "your prices: " in describe(exc.value)
        assert named in describe(exc.value)


def test_memory_utilization_is_declared_once():
    """The memory question holds the Scenario's runtime part: one default, one range, none in Assumptions."""
    assert "memory_utilization" not in Assumptions.model_fields
    assert MemoryRequest.model_fields["runtime"].annotation is PARTS["assumptions"]
    assert memory_request(Scenario(memory_utilization=0.85)).runtime.memory_utilization == 0.85
    assert MemoryRequest().runtime.memory_utilization == Scenario().assumptions.memory_utilization == 0.90
    assert field_bounds("memory_utilization") == (0.5, False, 1.0, False)
    assert field_bounds("gpus")[2] == MAX_LAYOUT_GPUS == 4096
