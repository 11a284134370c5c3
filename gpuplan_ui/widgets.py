"""A registry record (gpuplan_core/inputs.py) rendered as a Streamlit widget bound to the link.

Every widget gets its key, its help and the SAME default on every run. Streamlit leaves a bound value out of
the link when it equals the widget's default; a default that changed between runs (an ``index`` passed on the
first run only, say) made values equal to the widget's fallback vanish from links.

Numbers are always float inputs: Streamlit 1.67 crashes seeding an integer input from a link value such as
``INF`` (OverflowError in int()), while a float input ignores it. Whole numbers are shown with "%.0f" (not "%d",
which makes Streamlit log a warning with a stack trace on every rerun) and rounded by the registry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from gpuplan_core import DEFAULTS, INPUTS, USE_CASES, Input

from .state import NEEDS_FULL_RUN
from .stepped import number_args, session_value, stepped

BIND: dict[str, Any] = {"bind": "query-params"}
PAGE_INPUTS = "page_inputs"  # session key: the pages' own inputs, as last written to the link
BUILT = "sidebar_built"  # session key: the sidebar inputs built in the last run (bound to the link)


def render(
    inp: Input, values: Mapping[str, Any], where: Any = st, bind: bool = True, on_change: Callable | None = None
) -> Any:
    """Build the widget for ``inp`` in ``where`` (st, st.sidebar, a column, an expander) and return its value.
    Bound to the link unless ``bind`` is False (the pages' own inputs: the frame keeps those in the link)."""
    label = inp.label_for(values.get("workload", DEFAULTS["workload"]))
    kw: dict[str, Any] = {"key": inp.key, "help": inp.help, **(BIND if bind else {})}
    if inp.key == "usecase":
        kw["on_change"] = _apply_use_case
    elif on_change is not None:
        kw["on_change"] = on_change
    if inp.widget in ("select", "radio"):
        opts = inp.option_list()
        index = opts.index(inp.default) if inp.default in opts else 0
        if inp.widget == "radio":
            return where.radio(label, opts, index=index, format_func=inp.label_of, horizontal=True, **kw)
        return where.selectbox(label, opts, index=index, format_func=inp.label_of, **kw)
    if inp.widget == "select_slider":
        opts = inp.option_list()
        return where.select_slider(label, options=opts, value=inp.default, format_func=inp.label_of, **kw)
    if inp.widget == "slider":
        return where.slider(label, float(inp.lo), float(inp.hi), value=float(inp.default), step=float(inp.step), **kw)
    if inp.widget == "number" and inp.steps and bind:
        with contextlib.nullcontext() if where is st else where:
            return stepped(inp, label, {k: v for k, v in kw.items() if k != "on_change"}, kw.get("on_change"))
    if inp.widget == "number":
        return where.number_input(label, **number_args(inp), **kw)
    if inp.widget == "toggle":
        return where.toggle(label, value=bool(inp.default), **kw)
    return where.text_input(label, value=inp.default, max_chars=inp.max_chars, placeholder="owner/name", **kw)


def _apply_use_case() -> None:
    """on_change of the use-case preset: set the values it stands for (a callback, so before the widgets render)."""
    preset = USE_CASES.get(st.session_state.get("usecase"), {})
    set_inputs({k: v for k, v in preset.items() if k != "label"})


def current(inp: Input, link: Mapping[str, Any]) -> Any:
    """The value of an input whose widget is not built in this run: what this session holds, else what the
    link (already validated) says, else the default. Streamlit keeps a bound widget's value under its key
    while the widget is not built."""
    if inp.key in st.session_state:
        return st.session_state[inp.key]
    return link.get(inp.key, inp.default)


def page_input(key: str, where: Any = st) -> Any:
    """One of a page's own inputs (Compare's B side, the Overview's format toggle, Cost's projection and
    training bill). Not bound by Streamlit: a bound widget's value leaves the address as soon as another page
    is shown. The frame keeps these in the link on every page instead (frame.sync_page_inputs) and has set
    the value this widget starts from."""
    return render(INPUTS[key], {}, where, bind=False)


def page_value(key: str) -> Any:
    """A page's own input's value in this run, before its widget is drawn (the frame synced it from the link), so
    a page can compute its answer first and draw the input below it."""
    return st.session_state.get(PAGE_INPUTS, {}).get(key, INPUTS[key].default)


def set_inputs(values: Mapping[str, Any]) -> None:
    """Set inputs from code (a callback: a scenario import, a use-case preset), before the widgets render on the
    rerun. A widget built in the last run is bound to the link and takes its value from st.session_state; every
    other input (a closed group's, a page's own) is written to the link too, in one change of the address."""
    st.session_state[NEEDS_FULL_RUN] = True  # the sidebar's widgets show what was set: not a page-only rerun
    bound = st.session_state.get(BUILT, set())
    link: dict[str, str] = {}
    for k, v in values.items():
        inp = INPUTS[k]
        if k in bound:
            st.session_state[k] = session_value(inp, v)
            continue
        if inp.page is None:
            st.session_state[k] = session_value(inp, v)
        else:
            st.session_state.pop(k, None)  # the link is a page input's truth (frame.sync_page_inputs)
        if not inp.is_default(v):
            link[k] = inp.link_value(v)
        elif k in st.query_params:
            del st.query_params[k]
    st.query_params.update(link)
