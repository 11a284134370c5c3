"""Layouts left unjudged by bounds (plan/prune.py), printed, not asserted: per question the step-loop runs and CPU
time of the exhaustive search and of the pruned one in the same process, whether everything shown is the same, the
bounds checked on every judged layout, and what pruning could save at most.

    python bench/bench_prune.py [--questions 12] [--seed 0]

Each question is answered twice from nothing (``search.forget``): every layout judged (``exhaustive``), then the
search as shipped. What is compared: the pick (offer, layout, GPU count, cost), the top picks, near misses and the
Pareto front with their figures, the alternatives, the count of candidates, the rejections, the message and the
Cost page's rows. The bounds prune.py reads are checked on every layout the exhaustive search judged: capacity
within [the search's bracket before its bisection, the all-slots-busy rate], every load point's p95 first token
and mean end to end at or over one request alone's. ``named`` is the share of judged layouts the answer and the
Cost rows name (no bound, however tight, can leave one of those out): ``1 - named`` bounds what pruning can save.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_answer import questions  # noqa: E402
from gpuplan_core.plan import cost, recommend, rent  # noqa: E402
from gpuplan_core.plan import search as layout_search  # noqa: E402
from gpuplan_core.plan.answer import answer  # noqa: E402
from gpuplan_core.plan.capacity import simulations_run  # noqa: E402
from gpuplan_core.pricing.csv_file import load_pricing  # noqa: E402
from gpuplan_core.scenario.scenario import Scenario  # noqa: E402

SEARCH = rent.inference_candidates


def shown(sc: Scenario, ans, offers) -> tuple:
    p = ans.plan
    return (
        ans.pick and (ans.pick.offer_id, ans.pick.layout, ans.pick.gpus, ans.cost_usd),
        [x.model_dump() for x in (*p.picks, *p.near_misses, *p.pareto)],
        [(o.role, o.pick.model_dump(), o.differs) for o in ans.alternatives],
        p.candidates,
        p.rejected,
        p.message,
        [r.model_dump() for r in cost.cost_table(sc, offers).offers],
    )


def answered(sc: Scenario, offers, exhaustive: bool) -> tuple[tuple, int, float]:
    """Everything shown, the step-loop runs and the CPU seconds of one answer from nothing."""

    def search(*args, **kw):
        return SEARCH(*args, **kw, exhaustive=exhaustive)

    layout_search.forget()
    recommend.inference_candidates = cost.inference_candidates = search
    try:
        runs, t = simulations_run(), time.process_time()
        ans = answer(sc, offers)
        runs, secs = simulations_run() - runs, time.process_time() - t
        return shown(sc, ans, offers), runs, secs
    finally:
        recommend.inference_candidates = cost.inference_candidates = SEARCH


def bounds_hold(sc: Scenario, offers) -> tuple[int, int]:
    """Layouts judged, and those on which a bound prune.py reads fails (0 expected)."""
    found = SEARCH(
        sc.model(),
        sc,
        recommend.offers_for(offers, sc.job, sc.pricing, sc.parallelism),
        [sc.formats.weights_format],
        exhaustive=True,
    )
    ask, bad = layout_search.ServingAsk.of(sc), 0
    for lay in found.layouts:
        b = layout_search.bound(sc.model(), ask, lay.gpu, lay.weights_format, lay.tp, lay.pp, lay.kv_sequences, lay.ep)
        r = lay.replica
        ok = b.least_capacity_per_s <= r.capacity_per_s <= b.max_rate_per_s
        ok &= (b.least_capacity_per_s > 0) == (r.capacity_per_s > 0)
        ok &= all(p.ttft_p95_s >= b.floor_ttft_s and p.e2e_mean_s >= b.floor_e2e_s for p in r.points)
        bad += not ok
    return len(found.layouts), bad


def named_share(sc: Scenario, offers) -> float:
    layouts = recommend.search(sc, offers).layouts
    ans = answer(sc, offers)
    plan = ans.plan
    named = {(p.gpu, p.layout) for p in [*plan.picks, *plan.near_misses, *plan.pareto]}
    named |= {(o.pick.gpu, o.pick.layout) for o in ans.alternatives}
    named |= {(r.gpu, r.layout) for r in cost.cost_table(sc, offers).offers}
    return len(named) / max(1, len(layouts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    offers = load_pricing().offers
    answer(Scenario(), offers)  # a warm process
    runs_ratio, cpu_ratio, same, bad_layouts, judged_layouts, named = [], [], 0, 0, 0, []
    print(f"{'question':<44} {'runs':>11} {'CPU s':>11} {'same':>5} {'named':>6} {'bounds':>7}")
    qs = questions(args.questions, args.seed)
    for sc in qs:
        full, full_runs, full_s = answered(sc, offers, True)
        pruned, pruned_runs, pruned_s = answered(sc, offers, False)
        judged, bad = bounds_hold(sc, offers)
        share = named_share(sc, offers)
        same += pruned == full
        bad_layouts, judged_layouts = bad_layouts + bad, judged_layouts + judged
        runs_ratio.append(pruned_runs / max(1, full_runs))
        cpu_ratio.append(pruned_s / max(1e-9, full_s))
        named.append(share)
        what = f"{sc.model_source.preset} in {sc.request.input_tokens:,} rpd {sc.traffic.requests_per_day:,.0f}"
        print(
            f"{what:<44} {full_runs:>4} -> {pruned_runs:>4} {full_s:>4.1f} -> {pruned_s:>4.1f} "
            f"{'yes' if pruned == full else 'NO':>5} {share:>6.0%} {judged - bad:>3}/{judged:<3}"
        )
    print(
        f"the same answer, Cost rows and counts on {same} of {len(qs)} questions; bounds held on "
        f"{judged_layouts - bad_layouts} of {judged_layouts} judged layouts"
    )
    print(
        f"step-loop runs pruned / exhaustive: median {statistics.median(runs_ratio):.2f} (min {min(runs_ratio):.2f});"
        f" CPU time: median {statistics.median(cpu_ratio):.2f}; layouts the answer and Cost rows name: median "
        f"{statistics.median(named):.0%} of those judged (the most pruning could leave out: the rest)"
    )


if __name__ == "__main__":
    main()
