"""Orders to end early, made through the real services: paid and waiting for cards, being
provisioned, active for some hours."""

from datetime import timedelta

import pytest
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Host, HostState, Order, OrderStatus, OrderStatusChange
from rental.services import order_set_status
from tests.states import hosts_set_state

CREDIT = "20000.00"


@pytest.fixture
def pay(credit):
    """Pay an order from the customer's balance (credited first): its cards are allocated in
    the same transaction (provisioning), or it stays paid, waiting for cards."""

    def pay_order(order: Order) -> Order:
        credit(order.customer, CREDIT)
        balance_pay_order(order_id=order.pk, customer=order.customer)
        order.refresh_from_db()
        return order

    return pay_order


def paid_hours_ago(order: Order, hours: float) -> None:
    """Move the order's "paid" status change back in time, as if it had been paid then."""
    OrderStatusChange.objects.filter(order=order, to_status=OrderStatus.PAID).update(
        created_at=timezone.now() - timedelta(hours=hours)
    )


@pytest.fixture
def waiting_order(catalogue, customer, place_order, pay):
    """An H200 order of 2 lots for 7 days, paid while every H200 host is in maintenance."""
    order = place_order(customer, catalogue["h200"], lots=2, duration_days=7)
    hosts_set_state(Host.objects.filter(gpu_model=catalogue["h200"]), HostState.MAINTENANCE)
    order = pay(order)
    assert order.status == OrderStatus.PAID
    assert order.provisioning_issue == "capacity"
    return order


@pytest.fixture
def provisioning_order(catalogue, customer, place_order, pay):
    """An H100 order of 2 lots for 7 days, paid: two cards allocated, not yet prepared."""
    order = pay(place_order(customer, catalogue["h100"], lots=2, duration_days=7))
    assert order.status == OrderStatus.PROVISIONING
    return order


@pytest.fixture
def make_active(provisioning_order):
    """The provisioning order made active `hours` ago (as the readiness check does)."""

    def activate(hours: float) -> Order:
        starts_at = timezone.now() - timedelta(hours=hours)
        return order_set_status(
            order_id=provisioning_order.pk,
            to_status=OrderStatus.ACTIVE,
            actor=None,
            reason="SSH answered",
            starts_at=starts_at,
            ends_at=starts_at + timedelta(days=provisioning_order.duration_days),
        )

    return activate
