"""Turn validation errors into one plain sentence that names the field and what is allowed."""

from __future__ import annotations

from pydantic import ValidationError


def describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for e in exc.errors():
            loc = ".".join(str(x) for x in e.get("loc", ()) if not isinstance(x, int))
            msg = str(e.get("msg", "")).removeprefix("Value error, ")
            ctx = e.get("ctx") or {}
            if "ge" in ctx or "le" in ctx or "gt" in ctx or "lt" in ctx:
                lo = ctx.get("ge", ctx.get("gt"))
                hi = ctx.get("le", ctx.get("lt"))
                if lo is not None and hi is not None:
                    rng = f"allowed: {lo} to {hi}"
                elif lo is not None:
                    rng = f"allowed: {'>=' if 'ge' in ctx else '>'} {lo}"
                else:
                    rng = f"allowed: {'<=' if 'le' in ctx else '<'} {hi}"
                msg = f"{msg} ({rng})"
            elif "expected" in ctx:
                msg = f"{msg} (allowed: {ctx['expected']})"
            parts.append(msg if not loc or msg.split(":")[0] == loc else f"{loc}: {msg}")
        return "; ".join(parts)
    return str(exc)
