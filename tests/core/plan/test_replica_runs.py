"""Runs of the step loop shared by the questions of one replica (gpuplan_core/plan/replica_runs.py): a run kept by
exactly what it reads, answered as a fresh ``Sim`` would, and step times kept per step model (engine included)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import max_batch
from gpuplan_core.model.presets import get_preset
from gpuplan_core.perf.replica import Replica, engine_limits
from gpuplan_core.perf.roofline import Workload
from gpuplan_core.perf.serving import Shape, Sim
from gpuplan_core.plan import replica_runs
from gpuplan_core.plan.replica_runs import SharedSim, forget, replica_key

L8 = get_preset("Llama-3.1-8B")
H100 = get_gpu("H100-SXM")


def _replica(engine: str = "vllm", i: int = 1000, o: int = 200) -> Replica:
    kv = max_batch(L8, MemoryRequest(context_tokens=i + o, batch=1), H100)
    return Replica(L8, H100, Workload(), i, o, kv, engine_limits(H100), engine=engine)


@pytest.fixture(autouse=True)
def _nothing_kept():
    forget()
    yield
    forget()


def test_the_key_holds_what_a_run_reads_and_not_the_targets():
    r = _replica()
    assert replica_key(r, Shape()) == replica_key(_replica(), Shape())
    assert replica_key(r, Shape()) != replica_key(_replica(engine="sglang"), Shape())
    assert replica_key(r, Shape()) != replica_key(_replica(i=1001), Shape())
    assert replica_key(r, Shape()) != replica_key(replace(r, kv_sequences=r.kv_sequences - 1), Shape())


def test_a_shared_run_is_the_fresh_run_and_is_made_once():
    r = _replica()
    fresh = Sim(r).run(request_rate=2.0)
    first, second = SharedSim(r), SharedSim(r)
    a, b = first.run(request_rate=2.0), second.run(request_rate=2.0)
    assert (first.made, second.made) == (1, 0)
    assert b is a  # the second sim reads the first one's run
    np.testing.assert_array_equal(a.ttft_s, fresh.ttft_s)
    assert second.open_rates() == [2.0]  # a sim lists only the runs it asked for
    assert SharedSim(r).open_rates() == []


def test_a_kept_run_misses_a_target_exactly_as_a_fresh_stopped_run_does():
    r = _replica()
    rate = Sim(r).max_rate() * 0.9
    kept = SharedSim(r).run(request_rate=rate)
    p95 = float(np.percentile(kept.ttft_s, 95))
    answers = [SharedSim(r).misses_ttft(rate, t) for t in (p95 * 0.5, p95 * 2)]
    assert answers == [Sim(r).misses_ttft(rate, t) for t in (p95 * 0.5, p95 * 2)] == [True, False]


def test_step_times_are_kept_per_engine():
    vllm, sglang = _replica(), _replica(engine="sglang")
    assert replica_runs._TIMES.get(vllm) is replica_runs._TIMES.get(_replica())
    assert replica_runs._TIMES.get(sglang) is not replica_runs._TIMES.get(vllm)
