"""The failures seen before payments became one state machine, on a real chain: an expiry
that stopped at one payment, money stranded by a cancellation, a payment page that asked
for more after it was paid."""

from datetime import timedelta
from decimal import Decimal

from django.urls import reverse
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.payments import payment_create_for_order, payments_expire
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    ChainCursor,
    CryptoPayment,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentStatus,
    TransactionKind,
)
from rental.models import Order, OrderStatus

from .conftest import units


def reload(payment) -> CryptoPayment:
    return CryptoPayment.objects.get(pk=payment.pk)


def expire_now(*payments) -> None:
    """Their time ran out, and the watcher has looked since."""
    past = timezone.now() - timedelta(minutes=5)
    CryptoPayment.objects.filter(pk__in=[p.pk for p in payments]).update(
        expires_at=past, monitor_until=past + timedelta(hours=1)
    )
    ChainCursor.objects.filter(network="local").update(last_scan_at=timezone.now())


def test_an_order_paid_from_the_balance_closes_its_payment_and_the_expiry_goes_on(
    chain, order_payment, customer, credit, make_customer
):
    paid_otherwise = order_payment()
    credit(customer, "500.00")
    balance_pay_order(order_id=paid_otherwise.order_id, customer=customer)
    # Another customer's payment, behind it in the expiry's queue.
    other = make_customer()
    behind = order_payment(other)
    expire_now(paid_otherwise, behind)

    assert payments_expire() == 1  # before: InvalidTransition escaped, nothing behind expired

    assert reload(paid_otherwise).status == PaymentStatus.CLOSED
    assert reload(behind).status == PaymentStatus.EXPIRED
    assert Order.objects.get(pk=behind.order_id).status == OrderStatus.CANCELLED  # lots back
    assert Order.objects.get(pk=paid_otherwise.order_id).status == OrderStatus.PROVISIONING


def test_cancelling_an_order_with_money_received_asks_first_then_credits_the_balance(
    chain,
    order_payment,
    pay,
    scan,
    customer,
    customer_client,
    mailoutbox,
    django_capture_on_commit_callbacks,
):
    payment = order_payment()
    pay(payment, units("50.00"))
    chain.mine(3)
    scan()
    assert reload(payment).received_units == units("50.00")
    url = reverse("payments:order_cancel", kwargs={"order_id": payment.order_id})

    asked = customer_client.post(url)

    assert asked.status_code == 409  # before: cancelled at once, "nothing will be charged"
    html = asked.content.decode()
    assert "50.00 USD confirmed on payment" in html and 'name="money_confirmed"' in html
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.AWAITING_PAYMENT

    with django_capture_on_commit_callbacks(execute=True):
        done = customer_client.post(url, {"money_confirmed": "yes"})

    assert done.status_code == 302
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.CANCELLED
    closed = reload(payment)
    assert closed.status == PaymentStatus.CLOSED  # before: "confirming" forever
    assert customer_account(customer).balance == Decimal("50.00")
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")
    credit = LedgerTransaction.objects.get(kind=TransactionKind.PAYMENT_CREDIT)
    assert credit.payment_id == payment.pk and payment.reference in credit.memo
    assert any("50.00 USD credited" in mail.subject for mail in mailoutbox)


def test_a_tampered_confirmation_is_no_confirmation(
    chain, order_payment, pay, scan, customer_client
):
    payment = order_payment()
    pay(payment, units("50.00"))
    chain.mine(3)
    scan()
    url = reverse("payments:order_cancel", kwargs={"order_id": payment.order_id})
    for value in ("1", "true", "YES", "yes ", "ｙｅｓ"):
        assert customer_client.post(url, {"money_confirmed": value}).status_code == 409
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.AWAITING_PAYMENT
    assert reload(payment).status == PaymentStatus.DETECTED


def test_money_arriving_after_the_cancellation_still_reaches_the_balance(
    chain, order_payment, pay, scan, customer, customer_client
):
    payment = order_payment()
    pay(payment, units("50.00"))
    chain.mine(1)
    scan()  # seen, still confirming
    customer_client.post(
        reverse("payments:order_cancel", kwargs={"order_id": payment.order_id}),
        {"money_confirmed": "yes"},
    )
    assert reload(payment).status == PaymentStatus.CLOSED
    assert customer_account(customer).balance == 0

    chain.mine(3)
    scan()  # the 50 confirm on a closed payment
    pay(payment, units("20.00"))  # and the customer sends more anyway
    chain.mine(3)
    scan()

    assert customer_account(customer).balance == Decimal("70.00")
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")


def test_a_payment_replaced_by_another_asset_closes_and_keeps_watching(
    chain, order_payment, pay, scan, customer, settings
):
    payment = order_payment()
    # Another network for the same order (its node is down: the payment still opens).
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "base": "http://127.0.0.1:9"}
    payment_create_for_order(
        order_id=payment.order_id, customer=customer, network_key="base", asset_symbol="USDC"
    )
    assert reload(payment).status == PaymentStatus.CLOSED

    pay(payment)  # the customer pays the first address after all
    chain.mine(3)
    scan()

    assert customer_account(customer).balance == Decimal("201.60")
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.AWAITING_PAYMENT
