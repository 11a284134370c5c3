"""The training step model with each source left out in turn: for every source (repository or paper) with a
measured tokens/s per GPU, fit the constants on all other sources' runs (bench/fit_training.fit), predict the
left-out source's runs, and print the median |error| per source and per class (dense pre-training, fine-tuning,
mixture of experts). Writes data/training_source_holdout.csv (every prediction) and .json (each fold's constants);
tests/core/perf/test_training_sources.py re-predicts them and holds README's figures.

    python -m bench.fit_training_sources          # fit each fold, print, write (minutes)
    python -m bench.fit_training_sources --check  # print the figures of the stored predictions
"""

from __future__ import annotations

import json
import sys

import pandas as pd

from bench.fit_training import fit
from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.perf.training_calibration import run_errors
from gpuplan_core.perf.training_sources import FOLDS_FILE, PREDICTIONS_FILE, holdout_rows, stored_table, summary
from gpuplan_core.perf.training_step import fitted_efficiency


def print_summary(s: dict) -> None:
    for cls, by in s.items():
        a = by["all"]
        print(
            f"{cls}: median |error| {a['median_abs_error']:.1%} over {a['points']} runs, "
            f"{a['within_15pct']:.0%} within 15%"
        )
        for src, v in by.items():
            if src != "all":
                print(f"    {src:32s} {v['points']:3d} runs  median {v['median_abs_error']:.1%}")


def main(argv: list[str]) -> int:
    if "--check" in argv:
        print_summary(summary(stored_table()))
        return 0
    sources = sorted({e.source for e in run_errors(fitted_efficiency())})
    folds, info = {}, {}
    for src in sources:
        eff, loss = fit(keep=lambda e, s=src: e.source != s)
        folds[src] = eff
        info[src] = {"constants": eff.model_dump(), "training_loss_mean_squared_log": round(loss, 5)}
        print(f"fitted without {src}: loss {loss:.4f}", flush=True)
    table = pd.DataFrame(holdout_rows(folds))
    table.to_csv(DATA_DIR / PREDICTIONS_FILE, index=False)
    s = summary(table)
    about = (
        "Each source of data/training_speed_measurements.csv left out in turn: constants fitted by "
        "bench/fit_training_sources.py on every other source's runs; the left-out runs' predictions are in "
        "training_source_holdout.csv."
    )
    (DATA_DIR / FOLDS_FILE).write_text(json.dumps({"_about": about, "folds": info, "summary": s}, indent=1) + "\n")
    print_summary(s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
