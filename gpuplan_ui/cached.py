"""Cache wrappers around gpuplan_core calls: one thin module, stable names, shared by every page.

Arguments are the scenario as JSON (hashable, exactly the inputs). Reports are plain dicts held with
st.cache_resource (no serialised copy per rerun: pages only read them, never mutate them); anything a
page may change goes through st.cache_data, which returns a copy.
"""

from __future__ import annotations

import streamlit as st

from gpuplan_core import api
from gpuplan_core.catalog import load_gpus
from gpuplan_core.pricing import Offer, load_pricing, load_pricing_text
from gpuplan_core.scenario import Scenario


def _sc(sc_json: str) -> Scenario:
    return Scenario.model_validate_json(sc_json)


@st.cache_resource(max_entries=256, show_spinner=False)
def memory_report(sc_json: str) -> dict:
    return api.memory_report(_sc(sc_json))


@st.cache_resource(max_entries=256, show_spinner=False)
def perf_report(sc_json: str, gpus: tuple[str, ...] | None = None) -> dict:
    return api.perf_report(_sc(sc_json), gpus=list(gpus) if gpus is not None else None)


@st.cache_resource(max_entries=128, show_spinner=False)
def cost_report(sc_json: str, pricing_key: str) -> dict:
    return api.cost_report(_sc(sc_json), offers=_offers(pricing_key))


@st.cache_resource(max_entries=128, show_spinner=False)
def plan_report(sc_json: str, pricing_key: str, explore_formats: bool = False) -> dict:
    return api.plan_report(_sc(sc_json), offers=_offers(pricing_key), explore_formats=explore_formats)


@st.cache_resource(show_spinner=False)
def calibration_report() -> dict:
    return api.calibration_report()


@st.cache_data(show_spinner=False)
def gpu_table() -> list[dict]:
    return [g.model_dump() | {"aliases": "; ".join(g.aliases)} for g in load_gpus()]


@st.cache_data(show_spinner=False)
def bundled_pricing() -> tuple[list[dict], list[str], list[str]]:
    r = load_pricing()
    return [o.model_dump() for o in r.offers], [str(e) for e in r.errors], [str(w) for w in r.warnings]


@st.cache_data(max_entries=32, show_spinner=False)
def parse_uploaded_pricing(data: bytes) -> tuple[list[dict], list[str], list[str], int]:
    r = load_pricing_text(data)
    return [o.model_dump() for o in r.offers], [str(e) for e in r.errors], [str(w) for w in r.warnings], r.rows_read


def pricing_key() -> str:
    """'bundled', or the hash of this session's uploaded pricing (the upload stays in its session)."""
    return st.session_state.get("pricing_upload_key", "bundled")


def _offers(key: str) -> list[Offer]:
    if key != "bundled":
        rows = st.session_state.get("pricing_upload_offers")
        if rows:
            return [Offer(**r) for r in rows]
    return [Offer(**r) for r in bundled_pricing()[0]]


@st.cache_data(ttl=3600, max_entries=64, show_spinner=False)
def fetch_hf_config(model_id: str) -> tuple[str | None, str | None]:
    from gpuplan_core.net import FetchError
    from gpuplan_core.net import fetch_hf_config as fetch

    try:
        return fetch(model_id), None
    except FetchError as exc:
        return None, str(exc)
