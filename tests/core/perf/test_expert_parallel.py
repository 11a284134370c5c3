"""Expert parallel serving (perf/expert_parallel.py, perf/comm.py): one rank's decode step of Mixtral-8x7B on H100
by hand at EP 2 and EP 8 against tensor parallel, the all-to-all's bytes and time, and a dense model untouched."""

import math

import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.comm import all_to_all_time
from gpuplan_core.perf.efficiency import PerfAssumptions
from gpuplan_core.perf.expert_parallel import all_to_all_bytes, degree
from gpuplan_core.perf.roofline import Part, StepCost, Workload

PA = PerfAssumptions()
MIX, H100 = get_preset("Mixtral-8x7B-v0.1"), get_gpu("H100")
# Mixtral-8x7B: 32 layers, all MoE, hidden 4,096, 8 experts (k = 2) of 3 x 4,096 x 14,336 parameters, 32 heads of 128
# with 8 KV heads, vocabulary 32,000 (untied), 46,702,792,704 parameters of which 45,097,156,608 routed experts,
# 12,748,853,248 matmul parameters a token uses (LM head included). H100 SXM: 3.35 TB/s, 989 TFLOP/s BF16, NVLink
# 450 GB/s per direction.
ONE_EXPERT = 3 * 4096 * 14336
TOTAL, ROUTED, ACTIVE, LM_HEAD = 46_702_792_704, 45_097_156_608, 12_748_853_248, 32_000 * 4096
BW, PEAK, LINK = 3.35e12, 989e12, 450e9 * 0.87
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # K and V, 32 layers, 8 KV heads of 128, BF16: 131,072 bytes


def _mbu(x: float, top: float) -> float:
    """The MBU curve at x bytes per layer (PerfAssumptions: half at 30 MB per layer)."""
    return top * x / (x + 30e6)


def _mfu(tokens: float) -> float:
    return 0.75 * tokens / (tokens + 64)


def _decode_by_hand(tp: int, ep: int, seqs: int, context: int = 1000) -> float:
    """One decode step of ``seqs`` sequences at ``context`` on one GPU of the layout, memory and compute per op:

    routed   = seqs x ep tokens reach the experts (every rank runs the same mix)
    touched  = 8 x (1 - (1 - 2/8)^routed) distinct experts per layer, a GPU holding 1 / (ep or tp) of them
    weights  = (dense part + touched experts) / tp, the dense part whole at EP; 32,000 x 4,096 embedding rows
               replaced by the tokens' own rows
    comm     EP: 2 x 32 all-to-alls of seqs x 2 x 4,096 x 2 bytes, (ep-1)/ep of them at 450 GB/s x 0.87, 6 us + 16 us
             TP: 2 x 32 all-reduces of seqs x 4,096 x 2 bytes, the faster of one-shot and two-shot, + 16 us
    step     = max(dense matmuls) + max(experts) + routing floor 0.2 us x 8 / ep x 32 + max(attention) + comm + 1 ms
    """
    routed = seqs * ep
    touched = 8 * (1 - (1 - 2 / 8) ** routed)
    dense_bytes = (TOTAL - ROUTED - 32_000 * 4096 + min(seqs, 32_000) * 4096) * 2
    ex_bytes = touched * ONE_EXPERT * 32 * 2 / (ep * tp)
    w_bytes = dense_bytes / tp + ex_bytes
    acts = 2 * seqs * 4096 * 2 * 32
    kv = KV_PER_TOKEN / tp * seqs * (context + 1)
    w_mbu, kv_mbu = _mbu(w_bytes / 32, 0.8), _mbu(kv / 32, 0.9)
    ex_flops = 2 * 2 * ONE_EXPERT * 32 * seqs / tp  # the rank's share (EP), or 1 / tp of every expert (TP)
    mm_flops = (2 * (ACTIVE - LM_HEAD) * seqs + 2 * LM_HEAD * seqs) / tp
    ex_tokens = routed * 2 / touched
    mm = max((mm_flops - ex_flops) / (PEAK * _mfu(seqs)), (w_bytes - ex_bytes + acts) / (BW * w_mbu))
    ex = max(ex_flops / (PEAK * _mfu(ex_tokens)), ex_bytes / (BW * w_mbu)) + 0.2e-6 * 8 * 32 / ep
    attn_flops = 2 * 32 * 2 * 128 * 32 * (context + 1) * seqs / tp
    at = max(attn_flops / (PEAK * _mfu(seqs)), kv / (BW * kv_mbu))
    if ep > 1:
        comm = 2 * 32 * (6e-6 + (ep - 1) / ep * seqs * 2 * 4096 * 2 / LINK + 16e-6)
    else:
        msg = seqs * 4096 * 2
        comm = 2 * 32 * (min(6e-6 + (tp - 1) * msg / LINK, 12e-6 + 2 * (tp - 1) / tp * msg / LINK) + 16e-6)
    return mm + ex + at + comm + 1e-3


def _step(wl: Workload, seqs: int):
    return StepCost(MIX, H100, wl, PA).phase("decode", [Part(seqs, 1000, 1, seqs)], PA.decode_step_overhead_s)


@pytest.mark.parametrize(
    ("tp", "ep", "seqs", "ms"),
    [
        (1, 8, 8, 8.7668),  # a rank of EP 8 with 8 of the replica's 64 sequences
        (1, 2, 8, 21.230),  # a rank of EP 2 with 8 of 16
        (8, 1, 64, 8.3759),  # TP 8 with all 64: the dense part split 8 ways, two all-reduces per layer
        (2, 1, 16, 20.717),  # TP 2 with 16
    ],
)
def test_a_decode_step_at_ep_and_tp_is_the_hand_formula(tp, ep, seqs, ms):
    """The step model's decode step equals the hand formula (``_decode_by_hand``) at EP 8, EP 2 and the TP layouts
    of as many GPUs serving as many sequences: EP 8's 64 sequences take 8.77 ms a step, TP 8's 8.38 ms (EP reads
    Mixtral's 3.2 GB dense part whole on every GPU; TP reads an eighth of it)."""
    p = _step(Workload(tp=tp, ep=ep), seqs)
    assert p.time_s == pytest.approx(_decode_by_hand(tp, ep, seqs), rel=1e-9)
    assert p.time_s * 1e3 == pytest.approx(ms, rel=1e-4)


def test_an_ep_rank_reads_the_dense_part_whole_and_its_share_of_the_touched_experts():
    """EP 8, 8 sequences a rank: 64 tokens touch 8 x (1 - 0.75^64) experts per layer, 1 / 8 of them on this GPU;
    the dense part (1,605,636,096 parameters less the 131 M-row embedding table, plus 8 gathered rows) whole; the
    KV cache holds the rank's 8 sequences whole (8 KV heads, not split): 131,072 x 8 x 1,001 bytes."""
    p = _step(Workload(ep=8), 8)
    touched = 8 * (1 - 0.75**64)
    dense = (TOTAL - ROUTED - 32_000 * 4096 + 8 * 4096) * 2
    assert p.weight_bytes == pytest.approx(dense + touched * ONE_EXPERT * 32 * 2 / 8, rel=1e-12)
    assert p.kv_bytes == 131_072 * 8 * 1001 == 1_049_624_576
    assert p.comm_time_s == pytest.approx(2 * 32 * (6e-6 + 7 / 8 * 131_072 / LINK + 16e-6), rel=1e-12)


def test_the_all_to_all_moves_tokens_x_k_x_hidden_x_bytes_of_which_ep_minus_1_over_ep_leave():
    """64 tokens of Mixtral (k = 2, hidden 4,096) in BF16: 64 x 2 x 4,096 x 2 = 1,048,576 bytes held per rank; at EP 8
    7/8 of them cross NVLink (917,504 bytes: 6 us + 917,504 / (450 GB/s x 0.87) + 16 us = 24.34 us); over PCIe on
    L40S (no NVLink; 32 GB/s x 0.7) at EP 2, half: 40 us + 524,288 / 22.4 GB/s = 63.41 us; one GPU moves nothing."""
    msg = all_to_all_bytes(MIX, 64, 2)
    assert msg == 64 * 2 * 4096 * 2 == 1_048_576
    assert all_to_all_time(8, msg, H100, PA) == pytest.approx(6e-6 + 917_504 / LINK + 16e-6, rel=1e-12)
    assert all_to_all_time(8, msg, H100, PA) * 1e6 == pytest.approx(24.343, rel=1e-4)
    l40s = get_gpu("L40S")
    assert all_to_all_time(2, msg, l40s, PA) == pytest.approx(40e-6 + 524_288 / (32e9 * 0.7), rel=1e-12)
    assert all_to_all_time(1, msg, H100, PA) == 0.0


def test_ep_is_an_moe_model_s_only_and_needs_attention_data_parallel():
    """A dense model's workload at ep 8 is timed as ep 1 (the same step, float for float); an MoE model's EP runs
    at tp = pp = 1 over whole experts (Mixtral's 8 experts: not 16 GPUs, not TP 2 beside EP 4)."""
    llama, wl = get_preset("Llama-3.1-8B"), Workload(ep=8)
    assert degree(llama, wl) == 1 and degree(MIX, wl) == 8
    one = StepCost(llama, H100, Workload(), PA).seconds([(8, 1000, 1, 8)], 1e-3)
    assert StepCost(llama, H100, wl, PA).seconds([(8, 1000, 1, 8)], 1e-3) == one
    with pytest.raises(ValueError, match="attention data-parallel"):
        degree(MIX, Workload(tp=2, ep=4))
    with pytest.raises(ValueError, match="does not divide"):
        degree(MIX, Workload(ep=16))


def test_ep_prefill_of_one_prompt_runs_the_whole_dense_part_on_one_gpu():
    """A 4,096-token prompt on a rank of EP 8 is compute-bound on the dense part whole (2 x 1.6 G x 4,096 FLOPs on
    one GPU) where TP 8 splits it 8 ways: the rank's prefill is the slower, 4.8x here in BF16 (160.6 ms vs 33.6 ms),
    which is why EP is picked only where its throughput pays for its first token."""
    ep = StepCost(MIX, H100, Workload(ep=8), PA).seconds([(1, 0, 4096, 1)], PA.prefill_overhead_s)
    tp = StepCost(MIX, H100, Workload(tp=8), PA).seconds([(1, 0, 4096, 1)], PA.prefill_overhead_s)
    assert ep * 1e3 == pytest.approx(160.59, rel=1e-4) and tp * 1e3 == pytest.approx(33.616, rel=1e-4)
    assert math.isclose(ep / tp, 4.777, rel_tol=1e-3)
