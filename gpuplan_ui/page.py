"""What every page starts with (its title, the frame's notes, the scenario), calm errors, and tables."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import pandas as pd
import streamlit as st

from gpuplan_core import Answer, Scenario, describe

from . import prices, state, widgets
from .export import frame_to_csv
from .fmt import md_escape
from .tables import SHORT_HEADERS, TABLE_PX, column_px, fit_px, for_people

log = logging.getLogger("gpuplan")


def setup(title: str, needs_model: bool = True, gpu_figures: str | None = None) -> tuple[Scenario, dict[str, Any]]:
    """The page's title; returns the scenario the frame built from the sidebar and the input values. The run's
    notes (link values not allowed, warnings) follow the page's answer (``answer``). When the model asked for
    could not be loaded, a page that shows results shows why instead, offers the last model that loaded, and
    stops: no numbers for a model the user did not ask for. ``gpu_figures``: what of the chosen GPU type the page draws
    even when no offer rents it ("memory", "speed"; its note says so, prices.no_offer_line)."""
    run = state.current()
    st.title(title)
    if needs_model and run.model_error:
        st.error(md_escape(run.model_error) + " No results are shown until a model loads.", icon=":material/error:")
        last = st.session_state.get(state.LAST_GOOD)
        if last:
            st.button(
                f"Show {last['name']} instead",
                on_click=widgets.set_inputs,
                args=(last["values"],),
                icon=":material/undo:",
                key="last_good_model",
            )
        notes()
        st.stop()
    if line := prices.no_offer_line(run.scenario.parallelism.gpu, gpu_figures):
        st.info(md_escape(line), icon=":material/info:")
    return run.scenario, run.values


MEETING_CSS = """
<style>
section[data-testid="stSidebar"], div[data-testid="stSidebarCollapsedControl"],
button[data-testid="stExpandSidebarButton"] { display: none !important; }
html { font-size: 20px; }
div[data-testid="stMetricValue"] { font-size: 2.6rem; }
</style>
"""


def meeting() -> bool:
    """The meeting view (in the link): answers, headline numbers and one chart per page, in large type."""
    return bool(state.current().values.get("meeting"))


def _meeting_frame() -> None:
    if meeting():
        st.html(MEETING_CSS)
        _meeting_nav()
        st.button(
            "Leave meeting view",
            on_click=widgets.set_inputs,
            args=({"meeting": False},),
            icon=":material/close_fullscreen:",
            key="leave_meeting",
        )


def _meeting_nav() -> None:
    """The meeting view's own navigation (its sidebar is hidden): the previous page, every page, the next page, each
    link carrying the scenario and the meeting view as the sidebar's links do."""
    run = state.current()
    pages = run.pages
    if not pages:
        return
    here = next((i for i, p in enumerate(pages) if (p.url_path or "") == run.page), 0)
    carry = run.carry or None
    back, every, ahead = st.columns([2, 1, 2], vertical_alignment="center")
    if here > 0:
        prev = pages[here - 1]
        back.page_link(prev, label=f"Previous: {prev.title}", icon=":material/arrow_back:", query_params=carry)
    with every.popover("All pages", icon=":material/menu:"):
        for p in pages:
            st.page_link(p, query_params=carry, disabled=p is pages[here])
    if here < len(pages) - 1:
        nxt = pages[here + 1]
        ahead.page_link(nxt, label=f"Next: {nxt.title}", icon=":material/arrow_forward:", query_params=carry)


def notes() -> None:
    """The run's notes, once per page (after the answer, or wherever a page stops before one)."""
    run = state.current()
    if run.notes_shown:
        return
    run.notes_shown = True
    _meeting_frame()
    for n in [*run.notes, *prices.link_notes()]:  # a link's pricing file this server does not hold: every page
        st.warning(md_escape(n), icon=":material/info:")


def answer(ans: Answer) -> None:
    """The page's answer: one plain sentence, at most four headline numbers, then the run's notes."""
    box = {"good": st.success, "warn": st.warning}.get(ans.tone, st.info)
    box(md_escape(ans.sentence))
    if ans.headlines:  # one row: a horizontal container is one element, columns are one per number and the row
        row = st.container(horizontal=True, gap="medium")
        for h in ans.headlines:
            row.metric(
                h.label,
                h.value,
                delta=h.delta,
                delta_color="inverse" if h.lower_is_better else "normal",
                help=h.help,
                width="stretch",
            )
    notes()


def section(title: str, key: str, icon: str | None = None):
    """A section below the fold: an expander built only while open (opening or closing it reruns the page), so a
    closed one costs one element on every change. Returns the expander to write into, or None while closed.
    Open sections stay open as the scenario changes (``open_<key>`` in the session)."""
    box = st.expander(title, key=f"open_{key}", on_change="rerun", icon=icon)
    return box if box.open else None


@contextlib.contextmanager
def guard(what: str):
    """Any failure in a section becomes a calm message; the rest of the page still renders."""
    try:
        yield
    except ValueError as exc:
        st.error(md_escape(f"{what}: {describe(exc)}"), icon=":material/error:")
        notes()
    except Exception as exc:  # noqa: BLE001 - no traceback ever reaches the browser
        log.exception("section %s failed", what)
        st.error(
            f"{what} could not be computed for this scenario ({type(exc).__name__}). "
            "Try other settings; the rest of the page still works.",
            icon=":material/error:",
        )
        notes()


def column_config(shown) -> dict:
    """Every column as wide as its widest text (header or cell: the grid alone sizes from the first rows and cut
    longer ones), text columns narrowed from the last leftwards where that makes the table fit a section at a 1280 px
    window (tables.fit_px), else the first column pinned (it stays in view while the rest scrolls), a
    short header where tables.SHORT_HEADERS has one (the full name as its help), thousands separators on every number
    column, dollars where the header says USD or $."""
    cols = list(shown.columns)
    number = [pd.api.types.is_numeric_dtype(shown[c]) and not pd.api.types.is_bool_dtype(shown[c]) for c in cols]
    money = [n and ("USD" in str(c) or "$" in str(c)) for c, n in zip(cols, number, strict=True)]
    labels = [SHORT_HEADERS.get(c, c) for c in cols]
    natural = [column_px(lab, shown[c].tolist(), m) for c, lab, m in zip(cols, labels, money, strict=True)]
    widths = fit_px(natural, [i > 0 and not n for i, n in enumerate(number)])
    pin = sum(widths) > TABLE_PX
    out = {}
    for i, (col, label, w) in enumerate(zip(cols, labels, widths, strict=True)):
        how = {
            "label": label,
            "help": col if label != col else None,
            "width": w,
            "pinned": True if pin and i == 0 else None,
        }
        if number[i]:
            out[col] = st.column_config.NumberColumn(format="dollar" if money[i] else "localized", **how)
        else:
            out[col] = st.column_config.Column(**how)
    return out


def _as_shown(df) -> tuple:
    """(frame, what st.dataframe gets, what people read, its column config): a cached.Table brings all four,
    built once per scenario (the Arrow form and the column widths); a bare DataFrame is converted here."""
    if isinstance(df, tuple):
        return tuple(df)
    shown = for_people(df)
    return df, shown, shown, column_config(shown)


def show(df, key: str) -> None:
    """A small table without a download (Methodology's, the rejected options): as people read it."""
    _, arrow, shown, config = _as_shown(df)
    st.dataframe(arrow, hide_index=True, width="stretch", key=f"show_{key}", column_config=config)


def table(df, key: str, file_name: str, **kw) -> None:
    """A dataframe (or a cached.Table) as people read it (rounded, "n/a" for missing values, thousands
    separators), with its CSV download at full precision (the same rows; every column of the frame, where a view
    shows fewer). The CSV is written only when someone clicks (Streamlit calls the function then), not on every
    rerun."""
    df, arrow, shown, config = _as_shown(df)
    if isinstance(kw.get("height"), int):  # no empty rows under a short table (35 px a row and the header)
        kw["height"] = min(kw["height"], 35 * (len(shown) + 1) + 3)
    st.dataframe(arrow, hide_index=True, width="stretch", key=f"df_{key}", column_config=config, **kw)
    st.download_button(
        "Download CSV",
        lambda: frame_to_csv(df),
        file_name,
        "text/csv",
        key=f"dl_{key}",
        on_click="ignore",
        icon=":material/download:",
    )
