"""Number formatting with units (labels say GB = 10^9 bytes or GiB = 2^30 bytes)."""

from __future__ import annotations

from gpuplan_core.units import GB, GiB


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


_MD_SPECIAL = "\\`*_[]<>#|~$"


def md_escape(text: str) -> str:
    """User-supplied text shown through markdown (warnings, captions) stays text: no links, images, HTML."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))
