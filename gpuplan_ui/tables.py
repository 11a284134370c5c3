"""Pure table builders: a typed report from gpuplan_core.api in, the pandas DataFrame a page shows out. Here: how
a table shows its numbers to people, and the Memory and Performance pages' tables; tables_cost.py holds the
Overview's, Cost's and Compare's, tables_reference.py the calibration, catalog and Methodology tables.

Like the figure modules, nothing here imports streamlit and nothing computes a number: columns are report
values, rounded for display and labelled with their units. cached.py keeps each built table with its
report, so a rerun that shows the same scenario builds nothing.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from gpuplan_core import GpuAtLoad, GpuPerf, MemoryReport

SNAKE = re.compile(r"[a-z0-9]+(_[a-z0-9]+)+")


def tidy(x: float) -> float:
    """A float rounded to what matters: 3 significant figures below 100, whole numbers above."""
    if not math.isfinite(x) or x == 0:
        return x
    a = abs(x)
    if a >= 100:
        return float(round(x))
    return round(x, min(4, 2 - math.floor(math.log10(a))))


def as_text(x) -> str:
    """A number as text, rounded to what matters, with thousands separators; a missing value as "n/a"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    v = tidy(float(x))
    return f"{v:,.0f}" if v == int(v) else f"{v:,.{max(0, -math.floor(math.log10(abs(v))) + 2)}f}".rstrip("0")


def for_people(df: pd.DataFrame) -> pd.DataFrame:
    """What a table shows: floats rounded to what matters, every missing value as "n/a", no snake_case header
    (the CSV download keeps the full-precision frame). A number column with gaps becomes text (one type per
    column: Arrow needs it)."""
    out = df.copy()
    for col in out.columns:
        s = out[col]
        if s.isna().any():
            s = s.map(as_text)
        elif pd.api.types.is_float_dtype(s):
            s = s.map(tidy)
        out[col] = s
    out.columns = [c.replace("_", " ") if SNAKE.fullmatch(str(c)) else c for c in out.columns]
    return out


# --- how wide a column must be -------------------------------------------------------------------------

# Each character's advance in the data grid's font (Source Sans, 14 px), measured in Chromium, rounded up to 0.5 px;
# any other character counts as the widest. The grid sizes a column from its first rows only, so a longer value
# further down was cut ("hyperstac"): page.column_config gives every column the width of its widest text instead.
_ADVANCE_PX = {
    **dict.fromkeys(" ", 3.0),
    **dict.fromkeys("',.:;ij|·", 3.5),
    **dict.fromkeys("Il", 4.0),
    **dict.fromkeys("!()-[]f{}", 4.5),
    **dict.fromkeys("/\\rt", 5.0),
    **dict.fromkeys('"*?sz', 6.0),
    **dict.fromkeys("cx", 6.5),
    **dict.fromkeys("0123456789#$+<=>FJLY^_ekvy~±–≤×", 7.0),
    **dict.fromkeys("ESVXag", 7.5),
    **dict.fromkeys("ACPRTZ`bdhnopquµ", 8.0),
    **dict.fromkeys("BK", 8.5),
    **dict.fromkeys("&DG", 9.0),
    **dict.fromkeys("HNOQU", 9.5),
    **dict.fromkeys("Mw", 10.5),
}
_WIDEST_PX = 12.0
CELL_PADDING_PX = 16 + 6  # the grid's 8 px each side, and room for rounding and the sort arrow
MIN_COLUMN_PX, MAX_COLUMN_PX = 50, 420
# The narrowest place a full-width table sits at a 1280 px window: a section (an expander) in the 818 px main column.
TABLE_PX = 784
PROSE_MIN_PX = 160  # a text column narrowed to fit TABLE_PX keeps at least this (its first words)


# Headers the grid shows shorter than the frame's (and the CSV's) column names; the full name is the header's help.
SHORT_HEADERS = {"GB (10^9 B)": "GB", "GiB (2^30 B)": "GiB"}


def text_px(text: str) -> float:
    """How wide ``text`` draws in the data grid, in CSS pixels."""
    return sum(_ADVANCE_PX.get(ch, _WIDEST_PX) for ch in text)


def as_shown(x, money: bool) -> str:
    """A cell as the grid draws it: text as is, a number with thousands separators (money: "$" and cents; others at
    most 3 decimals, Intl's default)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if money:
        return ("-$" if x < 0 else "$") + f"{abs(x):,.2f}"
    return f"{x:,.3f}".rstrip("0").rstrip(".") if isinstance(x, float) else f"{x:,}"


def column_px(name: str, values, money: bool = False) -> int:
    """The width (px) that shows a column's header and every cell whole, between the grid's minimum and a cap
    for prose (a longer text is cut at the cap: such columns go last)."""
    widest = max([text_px(str(name)), *(text_px(as_shown(v, money)) for v in values)])
    return int(min(MAX_COLUMN_PX, max(MIN_COLUMN_PX, math.ceil(widest + CELL_PADDING_PX))))


def fit_px(widths: list[int], narrowable: list[bool], budget_px: int = TABLE_PX) -> list[int]:
    """Column widths that fit ``budget_px`` where narrowing can make them fit: the ``narrowable`` columns (text after
    the first column) give up width from the last one leftwards, each down to PROSE_MIN_PX at most, so the first
    columns stay whole; the others (the first column, numbers: a cut number reads as another number) keep theirs. A
    table that cannot fit so keeps every width (narrowing would only cut text) and scrolls with its first column
    pinned (page.column_config)."""
    excess = sum(widths) - budget_px
    floor = sum(w if not n else min(w, PROSE_MIN_PX) for w, n in zip(widths, narrowable, strict=True))
    if excess <= 0 or floor > budget_px:
        return list(widths)
    out = list(widths)
    for i in reversed(range(len(out))):
        if narrowable[i] and excess > 0:
            cut = min(excess, max(0, out[i] - PROSE_MIN_PX))
            out[i] -= cut
            excess -= cut
    return out


# --- Memory page ------------------------------------------------------------------------------------


def memory_components(mem: MemoryReport) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "component": k,
                "GB (10^9 B)": round(v / 1e9, 3),
                "GiB (2^30 B)": round(v / 2**30, 3),
                "bytes": v,
                # "exact" or "estimated" first, how last: the prose would push the numbers out of a narrow view
                "basis": mem.provenance[k].split(": ", 1)[0],
                "how": mem.provenance[k].split(": ", 1)[-1],
            }
            for k, v in mem.components.items()
        ]
    )


def memory_gpus(mem: MemoryReport) -> pd.DataFrame:
    """One row per catalog GPU: how the layout search would run the scenario on it (its GPU count, layout and
    memory per GPU there, or why it has no candidate), then the fit at the report's layout and the memory-only
    minimum."""
    rows = []
    for g in mem.gpus:
        row: dict = {"GPU": g.gpu}
        if (s := g.search) is not None:
            row |= {
                "layout search: GPUs": s.gpus,
                "layout search: layout": s.layout or "no candidate",
                "memory per GPU there (GB)": None if s.per_gpu_bytes is None else round(s.per_gpu_bytes / 1e9, 1),
                "layout search: note": ("the answer" if s.answer else "")
                + ("; " if s.answer and s.note else "")
                + s.note,
            }
        row |= {
            "fits": "yes" if g.fits else "no",
            "usable VRAM (GiB)": round(g.vram_usable_bytes / 2**30, 2),
            "budget (GB)": round(g.budget_bytes / 1e9, 1),
            "min GPUs": g.min_gpus,
            "min layout": g.min_layout.text if g.min_layout else "-",
            "max batch at this context": g.max_batch,
            "max context at this batch": g.max_context,
            "KV capacity (tokens)": g.kv_capacity_tokens,
        }
        rows.append(row)
    df = pd.DataFrame(rows)
    if any(g.search is not None for g in mem.gpus):  # beside the search's count, the minimum is memory's alone
        names = {"min GPUs": "min GPUs (memory only)", "min layout": "min layout (memory only)"}
        df = df.rename(columns=names | ({"fits": "fits the answer's layout"} if mem.answer else {}))
    return df


# --- Performance page -------------------------------------------------------------------------------


def perf_phases(p: GpuPerf) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "phase": ph.name,
                "TFLOP": round(ph.flops / 1e12, 4),
                "GB moved": round(ph.bytes / 1e9, 3),
                "intensity (FLOP/B)": round(ph.intensity_flops_per_byte, 1),
                "bound": ph.bound,
                "time (ms)": round(ph.time_s * 1e3, 3),
                "MFU": round(ph.mfu, 3),
                "MBU": round(ph.mbu, 3),
            }
            for ph in (p.prefill, p.decode)
        ]
    )


def perf_latency_headers(at_load: bool) -> tuple[str, str]:
    """The per-GPU table's latency columns, named for what they hold: under traffic the p95 first token and the
    mean time per token at the peak (GpuAtLoad), else the static batch's."""
    return ("p95 TTFT (ms)", "mean TPOT (ms)") if at_load else ("TTFT (ms)", "TPOT (ms)")


def perf_gpus(rows: list[GpuAtLoad], at_load: bool) -> pd.DataFrame:
    """One row per GPU type as the plan runs it at the scenario's load (api.gpus_at_load), the pick marked;
    ``at_load``: there is a traffic estimate (the headers say which latencies the rows hold)."""
    ttft, tpot = perf_latency_headers(at_load)
    return pd.DataFrame(
        [
            {
                "GPU": r.gpu + (" (the pick)" if r.is_pick else ""),
                "layout": r.layout,
                "replicas": r.replicas,
                "weights": r.weights_format,
                ttft: None if r.ttft_s is None else round(r.ttft_s * 1e3, 1),
                tpot: None if r.tpot_s is None else round(r.tpot_s * 1e3, 2),
                "tokens/s per user": round(1 / r.tpot_s, 1) if r.tpot_s else None,
                "requests/s per replica": r.requests_per_s_per_replica,
                "USD per month": r.monthly_usd,
                "meets targets": "yes" if r.meets_target else "; ".join(r.misses) or "no",
                "offer": r.offer_id,
            }
            for r in rows
        ]
    )
