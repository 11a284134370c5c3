"""Numbers as people read them, with units (GB = 10^9 bytes, GiB = 2^30 bytes): the answers, the app and the report
use these, so a number reads the same everywhere."""

from __future__ import annotations

from .units import GB, GiB


def gb(n: float | None, digits: int = 1) -> str:
    return "-" if n is None else f"{n / GB:,.{digits}f} GB"


def gib(n: float | None, digits: int = 1) -> str:
    return "-" if n is None else f"{n / GiB:,.{digits}f} GiB"


def ms(s: float | None) -> str:
    if s is None:
        return "-"
    v = s * 1e3
    return f"{v:,.0f} ms" if v >= 100 else f"{v:,.1f} ms" if v >= 10 else f"{v:,.2f} ms"


def usd(x: float | None) -> str:
    if x is None:
        return "-"
    return f"${x:,.0f}" if abs(x) >= 100 else f"${x:,.2f}"


def pct(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:.{digits}%}"


def rate(x: float | None, unit: str = "tokens/s") -> str:
    """Two to three significant figures: 0.84, 12.3, 148, 1,186."""
    if x is None:
        return "-"
    v = f"{x:,.2f}" if abs(x) < 10 else f"{x:,.1f}" if abs(x) < 100 else f"{x:,.0f}"
    return f"{v} {unit}"


def count(n: float | None) -> str:
    if n is None:
        return "-"
    if n >= 1e12:
        return f"{n / 1e12:,.2f}T"
    if n >= 1e9:
        return f"{n / 1e9:,.2f}B"
    if n >= 1e6:
        return f"{n / 1e6:,.1f}M"
    return f"{n:,.0f}"
