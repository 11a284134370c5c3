"""Runs of the step loop shared by every question of one replica: the layout search's capacity searches
(capacity.py), the Performance page's curve and a load the user asks for (api/perf.py) simulate one replica once.

A run reads the replica (model, GPU, workload, lengths, KV cache, engine and its limits) and the load's shape, not
the targets, so a completed run is kept by those (``replica_key``) and read by every ``SharedSim`` of them. Each
``SharedSim`` still sees only the runs it asked for (its ``open_rates`` are its own, as a fresh ``Sim``'s would
be), and a run stopped early against a first-token target is told apart exactly: a kept run of that rate misses
the target iff as many of its measured first-token times are over it as make its p95 certainly late
(``simulate.late_enough_to_miss``: the count at which the stopped run stopped), and a stopped run is kept as
the rate and target it stopped against. Step times are shared by every
replica of one step model (``StepModel`` reads the model, the GPU, the workload, the efficiency assumptions and the
engine, whose measured kernels time the steps where they exist).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import fields
from functools import lru_cache

import numpy as np

from ..perf.replica import Replica
from ..perf.serving import Sim
from ..perf.simulate import Shape, late_enough_to_miss
from ..perf.steps import StepTimes
from ..perf.steps import forget as step_models_forget

RUNS_KEPT = 2048  # replicas and shapes whose runs are kept
TIMES_KEPT = 512  # step models whose step times are kept


def replica_key(r: Replica, shape: Shape) -> tuple:
    """Everything a run of the step loop reads: the replica (its workload as a tuple: the dataclass is not
    hashable) and the shape."""
    wl = tuple(getattr(r.wl, f.name) for f in fields(r.wl))
    return (
        r.m,
        r.gpu,
        wl,
        r.input_tokens,
        r.output_tokens,
        r.kv_sequences,
        r.limits,
        r.pa,
        r.engine,
        r.kv_tokens_total,
        shape,
    )


@lru_cache(maxsize=RUNS_KEPT)
def _store(key: tuple) -> dict:
    """The completed runs of one replica and shape (``replica_key``), whatever the targets."""
    return {}


class _Times:
    """The step times of each step model, the most recent ``size`` kept."""

    def __init__(self, size: int):
        self.size, self.lock, self.times = size, threading.Lock(), OrderedDict()

    def get(self, r: Replica) -> StepTimes:
        key = (r.m, r.gpu, tuple(getattr(r.wl, f.name) for f in fields(r.wl)), r.pa, r.engine)  # StepTimes' reads
        with self.lock:
            t = self.times.get(key)
            if t is None:
                t = self.times[key] = StepTimes(r)
                if len(self.times) > self.size:
                    self.times.popitem(last=False)
            self.times.move_to_end(key)
            return t


_TIMES = _Times(TIMES_KEPT)


class SharedSim(Sim):
    """A ``Sim`` that reads and keeps its completed runs in the replica's shared store and its step times in the
    step model's; what it answers is what a fresh ``Sim`` would (the module docstring). ``made``: the runs of the
    step loop it made itself."""

    def __init__(self, r: Replica, shape: Shape | None = None):
        super().__init__(r, shape)
        self.store = _store(replica_key(r, self.shape))
        self.times = _TIMES.get(r)
        self.made = 0

    def _kept(self, key: tuple) -> bool:
        """Whether the store holds this run (and it is now this sim's too)."""
        if key in self._runs:
            return True
        run = self.store.get(key)
        if run is None:
            return False
        self._runs[key] = run
        return True

    def run(self, concurrency=None, request_rate=None):
        key = (concurrency, request_rate)
        if not self._kept(key):
            self.made += 1
            self.store[key] = super().run(concurrency, request_rate)
        return self._runs[key]

    def misses_ttft(self, request_rate, ttft_p95_target_s):
        key = (None, request_rate)
        if ttft_p95_target_s is None or key in self._runs or key in self._missed:
            return super().misses_ttft(request_rate, ttft_p95_target_s)
        run = self.store.get(key)
        if run is not None:  # the stopped run would have stopped iff this many of its first tokens are late
            if np.count_nonzero(run.ttft_s > ttft_p95_target_s) >= late_enough_to_miss(len(run.ttft_s)):
                self._missed.add(key)
                return True
            self._runs[key] = run
            return False
        late = ("late", request_rate, ttft_p95_target_s)  # a run of this rate stopped against this target
        if late in self.store:
            self._missed.add(key)
            return True
        self.made += 1
        missed = super().misses_ttft(request_rate, ttft_p95_target_s)
        if missed:
            self.store[late] = True
        else:
            self.store[key] = self._runs[key]
        return missed


def forget() -> None:
    """Forget every kept run, step time and step model."""
    _store.cache_clear()
    step_models_forget()
    with _TIMES.lock:
        _TIMES.times.clear()
