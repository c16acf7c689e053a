"""Each state change writes its event exactly once, in the transaction of the change."""

import contextlib

import pytest
from django.db import transaction

from outbox.models import OutboxEvent
from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.status import payment_set_status
from payments.exceptions import OrderNotPayable
from payments.locks import lock_payments
from payments.models import PaymentStatus
from tests.payments.crypto_ui.conftest import local_network, top_up  # noqa: F401

pytestmark = pytest.mark.django_db


def events_of(customer, event_type):
    return list(OutboxEvent.objects.filter(account=customer, event_type=event_type))


def test_paying_an_order_from_the_balance_writes_one_order_paid(
    customer, catalogue, place_order, credit
):
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"], lots=2, duration_days=7)
    balance_pay_order(order_id=order.pk, customer=customer)
    with contextlib.suppress(OrderNotPayable):  # paying again changes nothing
        balance_pay_order(order_id=order.pk, customer=customer)

    (paid,) = events_of(customer, "order.paid")
    data = paid.envelope()["data"]["order"]
    assert (data["id"], data["reference"], data["total_usd"]) == (
        order.pk,
        order.reference,
        "893.76",
    )
    assert data["status"] == "paid"
    assert len(events_of(customer, "balance.credited")) == 1  # the credit, not the payment


def test_a_rolled_back_change_leaves_no_event(customer, credit):
    with pytest.raises(RuntimeError), transaction.atomic():
        credit(customer, "10.00")
        raise RuntimeError("the caller's transaction fails")
    assert events_of(customer, "balance.credited") == []


def test_a_crypto_payment_detected_then_confirmed_writes_one_event_each(customer, top_up):  # noqa: F811
    payment = top_up("20.00")
    for status in (PaymentStatus.DETECTED, PaymentStatus.CONFIRMED):
        with transaction.atomic():
            locked = lock_payments([payment.pk])[payment.pk]
            payment_set_status(locked, to_status=status, reason="test")
    (detected,) = events_of(customer, "payment.detected")
    (confirmed,) = events_of(customer, "payment.confirmed")
    assert detected.payload["payment"]["reference"] == payment.reference
    # The REST API's vocabulary (PaymentState): a confirmed payment is "paid" in both.
    assert confirmed.payload["payment"]["status"] == "paid"
    assert detected.event_id != confirmed.event_id
    assert events_of(customer, "payment.review") == []


def test_a_payment_sent_to_review_writes_payment_review(customer, top_up):  # noqa: F811
    payment = top_up("20.00")
    with transaction.atomic():
        locked = lock_payments([payment.pk])[payment.pk]
        payment_set_status(
            locked, to_status=PaymentStatus.NEEDS_REVIEW, review_reason="underpaid", reason="t"
        )
    (review,) = events_of(customer, "payment.review")
    assert review.payload["payment"]["review_reason"] == "underpaid"
