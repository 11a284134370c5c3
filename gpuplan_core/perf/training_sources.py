"""The training step model with each source left out in turn: the constants fitted on every other source's runs
(bench/fit_training_sources.py), the left-out source's runs predicted with them. A harder test than the CRC-32
third of data/training_calibration.json, since a source's own framework, cluster and FLOP counting never reach the
fit that predicts it.

A source is the repository or paper a row was read from (training_calibration.source_key). The predictions and
each fold's constants are stored in data/training_source_holdout.csv and .json; tests re-predict every run with
its fold's constants and recompute the medians README and Methodology state.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pandas as pd

from ..common.data import DATA_DIR
from .training_calibration import run_errors
from .training_step import TrainingEfficiency

PREDICTIONS_FILE = "training_source_holdout.csv"
FOLDS_FILE = "training_source_holdout.json"
DENSE_PRETRAINING = ("pre-training, BF16", "pre-training, FP8")
CLASSES = ("dense pre-training", "fine-tuning", "mixture of experts")


def class_of(regime: str) -> str:
    """Dense pre-training (BF16 and FP8 together), fine-tuning, mixture of experts."""
    return "dense pre-training" if regime in DENSE_PRETRAINING else regime


def holdout_rows(folds: dict[str, TrainingEfficiency]) -> list[dict]:
    """Each source's runs predicted by the constants fitted without it (``folds``: source -> constants)."""
    rows = []
    for src, eff in folds.items():
        for e in run_errors(eff):
            if e.source == src:
                rows.append(
                    {
                        "id": e.run_id,
                        "source": src,
                        "class": class_of(e.regime),
                        "regime": e.regime,
                        "measured": e.measured,
                        "predicted": float(f"{e.predicted:.6g}"),
                        "error": float(f"{e.error:.6g}"),
                    }
                )
    return rows


def summary(table: pd.DataFrame) -> dict[str, dict[str, dict]]:
    """Per class: each source's points and median |error| and, under 'all', the class's over every source."""
    out: dict[str, dict[str, dict]] = {}
    for cls in CLASSES:
        part = table[table["class"] == cls]
        if part.empty:
            continue
        by = {
            src: {"points": len(g), "median_abs_error": round(float(g["error"].abs().median()), 4)}
            for src, g in part.groupby("source")
        }
        by["all"] = {
            "points": len(part),
            "median_abs_error": round(float(part["error"].abs().median()), 4),
            "within_15pct": round(float((part["error"].abs() <= 0.15).mean()), 4),
        }
        out[cls] = by
    return out


@lru_cache(maxsize=1)
def stored_table() -> pd.DataFrame:
    """data/training_source_holdout.csv: every run predicted with its source left out of the fit."""
    return pd.read_csv(DATA_DIR / PREDICTIONS_FILE)


@lru_cache(maxsize=1)
def stored_folds() -> dict[str, TrainingEfficiency]:
    """data/training_source_holdout.json: each left-out source's constants."""
    raw = json.loads((DATA_DIR / FOLDS_FILE).read_text())["folds"]
    return {src: TrainingEfficiency(**v["constants"]) for src, v in raw.items()}


def stored_summary() -> dict[str, dict[str, dict]]:
    return summary(stored_table())


def holdout_sentence(s: dict[str, dict[str, dict]] | None = None) -> str:
    """'dense pre-training 16.8% (98 runs; NVIDIA/NeMo 15.6%, ...), fine-tuning 23.8% (12 runs; ...)': the median
    |error| per class with each source left out, and per left-out source (README and Methodology quote it)."""
    s = s if s is not None else stored_summary()
    parts = []
    for cls, by in s.items():
        srcs = ", ".join(f"{k} {v['median_abs_error']:.1%}" for k, v in by.items() if k != "all")
        parts.append(f"{cls} {by['all']['median_abs_error']:.1%} ({by['all']['points']} runs; {srcs})")
    return ", ".join(parts)
