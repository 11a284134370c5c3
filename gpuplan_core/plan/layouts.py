"""The layout search's two shapes: a layout that holds the memory budget with its replica's judgement, and that
layout under the scenario's traffic (search.py builds them, rent.py prices them)."""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.catalog import GPU
from ..results.plan import layout_label
from .capacity import ReplicaEval


@dataclass(frozen=True)
class Layout:
    """One layout of one GPU type and weights format that holds the complete memory budget, and its replica's
    judgement (capacity.py)."""

    gpu: GPU
    weights_format: str
    tp: int
    pp: int
    kv_sequences: int  # sequences of input + output tokens the KV cache holds
    replica: ReplicaEval

    @property
    def replica_gpus(self) -> int:
        return self.tp * self.pp

    @property
    def label(self) -> str:
        return layout_label(self.gpu.gpu, self.tp, self.pp)


@dataclass(frozen=True)
class Served:
    """A layout under the scenario's traffic: the replicas its peak needs, each replica's capacity and the
    latencies at that load (p95 TTFT, mean TPOT; the static batch's without traffic), the targets they miss and
    how they follow, in words. ``set_replicas``: the replicas the GPU count the user set holds (1: none set)."""

    replicas: int
    capacity_per_s: float
    ttft_s: float
    tpot_s: float
    e2e_s: float
    misses: tuple[str, ...]
    lines: tuple[str, ...]
    set_replicas: int = 1
