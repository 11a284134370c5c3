"""Speed of the serving model: one evaluation under load (goal < 50 ms) and one replica's capacity search (goal
< 200 ms), for a few replicas; the floor is one engine-step evaluation measured in the same run. Prints figures;
asserts nothing.

    python bench/bench_serving.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan_core.perf.replica import replica_for
from gpuplan_core.perf.serving import capacity, max_request_rate, serve
from gpuplan_core.scenario.scenario import Scenario

CASES = {
    "Llama-3.1-8B, H100, 2,000/300": {"preset": "Llama-3.1-8B", "gpu": "H100-SXM"},
    "Llama-3.1-70B FP8, 2 x H100, 8,000/300": {
        "preset": "Llama-3.1-70B",
        "gpu": "H100-SXM",
        "tp": 2,
        "gpus": 2,
        "weights_format": "fp8",
        "input_tokens": 8000,
    },
    "Mixtral-8x7B, A100 80GB, 2,000/300": {"preset": "Mixtral-8x7B-v0.1", "gpu": "A100-80GB-SXM", "tp": 2, "gpus": 2},
    "Llama-3.1-8B, L4, 1,000/200": {"preset": "Llama-3.1-8B", "gpu": "L4", "input_tokens": 1000, "output_tokens": 200},
}


def timed(fn, n: int = 7) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> None:
    from gpuplan_core.perf.roofline import decode_phase

    print(f"{'replica':<42} {'step ms':>8} {'serve ms':>9} {'capacity ms':>12} {'capacity req/s':>15}")
    for name, fields in CASES.items():
        r, _ = replica_for(Scenario(**fields))
        step = timed(lambda r=r: decode_phase(r.m, r.gpu, r.wl, 32, r.input_tokens, r.pa), 200)
        rate = 0.7 * max_request_rate(r)
        one = timed(lambda r=r, rate=rate: serve(r, request_rate=rate))
        cap_ms = timed(lambda r=r: capacity(r, 2.0, 0.1))
        print(f"{name:<42} {step:>8.3f} {one:>9.1f} {cap_ms:>12.1f} {capacity(r, 2.0, 0.1):>15.2f}")
    print("goals: one serve evaluation < 50 ms; one capacity search < 200 ms")


if __name__ == "__main__":
    main()
