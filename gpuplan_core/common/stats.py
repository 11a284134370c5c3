"""How far predictions are from measurements, summarised one way everywhere: points, median |error|, the shares
within stated tolerances and, where asked, the 80th percentile (a band four in five points fall inside)."""

from __future__ import annotations

import pandas as pd


def error_stats(abs_errors: list[float], within: tuple[float, ...], p80: bool = False) -> dict[str, float | int]:
    """{'points', 'median_abs_error', 'within_<N>pct' per tolerance, ['p80_abs_error']}, rounded to 4 places."""
    s = pd.Series(abs_errors)
    out: dict[str, float | int] = {"points": len(abs_errors), "median_abs_error": round(float(s.median()), 4)}
    for t in within:
        out[f"within_{round(t * 100)}pct"] = round(float((s <= t).mean()), 4)
    if p80:
        out["p80_abs_error"] = round(float(s.quantile(0.8)), 4)
    return out
