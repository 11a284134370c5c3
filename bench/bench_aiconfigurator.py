"""gpuplan against NVIDIA aiconfigurator on the published serving runs both answer (issue 28). Prints figures;
asserts nothing.

    pip install aiconfigurator-core==0.12.0      # bench only: never in requirements (82 MB of perf tables)
    python bench/bench_aiconfigurator.py          # per model class, load and source
    python bench/bench_aiconfigurator.py --rows   # and every row both answer
    python bench/bench_aiconfigurator.py --write  # and store its answers in data/aiconfigurator_predictions.csv
    python bench/bench_aiconfigurator.py --stored # the same figures from that file, without the package

aiconfigurator answers each run as bench/aic_estimator.py says (its agg estimator; the run's load as a batch).
gpuplan's prediction of a run is the stored one (data/serving_calibration.csv, through
``serving_calibration.serving_table``) and, beside it, the left-out-source one (data/serving_loso.csv). Runs
aiconfigurator cannot answer (GPU, engine or model not in it, or its database lacking a kernel) are counted by
reason. The error is the median absolute percentage error on exactly the rows both answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.aic_estimator import Aic
from gpuplan_core.perf import serving_calibration as cal
from gpuplan_core.perf import serving_errors, serving_loso

STORED = Path(__file__).resolve().parents[1] / "data" / "aiconfigurator_predictions.csv"
STORED_COLUMNS = ("id", "predicted", "batch", "load", "database", "kv_full", "why")


def write_answers(answers: dict[str, dict | str], path: Path = STORED) -> None:
    """aiconfigurator's answers, one row per published run (``why`` where it has none)."""
    records = [{"id": i, **a, "why": ""} if isinstance(a, dict) else {"id": i, "why": a} for i, a in answers.items()]
    pd.DataFrame(records, columns=STORED_COLUMNS).to_csv(path, index=False, float_format="%.6g")


def stored_answers(path: Path = STORED) -> dict[str, dict | str]:
    """The answers ``--write`` stored (no aiconfigurator needed to read them)."""
    out = {}
    for r in pd.read_csv(path, keep_default_na=False, dtype=str).to_dict("records"):
        out[r["id"]] = r["why"] or {
            "predicted": float(r["predicted"]),
            "batch": int(r["batch"]),
            "load": r["load"],
            "database": r["database"],
            "kv_full": r["kv_full"] == "True",
        }
    return out


def compare(measurements: list[dict], gpuplan: dict, loso: dict, answers: dict[str, dict | str]):
    """The rows both answer, each with both predictions and errors; and why the others are left out. ``gpuplan``,
    ``loso``: gpuplan's predictions by row id (None: none); ``answers``: aiconfigurator's (``Aic.answer``)."""
    both, left_out = [], Counter()
    for row in measurements:
        gp, est = gpuplan.get(row["id"]), answers[row["id"]]
        if isinstance(est, str) or gp is None:
            left_out[
                est if isinstance(est, str) else "gpuplan: no prediction (saturated, or a burst of unstated size)"
            ] += 1
            continue
        value = est["predicted"]
        measured = float(row["measured"])
        lo = loso.get(row["id"])
        both.append(
            {
                "id": row["id"],
                "source": cal.source_of(row["id"]),
                "class": "dense" if serving_loso.model_class(row["model_preset"]) == "dense" else "MoE",
                "metric": "itl" if row["metric"] == "tpot" else row["metric"],
                "measured": measured,
                "gpuplan": gp,
                "aic": value,
                "loso": lo,
                "aic_batch": est["batch"],
                "aic_version": est["database"],
                "aic_kv_full": est["kv_full"],
                "load": est["load"],
                "gpuplan_error": (gp - measured) / measured,
                "aic_error": (value - measured) / measured,
                "loso_error": None if lo is None else (lo - measured) / measured,
            }
        )
    return both, left_out


def median_error(rows: list[dict], tool: str, metric: str, group: str | None = None, by: str = "class"):
    """The median absolute error of ``tool`` on these rows (the core's arithmetic: serving_median_abs_error)."""
    view = [{"error": r[f"{tool}_error"], "metric": r["metric"], "regime": r[by], "split": None} for r in rows]
    return serving_errors.serving_median_abs_error(view, regime=group, metric=metric, split=None)


def summary(rows: list[dict], by: str = "class") -> list[dict]:
    """Per group (model class or source) and metric: rows both answer, each tool's median absolute error."""
    out = []
    groups = ["all", "dense", "MoE"] if by == "class" else sorted({r[by] for r in rows})
    for group in groups:
        for metric in cal.METRICS:
            sel = [r for r in rows if r["metric"] == metric and (group == "all" or r[by] == group)]
            if sel:
                g = None if group == "all" else group
                out.append(
                    {
                        "group": group,
                        "metric": metric,
                        "rows": len(sel),
                        **{t: median_error(sel, t, metric, g, by) for t in ("gpuplan", "aic")},
                        "loso": median_error([r for r in sel if r["loso"] is not None], "loso", metric, g, by),
                    }
                )
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def print_summary(title: str, table: list[dict]) -> None:
    print(f"\n{title}\n| group | metric | rows | gpuplan (stored) | gpuplan (source left out) | aiconfigurator |")
    print("|---|---|---|---|---|---|")
    for s in table:
        errors = " | ".join(_pct(s[t]) for t in ("gpuplan", "loso", "aic"))
        print(f"| {s['group']} | {s['metric']} | {s['rows']} | {errors} |")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stored", action="store_true", help=f"aiconfigurator's answers from {STORED.name} (no install)")
    p.add_argument("--write", action="store_true", help=f"run aiconfigurator and store its answers in {STORED.name}")
    p.add_argument("--rows", action="store_true", help="print every row both answer")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead")
    args = p.parse_args(argv)
    measurements = cal.load_serving_measurements().to_dict("records")
    if args.stored:
        answers = stored_answers()
    else:
        aic = Aic()
        answers = {r["id"]: aic.answer(r) for r in measurements}
        print(f"aiconfigurator-core {aic.sdk.version}", file=sys.stderr)
        if args.write:
            write_answers(answers)
    gpuplan = {r["id"]: r["predicted"] for r in cal.serving_table()}
    loso = {r["id"]: r["predicted"] for r in serving_loso.loso_table()}
    rows, left_out = compare(measurements, gpuplan, loso, answers)
    tables = {"class": summary(rows), "load": summary(rows, by="load"), "source": summary(rows, by="source")}
    databases = sorted({r["aic_version"] for r in rows})
    if args.json:
        counts = {"published_rows": len(measurements), "both_answer": len(rows), "left_out": dict(left_out)}
        print(json.dumps({"databases": databases, **counts, **tables}, indent=1))
        return
    full = sum(r["aic_kv_full"] for r in rows)
    print(f"aiconfigurator databases: {databases}")
    print(f"{len(measurements)} published rows; {len(rows)} both answer ({full} at a batch its KV estimate does not")
    print("hold: it answers with a warning, as its CLI does); left out:")
    for reason, n in left_out.most_common():
        print(f"  {n:>4}  {reason}")
    print_summary("Median absolute error by model class (MoE: Mixtral, DeepSeek-R1/V3)", tables["class"])
    print_summary("By load (how aiconfigurator was given it: module docstring)", tables["load"])
    print_summary("By source", tables["source"])
    if args.rows:
        print("\nid | metric | measured | gpuplan | left out | aiconfigurator (batch)")
        for r in rows:
            lo = "-" if r["loso"] is None else f"{r['loso']:.4g}"
            values = f"{r['measured']:.4g} | {r['gpuplan']:.4g} | {lo} | {r['aic']:.4g} ({r['aic_batch']})"
            print(f"{r['id']} | {r['metric']} | {values}")


if __name__ == "__main__":
    main()
