"""The prices this session uses: the bundled catalog, a pricing file the user loaded (added or alone) and their own
prices from the scenario, as one pricing key the cached reports are keyed by, and the line that says which.

A loaded file is kept on the server by content hash (gpuplan_core's pricing store: SQLite in the data folder, or
the PostgreSQL of ``GPUPLAN_DATABASE_URL``) and named by the link's ``pricefile``, so a reload or a shared link
prices with it; ``stored`` reads it (a file found is remembered here for ten minutes: a rerun reads no database).
A link naming a file this server does not hold gets a note on every page (``link_notes``)."""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import NamedTuple

import streamlit as st

from gpuplan_core import (
    Offer,
    StoreError,
    apply_price_overrides,
    get_gpu,
    load_pricing,
    load_pricing_text,
    merge_offers,
    missing_note,
    parse_price_overrides,
    server_store,
)

from . import state, widgets
from .fmt import counted

log = logging.getLogger("gpuplan")
LINK_KEY = "pricefile"  # the link key naming the stored pricing file (gpuplan_core's registry)
SESSION_ONLY = "pricing_session_only"  # (Loaded, why): a file the store could not keep, used in this session only
HIT_TTL_S = 600.0  # a stored file found is remembered this long (its content never changes; expiry is 90 days)
_HITS: dict[tuple[str, str], tuple[float, Loaded]] = {}  # (store, link key or sha256) -> (when found, the file)
_LOCK = threading.Lock()


class Loaded(NamedTuple):
    name: str  # the file's name or the link
    offers: list[dict]  # the usable rows, as Offer dumps
    errors: list[str]
    warnings: list[str]
    rows: int  # rows read
    kind: str  # "upload", "link" or "catalogs"
    key: str = ""  # the link's pricefile (empty: not kept on the server)
    sha256: str = ""


def parsed(data: bytes, name: str, kind: str) -> Loaded:
    offers, errors, warnings, n = parse_uploaded_pricing(data)
    return Loaded(name, offers, errors, warnings, n, kind)


def store():
    """The pricing store this server uses (GPUPLAN_DATABASE_URL or GPUPLAN_DATA_DIR as they are now)."""
    return server_store()


def remember(loaded: Loaded) -> None:
    where = store().where
    with _LOCK:
        if len(_HITS) > 64:
            _HITS.clear()
        _HITS[(where, loaded.key)] = _HITS[(where, loaded.sha256)] = (time.monotonic(), loaded)


def lookup(key: str) -> tuple[Loaded | None, str | None]:
    """(the stored file a link or pricing key names, parsed, or None; why not, when it names one that cannot be
    used: not held here, or the database cannot be read)."""
    if not key:
        return None, None
    try:
        where = store().where
        with _LOCK:
            hit = _HITS.get((where, key))
        if hit is not None and time.monotonic() - hit[0] < HIT_TTL_S:
            return hit[1], None
        found = store().get(key)
    except StoreError as exc:
        log.warning("pricing store: %s", exc)
        return (
            None,
            f"This link's pricing file {key[:64]} cannot be read now ({exc}): the answers use the catalog's prices.",
        )
    if found is None:
        return None, missing_note(key)
    loaded = parsed(found.data, found.name, found.kind)._replace(key=found.key, sha256=found.sha256)
    remember(loaded)
    return loaded, None


def stored(key: str) -> Loaded | None:
    return lookup(key)[0]


def link_file_key() -> str:
    """The link's ``pricefile`` in this run (the frame synced it from the link; the Data page's loads set it)."""
    return str(widgets.page_value(LINK_KEY) or "")


def session_file() -> Loaded | None:
    """A file loaded in this session that the store could not keep (too large for it, or its database down):
    used by this session's pages until removed, and not in the link."""
    held = st.session_state.get(SESSION_ONLY)
    return held[0] if held else None


def link_notes() -> list[str]:
    """The note every page shows when the link names a pricing file that cannot be used; else none."""
    note = lookup(link_file_key())[1]
    return [note] if note else []


@st.cache_data(show_spinner=False)
def bundled_pricing() -> tuple[list[dict], list[str], list[str]]:
    r = load_pricing()
    return [o.model_dump() for o in r.offers], [str(e) for e in r.errors], [str(w) for w in r.warnings]


@st.cache_data(max_entries=32, show_spinner=False)
def parse_uploaded_pricing(data: bytes) -> tuple[list[dict], list[str], list[str], int]:
    r = load_pricing_text(data)
    return [o.model_dump() for o in r.offers], [str(e) for e in r.errors], [str(w) for w in r.warnings], r.rows_read


def pricing_key() -> str:
    """'bundled', or '<sha256 of the link's stored pricing file>:<add|only>' (the Pricing group's "Your pricing
    file" input says whether it is added to the bundled offers or used alone), then '|' and the "Your prices"
    overrides when there are some (they are in the link). A file this server does not hold is 'bundled'."""
    pricing = state.current().scenario.pricing  # your prices as the scenario holds them: each one above 0
    link = link_file_key()
    mine_file = stored(link) if link else session_file()
    key = f"{mine_file.sha256}:{pricing.price_source}" if mine_file else "bundled"
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
        yours = [Offer(**r) for r in _file_offers(key)]
        offers = merge_offers(offers, yours, yours_only=key.endswith(":only")) if yours else offers
    if not mine:
        return offers, []
    try:
        return apply_price_overrides(offers, parse_price_overrides(mine))
    except ValueError as exc:
        return offers, [f"{exc}. The catalog prices are used meanwhile."]


def _file_offers(key: str) -> list[dict]:
    """The usable offers of the stored file a pricing key names (by its sha256)."""
    sha = key.partition(":")[0]
    if (mine := session_file()) is not None and mine.sha256 == sha:
        return mine.offers
    found = stored(sha)
    return found.offers if found is not None else []


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
    yours = [Offer(**row) for row in _file_offers(key)]
    if key.endswith(":only"):
        return (
            f"Prices: your {counted(len(yours), 'offer')} only; the {n_bundled} bundled offers are set aside "
            "(Pricing, 'Your pricing file')."
        )
    ids = {r["offer_id"] for r in bundled_pricing()[0]}
    replaced = sum(1 for o in yours if o.offer_id in ids)
    return (
        f"Prices: the {n_bundled} bundled offers + your {len(yours)}"
        + (f" ({replaced} replace bundled offers with the same id)" if replaced else "")
        + ". Use yours alone under Pricing, 'Your pricing file'."
    )


def prices_in_use() -> str:
    """One line saying which prices the page uses when they are not the bundled catalog's alone (a loaded file,
    your prices), shown wherever prices are used."""
    return " ".join(x for x in (_file_line(), price_overrides_line()[0]) if x)


@functools.lru_cache(maxsize=16)
def _offered_gpus(key: str) -> frozenset[str]:
    return frozenset(get_gpu(o.gpu).gpu for o in offers_for(key))


_ELSEWHERE = {"memory": "its speed on Performance", "speed": "its memory on Memory"}


def no_offer_line(gpu: str | None, shown_here: str | None = None) -> str:
    """A catalog GPU type chosen that no offer in the prices in use rents (Gaudi 3 in the bundled prices), in words;
    empty when one does or none is chosen. Every page says it under its title, and where its figures are: the page
    that draws them without an offer (``shown_here``: "memory" on Memory, "speed" on Performance) says so, the
    others (no figure for it at all) name the pages that have them."""
    if not gpu or gpu in _offered_gpus(pricing_key()):
        return ""
    where = (
        f"its {shown_here} is shown here and {_ELSEWHERE[shown_here]}"
        if shown_here
        else "Memory and Performance show its memory and speed"
    )
    return (
        f"{get_gpu(gpu).label} is in the catalog, but no offer in the prices in use rents it: {where}, with no cost "
        "and no recommendation for it (an offer of your own on Data & pricing upload adds one)."
    )
