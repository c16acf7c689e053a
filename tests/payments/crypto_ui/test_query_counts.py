"""The order page's payment step and the polled payment status run a fixed number of queries,
however many payments and transfers there are."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.crypto.services.payments import payment_create_for_order
from payments.crypto.services.status import payment_set_status
from payments.locks import lock_payments
from payments.models import CryptoPayment, PaymentStatus

pytestmark = pytest.mark.usefixtures("local_network")


def queries_of(client, url, **kwargs) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **kwargs)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def reopened(order, customer, payment) -> CryptoPayment:
    """Another payment of the order once `payment` is closed (nothing arrived on it)."""
    with transaction.atomic():  # through the one setter, under the payment's lock
        locked = lock_payments([payment.pk])[payment.pk]
        payment_set_status(locked, to_status=PaymentStatus.CLOSED, reason="test: replaced")
    return payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )


def test_order_page_queries_are_the_same_with_no_one_and_five_payments(
    customer_client, customer, order, transfer
):
    url = reverse("rental:order_detail", kwargs={"order_id": order.pk})
    # The session comes from the cache (Redis): user with their staff groups (navigation),
    # order, timeline, the payments with the ledger's sums and the balance (one statement).
    none, _ = queries_of(customer_client, url)

    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    transfer(payment, units=1_000_000)
    one, page = queries_of(customer_client, url)
    assert page.count('data-payment="') == 1

    for _ in range(4):
        payment = reopened(order, customer, payment)
        transfer(payment, units=1_000_000)
    five, page = queries_of(customer_client, url)
    assert page.count('data-payment="') == 5
    assert page.count('data-field="payment-confirming"') == 5

    assert none == one == five == 4


def test_payment_status_queries_are_the_same_with_one_and_ten_transfers(
    customer_client, payment, transfer
):
    url = reverse("payments:payment_status", kwargs={"payment_id": payment.pk})
    headers = {"HX-Request": "true"}
    transfer(payment, units=1_000_000)
    # The session comes from the cache (Redis): user, the payment with its deposit address,
    # order and ledger sums (one statement), the watcher's cursor, the transfers.
    one, page = queries_of(customer_client, url, headers=headers)
    assert page.count('data-transfer="') == 1

    for block in range(101, 110):
        transfer(payment, units=1_000_000, block=block)
    ten, page = queries_of(customer_client, url, headers=headers)
    assert page.count('data-transfer="') == 10

    assert one == ten == 4
