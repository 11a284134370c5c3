"""Formatting for the pages: the core's number formats (one home, gpuplan_core/text.py) and markdown escaping."""

from __future__ import annotations

from gpuplan_core import count, counted, gb, gib, ms, pct, rate, usd

__all__ = ["count", "counted", "gb", "gib", "md_escape", "ms", "pct", "rate", "usd"]

_MD_SPECIAL = "\\`*_[]<>#|~$"


def md_escape(text: str) -> str:
    """User-supplied text shown through markdown (warnings, captions) stays text: no links, images, HTML."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))
