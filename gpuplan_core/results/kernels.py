"""Typed result of a kernel-time look-up (perf/kernels.py): one operation's time and where the figure came from."""

from __future__ import annotations

from typing import Literal, NamedTuple


class KernelTime(NamedTuple):
    """One operation's time in seconds; ``kind`` says how it was found and ``source`` names the table (or, for the
    roofline, why no table answered)."""

    op: str
    time_s: float
    kind: Literal["measured", "interpolated", "roofline"]
    source: str
