from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from rental.exceptions import InvalidTransition, OrderNotCancellable
from rental.models import ALLOWED_TRANSITIONS, Order, OrderStatus, OrderStatusChange
from rental.services import order_cancel_by_customer, order_set_status
from tests.conftest import lots_available


def test_cancelling_releases_the_held_lots(catalogue, customer, place_order):
    h200 = catalogue["h200"]
    before = lots_available(h200)
    order = place_order(customer, h200, lots=4)

    cancelled = order_cancel_by_customer(order_id=order.pk, customer=customer)

    assert cancelled.status == OrderStatus.CANCELLED
    assert lots_available(h200) == before
    change = OrderStatusChange.objects.filter(order=order).last()
    assert (change.from_status, change.to_status, change.actor) == (
        OrderStatus.AWAITING_PAYMENT,
        OrderStatus.CANCELLED,
        customer,
    )


def test_cancelling_twice_releases_the_lots_once(catalogue, customer, place_order):
    h200 = catalogue["h200"]
    before = lots_available(h200)
    order = place_order(customer, h200, lots=2)
    order_cancel_by_customer(order_id=order.pk, customer=customer)

    with pytest.raises(OrderNotCancellable):
        order_cancel_by_customer(order_id=order.pk, customer=customer)

    assert lots_available(h200) == before


def test_another_customers_order_cannot_be_cancelled(
    catalogue, customer, make_customer, place_order
):
    order = place_order(customer, catalogue["h100"])
    with pytest.raises(Order.DoesNotExist):
        order_cancel_by_customer(order_id=order.pk, customer=make_customer())
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT


def test_a_paid_order_cannot_be_cancelled_by_the_customer(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    order = place_order(customer, h100, lots=2)
    order_set_status(
        order_id=order.pk, to_status=OrderStatus.PAID, actor=None, reason="test payment"
    )
    stock = lots_available(h100)

    with pytest.raises(OrderNotCancellable):
        order_cancel_by_customer(order_id=order.pk, customer=customer)

    order.refresh_from_db()
    assert order.status == OrderStatus.PAID
    assert lots_available(h100) == stock


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ([OrderStatus.PAID], OrderStatus.AWAITING_PAYMENT),
        ([], OrderStatus.ACTIVE),
        ([OrderStatus.CANCELLED], OrderStatus.PAID),
        (
            [OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE, OrderStatus.ENDED],
            OrderStatus.ACTIVE,
        ),
    ],
)
def test_transitions_outside_the_map_are_refused(catalogue, customer, place_order, path, refused):
    order = place_order(customer, catalogue["h100"])
    now = timezone.now()
    period = {"starts_at": now, "ends_at": now + timedelta(days=7)}
    for status in path:
        fields = period if status == OrderStatus.ACTIVE else {}
        order_set_status(order_id=order.pk, to_status=status, actor=None, reason="test", **fields)
    rows = OrderStatusChange.objects.filter(order=order).count()

    with pytest.raises(InvalidTransition):
        order_set_status(order_id=order.pk, to_status=refused, actor=None, reason="test")

    order.refresh_from_db()
    assert order.status == (path[-1] if path else OrderStatus.AWAITING_PAYMENT)
    assert OrderStatusChange.objects.filter(order=order).count() == rows


def test_every_status_has_an_entry_in_the_transition_map():
    assert set(ALLOWED_TRANSITIONS) == set(OrderStatus.values)


def test_the_database_refuses_an_active_order_without_its_period(catalogue, customer, place_order):
    order = place_order(customer, catalogue["h100"])
    for status in (OrderStatus.PAID, OrderStatus.PROVISIONING):
        order_set_status(order_id=order.pk, to_status=status, actor=None, reason="test")
    # The setter checks the transition; the period is the database's own rule.
    with pytest.raises(IntegrityError), transaction.atomic():
        order_set_status(order_id=order.pk, to_status=OrderStatus.ACTIVE, actor=None, reason="test")
    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.ACTIVE,
            actor=None,
            reason="test",
            starts_at=now,
            ends_at=now,
        )
    assert Order.objects.get(pk=order.pk).status == OrderStatus.PROVISIONING


def test_the_database_refuses_a_total_that_is_not_lots_times_lot_price(
    catalogue, customer, place_order
):
    order = place_order(customer, catalogue["b200"], lots=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        # Multiplying by the card count is exactly the mistake the rule forbids.
        Order.objects.filter(pk=order.pk).update(total_usd=order.lot_price_usd * order.total_cards)
