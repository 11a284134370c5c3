"""Activation offloading as an input (memory/training.py, perf/training_traffic.py, plan/training.py): the GPU keeps
two layers' activations and host RAM the rest; the step pays the PCIe copies that the forward and backward beside
them do not hide, by hand."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.interface.links import link_query, read_link
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.request import memory_request
from gpuplan_core.perf.training_step import StepLayout
from gpuplan_core.perf.training_traffic import activation_offload_s
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.pricing.csv_file import load_pricing

H100, L4 = get_gpu("H100-SXM"), get_gpu("L4")
P5 = next(o for o in load_pricing().offers if o.offer_id == "aws-p5-48xl-use1-spot")
ASK = dict(workload="pretrain", src="preset", model="Llama-3.1-8B", tokens_b=100.0, gpu="H100-SXM", gpus=8, zero=3)
ASK |= dict(batch=2)


def _sc(**inputs):
    sc, notes = to_scenario(inputs)
    assert not notes, notes
    return sc


def _budget(**inputs):
    sc = _sc(**inputs)
    return memory_budget(sc.model(), memory_request(sc))


def test_the_gpu_keeps_two_of_the_32_layers_and_each_machine_holds_the_rest():
    """Llama-3.1-8B, 32 layers, no recompute: the GPU keeps 2/32 of the activations, host RAM 30/32 of them for
    each of the machine's 8 GPUs; nothing else in the budget moves."""
    off, on = _budget(**ASK, recompute="none"), _budget(**ASK, recompute="none", act_offload=True)
    acts = off.components["activations"]
    assert acts == pytest.approx(44.02e9, rel=1e-3)
    assert on.components["activations"] == pytest.approx(acts * 2 / 32, rel=1e-12)
    assert on.offloaded["activations (offloaded)"] == pytest.approx(acts * 30 / 32, rel=1e-12)
    assert on.host_bytes_per_node == pytest.approx(acts * 30 / 32 * 8, rel=1e-12)  # 330 GB
    assert all(
        on.components[k] == v for k, v in off.components.items() if k not in ("activations", "allocator reserve")
    )


def test_the_copies_hide_behind_the_pass_they_run_beside():
    """51.2 GB a micro-batch over PCIe 5.0 x16 at 64 GB/s x 0.8 = 1.0 s each way: out beside the forward (a third
    of the compute), back beside the backward (two thirds)."""
    lay = StepLayout(gpus=8, offload_bytes_per_micro_batch=51.2e9)
    assert activation_offload_s(H100, lay, 1.2) == pytest.approx((1.0 - 0.4) + (1.0 - 0.8), rel=1e-12)
    assert activation_offload_s(H100, lay, 2.0) == pytest.approx(1.0 - 2.0 / 3, rel=1e-12)
    assert activation_offload_s(H100, lay, 3.0) == 0.0
    # an L4 (Ada) has PCIe 4.0 x16, 32 GB/s: 2.0 s each way
    assert activation_offload_s(L4, lay, 3.0) == pytest.approx((2.0 - 1.0) + (2.0 - 2.0), rel=1e-12)
    assert activation_offload_s(H100, StepLayout(gpus=8), 0.0) == 0.0  # none offloaded


def test_the_plan_times_the_copies_of_the_memory_models_activations():
    """No recompute: 44 GB a micro-batch at 51.2 GB/s is 0.86 s each way, above the forward's third of the compute:
    the step pays for it. Full recompute keeps one hidden-state tensor a layer: the copies hide."""

    def pick(**extra):
        sc = _sc(**ASK, **extra)
        return training_candidates(sc.model(), sc, [P5])[0][0]

    plain, slow = pick(recompute="none"), pick(recompute="none", act_offload=True)
    assert plain.step.offload_s == 0.0 and (slow.micro_batch, slow.recompute) == (2, "none")
    step, mbs = slow.step, 4 * 1024 * 1024 // (8 * 2 * 4096)
    compute = (step.matmul_s + step.attention_s + step.elementwise_s) / mbs
    t = _budget(**ASK, recompute="none").components["activations"] / 51.2e9
    assert step.offload_s == pytest.approx(mbs * (max(0, t - compute / 3) + max(0, t - 2 * compute / 3)), rel=1e-9)
    assert slow.run_cost_usd > plain.run_cost_usd and "activation copies to the host" in step.parts()
    assert pick(recompute="full", act_offload=True).step.offload_s == 0.0


def test_activation_offload_is_a_link_key():
    assert read_link({"workload": "Pre-training", "act_offload": "true"})[0]["act_offload"] is True
    assert _sc(**ASK).training.activation_offload is False
    assert "&act_offload=true" in link_query({**ASK, "act_offload": True}) and "act_offload" not in link_query(ASK)
