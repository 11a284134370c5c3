"""The compiled step loop (gpuplan_core/perf/step_loop.py) against the Python loop it replaced: 290 runs recorded
from that loop (tests/core/perf/recorded_runs.py: 10 replicas of vLLM's, SGLang's and TensorRT-LLM's schedulers,
small caches that preempt, a prefix cache, a calibrated deployment's costs; closed and open loads of three shapes;
runs stopped early against a first-token target) give the same outputs bit for bit; and its parts by hand."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuplan_core.common.jit import NUMBA, array_list, float_list, int_dict
from gpuplan_core.perf import step_loop, step_queues
from gpuplan_core.perf.simulate import simulate
from tests.core.perf import recorded_runs

ROOT = Path(__file__).resolve().parents[3]


def _mismatches(names) -> list[str]:
    ref = json.loads(recorded_runs.PATH.read_text())
    bad = []
    for name in names:
        for label, load, give_up in recorded_runs.loads(name):
            got = recorded_runs.fingerprint(simulate(recorded_runs.replica(name), load, give_up_ttft_s=give_up))
            want = ref[name][label]
            if got != want:
                bad.append(f"{name} {label}: " + ", ".join(k for k in want if got.get(k) != want[k]))
    return bad


def test_every_recorded_run_is_reproduced_bit_for_bit():
    names = [c[0] for c in recorded_runs.REPLICAS]
    ref = json.loads(recorded_runs.PATH.read_text())
    assert sum(len(ref[n]) for n in names) == 290
    assert sum(r.get("stopped", False) is True for n in names for r in ref[n].values()) == 23  # stopped early
    assert any(int(r.get("preemptions", "0")) > 1000 for r in ref["llama8b-small-cache-vllm"].values())
    assert _mismatches(names) == []


@pytest.mark.skipif(not NUMBA, reason="the compiled path is the one under test; this one checks the other")
def test_the_plain_python_path_gives_the_same_runs():
    """Where numba is missing the same loop runs as Python: one replica's 29 recorded runs, SGLang's (its token
    ratio) and a small cache's (preemptions), in a process without numba."""
    code = (
        "from tests.core.perf.test_step_loop import _mismatches; "
        "from gpuplan_core.common.jit import NUMBA; assert not NUMBA; "
        "print(_mismatches(['llama8b-h100-sglang', 'llama8b-small-cache-vllm']))"
    )
    env = {**os.environ, "GPUPLAN_NO_NUMBA": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_the_heaps_pop_in_the_order_of_their_key_then_id():
    keys, ids = np.empty(8, np.int64), np.empty(8, np.int64)
    pushed = [(5, 2), (3, 7), (5, 1), (3, 0), (9, 4), (1, 3)]
    for size, (key, k) in enumerate(pushed):
        step_queues.push(keys, ids, size, key, k)
    popped = [int(step_queues.pop(keys, ids, size)) for size in range(len(pushed), 0, -1)]
    assert popped == [k for _, k in sorted(pushed)] == [3, 0, 7, 1, 2, 4]


class _Asked:
    """A step model that answers a step with prompt chunks by the sum of its new tokens, and counts the asks."""

    def __init__(self):
        self.asked = 0

    def mixed_at(self, key):
        self.asked += 1
        return float(sum(new for _, new, _ in key[2]))


def test_a_step_with_prompt_chunks_is_asked_of_the_step_model_once_and_then_read_from_the_table():
    """A replica without a compiled step model (step_time.EMPTY) asks the Python one, once per step."""
    asked = step_loop.ASKING[-1] = _Asked()
    try:
        index, keys, times = int_dict(), array_list(), float_list()
        spec = np.array([0, 100, 1, 5, 200, 0, 0, 0, 0], np.int64)
        assert step_loop._mixed_s(-1, index, keys, times, 3, 1000.0, spec, 2) == 300.0
        assert step_loop._mixed_s(-1, index, keys, times, 3, 1000.0, spec, 2) == 300.0
        assert asked.asked == 1 and len(times) == 1
        assert step_loop._mixed_s(-1, index, keys, times, 3, 1000.0, spec, 1) == 100.0  # one chunk: another step
        # no decodes: the context is not read (the key's context point is 0), so any mean context is the same step
        assert step_loop._mixed_s(-1, index, keys, times, 0, 5.0, spec, 1) == 100.0
        assert step_loop._mixed_s(-1, index, keys, times, 0, 900.0, spec, 1) == 100.0
        assert asked.asked == 3 and len(times) == 3
    finally:
        del step_loop.ASKING[-1]
