"""The Offer model: a price above zero, how old a price is, and the offers in use when a file of yours is loaded."""

import datetime as dt

import pytest
from pydantic import ValidationError

from gpuplan_core.pricing.offers import Offer, merge_offers, price_age_days, staleness


def _offer(**kw) -> Offer:
    base = {
        "offer_id": "x-h100-od",
        "provider": "x",
        "product": "1 x H100",
        "gpu": "H100-SXM",
        "gpus_per_node": 1,
        "billing_model": "on_demand",
        "price_per_node_hour_usd": 2.0,
        "price_per_gpu_hour_usd": 2.0,
    }
    return Offer(**(base | kw))


def test_staleness_flags():
    today = dt.date(2026, 11, 29)
    assert price_age_days("2026-09-25", today) == 65 and staleness("2026-09-25", today) == ""  # 5 + 31 + 29 days
    assert staleness("2026-07-01", today) == "stale"  # 151 days > 90
    assert staleness("undated", today) == "undated" and price_age_days(None, today) is None


@pytest.mark.parametrize("column", ["price_per_gpu_hour_usd", "price_per_node_hour_usd"])
@pytest.mark.parametrize("price", [0.0, -1.0])
def test_an_offer_is_never_free(column, price):
    with pytest.raises(ValidationError, match="greater than 0"):
        _offer(**{column: price})
    assert _offer(**{column: 0.001}).model_dump()[column] == 0.001


def test_merge_replaces_same_id_adds_others_or_uses_yours_alone():
    a, b = _offer(), _offer(offer_id="y-h100-od", provider="y")
    mine = _offer(price_per_node_hour_usd=1.5, price_per_gpu_hour_usd=1.5)
    merged = merge_offers([a, b], [mine])
    assert [(o.offer_id, o.price_per_gpu_hour_usd) for o in merged] == [("y-h100-od", 2.0), ("x-h100-od", 1.5)]
    assert merge_offers([a, b], [mine], yours_only=True) == [mine]
