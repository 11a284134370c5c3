"""A number with a slider on natural steps (the registry's ``steps``: model size, input and output tokens, batch).

The number box is the input: bound to the link under the input's key, it takes any value in range, as typed or as a
link gives it. The slider under it moves on the natural steps (powers of two, log-spaced sizes) and gains the exact
value the box holds, so ``in=3000`` shows 3,000 on both and a drag moves on from there. Each follows the other: the
slider's callback writes the box's value (and so the link); the box's new value is the slider's before it is drawn.
Streamlit's slider sends its value when a drag ends (on release), not while it moves: a drag through many stops asks
one question, the one it stops on (tests/e2e/test_sliders.py checks that nothing is sent while it moves). An arrow
key sends at once, one stop per key, and the focus stays on the slider (the pair is redrawn under the same keys), so
the next key goes on from there; the box and the link follow each (tests/e2e/test_sliders.py). An answer that takes
long shows the slider's new stop before the box's: the box follows when the run ends.

In the served app the pair is its own fragment: a change reruns the pair (so the other widget follows) and the page,
not the whole sidebar (``sidebar._changed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from gpuplan_core import Input, same_value

from .state import page_reruns

SLIDER = "__slider"  # the slider's session key: the input's key + this (not in the link: the number box is)


def number_args(inp: Input) -> dict[str, Any]:
    """A number box's bounds, default, step and format, as the input record states them."""
    return {
        "min_value": float(inp.lo),
        "max_value": float(inp.hi),
        "value": float(inp.default),
        "step": float(inp.step),
        "format": inp.fmt or ("%.0f" if inp.whole else None),
    }


def slider_key(key: str) -> str:
    return key + SLIDER


def fragment_key(key: str) -> str:
    return "pair_" + key


def stepped(inp: Input, label: str, kw: dict[str, Any], on_change: Callable | None) -> float:
    """Draw the pair for ``inp`` where the caller's container is; return the number's value."""
    in_fragment = page_reruns() and on_change is not None
    also = (fragment_key(inp.key),) if in_fragment else ()

    def draw() -> float:
        value = st.number_input(label, **number_args(inp), on_change=on_change, args=also, **kw)
        skey = slider_key(inp.key)
        if not same_value(st.session_state.get(skey), value):
            st.session_state[skey] = float(value)  # the box's value, before the slider is drawn
        st.select_slider(
            f"{label}: on a scale",
            options=inp.slider_stops(value),
            format_func=inp.label_of,
            key=skey,
            label_visibility="collapsed",
            on_change=_slid,
            args=(inp, on_change, also),
        )
        return value

    return st.fragment(draw, key=fragment_key(inp.key))() if in_fragment else draw()


def session_value(inp: Input, value: Any) -> Any:
    """A value to put in st.session_state for this input's widget. A whole number goes in as an int: Streamlit
    writes a value set from code to the link with str(), which would make ``in=7936.0`` of a float."""
    if inp.widget == "number" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _slid(inp: Input, on_change: Callable | None, also: tuple[str, ...]) -> None:
    """The slider moved: the number box (bound to the link) takes its value, then the rerun the box's change asks."""
    st.session_state[inp.key] = session_value(inp, st.session_state[slider_key(inp.key)])
    if on_change is not None:
        on_change(*also)
