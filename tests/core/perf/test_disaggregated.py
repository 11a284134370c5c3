"""A 1P1D split worked by hand (perf/disaggregated.py, plan/disaggregated.py ``size_split``): Llama-3.1-8B in BF16
on H100-SXM, TP 1 in each pool, 2,000 prompt and 200 output tokens, targets p95 TTFT 1 s and TPOT 20 ms.

    KV bytes per token  = 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072
    KV transfer bytes   = 2,000 x 131,072 = 262,144,000
    NVLink              = 450 GB/s per direction x 0.87 (link_efficiency) = 391.5 GB/s  -> 0.6696 ms
    network             = 3,200 Gbit/s / 8 bits / 8 GPUs = 50 GB/s for a TP 1 worker      -> 5.243 ms
    prefill (one step)  >= 2 x 8.03e9 parameters x 2,000 tokens / 989 TFLOP/s = 32.5 ms (the compute floor)
    decode step (b, c)  >= (16.06 GB of weights + b x c x 131,072 bytes) / 3.35 TB/s (the memory floor)
    decode capacity     = b / ((200 - 1) x t(b))                                           (Little's law)
    TTFT                = the prefill worker's p95 first token + the KV transfer
    TPOT                = t(b) at the batch the load keeps running (b = 1 at a trickle)
"""

from __future__ import annotations

import math

import pytest

from gpuplan_core import Scenario, load_pricing
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.request import memory_request
from gpuplan_core.model.arch import params_total
from gpuplan_core.perf.disaggregated import (
    decode_step_s,
    decode_tpot_at,
    decode_worker,
    kv_transfer_bytes,
    kv_transfer_s,
    network_bytes_per_s,
    peer_bytes_per_s,
)
from gpuplan_core.perf.steps import step_model
from gpuplan_core.plan.capacity import replica_of
from gpuplan_core.plan.disaggregated import size_split
from gpuplan_core.plan.fitting import kv_sequences
from gpuplan_core.plan.search import ServingAsk, judge, replica_question

SC = Scenario(
    preset="Llama-3.1-8B",
    gpu="H100-SXM",
    requests_per_day=10_000,
    input_tokens=2000,
    output_tokens=200,
    ttft_target_s=1.0,
    tpot_target_s=0.02,
)
KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # bytes
VAST_H100 = next(o for o in load_pricing().offers if o.offer_id == "vast-h100-1-od")  # per GPU, NVLink, 8 a machine


@pytest.fixture(scope="module")
def one():
    """The TP 1 layout as both pools' worker: its layout, replica question and replica."""
    m, ask, gpu = SC.model(), ServingAsk.of(SC), get_gpu("H100-SXM")
    kv = kv_sequences(m, memory_request(SC, weights_format="bf16").model_copy(update={"tp": 1, "pp": 1}), gpu)
    q = replica_question(m, ask, gpu, "bf16", 1, 1, kv)
    return judge(m, ask, gpu, "bf16", 1, 1, kv), q, replica_of(q)


def test_kv_transfer_bytes_and_time_by_hand():
    m = SC.model()
    assert kv_transfer_bytes(m, "bf16", 2000) == 2000 * KV_PER_TOKEN == 262_144_000
    assert kv_transfer_bytes(m, "fp8", 2000) == 131_072_000  # an FP8 KV cache moves half
    pa = replica_of(replica_question(m, ServingAsk.of(SC), get_gpu("H100-SXM"), "bf16", 1, 1, 100)).pa
    nvlink = peer_bytes_per_s(get_gpu("H100-SXM"), 1, pa)
    assert nvlink == pytest.approx(450e9 * 0.87)
    assert kv_transfer_s(262_144_000, nvlink) == pytest.approx(262_144_000 / 391.5e9) == pytest.approx(0.6696e-3, 1e-4)
    assert network_bytes_per_s(3200, 8, 1) == 50e9  # a NIC per GPU: 400 Gbit/s
    assert network_bytes_per_s(3200, 8, 2) == 100e9  # a TP 2 worker sends over two
    assert kv_transfer_s(262_144_000, 50e9) == pytest.approx(5.24288e-3)
    pcie = peer_bytes_per_s(get_gpu("H100-SXM"), 1, pa, scale_up=False)  # a machine without NVLink: PCIe Gen4
    assert pcie == pytest.approx(32e9 * 0.7)


def test_prefill_and_decode_step_times_against_their_floors(one):
    _, _, r = one
    m = SC.model()
    n = params_total(m)
    prefill = step_model(r.m, r.gpu, r.wl, r.pa, r.engine).prefill_s(1, 2000)
    floor = 2 * n * 2000 / 989e12
    assert floor == pytest.approx(0.03248, rel=1e-3)
    assert floor < prefill < 1.4 * floor
    assert prefill == pytest.approx(0.041342, rel=1e-4)  # the step model's, recorded
    weights = 2 * n
    one_seq = decode_step_s(r, 1)
    assert weights / 3.35e12 < one_seq < 1.6 * weights / 3.35e12
    assert one_seq == pytest.approx(0.0069348, rel=1e-4)
    w = decode_worker(r, 0.02)
    assert w.context_tokens == 2000 + 100
    memory_floor = (weights + w.batch * 2100 * KV_PER_TOKEN) / 3.35e12
    assert memory_floor < w.step_s <= 0.02
    assert decode_step_s(r, w.batch + 1) > 0.02  # the largest batch within the target
    assert w.batch == 136 and w.batch <= r.max_running
    assert w.capacity_per_s == pytest.approx(w.batch / (199 * w.step_s)) == pytest.approx(34.18, rel=1e-3)
    assert decode_worker(r, 0.005) is None  # one sequence alone takes 6.9 ms


def test_a_1p1d_split_at_a_trickle_by_hand(one):
    lay, q, r = one
    w = decode_worker(r, 0.02)
    s = size_split(VAST_H100, lay, lay, q, w, r, 0.1, 730.0)
    assert (s.x, s.y, s.shared) == (1, 1, True)
    assert s.link == "NVLink within one machine"
    assert s.kv_bytes == 262_144_000
    assert s.kv_s == pytest.approx(262_144_000 / (450e9 * 0.87))
    prefill = step_model(r.m, r.gpu, r.wl, r.pa, r.engine).prefill_s(1, 2000)
    # a prefill worker at a trickle: its prompt alone plus the engine's fixed cost (under 2 ms), no queue
    assert prefill < s.prefill_ttft_s < prefill + 0.002
    assert s.ttft_s == s.prefill_ttft_s + s.kv_s == pytest.approx(0.04297, rel=1e-3)
    assert s.tpot_s == pytest.approx(decode_step_s(r, 1))  # b = 0.1 x 199 x 6.9 ms < 1: one sequence
    assert s.monthly_usd == pytest.approx(2 * 1.87 * 730)  # two GPUs rented per GPU
    assert (s.paid_gpus, s.machines) == (2, 1)


def test_the_pools_grow_with_the_peak_and_cross_the_network_past_one_machine(one):
    lay, q, r = one
    w = decode_worker(r, 0.02)
    s = size_split(VAST_H100, lay, lay, q, w, r, 40.0, 730.0)
    assert s.y == math.ceil(40.0 / w.capacity_per_s) == 2
    assert s.x == math.ceil(40.0 / s.prefill_capacity_per_s)
    assert s.tpot_s == pytest.approx(decode_tpot_at(r, w, 20.0)) and s.tpot_s <= 0.02
    assert s.ttft_s <= 1.0
    # 200 req/s needs more than 8 GPUs: vast states no network, so no split there
    assert size_split(VAST_H100, lay, lay, q, w, r, 200.0, 730.0) is None
    p5 = next(o for o in load_pricing().offers if o.offer_id == "aws-p5-48xl-use1-od")  # 8 GPUs, EFA 3,200 Gbit/s
    far = size_split(p5, lay, lay, q, w, r, 200.0, 730.0)
    assert not far.shared and far.link == "EFA 3,200 Gbit/s per machine"
    assert far.kv_s == pytest.approx(262_144_000 / 50e9)
    nodes = math.ceil(far.x / 8) + math.ceil(far.y / 8)  # each pool its own whole nodes
    assert far.monthly_usd == pytest.approx(nodes * p5.price_per_node_hour_usd * 730)
