"""The sidebar: page links, then every scenario input from the registry (gpuplan_core/inputs.py), group by group.

Built once per run by the frame (gpuplan_ui/frame.py) before the page runs, so every page sees the same
scenario and every value stays in the link on every page.

- An input that does not apply to the job (the fine-tuning method while serving, say) is not shown; if it holds
  a value other than its default, it is shown under "Kept in the link", so the link keeps it until the user
  changes it.
- A lazy group (GPU count, traffic, pricing, assumptions) builds its inputs only while open or while one of them
  holds a value other than its default: a group left alone costs nothing on a rerun, and a changed value is
  always built, so always in the link. Changed values in closed groups are named under the groups.
- A change that leaves the sidebar as it was (``shape``: the same groups, inputs and labels; only a value moved)
  reruns only the page (``state.PAGE_FRAGMENT``); the frame rebuilds the scenario from ``values_now``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from gpuplan_core import GROUPS, MAIN, SIDEBAR, Input, group_inputs, read_link

from . import fetches
from .fmt import md_escape
from .state import PAGE_FRAGMENT, SHAPE, SHARE_OPEN, page_reruns
from .widgets import BUILT, current, render


def render_sidebar(
    pages: list, link: dict[str, Any], carry: dict[str, str]
) -> tuple[dict[str, Any], str | None, list[str]]:
    """(input values, Hugging Face config text or None, notes). ``link`` holds the link's validated values;
    ``carry``, what the page links carry besides the bound inputs (the pages' own inputs)."""
    values: dict[str, Any] = {}
    built: set[str] = set()  # the inputs whose widgets this run builds (bound to the link)
    kept: list[Input] = []
    notes: list[str] = []
    config_text = None
    with st.sidebar:
        for p in pages:
            st.page_link(p, query_params=carry or None)
        st.divider()
        st.subheader("Scenario")
        for title, group in GROUPS.items():
            records = group_inputs(title)
            for inp in records:  # first what the job makes of each input (workload and src come first)
                values[inp.key] = current(inp, link)
                if not inp.applies(values) and not inp.is_default(values[inp.key]):
                    kept.append(inp)
            applying = [i for i in records if i.applies(values)]
            if not applying:
                continue
            box = _container(title, group.lazy, applying, values)
            if box is None:
                continue
            with box:
                for inp in applying:
                    values[inp.key] = render(inp, values, on_change=_changed)
                    built.add(inp.key)
                    if inp.key == "hf":
                        config_text = _hf_config(values["hf"], notes)
        if kept:
            with st.expander(f"Kept in the link, not used by this job ({len(kept)})"):
                st.caption("Values the link or you set for other jobs or model sources. Reset one to drop it.")
                for inp in kept:
                    values[inp.key] = render(inp, values, on_change=_changed)
                    built.add(inp.key)
        if line := closed_changes(values):
            st.caption(md_escape("Changed in closed groups: " + line))
    st.session_state[BUILT] = built
    return values, config_text, notes


def values_now(link: dict[str, Any]) -> dict[str, Any]:
    """Every sidebar input's value as ``render_sidebar`` would return it, without building a widget: what the
    session holds for a built widget (its value after this change), else what the link says, else the default."""
    return {inp.key: current(inp, link) for title in GROUPS for inp in group_inputs(title)}


def shape(values: dict[str, Any]) -> tuple:
    """What the sidebar shows besides its widgets' values: the job and model source (which inputs apply, their
    labels), the lazy groups built, the inputs kept in the link, the line naming closed groups' changes, and
    whether the share panel (which shows the link) is open. Equal before and after a change: only the page reruns."""
    lazy = tuple(
        bool(st.session_state.get(_open_key(t)))
        or any(i.applies(values) and not i.is_default(values[i.key]) for i in group_inputs(t))
        for t, g in GROUPS.items()
        if g.lazy
    )
    kept = tuple(i.key for i in SIDEBAR if not i.applies(values) and not i.is_default(values[i.key]))
    return (
        values.get("workload"),
        values.get("src"),
        lazy,
        kept,
        closed_changes(values),
        bool(st.session_state.get(SHARE_OPEN)),
    )


def _changed(*also: str) -> None:
    """on_change of every sidebar input (but the use case, which sets others): a change that leaves the sidebar as
    it was reruns only the page (and ``also``, the fragments named: a number's box and slider, gpuplan_ui/stepped.py);
    any other reruns the whole app (Streamlit's default)."""
    if page_reruns() and st.session_state.get(SHAPE) == shape(values_now(read_link(st.query_params.to_dict())[0])):
        st.rerun([PAGE_FRAGMENT, *also] if also else PAGE_FRAGMENT)


def _container(title: str, lazy: bool, records: list[Input], values: dict[str, Any]):
    if title == MAIN:
        return st.container()
    if not lazy:
        return st.expander(title, expanded=GROUPS[title].expanded)
    exp = st.expander(title, key=_open_key(title), on_change="rerun")
    if exp.open or any(not i.is_default(values[i.key]) for i in records):
        return exp
    return None


def _open_key(title: str) -> str:
    return "open_" + title.split()[0].lower()


def closed_changes(values: dict[str, Any]) -> str:
    """One line naming the changed values that sit in collapsed groups (empty when none), so a changed
    assumption is never out of sight."""
    parts = []
    for title, group in GROUPS.items():
        if not group.lazy or st.session_state.get(_open_key(title)):
            continue
        changed = [i for i in group_inputs(title) if i.applies(values) and not i.is_default(values[i.key])]
        if changed:
            parts.append(f"{title}: " + ", ".join(f"{i.short or i.key} {i.shown(values[i.key])}" for i in changed))
    return "; ".join(parts)


def _hf_config(model_id: str, notes: list[str]) -> str | None:
    up = st.file_uploader(
        "or upload config.json",
        type=["json"],
        key="cfg_upload",
        help="Stays in this browser session; it is not part of the shareable link.",
    )
    if up is not None:
        return up.getvalue()[:2_000_000].decode("utf-8", "replace")
    if not model_id:
        notes.append("No config loaded yet: type a Hugging Face model id or upload its config.json.")
        return None
    text, err = fetches.hf_config(model_id)
    if err:
        notes.append(f"Could not fetch {model_id!r}: {err}. Upload its config.json instead.")
    return text


assert all(i.group in GROUPS for i in SIDEBAR), "every sidebar input belongs to a declared group"
