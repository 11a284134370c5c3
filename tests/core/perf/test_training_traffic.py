"""The training step's traffic (perf/training_traffic.py): the pipeline's sends by hand, 1F1B's exposed and the
interleaved schedule's hidden behind compute, and expert parallel's share of the weights whose gradients the
data-parallel ranks reduce."""

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.arch import params_total, routed_expert_params
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.training_step import StepLayout, TrainingEfficiency, training_step
from gpuplan_core.perf.training_traffic import local_params, pipeline_sends_s

L70 = get_preset("Llama-3.1-70B")
MIXTRAL = get_preset("Mixtral-8x7B-v0.1")
H100 = get_gpu("H100-SXM")
EFF = TrainingEfficiency(network_efficiency=0.5, overlap=0.8)


def test_1f1b_sends_each_micro_batch_forward_and_back_over_the_network_exposed():
    """PP 4 over 4 machines (TP 2): per micro-batch of 1 x 4,096 tokens a stage sends 4,096 x 8,192 x 2 bytes / TP 2
    forward and as much back: 2 x 33.6 MB over 400 Gbit/s per GPU at efficiency 0.5 = 25 GB/s."""
    lay = StepLayout(gpus=32, tp=2, pp=4, micro_batch=1, seq_len=4096, inter_node_gbit_s_per_gpu=400.0)
    volume = 2 * 1 * 4096 * 8192 * 2.0 / 2
    assert volume == 67_108_864
    assert pipeline_sends_s(L70, H100, lay, EFF, 4096.0, compute_s=1.0) == pytest.approx(volume / 25e9, rel=1e-12)


def test_interleaved_sends_are_v_times_as_many_and_hidden_behind_the_chunks_compute():
    lay = StepLayout(gpus=32, tp=2, pp=4, micro_batch=1, seq_len=4096, virtual_stages=2)
    sends = 2 * 2 * 4096 * 8192 * 2.0 / 2 / 25e9  # v = 2: twice 1F1B's, 5.4 ms
    assert pipeline_sends_s(L70, H100, lay, EFF, 4096.0, compute_s=0.0) == pytest.approx(sends, rel=1e-12)
    # overlap_p2p_comm: 0.8 of the micro-batch's compute hides them
    assert pipeline_sends_s(L70, H100, lay, EFF, 4096.0, compute_s=0.005) == pytest.approx(sends - 0.004, rel=1e-9)
    assert pipeline_sends_s(L70, H100, lay, EFF, 4096.0, compute_s=0.1) == 0.0


def test_expert_parallel_holds_one_eighth_of_mixtrals_routed_experts():
    """Mixtral-8x7B: 32 MoE layers x 8 experts x 3 x 4,096 x 14,336 = 45,097,156,608 routed parameters of
    46,702,792,704; at EP 8 a GPU holds the 1,605,636,096 others and 5,637,144,576 routed ones."""
    assert routed_expert_params(MIXTRAL) == 32 * 8 * 3 * 4096 * 14336 == 45_097_156_608
    assert routed_expert_params(MIXTRAL, active_only=True) == 45_097_156_608 // 4  # top-2 of 8
    assert params_total(MIXTRAL) == 46_702_792_704
    at = {ep: local_params(MIXTRAL, StepLayout(gpus=8, ep=ep)) for ep in (1, 8)}
    assert at[1] == 46_702_792_704 and at[8] == 1_605_636_096 + 5_637_144_576
    assert local_params(L70, StepLayout(gpus=8, ep=8)) == params_total(L70)  # a dense model: EP changes nothing


def test_expert_parallel_cuts_the_data_parallel_all_reduce_and_adds_the_all_to_all():
    """ZeRO-1 over 8 GPUs of one machine: the gradients' all-reduce moves 1 / ep of the experts' gradients; the
    tokens' all-to-all (4 per MoE layer) appears with EP."""
    base = dict(gpus=8, zero_stage=1, micro_batch=1, seq_len=4096, global_batch_tokens=8 * 4096)
    no_ep, ep8 = (training_step(MIXTRAL, H100, StepLayout(**base, ep=e), EFF) for e in (1, 8))
    assert ep8.tensor_parallel_s > no_ep.tensor_parallel_s == 0.0
    assert ep8.data_parallel_exposed_s < no_ep.data_parallel_exposed_s
