"""Numbers as people read them, with units (GB = 10^9 bytes, GiB = 2^30 bytes): the answers, the app and the report
use these, so a number reads the same everywhere."""

from __future__ import annotations

import math

from .units import GB, GiB

E_NOTATION_FROM = 1e9  # numbers this large print as 3.43e+17 (FLOPs, tokens), not as 18 digits


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


def counted(n: float, unit: str, units: str | None = None) -> str:
    """A count and its unit, singular for one: '1 GPU', '2 GPUs', '1,024 machines' (``units``: an irregular plural)."""
    word = unit if n == 1 else units or unit + "s"
    return f"{n:,g} {word}" if isinstance(n, float) and not n.is_integer() else f"{n:,.0f} {word}"


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


# ---- numbers in a chain of arithmetic (the why-chain): printed so that each step multiplies out --------------


def figure(x: float, sig: int = 3) -> str:
    """A rounded number to at least ``sig`` significant figures, whole digits never dropped: 0.0123, 0.123, 1.23,
    12.3, 123, 1,234 (sig 3); 1.234e+17 from E_NOTATION_FROM up. Half a unit of the last digit printed is at most
    0.5 / 10^(sig-1) of the number, so a product of such numbers is off by at most that much per rounded operand."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    if abs(x) >= E_NOTATION_FROM:
        return f"{x:.{sig - 1}e}"
    decimals = max(0, sig - 1 - math.floor(math.log10(abs(x))))
    return f"{x:,.{decimals}f}"


def exact(x: float, max_decimals: int = 6) -> str | None:
    """The number itself, without trailing zeros (a count, a price, a constant, a user's input): 3, 0.4, 17.6289,
    2e+10; None when it has more than ``max_decimals`` decimals (print it with ``figure`` then)."""
    if not math.isfinite(x):
        return None
    if abs(x) >= E_NOTATION_FROM:
        for d in range(12):
            if float(f"{x:.{d}e}") == x:
                return f"{x:.{d}e}"
        return None
    for d in range(max_decimals + 1):
        if abs(round(x, d) - x) <= 1e-9 * max(1.0, abs(x)):
            return f"{round(x, d):,.{d}f}"
    return None
