"""What every page starts with (its title, the frame's notes, the scenario), calm errors, and tables."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import streamlit as st

from gpuplan_core.errors import describe
from gpuplan_core.scenario import Scenario

from . import frame
from .export import frame_to_csv
from .fmt import md_escape

log = logging.getLogger("gpuplan")


def setup(title: str) -> tuple[Scenario, dict[str, Any]]:
    """The page's title, then the notes of this run (link values not allowed, warnings); returns the scenario
    the frame built from the sidebar and the input values."""
    run = frame.current()
    st.title(title)
    for n in run.notes:
        st.warning(md_escape(n), icon=":material/info:")
    return run.scenario, run.values


@contextlib.contextmanager
def guard(what: str):
    """Any failure in a section becomes a calm message; the rest of the page still renders."""
    try:
        yield
    except ValueError as exc:
        st.error(md_escape(f"{what}: {describe(exc)}"), icon=":material/error:")
    except Exception as exc:  # noqa: BLE001 - no traceback ever reaches the browser
        log.exception("section %s failed", what)
        st.error(
            f"{what} could not be computed for this scenario ({type(exc).__name__}). "
            "Try other settings; the rest of the page still works.",
            icon=":material/error:",
        )


def table(df, key: str, file_name: str, **kw) -> None:
    """A dataframe (or a cached.Table) with its CSV download (the same rows and columns as shown). The CSV
    is written only when someone clicks (Streamlit calls the function then), not on every rerun."""
    shown = df
    if isinstance(df, tuple):  # cached.Table: show the Arrow form converted once, download the frame
        df, shown = df
    st.dataframe(shown, hide_index=True, width="stretch", key=f"df_{key}", **kw)
    st.download_button(
        "Download CSV",
        lambda: frame_to_csv(df),
        file_name,
        "text/csv",
        key=f"dl_{key}",
        on_click="ignore",
        icon=":material/download:",
    )
