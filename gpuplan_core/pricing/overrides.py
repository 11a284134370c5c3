"""Your prices: negotiated or committed rates per GPU-hour that replace the catalog's ('offer-id=1.50, ...').

A price of zero or below is refused for its offer alone, with a note naming it: the catalog price stands for
that offer and your other prices still apply (an offer is never free; "=0" is a typo or a placeholder).
"""

from __future__ import annotations

import math

from .offers import MAX_PRICE_USD_PER_HOUR, Offer

MAX_PRICE_OVERRIDES = 50


def parse_price_overrides(text: str | None) -> dict[str, float]:
    """'offer-id=2.10, other-id=0.85' (USD per GPU-hour) -> {offer id: price}. An entry that is not ``id=number``
    with a number up to 100,000 raises a ValueError naming it; a number of 0 or below is kept here and refused by
    ``apply_price_overrides`` for that offer alone."""
    out: dict[str, float] = {}
    for part in (text or "").replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        oid, sep, value = part.partition("=")
        oid = oid.strip()
        try:
            price = float(value)
        except ValueError:
            price = math.nan
        if not sep or not oid or not price <= MAX_PRICE_USD_PER_HOUR or math.isinf(price):
            raise ValueError(
                f"your prices: {part[:60]!r} is not 'offer-id=USD per GPU-hour' with a price above 0 and up to "
                f"{MAX_PRICE_USD_PER_HOUR:,} (e.g. 'vast-h100-1-od=1.50, runpod-l40s-secure-od=0.80')"
            )
        out[oid] = price
    if len(out) > MAX_PRICE_OVERRIDES:
        raise ValueError(f"your prices: at most {MAX_PRICE_OVERRIDES} offers")
    return out


def apply_price_overrides(offers: list[Offer], overrides: dict[str, float]) -> tuple[list[Offer], list[str]]:
    """The offers with your price per GPU-hour where you gave one above 0 (the node price scales with it; the
    source says "your price" and keeps the catalog's), and a note for every price of 0 or below (refused: the
    catalog price stands) and for every id that matches no offer."""
    by_id = {o.offer_id: o for o in offers}
    refused = {k: p for k, p in overrides.items() if not p > 0}
    out = []
    for o in offers:
        p = overrides.get(o.offer_id)
        if p is None or o.offer_id in refused:
            out.append(o)
            continue
        out.append(
            o.model_copy(
                update={
                    "price_per_gpu_hour_usd": p,
                    "price_per_node_hour_usd": p * o.gpus_per_node,
                    "user_price": True,
                    "source": f"your price (catalog: ${o.price_per_gpu_hour_usd:,.2f}/GPU-hour, {o.source})"[:2000],
                    "price_as_of": None,
                }
            )
        )
    notes = []
    for k, p in refused.items():
        stands = (
            f"the catalog's ${by_id[k].price_per_gpu_hour_usd:,.2f}/GPU-hour stands"
            if k in by_id
            else "no offer has that id either"
        )
        notes.append(f"Your prices: {k}={p:g} is refused (allowed: above 0 USD per GPU-hour); {stands}.")
    unknown = sorted(set(overrides) - set(by_id) - set(refused))
    if unknown:
        notes.append(f"Your prices: no offer is called {', '.join(unknown)}; see the offer ids on the Cost page.")
    return out, notes
