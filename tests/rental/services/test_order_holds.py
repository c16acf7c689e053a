"""An unpaid order holds its lots for ORDER_HOLD_MINUTES; the minute tick then releases them,
unless a crypto payment holds them by then (until its own expiry)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from rental.exceptions import InsufficientStock
from rental.models import Order, OrderStatus, OrderStatusChange
from rental.services import order_cancel_by_customer, order_hold_for_payment
from rental.services.intents import order_release_expired_hold, orders_release_expired_holds
from rental.services.lifecycle import rentals_tick
from tests.conftest import lots_available, set_stock

SECOND = timedelta(seconds=1)


def statuses(*orders) -> list[str]:
    return [Order.objects.get(pk=order.pk).status for order in orders]


def test_orders_never_paid_release_their_lots_when_the_hold_runs_out(
    catalogue, make_customer, place_order
):
    """The seen failure: one account's unpaid orders held every H200 lot, and the next customer
    was told none was available, for as long as nobody paid."""
    h200 = catalogue["h200"]
    set_stock(h200, 30)
    hoarder, newcomer = make_customer(), make_customer()
    orders = [place_order(hoarder, h200, lots=10) for _ in range(3)]
    assert lots_available(h200) == 0
    with pytest.raises(InsufficientStock) as refused:
        place_order(newcomer, h200, lots=1)
    assert refused.value.message.startswith("No lot of this model is available right now.")

    last_deadline = max(Order.objects.get(pk=order.pk).hold_until for order in orders)
    first_deadline = min(Order.objects.get(pk=order.pk).hold_until for order in orders)
    # Until the hold runs out, nothing is released.
    early = rentals_tick(now=first_deadline)
    assert statuses(*orders) == [OrderStatus.AWAITING_PAYMENT] * 3
    assert lots_available(h200) == 0

    report = rentals_tick(now=last_deadline + SECOND)

    assert statuses(*orders) == [OrderStatus.CANCELLED] * 3
    assert lots_available(h200) == 30
    assert place_order(newcomer, h200, lots=10).status == OrderStatus.AWAITING_PAYMENT
    assert early.released == []
    assert sorted(report.released) == sorted(order.pk for order in orders)


def test_an_order_is_held_for_order_hold_minutes(catalogue, customer, place_order, settings):
    settings.ORDER_HOLD_MINUTES = 5
    before = timezone.now()
    order = place_order(customer, catalogue["h100"])
    after = timezone.now()

    order.refresh_from_db()
    assert before + timedelta(minutes=5) <= order.hold_until <= after + timedelta(minutes=5)
    rentals_tick(now=order.hold_until - SECOND)
    assert statuses(order) == [OrderStatus.AWAITING_PAYMENT]
    rentals_tick(now=order.hold_until + SECOND)
    assert statuses(order) == [OrderStatus.CANCELLED]
    change = order.status_changes.get(to_status=OrderStatus.CANCELLED)
    assert change.reason == "Lots held for 5 minutes without a payment"


def test_an_order_held_by_a_payment_is_not_released_by_the_tick(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    set_stock(h100, 4)
    order = place_order(customer, h100, lots=3)
    deadline = Order.objects.get(pk=order.pk).hold_until
    order_hold_for_payment(order_id=order.pk, customer=customer)  # a crypto payment opened

    rentals_tick(now=deadline + timedelta(days=2))

    order.refresh_from_db()
    assert (order.status, order.hold_until) == (OrderStatus.AWAITING_PAYMENT, None)
    assert lots_available(h100) == 1


def test_the_tick_releases_a_hold_once(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    set_stock(h100, 2)
    order = place_order(customer, h100, lots=2)
    later = Order.objects.get(pk=order.pk).hold_until + timedelta(minutes=1)

    first = rentals_tick(now=later)
    second = rentals_tick(now=later)
    third = rentals_tick(now=later + timedelta(hours=1))

    changes = list(order.status_changes.order_by("created_at", "pk"))
    assert [(c.from_status, c.to_status) for c in changes] == [
        ("", OrderStatus.AWAITING_PAYMENT),
        (OrderStatus.AWAITING_PAYMENT, OrderStatus.CANCELLED),
    ]
    assert changes[1].actor is None
    assert changes[1].reason == "Lots held for 30 minutes without a payment"
    assert lots_available(h100) == 2
    assert (first.released, second.released, third.released) == ([order.pk], [], [])


def test_orders_that_moved_on_are_left_alone(catalogue, make_customer, place_order, credit):
    h100 = catalogue["h100"]
    set_stock(h100, 10)
    payer, canceller, forgetful = make_customer(), make_customer(), make_customer()
    paid = place_order(payer, h100, lots=2)
    credit(payer, "5000.00")
    balance_pay_order(order_id=paid.pk, customer=payer)
    cancelled = place_order(canceller, h100, lots=1)
    order_cancel_by_customer(order_id=cancelled.pk, customer=canceller)
    unpaid = place_order(forgetful, h100, lots=3)
    changes_before = OrderStatusChange.objects.count()

    report = rentals_tick(now=timezone.now() + timedelta(hours=1))

    assert statuses(paid, cancelled, unpaid) == [
        OrderStatus.PROVISIONING,
        OrderStatus.CANCELLED,
        OrderStatus.CANCELLED,
    ]
    assert OrderStatusChange.objects.count() == changes_before + 1
    assert lots_available(h100) == 8  # the paid order's two cards are allocated
    assert report.released == [unpaid.pk]


def test_the_hold_is_checked_again_under_the_lock(catalogue, customer, place_order):
    """What the tick listed may have moved on before it took the order's lock."""
    order = place_order(customer, catalogue["h100"])
    deadline = Order.objects.get(pk=order.pk).hold_until

    assert order_release_expired_hold(order_id=order.pk, now=deadline) is False  # not past
    order_hold_for_payment(order_id=order.pk, customer=customer)
    assert order_release_expired_hold(order_id=order.pk, now=deadline + SECOND) is False
    assert statuses(order) == [OrderStatus.AWAITING_PAYMENT]
    assert orders_release_expired_holds(now=deadline + timedelta(days=1)) == []


def test_stock_stops_counting_a_hold_the_moment_it_runs_out(catalogue, make_customer, place_order):
    """Between the end of a hold and the next minute tick, the lots are already for sale."""
    h200 = catalogue["h200"]
    set_stock(h200, 10)
    order = place_order(make_customer(), h200, lots=10)
    assert lots_available(h200) == 0
    Order.objects.filter(pk=order.pk).update(hold_until=timezone.now() - SECOND)
    assert lots_available(h200) == 10
    assert Order.objects.get(pk=order.pk).status == OrderStatus.AWAITING_PAYMENT  # until the tick
