"""Collective communication inside one server, as the serving engines run it: the tensor-parallel all-reduce and the
expert-parallel all-to-all (the step model's ``comm_s``, roofline.py).

Both read the GPU's peer link the same way (``GPU.peer_link``: NVLink / NVSwitch, Infinity Fabric's mesh, a bridge
for 2 GPUs, else PCIe) and move their bytes at the link's per-direction bandwidth x an efficiency
(``PerfAssumptions.link_efficiency``, ``pcie_efficiency``), after a fixed time per call.
"""

from __future__ import annotations

from ..hardware.catalog import GPU
from .efficiency import PerfAssumptions


def allreduce_time(n: int, message_bytes: float, gpu: GPU, pa: PerfAssumptions) -> float:
    """One all-reduce of ``message_bytes`` over ``n`` GPUs of one server, as the engines run it.

    NVLink (through NVSwitch; Infinity Fabric; a bridge for 2 GPUs): the faster of one-shot (each GPU reads every
    peer's buffer: alpha_1 + (n-1) x message / link) and two-shot / ring (reduce-scatter + all-gather: alpha_2 +
    2 (n-1)/n x message / link), link = per-direction bandwidth x link efficiency. vLLM's custom all-reduce and
    TensorRT-LLM's ONESHOT/TWOSHOT pick by size the same way; NCCL's ring moves the two-shot's bytes.
    PCIe (no NVLink, or more GPUs than a bridge joins): NCCL's ring, alpha_pcie + 2 (n-1)/n x message / PCIe."""
    if n <= 1:
        return 0.0
    kind, link = gpu.peer_link(n)
    ring_bytes = 2 * (n - 1) / n * message_bytes
    if kind == "pcie":
        bw = (link or pa.pcie_link_gb_s * 1e9) * pa.pcie_efficiency
        return pa.allreduce_latency_pcie_s + ring_bytes / bw
    bw = link * pa.link_efficiency
    one_shot = pa.allreduce_latency_s + (n - 1) * message_bytes / bw
    two_shot = pa.allreduce_two_shot_latency_s + ring_bytes / bw
    return min(one_shot, two_shot) + pa.allreduce_sync_s


def all_to_all_time(n: int, message_bytes: float, gpu: GPU, pa: PerfAssumptions) -> float:
    """One all-to-all over ``n`` GPUs of one server in which each GPU holds ``message_bytes`` to scatter evenly
    over all ``n`` (its own share stays): each sends (n-1)/n x message to its peers and receives as much, all at
    once (an expert-parallel dispatch or combine: DeepEP's and the engines' NVLink kernels write straight into the
    peers' buffers, one round, as the one-shot all-reduce reads from them).

    NVLink: allreduce_latency_s + (n-1)/n x message / (link x link efficiency) + allreduce_sync_s (the one-shot
    all-reduce's fixed time per call and its serving engine's wait for the slowest rank, ``PerfAssumptions``).
    PCIe: allreduce_latency_pcie_s + (n-1)/n x message / (PCIe x pcie efficiency). Not fitted on measured
    all-to-alls: the all-reduce's constants, the same link."""
    if n <= 1:
        return 0.0
    kind, link = gpu.peer_link(n)
    sent_bytes = (n - 1) / n * message_bytes
    if kind == "pcie":
        return pa.allreduce_latency_pcie_s + sent_bytes / ((link or pa.pcie_link_gb_s * 1e9) * pa.pcie_efficiency)
    return pa.allreduce_latency_s + sent_bytes / (link * pa.link_efficiency) + pa.allreduce_sync_s
