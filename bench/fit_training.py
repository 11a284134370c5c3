"""Fit the training step model's constants on two thirds of the published runs (data/training_speed_measurements.csv;
a third of them held out by CRC-32 of the run's id) and write data/training_calibration.json with the held-out
error per regime, next to the error of a fixed MFU of 0.40 (gpuplan's earlier default) on the same runs.

    python -m bench.fit_training            # fit, print, write
    python -m bench.fit_training --check    # print the error of the constants as stored
    python -m bench.fit_training --restate  # the stored constants kept, their errors written again (after a change
                                            # to how the runs are read, e.g. packed examples' attention)

Dense and mixture-of-experts runs are fitted together (the experts' efficiency is the one MoE constant).
"""

from __future__ import annotations

import json
import math
import sys

from scipy.optimize import minimize

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.perf.training_calibration import error_summary, run_errors
from gpuplan_core.perf.training_step import CALIBRATION_FILE, TrainingEfficiency, fitted_efficiency

ARCHS = ("Ampere", "Hopper", "Blackwell")
# name, low, high: the constants the fit moves (the others keep their defaults)
FREE = [
    ("gemm_max:Ampere", 0.3, 0.95),
    ("gemm_max:Hopper", 0.3, 0.95),
    ("gemm_max:Blackwell", 0.3, 0.95),
    ("gemm_half_width", 10.0, 5000.0),
    ("fp8_speedup", 1.0, 2.5),
    ("attention_efficiency", 0.1, 0.9),
    ("elementwise_bytes_per_token_layer", 0.0, 400.0),
    ("layer_overhead_s", 0.0, 2e-3),
    ("overlap", 0.0, 1.0),
    ("network_efficiency", 0.2, 1.0),
    ("moe_expert_efficiency", 0.02, 1.0),
]


def _eff(x, archs=ARCHS) -> TrainingEfficiency:
    """The constants of ``x``; a GPU generation no fitted run has (not in ``archs``) takes Hopper's GEMM ceiling."""
    vals, by_arch = {}, {}
    for (name, lo, hi), v in zip(FREE, x, strict=True):
        v = min(hi, max(lo, v))
        if name.startswith("gemm_max:"):
            by_arch[name.split(":")[1]] = v
        else:
            vals[name] = v
    hopper = by_arch["Hopper"]
    by_arch = {a: v for a, v in by_arch.items() if a in archs}
    return TrainingEfficiency(**vals, gemm_max_by_architecture=by_arch, gemm_max=hopper)


def _loss(x, keep=lambda e: not e.held_out, archs=ARCHS) -> float:
    errs = [e for e in run_errors(_eff(x, archs)) if keep(e)]
    return sum(math.log(e.predicted / e.measured) ** 2 for e in errs) / len(errs)


def fit(keep=lambda e: not e.held_out, maxiter: int = 4000) -> tuple[TrainingEfficiency, float]:
    """The constants that minimise the mean squared log error over the runs ``keep`` selects (two Nelder-Mead
    rounds from the defaults), and that loss; a GPU generation none of them ran on takes Hopper's GEMM ceiling."""
    opts = {"maxiter": maxiter, "xatol": 1e-4, "fatol": 1e-6}
    archs = tuple(sorted({e.architecture for e in run_errors(TrainingEfficiency()) if keep(e)}))
    best = minimize(_loss, _x0(TrainingEfficiency()), args=(keep, archs), method="Nelder-Mead", options=opts)
    best = minimize(_loss, best.x, args=(keep, archs), method="Nelder-Mead", options=opts)
    return _eff(best.x, archs), float(best.fun)


def _x0(eff: TrainingEfficiency) -> list[float]:
    out = []
    for name, _, _ in FREE:
        if name.startswith("gemm_max:"):
            out.append(eff.gemm_max_by_architecture.get(name.split(":")[1], eff.gemm_max))
        else:
            out.append(getattr(eff, name))
    return out


def report(eff: TrainingEfficiency) -> dict:
    errs = run_errors(eff)
    base = run_errors(eff, mfu=0.40)
    held = error_summary(errs, held=True)
    return {
        "held_out": held,
        "training": error_summary(errs, held=False),
        "held_out_at_mfu_0_40": error_summary(base, held=True),
        "band_relative": held["all dense"]["p80_abs_error"],
    }


def main(argv: list[str]) -> int:
    if "--check" in argv:
        print(json.dumps(report(fitted_efficiency()), indent=1))
        return 0
    if "--restate" in argv:
        path = DATA_DIR / CALIBRATION_FILE
        out = {**json.loads(path.read_text()), **report(fitted_efficiency())}
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(json.dumps(report(fitted_efficiency()), indent=1))
        return 0
    eff, loss = fit()
    out = {
        "_about": "Training step constants fitted by bench/fit_training.py on two thirds of the dense runs of "
        "data/training_speed_measurements.csv (a third held out by CRC-32 of the run id); errors are "
        "|predicted / measured tokens per second per GPU - 1|.",
        "constants": eff.model_dump(),
        "training_loss_mean_squared_log": round(loss, 5),
        **report(eff),
    }
    (DATA_DIR / CALIBRATION_FILE).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
