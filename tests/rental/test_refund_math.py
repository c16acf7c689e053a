"""The refund of an order ended early: lot price ÷ hours of the duration × hours not delivered
× lots, in whole hours (a started hour counts), rounded once; paid extensions at their own
price."""

import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rental.models import ExtensionStatus, Order, OrderExtension, OrderStatus
from rental.money import usd
from rental.refunds import hours_not_delivered, refund_for_order, refund_usd
from rental.services.extensions import extension_set_status

DURATIONS = st.sampled_from([3, 7, 30])
LOTS = st.integers(min_value=1, max_value=10)
PRICES = st.decimals(
    min_value=Decimal("0.01"), max_value=Decimal("1000000.00"), places=2, allow_nan=False
)
START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def formula(price: Decimal, days: int, lots: int, hours: int) -> Decimal:
    return usd(price * hours * lots / (days * 24))


@given(
    price=PRICES,
    days=DURATIONS,
    lots=LOTS,
    fraction=st.fractions(min_value=0, max_value=1),
)
@settings(max_examples=500, deadline=None)
def test_refund_is_the_formula_rounded_once_and_never_more_than_paid(price, days, lots, fraction):
    hours = math.floor(fraction * days * 24)
    amount = refund_usd(price, days, lots, hours)
    assert amount == formula(price, days, lots, hours)
    assert Decimal("0.00") <= amount <= lots * price
    assert amount == amount.quantize(Decimal("0.01"))


@given(price=PRICES, days=DURATIONS, lots=LOTS)
def test_the_whole_period_refunds_the_whole_price(price, days, lots):
    assert refund_usd(price, days, lots, days * 24) == price * lots
    assert refund_usd(price, days, lots, 0) == Decimal("0.00")


@pytest.mark.parametrize("hours", [-1, 73])
def test_hours_outside_the_period_are_refused(hours):
    with pytest.raises(ValueError):
        refund_usd(Decimal("100.00"), 3, 1, hours)


def test_a_float_price_is_refused():
    with pytest.raises(TypeError):
        refund_usd(100.0, 3, 1, 10)


def _order(*, days=3, lots=1, price="100.00", starts_at=None, status=OrderStatus.ACTIVE) -> Order:
    """An order as rental.refunds reads it, without extensions (nothing is saved)."""
    order = Order(
        status=status,
        duration_days=days,
        lots=lots,
        lot_price_usd=Decimal(price),
        total_usd=Decimal(price) * lots,
        starts_at=starts_at,
        ends_at=starts_at + timedelta(days=days) if starts_at else None,
    )
    order._prefetched_objects_cache = {"extensions": []}
    return order


@given(
    price=PRICES,
    days=DURATIONS,
    lots=LOTS,
    elapsed=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=31)),
)
@settings(max_examples=300, deadline=None)
def test_hours_not_delivered_count_a_started_hour(price, days, lots, elapsed):
    order = _order(days=days, lots=lots, price=str(price), starts_at=START)
    now = START + elapsed
    hours = hours_not_delivered(order, now)
    period = timedelta(days=days)
    expected = 0 if elapsed >= period else math.ceil((period - elapsed) / timedelta(hours=1))
    assert hours == min(expected, days * 24)
    assert 0 <= hours <= days * 24
    quote = refund_for_order(order, now)
    assert quote.hours == hours
    assert quote.amount == formula(price, days, lots, hours)
    assert Decimal("0.00") <= quote.amount <= lots * price


def test_one_second_into_an_hour_that_hour_is_not_delivered():
    order = _order(days=3, price="72.00", starts_at=START)
    assert hours_not_delivered(order, START + timedelta(hours=10, seconds=1)) == 62
    assert hours_not_delivered(order, START + timedelta(hours=10)) == 62
    assert hours_not_delivered(order, START + timedelta(hours=9, minutes=59)) == 63
    assert refund_for_order(order, START + timedelta(hours=10)).amount == Decimal("62.00")


@pytest.mark.parametrize("status", [OrderStatus.PAID, OrderStatus.PROVISIONING])
def test_an_order_that_never_started_gets_its_whole_duration(status):
    order = _order(days=7, lots=3, price="123.45", status=status)
    quote = refund_for_order(order, START + timedelta(days=40))
    assert quote.hours == 7 * 24
    assert quote.amount == Decimal("370.35")


def test_a_rental_over_refunds_nothing():
    order = _order(days=3, starts_at=START)
    assert refund_for_order(order, START + timedelta(days=3)).amount == Decimal("0.00")
    assert hours_not_delivered(order, START + timedelta(days=5)) == 0


# ------------------------------------------------------------ paid extensions (database)


@pytest.fixture
def active_order(catalogue, customer, place_order):
    from rental.services import order_set_status

    order = place_order(customer, catalogue["h100"], lots=2, duration_days=3)
    Order.objects.filter(pk=order.pk).update(lot_price_usd=Decimal("72.00"), total_usd=144)
    for status in (OrderStatus.PAID, OrderStatus.PROVISIONING):
        order_set_status(order_id=order.pk, to_status=status, actor=None, reason="test")
    return order_set_status(
        order_id=order.pk,
        to_status=OrderStatus.ACTIVE,
        actor=None,
        reason="test",
        starts_at=START,
        ends_at=START + timedelta(days=3),
    )


def extension(order, *, days, price, status=ExtensionStatus.PAID, starts_at=None):
    """An extension row as rental.services.extensions leaves it (paid: its period set, through
    the extension setter)."""
    extension = OrderExtension.objects.create(  # asked for: awaiting payment
        order=order,
        customer=order.customer,
        duration_days=days,
        lots=order.lots,
        lot_price_usd=Decimal(price),
        total_usd=Decimal(price) * order.lots,
    )
    if status == ExtensionStatus.AWAITING_PAYMENT:
        return extension
    return extension_set_status(
        extension_id=extension.pk,
        to_status=status,
        actor=None,
        reason="test: paid",
        period_starts_at=starts_at,
        period_ends_at=starts_at + timedelta(days=days),
        paid_at=starts_at,
    )


def test_each_paid_extension_is_refunded_at_its_own_price(active_order):
    own_end = START + timedelta(days=3)
    extension(active_order, days=7, price="168.00", starts_at=own_end)
    second = own_end + timedelta(days=7)
    extension(active_order, days=3, price="36.00", starts_at=second)
    # Another one awaiting payment adds nothing.
    extension(active_order, days=30, price="999.00", status=ExtensionStatus.AWAITING_PAYMENT)

    # 30 minutes into hour 49: 24 hours of the order's own period left (at 72.00 / 72 h),
    # then both extensions whole.
    now = START + timedelta(hours=48, minutes=30)
    quote = refund_for_order(active_order, now)
    assert [segment.hours for segment in quote.segments] == [24, 168, 72]
    assert quote.hours == 264
    own = Decimal("72.00") * 24 * 2 / 72
    assert quote.amount == usd(own + Decimal("168.00") * 2 + Decimal("36.00") * 2)
    assert quote.amount == Decimal("456.00")

    # Inside the first extension: nothing of the own period, the rest of it at its price.
    now = own_end + timedelta(days=2, minutes=1)
    quote = refund_for_order(active_order, now)
    assert [segment.hours for segment in quote.segments] == [0, 5 * 24, 72]
    assert quote.amount == usd(Decimal("168.00") * 120 * 2 / 168 + Decimal("72.00"))
    assert quote.amount == Decimal("312.00")


def test_extension_at_an_odd_price_is_rounded_once_with_the_rest(active_order):
    own_end = START + timedelta(days=3)
    extension(active_order, days=7, price="100.01", starts_at=own_end)
    now = own_end + timedelta(hours=1, seconds=1)  # 167 started hours of it left
    quote = refund_for_order(active_order, now)
    assert quote.hours == 167
    assert quote.amount == usd(Decimal("100.01") * 167 * 2 / 168)
    assert hours_not_delivered(active_order, now) == 167
