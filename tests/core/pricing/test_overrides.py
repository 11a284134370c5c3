"""Your prices: 'offer-id=price' per GPU-hour replaces the catalog price; a price of zero or below is refused for
that offer alone with a note naming it, and the other prices still apply."""

import pytest

from gpuplan_core.pricing.overrides import MAX_PRICE_OVERRIDES, apply_price_overrides, parse_price_overrides


def test_parse_reads_ids_and_prices_and_keeps_non_positive_ones_for_apply_to_refuse():
    assert parse_price_overrides("a-od=1.50, b-od = 0 ;c-od=-2") == {"a-od": 1.5, "b-od": 0.0, "c-od": -2.0}
    assert parse_price_overrides("") == {} and parse_price_overrides(None) == {}


@pytest.mark.parametrize("text", ["no-equals-sign", "=1.5", "a=abc", "a=nan", "a=inf", "a=-inf", "a=100001"])
def test_parse_refuses_what_is_not_an_id_and_a_price(text):
    with pytest.raises(ValueError, match="is not 'offer-id=USD per GPU-hour' with a price above 0 and up to 100,000"):
        parse_price_overrides(text)


def test_parse_caps_the_number_of_prices():
    with pytest.raises(ValueError, match=f"at most {MAX_PRICE_OVERRIDES}"):
        parse_price_overrides(",".join(f"o{i}=1" for i in range(MAX_PRICE_OVERRIDES + 1)))


def test_a_zero_or_negative_price_is_refused_with_a_note_and_the_others_apply(seed):
    by_id = {o.offer_id: o for o in seed.offers}
    verda, aws = by_id["verda-1b200-od"], by_id["aws-p5-48xl-use1-od"]  # 1 x B200 at 4.89; 8 x H100 at 6.88/GPU
    offers, notes = apply_price_overrides(
        seed.offers, {"verda-1b200-od": 0.0, "aws-p5-48xl-use1-od": 5.0, "runpod-h100-secure-od": -1.0}
    )
    out = {o.offer_id: o for o in offers}
    assert len(offers) == len(seed.offers)
    assert out["verda-1b200-od"] == verda  # the catalog price stands
    assert out["runpod-h100-secure-od"] == by_id["runpod-h100-secure-od"]
    mine = out["aws-p5-48xl-use1-od"]
    assert mine.user_price and mine.price_per_gpu_hour_usd == 5.0 and mine.price_per_node_hour_usd == 5.0 * 8
    assert mine.source.startswith("your price (catalog: $6.88/GPU-hour") and mine.price_as_of is None
    assert aws.price_per_gpu_hour_usd == 6.88  # the catalog's offer itself is unchanged
    assert notes == [
        "Your prices: verda-1b200-od=0 is refused (allowed: above 0 USD per GPU-hour); "
        "the catalog's $4.89/GPU-hour stands.",
        "Your prices: runpod-h100-secure-od=-1 is refused (allowed: above 0 USD per GPU-hour); "
        f"the catalog's ${by_id['runpod-h100-secure-od'].price_per_gpu_hour_usd:,.2f}/GPU-hour stands.",
    ]
    assert [o.offer_id for o in offers if o.user_price] == ["aws-p5-48xl-use1-od"]


def test_an_unknown_id_is_named(seed):
    offers, notes = apply_price_overrides(seed.offers, {"nobody-h100": 1.0, "ghost-a100": -3.0})
    assert not any(o.user_price for o in offers)
    assert notes == [
        "Your prices: ghost-a100=-3 is refused (allowed: above 0 USD per GPU-hour); no offer has that id either.",
        "Your prices: no offer is called nobody-h100; see the offer ids on the Cost page.",
    ]
