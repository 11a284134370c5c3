"""Hybrid sharding (HSDP) at ZeRO-3 (memory/training.py, perf/training_traffic.py, plan/training_options.py): the
states sharded over a group of data-parallel ranks and replicated across groups, by hand on two 8-GPU machines; the
search's choice between it and ZeRO-3 over all ranks on a slow and a fast network; the link key and a group set
kept with the cheaper run beside it."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.interface.links import link_query, read_link
from gpuplan_core.memory.budget import memory_budget
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.arch import params_total
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.training_step import StepLayout, TrainingEfficiency
from gpuplan_core.perf.training_traffic import data_parallel_s
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.pricing.csv_file import load_pricing

L8 = get_preset("Llama-3.1-8B")
H100 = get_gpu("H100-SXM")
EFF = TrainingEfficiency(network_efficiency=0.5, overlap=0.8)
P5 = next(o for o in load_pricing().offers if o.offer_id == "aws-p5-48xl-use1-spot")  # 8 x H100, EFA 3,200 Gbit/s
SLOW = P5.model_copy(update={"inter_node_gbit_s": 400.0})  # the same machines on 400 Gbit/s (50 per GPU)
ASK = dict(workload="pretrain", src="preset", model="Llama-3.1-8B", tokens_b=100.0, gpu="H100-SXM", gpus=16, zero=3)
STATES = ("weights", "gradients", "master weights", "optimizer states")


def _sc(**inputs):
    sc, notes = to_scenario(inputs)
    assert not notes, notes
    return sc


def _pick(offer, **inputs):
    sc = _sc(**inputs)
    return training_candidates(sc.model(), sc, [offer])[0][0]


def test_hsdp_holds_the_states_of_its_group_not_of_all_ranks():
    """Llama-3.1-8B, 8,030,261,248 parameters x 16 bytes (ZeRO accounting) on 16 GPUs: over all 16 ranks 8.03 GB of
    states per GPU, over a group of 8 (replicated twice) 16.06 GB; the rest of the budget is the same."""
    assert params_total(L8) == 8_030_261_248
    full, hsdp = (memory_budget(L8, memory_request(_sc(**ASK, hsdp=g))) for g in (0, 8))
    assert sum(full.components[k] for k in STATES) == pytest.approx(8_030_261_248 * 16 / 16, rel=1e-12)
    assert sum(hsdp.components[k] for k in STATES) == pytest.approx(8_030_261_248 * 16 / 8, rel=1e-12)
    others = [k for k in full.components if k not in STATES and k != "allocator reserve"]
    assert all(full.components[k] == hsdp.components[k] for k in others)
    assert any("groups of 8 data-parallel ranks, replicated 2 times" in n for n in hsdp.notes)


def test_hsdp_step_traffic_gathers_inside_the_machine_and_all_reduces_one_eighth_across():
    """16 GPUs, micro-batch 2 x 4,096, 4M tokens a step: 32 micro-batches. ZeRO-3 moves 2 x 2 bytes x P per
    micro-batch (the weights gathered forward and backward) + 4 x P (FP32 gradients reduce-scattered) = 132 P.
    Over all 16 ranks: 132 P x 15/16 over the network at 50 Gbit/s x 0.5 = 3.125 GB/s. HSDP, groups of 8: 132 P x 7/8
    over NVLink (450 GB/s x 0.5), then each GPU's 1/8 of the gradients all-reduced across 2 groups:
    2 x 4 x P / 8 x 1/2 = 0.5 P over the network."""
    p = 8_030_261_248
    lay = dict(gpus=16, zero_stage=3, micro_batch=2, seq_len=4096, inter_node_gbit_s_per_gpu=50.0)
    full, hsdp = StepLayout(**lay), StepLayout(**lay, shard_gpus=8)
    assert full.micro_batches == 32 and hsdp.micro_batches == 32
    plain = 132 * p * 15 / 16 / 3.125e9
    assert data_parallel_s(L8, H100, full, EFF, 0.0) == pytest.approx(plain, rel=1e-12)  # 318 s
    hybrid = 132 * p * 7 / 8 / 225e9 + 0.5 * p / 3.125e9
    assert data_parallel_s(L8, H100, hsdp, EFF, 0.0) == pytest.approx(hybrid, rel=1e-12)  # 4.12 + 1.28 s
    assert hybrid == pytest.approx(5.41, abs=0.01)
    # both wait on the same compute's overlap share
    assert data_parallel_s(L8, H100, hsdp, EFF, 5.0) == pytest.approx(hybrid - 4.0, rel=1e-12)
    # a group as large as the data-parallel ranks is ZeRO-3 over all of them
    assert data_parallel_s(L8, H100, StepLayout(**lay, shard_gpus=16), EFF, 0.0) == pytest.approx(plain, rel=1e-12)


def test_hsdp_beats_zero3_over_a_slow_network_and_the_why_chain_says_so():
    pick = _pick(SLOW, **ASK)
    assert (pick.zero_stage, pick.shard_gpus, pick.label) == (3, 8, "ZeRO-3 (HSDP groups of 8), DP 16")
    plain = _pick(SLOW, **ASK, hsdp=0)
    assert plain.shard_gpus == 0 and pick.run_cost_usd < plain.run_cost_usd * 0.9
    line = next(w for w in pick.why if w.startswith("HSDP groups of 8 over ZeRO-3 over all ranks ("))
    assert line.endswith("cheaper") and f"MFU {pick.mfu:.2f} vs {plain.mfu:.2f}" in line
    assert "HSDP groups of 8" in pick.why[0]
    # the group set to 0 is kept, and the cheaper HSDP run is stated beside it
    beside = next(w for w in plain.why if w.startswith("HSDP groups of 8 would be"))
    assert "ZeRO-3 over all ranks is kept as set" in beside and f"{pick.run_cost_usd:,.0f} USD" in beside


def test_hsdp_does_not_beat_zero3_over_a_fast_network():
    """EFA at 3,200 Gbit/s: both sharding schemes' traffic hides behind the step's compute: the same cost, and ZeRO-3
    over all ranks (first in order, half the states per GPU) is kept."""
    pick, hsdp = _pick(P5, **ASK), _pick(P5, **ASK, hsdp=8)
    assert (pick.zero_stage, pick.shard_gpus, hsdp.shard_gpus) == (3, 0, 8)
    assert pick.step.data_parallel_exposed_s == 0.0 and hsdp.step.data_parallel_exposed_s == 0.0
    assert pick.run_cost_usd == pytest.approx(hsdp.run_cost_usd, rel=1e-9)
    assert any(w.startswith("ZeRO-3 over all ranks over HSDP groups of 8 (") and "as cheap" in w for w in pick.why)


def test_hsdp_is_a_link_key_searched_unless_set():
    assert _sc(**ASK).parallelism.shard_gpus is None
    assert read_link({"workload": "Pre-training", "hsdp": "off"})[0]["hsdp"] == 0
    assert (_sc(**ASK, hsdp=8).parallelism.shard_gpus, _sc(**ASK, hsdp=0).parallelism.shard_gpus) == (8, 0)
    assert "&hsdp=8" in link_query({**ASK, "hsdp": 8}) and "hsdp=" not in link_query(ASK)
    assert "&hsdp=off" in link_query({**ASK, "hsdp": 0})
