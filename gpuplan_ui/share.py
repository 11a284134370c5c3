"""The "Share and save" box: the link that reproduces the scenario on this page, a copy control, and the
scenario file (every input) to download and import."""

from __future__ import annotations

from typing import Any

import streamlit as st

from gpuplan_core.links import link_query, read_scenario_file, scenario_file
from gpuplan_core.scenario import Scenario

from .widgets import PAGE_INPUTS, set_inputs

IMPORT_NOTES = "import_notes"


def all_values(values: dict[str, Any]) -> dict[str, Any]:
    """The sidebar's values and the pages' own inputs (as held now, on whichever page they live)."""
    return {**values, **st.session_state.get(PAGE_INPUTS, {})}


def page_url(values: dict[str, Any]) -> str:
    """This page's address with the query string of every input not at its default (st.context.url has none)."""
    try:
        base = (st.context.url or "").split("?")[0]
    except Exception:  # noqa: BLE001 - no request context (AppTest)
        base = ""
    query = link_query(values)
    return f"{base or '/'}{'?' + query if query else ''}"


def panel(values: dict[str, Any], sc: Scenario, page: str) -> None:
    # Rendered only while open (a lazy expander): its elements are not rebuilt on every rerun.
    box = st.expander("Share and save", key="share_open", on_change="rerun", icon=":material/share:")
    if not box.open:
        return
    everything = all_values(values)  # read now: the download below runs outside this script run
    with box:
        st.caption(
            "Copy this link (the copy button is at the box's right edge): it opens this page with this "
            "scenario. An uploaded config or pricing file stays in this session and is not in the link."
        )
        st.code(page_url(everything), language=None, wrap_lines=True)
        st.download_button(
            "Download scenario (JSON)",
            lambda: scenario_file(everything, sc, page),  # written on click, not on every rerun
            "gpuplan-scenario.json",
            "application/json",
            on_click="ignore",
            key="dl_scenario",
            icon=":material/download:",
        )
        st.file_uploader("Import a scenario JSON", type=["json"], key="scenario_upload", on_change=_apply_import)


def _apply_import() -> None:
    """on_change of the scenario upload: set every input before the widgets render on the rerun."""
    f = st.session_state.get("scenario_upload")
    if f is None:
        return
    values, notes = read_scenario_file(f.getvalue()[:200_000])
    set_inputs(values)
    st.session_state[IMPORT_NOTES] = notes or [f"Scenario imported ({len(values)} inputs)."]
