"""The planner's layouts ranked once per machine and network (training_search.SHARE_ACROSS_OFFERS): on random
training scenarios every offer's candidate, the pick, its GPU count and cost are what ranking each offer on its own
gives."""

import random

import pytest

from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.plan import training_search
from gpuplan_core.plan.training_search import training_candidates
from gpuplan_core.pricing.csv_file import load_pricing

OFFERS = load_pricing().offers


def _scenarios(n: int = 30, seed: int = 29):
    rnd = random.Random(seed)
    for _ in range(n):
        q = {
            "workload": rnd.choice(["pretrain", "pretrain", "finetune"]),
            "src": "size",
            "size_b": rnd.choice([1, 3, 7, 13, 34, 70]),
            "gpu": rnd.choice(["H100-SXM", "A100-80GB-SXM", "L40S", "B200", "H200", "L4"]),
            "batch": rnd.choice([1, 4, 8]),
            "zero": rnd.choice(["auto", "auto", 0, 1, 3]),
        }
        if q["workload"] == "pretrain":
            q["tokens_b"] = rnd.choice([10.0, 100.0, 1000.0])
        else:
            q["method"] = rnd.choice(["full", "lora", "qlora"])
        if rnd.random() < 0.3:
            q["deadline_h"] = rnd.choice([24.0, 168.0])
        sc, _ = to_scenario(q)
        yield q, sc.with_(recompute_auto=rnd.random() < 0.5)


def _run(sc):
    cands, rejected, _ = training_candidates(sc.model(), sc, OFFERS)
    rows = [
        (c.offer.offer_id, c.gpus, c.zero_stage, c.tp, c.pp, c.micro_batch, c.recompute, c.run_cost_usd, c.why)
        for c in cands
    ]
    return rows, sorted((r.gpu, r.offer_id or "", r.reason) for r in rejected)


@pytest.mark.parametrize("q,sc", list(_scenarios()), ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_ranking_once_per_machine_picks_what_ranking_every_offer_picks(q, sc, monkeypatch):
    shared = _run(sc)
    monkeypatch.setattr(training_search, "SHARE_ACROSS_OFFERS", False)
    assert _run(sc) == shared
