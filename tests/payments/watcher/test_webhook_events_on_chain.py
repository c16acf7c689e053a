"""The payment events of the webhooks come from the watcher on a real chain: each once, however
many scans see the same transfer, and only what happened (an exact payment is never sent to
review; an underpaid one is, once)."""

from datetime import timedelta

import pytest

from outbox.models import OutboxEvent
from payments.crypto.services.payments import payments_expire
from payments.models import CryptoPayment

from .conftest import units

pytestmark = pytest.mark.django_db


def types_of(customer) -> list[str]:
    return list(
        OutboxEvent.objects.filter(account=customer)
        .exclude(event_type="balance.credited")
        .order_by("pk")
        .values_list("event_type", flat=True)
    )


def test_an_exact_payment_writes_detected_confirmed_and_paid_once(
    chain, customer, order_payment, pay, scan
):
    payment = order_payment()
    pay(payment)
    chain.mine(1)
    scan()
    scan()  # the same transfer seen again changes nothing
    assert types_of(customer) == ["payment.detected"]
    chain.mine(1)
    scan()
    chain.mine(3)
    scan()
    # Confirmed and paid commit together (settlement): their order within it is not a promise.
    assert sorted(types_of(customer)) == ["order.paid", "payment.confirmed", "payment.detected"]
    confirmed = OutboxEvent.objects.get(account=customer, event_type="payment.confirmed")
    assert confirmed.payload["payment"]["reference"] == payment.reference


def test_an_underpaid_payment_is_sent_to_review_once(chain, customer, order_payment, pay, scan):
    payment = order_payment()
    pay(payment, units("50.00"))
    chain.mine(3)
    scan()
    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=payment.created_at - timedelta(minutes=1)
    )
    scan()
    assert payments_expire() == 1
    assert payments_expire() == 0  # already in review
    scan()
    assert types_of(customer).count("payment.review") == 1
    assert "order.paid" not in types_of(customer)
    review = OutboxEvent.objects.get(account=customer, event_type="payment.review")
    assert review.payload["payment"]["review_reason"] == "underpaid"
