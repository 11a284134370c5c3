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


def test_a_ranks_decode_steps_wait_for_the_other_ranks_prompt_steps_by_hand():
    """rank_wait: 10 steps so far, 2 with prompt chunks taking 1.0 s together (0.5 s each); 2 decode steps of 0.1 s
    on one of 4 busy ranks: each other rank prompts in 0.2 of the steps, so one of 3 does in 1 - 0.8^3 = 0.488 of
    them, which take 0.5 s: 2 x (0.05 + 0.488 x 0.45). One rank, no prompt step yet, or prompt steps no longer than
    the decode step: unchanged. record_gap splits the steps' tokens so: 20 tokens, 10 at 0.05 s and 10 at 0.5 s."""
    sync = np.array([10.0, 2.0, 1.0])
    t, q, own, waited = step_queues.rank_wait(sync, 4, 0.1, 2)
    assert (q, own, waited) == pytest.approx((1 - 0.8**3, 0.05, 0.5))
    assert t == pytest.approx(2 * (0.05 + 0.488 * 0.45))
    assert step_queues.rank_wait(sync, 1, 0.1, 2)[:2] == (0.1, 0.0)
    assert step_queues.rank_wait(np.array([10.0, 0.0, 0.0]), 4, 0.1, 2)[:2] == (0.1, 0.0)
    assert step_queues.rank_wait(np.array([10.0, 2.0, 0.08]), 4, 0.1, 2)[:2] == (0.1, 0.0)
    gaps, weights = np.empty(1), np.empty(1, np.int64)
    gaps, weights, g_n = step_queues.record_gap(gaps, weights, 0, t, 2, 10, 1.0, q, own, waited)
    assert g_n == 2 and list(gaps[:2]) == pytest.approx([0.05, 0.5]) and list(weights[:2]) == [10, 10]


def _dp_runs() -> dict:
    import dataclasses

    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.perf.simulate import Load, Shape
    from gpuplan_core.scenario.scenario import Scenario

    sc = Scenario(preset="DeepSeek-V3", gpu="H200", gpus=8, weights_format="fp8", input_tokens=800, output_tokens=64)
    r, _ = replica_for(sc, ep=8)
    load = Load(concurrency=4, shape=Shape(lengths="chat", requests=24))
    out = {}
    for ranks in (1, 8):
        run = simulate(dataclasses.replace(r, wl=dataclasses.replace(r.wl, dp_ranks=ranks)), load)
        out[ranks] = {"tpot": float(np.mean(run.tpot_s)), "print": recorded_runs.fingerprint(run)}
    return out


def test_attention_data_parallel_ranks_stretch_decode_steps_the_compiled_and_python_loops_alike():
    """An MoE replica at expert parallel 8 with attention data-parallel, 4 clients of long-tailed lengths: with the
    other 7 ranks' prompt steps (dp_ranks 8) the mean time per token is longer than alone; the plain Python loop
    (no numba) gives the same runs bit for bit."""
    got = _dp_runs()
    assert got[8]["tpot"] > got[1]["tpot"]
    if not NUMBA:
        return
    code = "from tests.core.perf.test_step_loop import _dp_runs; import json; print(json.dumps(_dp_runs()))"
    env = {**os.environ, "GPUPLAN_NO_NUMBA": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    python = json.loads(out.stdout.strip().splitlines()[-1])
    assert python["8"]["print"] == got[8]["print"] and python["1"]["print"] == got[1]["print"]
