"""Fit the training memory budget's one measured constant, bitsandbytes' QLoRA working memory per base parameter
(Assumptions.qlora_bnb_overhead_bytes_per_param), on two thirds of the measured bitsandbytes QLoRA peaks
(data/training_memory_measurements.csv; a third held out by CRC-32 of the run id), and print the held-out error.

    python -m bench.fit_training_memory

The default in gpuplan_core/memory/components.py is the value this prints (a test holds them together).
"""

from __future__ import annotations

import math
import sys

from gpuplan_core.memory.components import Assumptions
from gpuplan_core.memory.training_measurements import bnb_qlora_errors


def fit() -> tuple[float, dict]:
    """(the constant, held-out summary): the grid value 0.00-1.50 B/param with the least median |log error| on the
    training rows."""
    best, best_loss = 0.0, math.inf
    for i in range(0, 151):
        c = i / 100
        errs = [
            abs(math.log(1 + e))
            for e, held in bnb_qlora_errors(Assumptions(qlora_bnb_overhead_bytes_per_param=c))
            if not held
        ]
        loss = sorted(errs)[len(errs) // 2]
        if loss < best_loss - 1e-12:
            best, best_loss = c, loss
    held = sorted(abs(e) for e, h in bnb_qlora_errors(Assumptions(qlora_bnb_overhead_bytes_per_param=best)) if h)
    zero = sorted(abs(e) for e, h in bnb_qlora_errors(Assumptions(qlora_bnb_overhead_bytes_per_param=0.0)) if h)
    return best, {
        "held_out_points": len(held),
        "held_out_median_abs_error": held[len(held) // 2],
        "held_out_median_abs_error_without": zero[len(zero) // 2],
    }


def main() -> int:
    c, summary = fit()
    print(f"qlora_bnb_overhead_bytes_per_param = {c:.2f}  (default {Assumptions().qlora_bnb_overhead_bytes_per_param})")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
