"""The Overview's, Cost page's and Compare's tables (pure: typed reports in, DataFrames out; tables.py says how)."""

from __future__ import annotations

import pandas as pd

from gpuplan_core import InferenceCostRow, Pick, Rejected, TrainingCostRow


def _r(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def picks(plan, training: bool) -> pd.DataFrame:
    """The plan's picks (a typed Plan): the layout and price of each."""
    df = pd.DataFrame(
        [
            {
                "offer": p.offer_id,
                "cost (USD)": round(p.monthly_usd if p.monthly_usd is not None else p.run_cost_usd, 2),
                "provider": p.provider,
                "layout": p.layout,
                "replicas": p.replicas,
                "GPUs paid": p.gpus,
                "weights": p.weights_format,
                "billing": p.billing_model,
                "p95 TTFT (ms)": None if p.ttft_s is None else round(p.ttft_s * 1e3, 1),
                "TPOT (ms)": None if p.tpot_s is None else round(p.tpot_s * 1e3, 2),
                "latency error band": p.error_band,
                "wall hours": _r(p.wall_hours, 1),
                "price date": p.price_as_of,
                "source": p.source,
            }
            for p in plan.picks
        ]
    )
    return df.drop(
        columns=["p95 TTFT (ms)", "TPOT (ms)", "latency error band", "replicas"] if training else ["wall hours"]
    )


# What the Overview shows of its cheapest configurations: enough to choose, within its column at 1280 px (818 px);
# the download carries every column of picks() (provider, billing, the error band, price date and source).
PICKS_SHOWN = (
    "offer",
    "cost (USD)",
    "layout",
    "replicas",
    "GPUs paid",
    "weights",
    "p95 TTFT (ms)",
    "TPOT (ms)",
    "wall hours",
)


def picks_shown(plan, columns) -> tuple[str, ...]:
    """PICKS_SHOWN of ``columns`` (picks()' for the plan), the weights format only where the picks differ in it
    (else the answer states it)."""
    one_format = len({p.weights_format for p in plan.picks}) <= 1
    return tuple(c for c in PICKS_SHOWN if c in columns and not (c == "weights" and one_format))


def rejected(rows: list[Rejected]) -> pd.DataFrame:
    """What cannot run and why (plan and cost reports' ``rejected``)."""
    return pd.DataFrame(
        [
            {
                "GPU": r.gpu,
                "offer": r.offer_id or "any offer",
                "weights": r.weights_format or "n/a",
                "layout": r.layout or "any layout",
                "why it cannot run": r.reason,
            }
            for r in rows
        ]
    )


def differences(result) -> pd.DataFrame:
    """Compare's table: each measure for A and B and the change B - A (absolute and %), all as shown text."""
    return pd.DataFrame(
        [{"measure": r.metric, "A": r.a, "B": r.b, "B - A": r.change, "change": r.change_pct} for r in result.rows]
    )


# --- Cost page --------------------------------------------------------------------------------------


def cost_always_on(rows: list[InferenceCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "monthly (USD)": round(r.monthly_always_on_usd, 2),
                "GPU": r.gpu,
                "GPUs": r.gpus,
                "layout": r.layout,
                "$/1M out": round(r.output_cost_per_million_usd, 3),
            }
            for r in sorted(rows, key=lambda r: r.monthly_always_on_usd)
        ]
    )


def cost_per_run(rows: list[InferenceCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "per run (USD)": round(r.run_cost_usd, 2),
                "GPU": r.gpu,
                "GPUs": r.gpus // max(1, r.replicas),
                "hours": round(r.run_hours, 3),
            }
            for r in rows
        ]
    )


def cost_detail(rows: list[InferenceCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "monthly always-on (USD)": round(r.monthly_always_on_usd, 2),
                "provider": r.provider,
                "GPU": r.gpu,
                "GPUs": r.gpus,
                "layout": r.layout,
                "replicas": r.replicas,
                "billing": r.billing_model,
                "per run (USD)": round(r.run_cost_usd, 2),
                "$/1M output tokens": round(r.output_cost_per_million_usd, 3),
                "$/1M input tokens": round(r.input_cost_per_million_usd, 4),
                "TTFT (ms)": round(r.ttft_s * 1e3, 1),
                "TPOT (ms)": round(r.tpot_s * 1e3, 2),
                "meets your targets": "yes" if r.meets_target else "no: " + "; ".join(r.misses),
                "latency error band": r.error_band,
                "notes": "; ".join(r.notes),
                "price date": r.price_as_of,
                "source": r.source,
            }
            for r in rows
        ]
    )


def serverless(rows: list[Pick]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "monthly (USD)": round(r.monthly_usd, 2),
                "GPU": r.gpu,
                "billing": r.billing_model,
                "workers": r.replicas,
                "why": "; ".join(r.why[1:]),
            }
            for r in rows
        ]
    )


def training_runs(rows: list[TrainingCostRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "offer": r.offer_id,
                "per-run (USD)": round(r.run_cost_usd, 2),
                "GPU": r.gpu,
                "GPUs": r.gpus,
                "billing": r.billing_model,
                "GPU-hours": round(r.gpu_hours, 0),
                "wall hours": round(r.wall_hours, 1),
                "MFU": round(r.mfu, 2) if r.mfu is not None else None,
                "MFU band": f"{r.mfu_low:.2f}-{r.mfu_high:.2f}" if r.mfu_low is not None else "yours",
                "monthly always-on (USD)": round(r.monthly_always_on_usd, 2),
                "price date": r.price_as_of,
                "notes": "; ".join(r.notes[2:]),
            }
            for r in rows
        ]
    )


def training_monthly(runs: pd.DataFrame) -> pd.DataFrame:
    return runs[["offer", "GPUs", "monthly always-on (USD)"]].sort_values("monthly always-on (USD)")


def projection_start(ans, cost) -> tuple[float, str]:
    """Where Cost's market projection starts, and its name: serving, the answer's monthly cost (the Overview's), or
    with no option meeting the targets the core's cheapest always-on regardless of them; training, the cheapest
    always-on of its rows."""
    if not cost.training and ans.pick is not None:
        return ans.cost_usd, "the answer's monthly cost"
    if not cost.training and cost.cheapest_monthly_usd is not None:
        return cost.cheapest_monthly_usd, "the cheapest always-on, regardless of targets"
    return min(r.monthly_always_on_usd for r in cost.offers), "the cheapest always-on of these GPUs"
