"""plan/search.py ``judge_all``: the exhaustive search judges a question's layouts in two threads (the step loop
lets go of the GIL). What it shows is what one thread shows: every pick, near miss, Pareto point, alternative,
rejection and Cost row, and the same step-loop runs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from gpuplan_core.plan import search as layout_search
from gpuplan_core.plan.answer import answer
from gpuplan_core.plan.capacity import simulations_run
from gpuplan_core.scenario.scenario import Scenario

from .test_prune import OFFERS, shown


def _shown(sc: Scenario, pool, monkeypatch) -> tuple[tuple, int]:
    layout_search.forget()
    monkeypatch.setattr(layout_search, "_POOL", pool)
    runs = simulations_run()
    return shown(sc, answer(sc, OFFERS), OFFERS), simulations_run() - runs


@pytest.mark.parametrize(
    "sc",
    [
        Scenario(preset="Llama-3.1-8B", input_tokens=2000, requests_per_day=50_000),
        Scenario(preset="Qwen2.5-7B", input_tokens=500, output_tokens=300, requests_per_day=5_000, ttft_target_s=0.5),
        Scenario(preset="Llama-3.1-70B", input_tokens=1000, requests_per_day=20_000),
    ],
    ids=["8b", "7b-tight", "70b"],
)
def test_layouts_judged_in_threads_show_what_one_thread_shows(sc, monkeypatch):
    one, one_runs = _shown(sc, None, monkeypatch)
    with ThreadPoolExecutor(2) as pool:
        two, two_runs = _shown(sc, pool, monkeypatch)
    assert two == one and two_runs == one_runs > 0
