"""The prices this session uses: the bundled catalog, a pricing file the user loaded (added or alone) and their own
prices from the scenario, as one pricing key the cached reports are keyed by, and the line that says which."""

from __future__ import annotations

import streamlit as st

from gpuplan_core import (
    Offer,
    apply_price_overrides,
    load_pricing,
    load_pricing_text,
    merge_offers,
    parse_price_overrides,
)

from . import state


@st.cache_data(show_spinner=False)
def bundled_pricing() -> tuple[list[dict], list[str], list[str]]:
    r = load_pricing()
    return [o.model_dump() for o in r.offers], [str(e) for e in r.errors], [str(w) for w in r.warnings]


@st.cache_data(max_entries=32, show_spinner=False)
def parse_uploaded_pricing(data: bytes) -> tuple[list[dict], list[str], list[str], int]:
    r = load_pricing_text(data)
    return [o.model_dump() for o in r.offers], [str(e) for e in r.errors], [str(w) for w in r.warnings], r.rows_read


def pricing_key() -> str:
    """'bundled', or '<hash of this session's pricing file>:<add|only>' (the file stays in its session; the
    Pricing group's "Your pricing file" input says whether it is added to the bundled offers or used alone),
    then '|' and the "Your prices" overrides when there are some (they are in the link)."""
    pricing = state.current().scenario.pricing  # your prices as the scenario holds them: each one above 0
    upload = st.session_state.get("pricing_upload_key")
    key = f"{upload}:{pricing.price_source}" if upload else "bundled"
    mine = ",".join(f"{oid}={usd!r}" for oid, usd in pricing.your_prices.items())
    return f"{key}|{mine}" if mine else key


def offers_for(key: str) -> list[Offer]:
    return _priced(key)[0]


def _priced(key: str) -> tuple[list[Offer], list[str]]:
    """The offers in use for a pricing key, and the notes on "Your prices" (a refused or unknown one, or why
    none applies: the catalog prices stand meanwhile)."""
    key, _, mine = key.partition("|")
    offers = [Offer(**r) for r in bundled_pricing()[0]]
    if key != "bundled":
        yours = [Offer(**r) for r in st.session_state.get("pricing_upload_offers") or []]
        offers = merge_offers(offers, yours, yours_only=key.endswith(":only")) if yours else offers
    if not mine:
        return offers, []
    try:
        return apply_price_overrides(offers, parse_price_overrides(mine))
    except ValueError as exc:
        return offers, [f"{exc}. The catalog prices are used meanwhile."]


def price_overrides_line() -> tuple[str, bool]:
    """(what the "Your prices" input does, is anything refused): 'Your prices (2): ...', and each refused or
    unknown price and why."""
    if not pricing_key().partition("|")[2]:
        return "", False
    offers, notes = _priced(pricing_key())
    applied = [f"{o.offer_id} ${o.price_per_gpu_hour_usd:,.2f}/GPU-hour" for o in offers if o.user_price]
    head = f"Your prices ({len(applied)}): " + ", ".join(applied) + ". " if applied else ""
    return head + " ".join(notes), bool(notes)


def offers_in_use() -> list[Offer]:
    return offers_for(pricing_key())


def _file_line() -> str:
    key = pricing_key().partition("|")[0]
    if key == "bundled":
        return ""
    n_bundled = len(bundled_pricing()[0])
    yours = st.session_state.get("pricing_upload_offers") or []
    if key.endswith(":only"):
        return (
            f"Prices: your {len(yours)} offers only; the {n_bundled} bundled offers are set aside "
            "(Pricing, 'Your pricing file')."
        )
    ids = {r["offer_id"] for r in bundled_pricing()[0]}
    replaced = sum(1 for r in yours if r["offer_id"] in ids)
    return (
        f"Prices: the {n_bundled} bundled offers + your {len(yours)}"
        + (f" ({replaced} replace bundled offers with the same id)" if replaced else "")
        + ". Use yours alone under Pricing, 'Your pricing file'."
    )


def prices_in_use() -> str:
    """One line saying which prices the page uses when they are not the bundled catalog's alone (a loaded file,
    your prices), shown wherever prices are used."""
    return " ".join(x for x in (_file_line(), price_overrides_line()[0]) if x)
