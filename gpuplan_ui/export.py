"""Downloads: tables as CSV that spreadsheets cannot execute (cells starting with = + - @ are
prefixed with a quote, OWASP's CSV-injection advice), scenario JSON. No streamlit import."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(v):
    if isinstance(v, str) and v.startswith(_DANGEROUS):
        try:
            float(v)  # a negative number is data, not a formula
            return v
        except ValueError:
            return "'" + v
    return v


def rows_to_csv(rows: Iterable[dict], columns: list[str] | None = None) -> str:
    rows = list(rows)
    cols = columns or (list(rows[0]) if rows else [])
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: safe_cell(r.get(k)) for k in cols})
    return buf.getvalue()


def frame_to_csv(df) -> str:
    return rows_to_csv(df.to_dict("records"), [str(c) for c in df.columns])
