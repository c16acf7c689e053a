from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rental.pricing import DURATIONS_DAYS, MAX_LOTS, MIN_LOTS, quote

prices = st.decimals(
    min_value=Decimal("0.01"), max_value=Decimal("1000000"), places=2, allow_nan=False
)
lots = st.integers(min_value=MIN_LOTS, max_value=MAX_LOTS)
cards = st.integers(min_value=1, max_value=8)
durations = st.sampled_from(DURATIONS_DAYS)


def test_three_b200_lots_for_seven_days_cost_three_lot_prices_not_six():
    result = quote(lot_price_usd=Decimal("1915.20"), duration_days=7, lots=3, cards_per_lot=2)
    assert result.total_cards == 6
    assert result.total_usd == Decimal("5745.60")
    assert result.lot_price_usd == Decimal("1915.20")


def test_single_card_lot():
    result = quote(lot_price_usd=Decimal("201.60"), duration_days=3, lots=1, cards_per_lot=1)
    assert (result.total_cards, result.total_usd) == (1, Decimal("201.60"))


@given(price=prices, lots=lots, cards_per_lot=cards, duration=durations)
def test_total_is_lot_price_times_lots_whatever_the_cards(price, lots, cards_per_lot, duration):
    result = quote(
        lot_price_usd=price, duration_days=duration, lots=lots, cards_per_lot=cards_per_lot
    )
    assert result.total_usd == price * lots
    assert result.total_cards == lots * cards_per_lot
    assert result.total_usd.as_tuple().exponent == -2
    # The card count never enters the price: same lots, more cards per lot, same total.
    doubled = quote(
        lot_price_usd=price, duration_days=duration, lots=lots, cards_per_lot=cards_per_lot * 2
    )
    assert doubled.total_usd == result.total_usd


@given(
    price=prices, lots=st.integers(min_value=MIN_LOTS, max_value=MAX_LOTS - 1), duration=durations
)
def test_one_more_lot_adds_exactly_one_lot_price(price, lots, duration):
    smaller = quote(lot_price_usd=price, duration_days=duration, lots=lots, cards_per_lot=1)
    larger = quote(lot_price_usd=price, duration_days=duration, lots=lots + 1, cards_per_lot=1)
    assert larger.total_usd - smaller.total_usd == price


@given(bad_lots=st.one_of(st.integers(max_value=MIN_LOTS - 1), st.integers(min_value=MAX_LOTS + 1)))
def test_lots_outside_one_to_ten_are_refused(bad_lots):
    with pytest.raises(ValueError, match="lots"):
        quote(lot_price_usd=Decimal("10"), duration_days=7, lots=bad_lots, cards_per_lot=1)


@given(duration=st.integers().filter(lambda d: d not in DURATIONS_DAYS))
def test_unknown_durations_are_refused(duration):
    with pytest.raises(ValueError, match="duration"):
        quote(lot_price_usd=Decimal("10"), duration_days=duration, lots=1, cards_per_lot=1)


@pytest.mark.parametrize("bad", [2.5, "3", True, None])
def test_lots_must_be_an_int(bad):
    with pytest.raises(TypeError):
        quote(lot_price_usd=Decimal("10"), duration_days=7, lots=bad, cards_per_lot=1)


@pytest.mark.parametrize("price", [Decimal("0"), Decimal("-1.00")])
def test_price_must_be_positive(price):
    with pytest.raises(ValueError, match="positive"):
        quote(lot_price_usd=price, duration_days=7, lots=1, cards_per_lot=1)


def test_float_prices_are_refused():
    with pytest.raises(TypeError):
        quote(lot_price_usd=19.99, duration_days=7, lots=1, cards_per_lot=1)
