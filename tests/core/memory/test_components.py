"""The memory question: MemoryRequest holds the Scenario's own parts (one default and one bound per field, declared
in scenario/), routes flat names to them, and the budget's small pure functions."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpuplan_core.common.units import GiB
from gpuplan_core.memory.components import (
    KEPT_BYTES_PER_PARAM,
    MEMORY_PARTS,
    PART_OF,
    Assumptions,
    MemoryRequest,
    component_provenance,
    overheads,
    stage_fraction,
    weight_split,
)
from gpuplan_core.memory.request import memory_request, pick_request
from gpuplan_core.model.arch import kept_16bit_params, params_total
from gpuplan_core.model.formats import get_format
from gpuplan_core.model.presets import get_preset
from gpuplan_core.scenario.scenario import FIELDS, PARTS, Scenario, default_for, field_bounds

L8 = get_preset("Llama-3.1-8B")


def _own_fields() -> set[str]:
    """Fields MemoryRequest declares itself, its Assumptions' included (not inside a Scenario part)."""
    return (set(MemoryRequest.model_fields) - set(MEMORY_PARTS)) | set(Assumptions.model_fields)


def test_parts_are_the_scenarios_own():
    """Each part a MemoryRequest holds is the very class the Scenario holds: its fields are declared once."""
    scenario_parts = set(PARTS.values())
    for name, cls in MEMORY_PARTS.items():
        assert cls in scenario_parts
        assert MemoryRequest.model_fields[name].annotation is cls


def test_no_field_declared_twice():
    """A Scenario field reached by flat name is its part's field; of MemoryRequest's own fields only the resolved
    batch shares a Scenario name (an int: the Scenario's may be 'max'), with the Scenario's default and bounds."""
    routed = set(PART_OF)
    assert routed <= set(FIELDS)  # every flat name MemoryRequest takes is a Scenario field, in the same part
    assert all(FIELDS[f] == next(p for p, c in PARTS.items() if c is MEMORY_PARTS[PART_OF[f]]) for f in routed)
    shared = _own_fields() & set(FIELDS)
    assert shared == _own_fields() & {"batch"}  # no other own field repeats a Scenario name
    mine = MemoryRequest.model_fields["batch"]
    assert mine.default == default_for("batch") == 8
    ge = next(m.ge for m in mine.metadata if hasattr(m, "ge"))
    le = next(m.le for m in mine.metadata if hasattr(m, "le"))
    assert (ge, False, le, False) == field_bounds("batch") == (1, False, 1_000_000, False)


def test_defaults_are_the_scenarios():
    """Every part of a default MemoryRequest equals the default Scenario's part."""
    req, sc = MemoryRequest(), Scenario()
    for name, cls in MEMORY_PARTS.items():
        part = next(p for p, c in PARTS.items() if c is cls)
        assert getattr(req, name) == getattr(sc, part), name
    assert req.batch == sc.request.batch == 8
    assert req.context_tokens == sc.request.sequence_tokens == 4096


def test_flat_names_route_to_their_part():
    req = MemoryRequest(tp=2, gpus=4, kv_format="FP8", engine="sglang", recompute="none", mode="training")
    assert (req.parallelism.tp, req.parallelism.gpus, req.dp) == (2, 4, 2)
    assert req.formats.kv_format == "fp8"  # the Formats part's own normalisation
    assert (req.runtime.engine, req.training.recompute, req.job.mode) == ("sglang", "none", "training")
    moved = req.model_copy(update={"tp": 4, "batch": 3})
    assert (moved.parallelism.tp, moved.parallelism.gpus, moved.batch, moved.formats.kv_format) == (4, 4, 3, "fp8")
    assert req.parallelism.tp == 2  # frozen: a copy


def test_a_part_and_a_flat_name_together():
    """A flat name overrides the same field of a part given whole."""
    sc = Scenario(gpus=8, tp=2)
    req = MemoryRequest(parallelism=sc.parallelism, tp=4)
    assert (req.parallelism.tp, req.parallelism.gpus) == (4, 8)


@pytest.mark.parametrize(
    "bad, named",
    [
        ({"gpus": 3, "tp": 2}, "gpus: 3 must be a multiple of tp x pp = 2"),
        ({"gpus": 5000}, "less than or equal to 4096"),
        ({"zero_stage": 2, "offload": "optimizer+params"}, "offload"),
        ({"activation_format": "fp9"}, "activation_format"),
        ({"kv_format": "fp9"}, "kv_format"),
        ({"batch": 0}, "batch"),
    ],
)
def test_bounds_are_the_scenarios(bad, named):
    with pytest.raises(ValidationError, match=named):
        MemoryRequest(**bad)


def test_memory_request_of_a_scenario():
    """Inference: context = input + output, prefill = input, batch 'max' read as 1, no context split, no GPU type."""
    sc = Scenario(input_tokens=3000, output_tokens=500, batch="max", gpu="H100", cp=1)
    req = memory_request(sc)
    assert (req.context_tokens, req.prefill_tokens, req.batch) == (3500, 3000, 1)
    assert req.parallelism.gpu is None
    assert req.formats is sc.formats and req.training is sc.training and req.runtime is sc.assumptions
    ft = memory_request(Scenario(mode="finetune", sequence_tokens=2048, cp=2, gpus=2))
    assert (ft.context_tokens, ft.prefill_tokens, ft.job.method, ft.parallelism.cp) == (2048, None, "lora", 2)
    pre = memory_request(Scenario(mode="training", method="lora"))
    assert pre.job.method == "full"  # pre-training trains every weight


def test_pick_request_uses_the_picks_layout():
    from gpuplan_core.results.plan import Pick

    sc = Scenario(mode="training", gpus=16)
    pick = Pick.model_construct(gpu="H100 SXM", gpus=24, tp=8, pp=1, micro_batch=2, zero_stage=3, weights_format="bf16")
    req = pick_request(sc, pick)
    # 24 GPUs are 3 groups of tp x pp = 8: all 24 are budgeted, ZeRO-3 over dp 3
    assert (req.parallelism.gpus, req.parallelism.tp, req.parallelism.zero_stage, req.batch, req.dp) == (24, 8, 3, 2, 3)
    odd = pick_request(sc, pick.model_copy(update={"gpus": 12}))
    assert odd.parallelism.gpus == 8  # 12 is not a multiple of 8: one tp x pp group is budgeted
    assert req.training.recompute == sc.training.recompute == "full"  # a pick without its own: the scenario's
    chosen = pick_request(sc, pick.model_copy(update={"recompute": "none"}))
    assert chosen.training.recompute == "none"  # the search chose no recompute: memory is budgeted so
    from gpuplan_core.memory.budget import memory_budget
    from gpuplan_core.model.presets import get_preset

    m = get_preset("Llama-3.1-8B")
    assert memory_budget(m, chosen).per_gpu_bytes > memory_budget(m, req).per_gpu_bytes  # activations kept


def test_weight_split_by_hand():
    """FP8 weights: the decoder's linear layers at 1 byte, embeddings, LM head and norms kept at 2 bytes."""
    body, kept = weight_split(L8, get_format("fp8"))
    k = kept_16bit_params(L8)
    assert kept == k * KEPT_BYTES_PER_PARAM
    assert body == (params_total(L8) - k) * 1.0
    assert weight_split(L8, get_format("bf16")) == (params_total(L8) * 2.0, 0.0)


def test_overheads_and_stage_fraction():
    assert overheads(MemoryRequest()) == {"CUDA context": 0.25 * GiB}
    assert overheads(MemoryRequest(tp=2, gpus=2)) == {"CUDA context": 0.25 * GiB, "communication buffers": 1.85 * GiB}
    assert stage_fraction(L8, 1) == 1.0
    assert stage_fraction(L8, 3) == 11 / 32  # ceil(32 / 3) = 11 of Llama-3.1-8B's 32 layers on the first stage
    assert component_provenance("weights").startswith("exact")
    assert component_provenance("CUDA graphs").startswith("estimated: measured pool size")
