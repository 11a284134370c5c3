"""How fast the one answer comes (printed, not asserted). Goals (issue 30): a new question p50 <= 150 ms and p95
<= 400 ms in a warm process; a traffic-only change (requests per day, peak factor) or a price-only change <= 30 ms,
with no new run of the serving step loop (the replicas' capacities are remembered: plan/capacity.py).

    python bench/bench_answer.py [--questions 24] [--seed 0]

The machine is shared and its speed varies by 2x from minute to minute, so every figure is also printed as a ratio
to a floor measured in the same run, between the questions: one step-loop run of a fixed replica (Gemma-2-9B on an
L40, 4,000-token prompts, 0.2 requests/s, its step times warm).

A "new question" is a random model, input length and traffic a PM might ask (7 models, 500-8,000 input tokens,
2,000-200,000 requests a day), asked once in a process that has answered others before (imports and catalogs
loaded). Each is then changed in traffic alone (requests per day x 1.2, then the peak factor 3 -> 4) and in prices
alone (every offer 10% cheaper, then 700 hours a month), and those answers are timed and their step-loop runs
counted. A slider's next value is a new question that shares work with the last: the input length 10% longer
(new replicas; the step models' step times are shared, plan/replica_runs.py) and a first-token target of 1 s
instead of 2 s (the same replicas' completed runs are shared).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.capacity import cache_info, simulations_run
from gpuplan_core.plan.search import cache_info as layouts_info
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.scenario.scenario import Scenario

MODELS = (
    "Llama-3.1-8B",
    "Llama-3.1-70B",
    "Mistral-7B-v0.1",
    "Qwen2.5-72B",
    "Gemma-2-9B",
    "Qwen2.5-7B",
    "Phi-3-mini-4k",
)
INPUTS = (500, 1000, 2000, 4000, 8000)
REQUESTS_PER_DAY = (2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000)


def questions(n: int, seed: int) -> list[Scenario]:
    from gpuplan_core.model.presets import get_preset

    models = [get_preset(name).name and name for name in MODELS]
    rng = random.Random(seed)
    return [
        Scenario(
            preset=rng.choice(models), input_tokens=rng.choice(INPUTS), requests_per_day=rng.choice(REQUESTS_PER_DAY)
        )
        for _ in range(n)
    ]


def timed(sc: Scenario, offers) -> tuple[float, int, object]:
    runs = simulations_run()
    t = time.perf_counter()
    ans = answer(sc, offers)
    return (time.perf_counter() - t) * 1e3, simulations_run() - runs, ans


def floor_ms() -> float:
    """One step-loop run of a fixed replica with its step times warm: the unit the figures are divided by."""
    from gpuplan_core.perf.replica import replica_for
    from gpuplan_core.perf.simulate import Load, simulate
    from gpuplan_core.perf.steps import StepTimes

    r, _ = replica_for(Scenario(preset="Gemma-2-9B", input_tokens=4000), "L40")
    times = StepTimes(r)
    simulate(r, Load(request_rate=0.2), times)
    t = time.perf_counter()
    simulate(r, Load(request_rate=0.2), times)
    return (time.perf_counter() - t) * 1e3


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    measure(args.questions, args.seed)


def measure(n_questions: int = 24, seed: int = 0) -> dict[str, list[float]]:
    """Print the figures (the module docstring); return each row's times in ms by name ('new', 'slider',
    'traffic', 'prices')."""
    offers = load_pricing().offers
    cheaper = [
        o.model_copy(
            update={
                "price_per_node_hour_usd": o.price_per_node_hour_usd * 0.9,
                "price_per_gpu_hour_usd": o.price_per_gpu_hour_usd * 0.9,
            }
        )
        for o in offers
    ]
    answer(Scenario(), offers)  # a warm process: imports, catalogs, the default question
    new, traffic, prices, runs_new, runs_changed, floors, sliders, runs_slider = [], [], [], [], 0, [], [], []
    for sc in questions(n_questions, seed):
        floors.append(floor_ms())
        ms, runs, ans = timed(sc, offers)
        new.append(ms)
        runs_new.append(runs)
        for changed in (sc.with_(input_tokens=round(sc.request.input_tokens * 1.1)), sc.with_(ttft_target_s=1.0)):
            ms_s, runs_s, _ = timed(changed, offers)
            sliders.append(ms_s)
            runs_slider.append(runs_s)
        for changed in (sc.with_(requests_per_day=sc.traffic.requests_per_day * 1.2), sc.with_(peak_to_average=4.0)):
            ms, runs, _ = timed(changed, offers)
            traffic.append(ms)
            runs_changed += runs
        for changed, offs in ((sc, cheaper), (sc.with_(hours_per_month=700.0), offers)):
            ms, runs, _ = timed(changed, offs)
            prices.append(ms)
            runs_changed += runs
        pick = ans.pick
        what = f"{sc.model_source.preset:<16} in {sc.request.input_tokens:>5,} rpd {sc.traffic.requests_per_day:>8,.0f}"
        got = f"{pick.gpus} x {pick.gpu} {ans.cost_usd:,.0f} USD/month" if (pick := ans.pick) else "no pick"
        print(f"  {what}: {new[-1]:>8.0f} ms, {runs_new[-1]:>4} step-loop runs -> {got}")
    rows = (
        ("new question (random, warm process)", new),
        ("slider: input +10% or TTFT target 2 -> 1 s", sliders),
        ("traffic-only change (rpd x 1.2, peak 3 -> 4)", traffic),
        ("price-only change (offers -10%, 700 h/month)", prices),
    )
    floor = statistics.median(floors)
    print(f"floor (one step-loop run, same process): p50 {floor:.1f} ms over {len(floors)} measurements")
    print(f"{'answer time':<46} {'p50 ms':>9} {'p95 ms':>9} {'p50/floor':>10} {'p95/floor':>10}")
    for name, xs in rows:
        p50, p95 = statistics.median(xs), pct(xs, 0.95)
        print(f"{name:<46} {p50:>9.1f} {p95:>9.1f} {p50 / floor:>10.1f} {p95 / floor:>10.1f}")
    changes = len(traffic) + len(prices)
    print(
        f"step-loop runs: {statistics.median(runs_new):.0f} per new question (median); {runs_changed} for all "
        f"{changes} traffic- and price-only changes (goal: 0); {statistics.median(runs_slider):.0f} per slider step "
        "(median)"
    )
    print(f"layout cache (search._judged, in front of the replica cache): {layouts_info()}")
    print(f"replica cache: {cache_info()}")
    return {"new": new, "slider": sliders, "traffic": traffic, "prices": prices}


if __name__ == "__main__":
    main()
