"""What pruning layouts by bounds could save at most (printed, not asserted): of the layouts the search judges for
a question, how many the answer names with their exact numbers.

    python bench/bench_prune.py [--questions 12] [--seed 0]

A layout can be left unjudged only when none of what is shown depends on its exact figures. The answer shows, each
with its exact cost and latencies: the top picks (five, one per offer and price), the cheaper near misses, the
cost-latency Pareto front over every pick (the Overview's chart), the cheapest always-on and per-run alternatives
(from the Cost table's per-offer rows) and the count of configurations; the Cost page shows each offer's best
configuration. This script judges every layout (the exhaustive search) and counts the layouts those outputs name:
no bound, however tight, can leave out one of them, so ``1 - named / judged`` bounds what pruning can save.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_answer import questions  # noqa: E402
from gpuplan_core.plan.answer import answer  # noqa: E402
from gpuplan_core.plan.cost import cost_table  # noqa: E402
from gpuplan_core.plan.recommend import search  # noqa: E402
from gpuplan_core.pricing.csv_file import load_pricing  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    offers = load_pricing().offers
    shares_answer, shares_all = [], []
    print(f"{'question':<42} {'judged':>6} {'answer':>6} {'+rows':>6} {'front':>6} {'s':>6}")
    for sc in questions(args.questions, args.seed):
        t = time.perf_counter()
        layouts = search(sc, offers).layouts
        ans = answer(sc, offers)
        rows = cost_table(sc, offers).offers
        secs = time.perf_counter() - t
        plan = ans.plan
        named = {(p.gpu, p.layout) for p in [*plan.picks, *plan.near_misses, *plan.pareto]}
        named |= {(o.pick.gpu, o.pick.layout) for o in ans.alternatives}
        with_rows = named | {(r.gpu, r.layout) for r in rows}
        judged = len(layouts)
        if judged:
            shares_answer.append(len(named) / judged)
            shares_all.append(len(with_rows) / judged)
        what = f"{sc.model_source.preset} in {sc.request.input_tokens:,} rpd {sc.traffic.requests_per_day:,.0f}"
        print(f"{what:<42} {judged:>6} {len(named):>6} {len(with_rows):>6} {len(plan.pareto):>6} {secs:>6.1f}")
    print(
        f"layouts the answer names with exact numbers: median {statistics.median(shares_answer):.0%} of those judged "
        f"(min {min(shares_answer):.0%}); with the Cost table's per-offer rows: {statistics.median(shares_all):.0%}"
    )


if __name__ == "__main__":
    main()
