"""Core speed figures (printed, not asserted). Goals: one scenario against the whole catalog < 5 ms."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan_core.hardware.catalog import load_gpus
from gpuplan_core.memory.components import MemoryRequest
from gpuplan_core.memory.fit import evaluate_catalog
from gpuplan_core.model.presets import get_preset


def timeit(fn, repeat: int = 50) -> tuple[float, float]:
    fn()  # warm caches
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    gpus = load_gpus()
    cases = {
        "memory: Llama-3.1-8B inference, whole catalog": (
            get_preset("Llama-3.1-8B"),
            MemoryRequest(context_tokens=8192, batch=8),
        ),
        "memory: Llama-3.1-70B inference, whole catalog": (
            get_preset("Llama-3.1-70B"),
            MemoryRequest(context_tokens=8192, batch=8),
        ),
        "memory: DeepSeek-V3 inference, whole catalog": (
            get_preset("DeepSeek-V3"),
            MemoryRequest(context_tokens=8192, batch=8),
        ),
        "memory: Llama-3.1-70B training ZeRO-3, whole catalog": (
            get_preset("Llama-3.1-70B"),
            MemoryRequest(mode="training", zero_stage=3, gpus=8, context_tokens=4096),
        ),
    }
    print(f"{'benchmark':<58} {'median ms':>10} {'p95 ms':>8}")
    for name, (m, req) in cases.items():
        med, p95 = timeit(lambda m=m, req=req: evaluate_catalog(m, req, gpus))
        print(f"{name:<58} {med:>10.2f} {p95:>8.2f}")


def bench_plan() -> None:
    from gpuplan_core.plan.answer import answer
    from gpuplan_core.plan.recommend import recommend
    from gpuplan_core.pricing.csv_file import load_pricing
    from gpuplan_core.scenario.scenario import Scenario

    offers = load_pricing().offers
    cases = {
        "plan: Llama-3.1-70B serving, catalog x 3 formats x 98 offers": Scenario(
            preset="Llama-3.1-70B", batch=16, requests_per_day=50_000, ttft_target_s=2, tpot_target_s=0.05
        ),
        "plan: Llama-3.1-8B, no traffic, catalog x 3 formats x 98 offers": Scenario(
            preset="Llama-3.1-8B", batch=8, requests_per_day=None, ttft_target_s=None, tpot_target_s=None
        ),
        "plan: the app's default question (8B, 10,000 req/day, 2 s/0.1 s)": Scenario(),
        "plan: 7B pre-training, 1T tokens, ZeRO-3": Scenario(
            params=7_000_000_000, mode="training", training_tokens=1e12, zero_stage=3, deadline_hours=720
        ),
    }
    for name, sc in cases.items():
        med, p95 = timeit(lambda sc=sc: recommend(sc, offers, explore_formats=True), repeat=20)
        print(f"{name:<58} {med:>10.2f} {p95:>8.2f}")
    # the one answer (what every page headlines): the plan, memory at the pick's layout, the alternatives
    sc = Scenario()
    med, p95 = timeit(lambda: answer(sc, offers), repeat=20)
    print(f"{'answer: the app default question (plan + cost table + checks)':<58} {med:>10.2f} {p95:>8.2f}")


def bench_grid() -> None:
    """Every GPU x weights format x 11 batch sizes x 8 contexts: memory fit + decode/prefill prediction."""
    from gpuplan_core.hardware.catalog import load_gpus
    from gpuplan_core.memory.budget import memory_budget
    from gpuplan_core.memory.components import MemoryRequest
    from gpuplan_core.model.formats import WEIGHT_FORMATS
    from gpuplan_core.model.presets import get_preset
    from gpuplan_core.perf.efficiency import PerfAssumptions
    from gpuplan_core.perf.predict import predict
    from gpuplan_core.perf.roofline import Workload

    m = get_preset("Llama-3.1-8B")
    pa = PerfAssumptions()
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    contexts = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]
    t = time.perf_counter()
    n = 0
    for g in load_gpus():
        for fmt in WEIGHT_FORMATS:
            for b in batches:
                for c in contexts:
                    memory_budget(m, MemoryRequest(weights_format=fmt, batch=b, context_tokens=c))
                    predict(
                        m,
                        g,
                        Workload(weights_format=fmt),
                        b,
                        max(1, c - 128),
                        128,
                        pa=pa,
                        with_compute_bound_batch=False,
                    )
                    n += 1
    dt = time.perf_counter() - t
    print(
        f"{'grid: ' + str(n) + ' points (GPU x format x 11 batches x 8 contexts)':<58} {dt * 1e3:>10.0f} total ms, "
        f"{dt / n * 1e6:,.0f} us per point"
    )


if __name__ == "__main__":
    main()
    bench_plan()
    bench_grid()
