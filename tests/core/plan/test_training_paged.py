"""A paged optimizer in the training plan (plan/training.py, perf/training_traffic.py): its states need not fit the
GPU, and the step pays by hand the pages it moves where they do not."""

import pytest

from gpuplan_core import api
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.interface.links import link_query
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.fit import budget_bytes
from gpuplan_core.memory.request import memory_request
from gpuplan_core.perf.training_traffic import HOST_COPY_EFFICIENCY, HOST_LINK_GB_S

FULL_8B = dict(workload="finetune", method="full", model="Llama-3.1-8B", gpu="L40S", batch=1, recompute="full")


def _sc(**inputs):
    sc, notes = to_scenario(inputs)
    assert not notes, notes
    return sc


def test_paged_optimizer_is_a_link_key_off_by_default():
    assert _sc(**FULL_8B).training.paged_optimizer is False
    assert "paged_opt" not in link_query(FULL_8B)
    assert "&paged_opt=true" in link_query({**FULL_8B, "paged_opt": True})


def test_one_l40s_holds_full_fine_tuning_with_paged_states_and_the_step_pays_the_pages_by_hand():
    """Llama-3.1-8B, full fine-tuning in BF16 on L40S (48 GB): without paging the 32.1 GB of AdamW states do not
    fit one GPU beside the weights and gradients, and the plan takes 2; paged, one GPU holds the rest and the states
    that do not fit beside it cross PCIe 4.0 x16 (32 GB/s x 0.8) twice a step."""
    plain, paged = api.plan_report(_sc(**FULL_8B)).picks[0], api.plan_report(_sc(**FULL_8B, paged_opt=True)).picks[0]
    assert plain.gpus == 2 and paged.gpus == 1
    sc = _sc(**FULL_8B, paged_opt=True)
    req = memory_request(sc, 1, recompute="full", gpus=1)
    budget = memory_budget(sc.model(), req)
    states = budget.offloaded["optimizer states (paged)"]
    cap = budget_bytes(get_gpu("L40S"), req.runtime)
    spill = min(states, budget.per_gpu_bytes + states - cap)
    assert 0 < spill < states  # some of them stay on the GPU
    seconds = 2 * spill / (HOST_LINK_GB_S["Ada"] * 1e9 * HOST_COPY_EFFICIENCY)
    line = next(w for w in paged.why if w.startswith("paged optimizer: "))
    assert line.startswith(f"paged optimizer: {seconds:,.2f} s of each ")
    # the pages make the one-GPU run slower per GPU than the two GPUs' run without them
    assert paged.mfu < plain.mfu


def test_a_paged_optimizer_that_fits_costs_nothing():
    """On an H100 (80 GB) the same run fits with its states on the GPU: no page moves, the same step as unpaged."""
    h100 = {**FULL_8B, "gpu": "H100-SXM"}
    plain, paged = api.plan_report(_sc(**h100)).picks[0], api.plan_report(_sc(**h100, paged_opt=True)).picks[0]
    assert (paged.gpus, paged.mfu) == (plain.gpus, pytest.approx(plain.mfu, rel=1e-12))
    assert not any(w.startswith("paged optimizer: ") for w in paged.why)


def test_paged_with_cpu_offload_changes_nothing_and_says_so():
    kw = dict(workload="pretrain", model="Llama-3.1-8B", gpu="H100-SXM", gpus=8, zero=2, offload="optimizer")
    sc, paged = _sc(**kw), to_scenario({**kw, "paged_opt": True})[0]
    assert any("paging changes nothing" in w for w in paged.warnings()) and not sc.warnings()
    a, b = (memory_budget(s.model(), memory_request(s)) for s in (sc, paged))
    assert (a.per_gpu_bytes, a.host_bytes_per_node) == (b.per_gpu_bytes, b.host_bytes_per_node)
