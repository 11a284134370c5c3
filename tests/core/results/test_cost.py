"""The typed cost report (results/cost.py): its JSON keys follow the job, its summary numbers are its rows'."""

from __future__ import annotations

from gpuplan_core import api, offers_to_csv
from gpuplan_core.pricing.csv_file import load_pricing
from gpuplan_core.results.cost import CostReport
from gpuplan_core.results.plan import InferenceCostRow, Rejected, TrainingCostRow

SERVING = {"preset": "Llama-3.1-8B", "requests_per_day": 20_000, "ttft_target_s": 2.0}
TRAINING = {"params": 7_000_000_000, "mode": "training", "training_tokens": 1e12, "mfu": 0.5, "gpu": "H100"}
TRAINING_KEYS = {"training_flops", "training_tokens", "mfu", "tokens_note"}


def test_serving_report_rows_and_keys():
    r = api.cost_report(SERVING, offers=load_pricing().offers)
    assert isinstance(r, CostReport) and not r.training
    assert r.offers and all(isinstance(o, InferenceCostRow) for o in r.offers)
    assert r.cheapest_monthly_usd == min(o.monthly_always_on_usd for o in r.offers)
    runs = [o.run_cost_usd for o in r.offers]
    assert runs == sorted(runs)  # cheapest run first
    assert r.serverless and all(s.monthly_usd for s in r.serverless)
    d = r.model_dump()
    assert "cheapest_monthly_usd" in d and not TRAINING_KEYS & set(d)
    assert d["gpu_hours"] is None and d["wall_hours"] is None
    assert "pricing_errors" not in d  # the offers were not read from a file here
    assert api.cost_report(SERVING).pricing_errors == []  # the bundled file is clean


def test_training_report_takes_its_hours_from_the_cheapest_run():
    r = api.cost_report(TRAINING)
    assert r.training and all(isinstance(o, TrainingCostRow) for o in r.offers)
    first = min(r.offers, key=lambda o: o.run_cost_usd)
    assert (r.gpu_hours, r.wall_hours) == (first.gpu_hours, first.wall_hours)
    assert r.mfu == 0.5 and r.training_tokens == 1e12 and r.tokens_note is None
    d = r.model_dump()
    assert set(d) >= TRAINING_KEYS and "cheapest_monthly_usd" not in d


def test_a_pricing_file_puts_its_problems_in_the_report(tmp_path):
    f = tmp_path / "p.csv"
    rows = offers_to_csv(load_pricing().offers[:3]).splitlines()
    f.write_text("\n".join([*rows, "bad-row" + "," * (rows[0].count(",")), ""]))
    d = api.cost_report(SERVING, pricing_path=str(f)).model_dump()
    assert d["pricing_errors"] and all(e.startswith("line 5 (offer bad-row), column ") for e in d["pricing_errors"])
    assert len(d["offers"]) >= 1  # the good rows are kept
    assert "pricing_warnings" in d


def test_rejected_leaves_out_what_it_has_none_for():
    assert Rejected(gpu="L4", reason="does not fit").model_dump() == {"gpu": "L4", "reason": "does not fit"}
    full = Rejected(gpu="L4", reason="x", weights_format="bf16", offer_id="o", layout="2 x L4, TP 2").model_dump()
    assert list(full) == ["gpu", "reason", "weights_format", "offer_id", "layout"]
