# ruff: noqa: F811  (the crypto_ui fixtures imported below are the tests' arguments)
"""Events for the states a customer cares about, each written once by its entity's setter:
an order cancelled or expired (released unpaid), a payment expired or confirmed; and one
vocabulary: a payment's or an order's `status` in a webhook is the REST API's `status`."""

from datetime import timedelta

import pytest

from outbox.models import OutboxEvent
from payments.crypto.services.payments import payment_expire
from payments.models import TransferStatus
from rental.models import OrderStatus
from rental.services import order_cancel_by_customer
from rental.services.intents import orders_release_expired_holds
from tests.payments.crypto_ui.conftest import (  # noqa: F401
    local_network,
    order,
    payment,
    transfer,
)

pytestmark = pytest.mark.django_db


def types_of(customer) -> list[str]:
    return list(
        OutboxEvent.objects.filter(account=customer)
        .order_by("pk")
        .values_list("event_type", flat=True)
    )


def test_an_order_cancelled_by_its_customer_is_order_cancelled_once(customer, order):
    order_cancel_by_customer(order_id=order.pk, customer=customer)

    (event,) = OutboxEvent.objects.filter(account=customer, event_type="order.cancelled")
    assert event.payload["order"]["reference"] == order.reference
    assert event.payload["order"]["status"] == "cancelled"
    assert "order.expired" not in types_of(customer)


def test_an_order_whose_hold_ran_out_is_order_expired_not_cancelled(customer, order):
    order.refresh_from_db()
    assert order.hold_until is not None

    released = orders_release_expired_holds(now=order.hold_until + timedelta(seconds=1))
    orders_release_expired_holds(now=order.hold_until + timedelta(minutes=2))  # again: nothing

    assert released == [order.pk]
    (event,) = OutboxEvent.objects.filter(account=customer, event_type="order.expired")
    assert event.payload["order"]["status"] == OrderStatus.CANCELLED
    assert "order.cancelled" not in types_of(customer)


def test_a_payment_expired_with_nothing_received_expires_its_order_too(customer, order, payment):
    assert payment_expire(payment_id=payment.pk) == 1
    assert payment_expire(payment_id=payment.pk) == 0

    (expired,) = OutboxEvent.objects.filter(account=customer, event_type="payment.expired")
    assert expired.payload["payment"]["reference"] == payment.reference
    assert expired.payload["payment"]["status"] == "expired"
    (order_expired,) = OutboxEvent.objects.filter(account=customer, event_type="order.expired")
    assert order_expired.payload["order"]["id"] == order.pk


def test_a_payment_status_is_the_same_string_in_rest_and_in_its_webhook(
    api_client, customer, order, payment, transfer
):
    transfer(payment, status=TransferStatus.CONFIRMED)

    (confirmed,) = OutboxEvent.objects.filter(account=customer, event_type="payment.confirmed")
    rest = api_client.get(f"/api/v1/payments/{payment.pk}/").json()
    assert rest["status"] == confirmed.payload["payment"]["status"] == "paid"
    (paid,) = OutboxEvent.objects.filter(account=customer, event_type="order.paid")
    assert paid.payload["order"]["status"] == "paid"


def test_an_order_status_is_the_same_string_in_rest_and_in_its_webhook(api_client, customer, order):
    order_cancel_by_customer(order_id=order.pk, customer=customer)

    (cancelled,) = OutboxEvent.objects.filter(account=customer, event_type="order.cancelled")
    rest = api_client.get(f"/api/v1/orders/{order.pk}/").json()
    assert rest["status"] == cancelled.payload["order"]["status"] == "cancelled"
