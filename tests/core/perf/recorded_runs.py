"""Recorded runs of the step loop: replicas of every engine's scheduler under closed and open loads of every
shape, each run's outputs fingerprinted (a SHA-256 of every array's bytes and the exact scalars), so a change to
the loop's implementation is checked bit for bit against the loop it replaces (tests/core/perf/test_step_loop.py).

    python -m tests.core.perf.recorded_runs   # re-record (only when the loop's behaviour is meant to change)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np

from gpuplan_core.perf.replica import replica_for
from gpuplan_core.perf.serving import Sim
from gpuplan_core.perf.simulate import Load, Run, Shape, simulate
from gpuplan_core.scenario.scenario import Scenario

PATH = Path(__file__).with_name("recorded_runs.json")

# (name, scenario fields, GPU, replica fields replaced)
REPLICAS = (
    ("llama8b-h100-vllm", {"preset": "Llama-3.1-8B", "input_tokens": 2000, "output_tokens": 200}, "H100-SXM", {}),
    ("gemma9b-l40-vllm", {"preset": "Gemma-2-9B", "input_tokens": 4000}, "L40", {}),
    ("qwen72b-h100-vllm", {"preset": "Qwen2.5-72B", "input_tokens": 500}, "H100-SXM", {}),
    ("phi3-a100-vllm-8k", {"preset": "Phi-3-mini-4k", "input_tokens": 8000}, "A100-80GB", {}),
    ("llama8b-h100-sglang", {"preset": "Llama-3.1-8B", "input_tokens": 1000}, "H100-SXM", {"engine": "sglang"}),
    ("mistral7b-h100-trtllm", {"preset": "Mistral-7B-v0.1", "input_tokens": 2000}, "H100-SXM", {"engine": "trtllm"}),
    (
        "llama8b-prefix-calibrated",
        {"preset": "Llama-3.1-8B", "input_tokens": 4000, "prefix_cache_fraction": 0.5},
        "H100-SXM",
        {"request_in_s": 0.01, "decode_time_factor": 1.1},
    ),
    (
        "llama8b-small-cache-vllm",
        {"preset": "Llama-3.1-8B", "input_tokens": 500},
        "H100-SXM",
        {"kv_tokens_total": 9000},
    ),
    (
        "llama8b-small-cache-sglang",
        {"preset": "Llama-3.1-8B", "input_tokens": 500},
        "H100-SXM",
        {"kv_tokens_total": 9000, "engine": "sglang"},
    ),
    (
        "llama8b-small-cache-trtllm",
        {"preset": "Llama-3.1-8B", "input_tokens": 500},
        "H100-SXM",
        {"kv_tokens_total": 9000, "engine": "trtllm"},
    ),
)
SHAPES = (
    Shape(),
    Shape(arrival="bursty", lengths="uniform", length_spread=0.5, seed=3),
    Shape(lengths="chat", seed=7),
)
RATE_SHARES = (0.1, 0.5, 0.9, 1.2)  # open-loop rates, as shares of the all-slots-busy throughput
GIVE_UP_TTFT_S = (0.5, 2.0)  # the same rates, stopped once their p95 first token is certainly late


# Each engine's first-token cost when the runs were recorded (the fitted costs then folded the benchmark clients' in;
# an answer now adds none, perf/clients.py): pinned, so that the runs check the loop and not the calibration.
RECORDED_REQUEST_IN_S = {"vllm": 0.0486, "sglang": 0.0273, "trtllm": 0.0094}


def replica(name: str):
    _, fields, gpu, update = next(c for c in REPLICAS if c[0] == name)
    r, _ = replica_for(Scenario(**fields), gpu)
    engine = update.get("engine", r.engine)
    return dataclasses.replace(r, **{"request_in_s": RECORDED_REQUEST_IN_S[engine], **update})


def loads(name: str):
    """(label, Load, give_up_ttft_s) of every recorded run of one replica."""
    r = replica(name)
    for i, shape in enumerate(SHAPES):
        for clients in sorted({1, 8, max(1, r.max_running)}):
            yield f"closed{clients}-shape{i}", Load(concurrency=clients, shape=shape), None
        top = Sim(r, shape).max_rate()
        for share in RATE_SHARES:
            load = Load(request_rate=share * top, shape=shape)
            yield f"open{share}-shape{i}", load, None
            if i == 0:
                for target in GIVE_UP_TTFT_S:
                    yield f"open{share}-shape{i}-giveup{target}", load, target


def fingerprint(run: Run | None) -> dict:
    """Every output of a run, exactly: arrays by the SHA-256 of their bytes (and their sums, to see how far a
    mismatch is), scalars by their repr."""
    if run is None:
        return {"stopped": True}
    out: dict = {}
    for f in dataclasses.fields(run):
        v = getattr(run, f.name)
        if isinstance(v, np.ndarray):
            out[f.name] = {
                "sha256": hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest(),
                "dtype": str(v.dtype),
                "len": len(v),
                "sum": repr(float(np.nansum(v))),
            }
        else:
            out[f.name] = repr(v)
    return out


def record() -> dict:
    return {
        name: {label: fingerprint(simulate(replica(name), load, give_up_ttft_s=g)) for label, load, g in loads(name)}
        for name, *_ in REPLICAS
    }


if __name__ == "__main__":
    runs = record()
    PATH.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n")
    print(f"{sum(len(v) for v in runs.values())} runs of {len(runs)} replicas -> {PATH}")
