"""Fit the training step model's constants on two thirds of the published runs (data/training_speed_measurements.csv;
a third of them held out by CRC-32 of the run's id) and write data/training_calibration.json with the held-out
error per regime, next to the error of a fixed MFU of 0.40 (gpuplan's earlier default) on the same runs.

    python -m bench.fit_training            # fit, print, write
    python -m bench.fit_training --check    # print the error of the constants as stored
    python -m bench.fit_training --restate  # the stored constants kept, their errors written again (after a change
                                            # to how the runs are read, e.g. packed examples' attention)

Dense and mixture-of-experts runs are fitted together (the experts' efficiency is the one MoE constant). Bounded
least squares on log(predicted / measured); the GEMM ceiling and FP8 speedup of Hopper and Blackwell are measured
(measured_gemm), not fitted; attention efficiency is bounded by FlashAttention-3's forward share of the H100 peak
(0.75, Shah et al. 2024) less its slower backward: 0.6.
"""

from __future__ import annotations

import json
import math
import sys
from functools import lru_cache

import pandas as pd
from scipy.optimize import least_squares

from gpuplan_core.common.data import DATA_DIR
from gpuplan_core.hardware.catalog import get_gpu
from gpuplan_core.perf.training_calibration import error_summary, run_errors
from gpuplan_core.perf.training_step import CALIBRATION_FILE, TrainingEfficiency, fitted_efficiency

ARCHS = ("Ampere", "Hopper", "Blackwell")
# name, low, high: the constants the fit moves (the others keep their defaults or are measured: MEASURED_GPUS)
FREE = [
    ("gemm_max:Ampere", 0.3, 0.95),
    ("gemm_half_width", 10.0, 5000.0),
    ("attention_efficiency:megatron", 0.1, 0.6),
    ("attention_efficiency:pytorch", 0.1, 0.6),
    ("elementwise:megatron", 0.0, 400.0),
    ("elementwise:pytorch", 0.0, 400.0),
    ("layer_overhead_s", 0.0, 2e-3),
    ("overlap", 0.0, 1.0),
    ("network_efficiency", 0.2, 1.0),
    ("tp_overlap:megatron", 0.0, 1.0),
    ("tp_overlap:pytorch", 0.0, 1.0),
    ("moe_expert_efficiency", 0.02, 1.0),
]
# "name:key" constants are one entry of a per-key field (GPU generation, kernel stack), and the scalar they refine
KEYED = {
    "gemm_max": ("gemm_max_by_architecture", "gemm_max", "Hopper"),
    "attention_efficiency": ("attention_efficiency_by_kernels", "attention_efficiency", "pytorch"),
    "elementwise": ("elementwise_by_kernels", "elementwise_bytes_per_token_layer", "pytorch"),
    "tp_overlap": ("tp_overlap_by_kernels", "tp_overlap", None),  # the scalar stays 0: not overlapped
}
# the GEMM ceiling and FP8 speedup of a generation are measured, not fitted, where data/kernel_times has its GPU
GEMM_FILE = "kernel_times/gemm.csv.gz"
MEASURED_GPUS = {"Hopper": "H100-SXM", "Blackwell": "B200"}


@lru_cache(maxsize=1)
def measured_gemm() -> dict:
    """Each generation's GEMM ceiling (share of the dense BF16 peak) and FP8 speedup from measured kernels
    (data/kernel_times/gemm.csv.gz, NVIDIA aiconfigurator-core 0.12.0): over the training-sized shapes (m >= 4,096
    tokens, n and k 2,048-16,384), the fastest kernel of the three engines per shape and dtype, the median over
    shapes of BF16 TFLOP/s / peak and of BF16 time / FP8 (per-tensor) time. H100 SXM: 796 TFLOP/s (0.805), 1.44x;
    B200: 1,578 (0.701), 1.36x."""
    g = pd.read_csv(DATA_DIR / GEMM_FILE)
    g = g[(g.m >= 4096) & g.n.between(2048, 16384) & g.k.between(2048, 16384)]
    best = g.groupby(["gpu", "dtype", "m", "n", "k"]).ms.min().unstack("dtype").dropna().reset_index()
    gemm, fp8 = {}, {}
    for arch, gid in MEASURED_GPUS.items():
        b = best[best.gpu == gid]
        tflops = (2 * b.m * b.n * b.k / (b.bf16 * 1e-3) / 1e12).median()
        gemm[arch] = float(tflops / get_gpu(gid).bf16_dense_tflops)
        fp8[arch] = float((b.bf16 / b.fp8).median())
    return {"gemm_max_by_architecture": gemm, "fp8_speedup_by_architecture": fp8, "fp8_speedup": fp8["Hopper"]}


def _eff(x, archs=ARCHS) -> TrainingEfficiency:
    """The constants of ``x`` over the measured ones; a GPU generation neither measured nor in a fitted run (not in
    ``archs``) takes Hopper's GEMM ceiling, and each keyed constant's scalar is its default key's value."""
    m = measured_gemm()
    vals: dict = {k: (dict(v) if isinstance(v, dict) else v) for k, v in m.items()}
    vals["gemm_max"] = m["gemm_max_by_architecture"]["Hopper"]
    for (name, lo, hi), v in zip(FREE, x, strict=True):
        v = min(hi, max(lo, v))
        if ":" not in name:
            vals[name] = v
            continue
        base, key = name.split(":")
        field, scalar, default_key = KEYED[base]
        if base == "gemm_max" and key not in archs:
            continue
        vals.setdefault(field, {})[key] = v
        if key == default_key:
            vals[scalar] = v
    return TrainingEfficiency(**vals)


def _informs(name: str, runs: list) -> bool:
    """Whether any of ``runs`` reads the constant ``name`` (a GPU generation's, a kernel stack's, the experts')."""
    if name.startswith("gemm_max:"):
        return any(e.architecture == name.split(":")[1] for e in runs)
    if name.startswith("tp_overlap:"):
        return any(e.kernels == name.split(":")[1] and e.tp_overlapped for e in runs)
    if ":" in name:
        return any(e.kernels == name.split(":")[1] for e in runs)
    if name == "moe_expert_efficiency":
        return any(e.regime == "mixture of experts" for e in runs)
    return True


def _full(free, x0, mask) -> list[float]:
    """The whole constant vector: ``x0`` with the free entries (``mask``) replaced by ``free``."""
    x, it = list(x0), iter(free)
    return [next(it) if m else v for v, m in zip(x, mask, strict=True)]


def _residuals(free, x0, mask, keep, archs) -> list[float]:
    errs = [e for e in run_errors(_eff(_full(free, x0, mask), archs)) if keep(e)]
    return [math.log(e.predicted / e.measured) for e in errs]


def fit(keep=lambda e: not e.held_out, maxiter: int = 400) -> tuple[TrainingEfficiency, float]:
    """The constants that minimise the mean squared log error over the runs ``keep`` selects (bounded least
    squares from the defaults), and that loss. Only the constants those runs read move: a GPU generation none of
    them ran on takes Hopper's GEMM ceiling, a kernel stack none of them used PyTorch's, and without a
    mixture-of-experts run the experts' efficiency keeps its default."""
    runs = [e for e in run_errors(TrainingEfficiency()) if keep(e)]
    archs = tuple(sorted({e.architecture for e in runs}))
    x0 = _x0(TrainingEfficiency())
    mask = [_informs(name, runs) for name, _, _ in FREE]
    free = [(v, lo, hi) for (name, lo, hi), v, m in zip(FREE, x0, mask, strict=True) if m]
    start = [min(hi, max(lo, v)) for v, lo, hi in free]
    bounds = ([lo for _, lo, _ in free], [hi for _, _, hi in free])
    args = (x0, mask, keep, archs)
    best = least_squares(_residuals, start, bounds=bounds, args=args, x_scale="jac", diff_step=1e-3, max_nfev=maxiter)
    return _eff(_full(best.x, x0, mask), archs), float(2 * best.cost / len(best.fun))


def _x0(eff: TrainingEfficiency) -> list[float]:
    out = []
    for name, _, _ in FREE:
        if ":" in name:
            base, key = name.split(":")
            field, scalar, _ = KEYED[base]
            out.append(getattr(eff, field).get(key, getattr(eff, scalar)))
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
