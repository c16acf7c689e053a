"""Paying an extension in tUSDC on the local chain, through the real watcher: the money is
credited to the balance and pays the extension from there in the same ledger batch; when the
extension can no longer be paid it simply stays on the balance, never stranded."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from api.tokens import token_create
from payments.chain.scanning import scan_network
from payments.crypto.services.extensions import extension_pay_from_balance
from payments.crypto.services.review import (
    ExtensionNoLongerPayable,
    payment_credit_balance,
    payment_mark_settled,
)
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    CryptoPayment,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentEvent,
    PaymentEventKind,
    PaymentPurpose,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
)
from rental.models import CardAllocation, ExtensionStatus, Order, OrderStatus
from rental.services import extension_create
from rental.services.lifecycle import order_end
from tests.rental.extensions.helpers import end_in

BALANCE_AFTER_ORDER = Decimal("4553.12")  # 5000.00 credited, 446.88 for the 7-day order


@pytest.fixture
def extension(chain, customer, active_order):
    order = active_order(customer)
    return extension_create(order_id=order.pk, customer=customer, duration_days=3)  # 201.60


def open_payment(client, extension) -> CryptoPayment:
    url = reverse("payments:extension_pay_crypto", kwargs={"extension_id": extension.pk})
    response = client.post(url, {"stablecoin": "local:tUSDC"})
    assert response.status_code == 302, response.content.decode()
    payment = CryptoPayment.objects.get(extension=extension)
    assert response["Location"] == reverse(
        "payments:payment_detail", kwargs={"payment_id": payment.pk}
    )
    scan_network(network_key="local")  # the watcher is running
    return payment


def send_and_confirm(chain, payment, units=None, capture=None):
    units = int(payment.amount_due_units) if units is None else units
    chain.transfer(payment.deposit_address.address, units)
    chain.mine(3)
    if capture is None:
        scan_network(network_key="local")
    else:
        with capture(execute=True):
            scan_network(network_key="local")
    payment.refresh_from_db()
    return payment


def page_of(client, payment) -> str:
    url = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_an_extension_paid_in_tusdc_moves_the_end(
    chain, customer_client, customer, extension, django_capture_on_commit_callbacks
):
    order = extension.order
    ends_at = order.ends_at
    cards = sorted(CardAllocation.objects.filter(order=order).values_list("pk", flat=True))
    payment = open_payment(customer_client, extension)
    assert (payment.purpose, payment.order_id, payment.amount_due_usd) == (
        PaymentPurpose.EXTENSION,
        None,
        Decimal("201.60"),
    )
    assert payment.amount_due_units == 201_600_000
    html = page_of(customer_client, payment)
    assert f"For extension {extension.reference} of order {order.reference}: 201.60 USD." in html
    back = reverse("payments:extension_pay", kwargs={"extension_id": extension.pk})
    assert f'href="{back}" data-field="extension-link"' in html
    assert 'data-field="amount">201.600000 tUSDC' in html
    revenue_before = system_account(LedgerAccountKind.REVENUE).balance
    mail.outbox.clear()

    payment = send_and_confirm(chain, payment, capture=django_capture_on_commit_callbacks)

    assert payment.status == PaymentStatus.CONFIRMED
    extension.refresh_from_db()
    order.refresh_from_db()
    assert extension.status == ExtensionStatus.PAID
    assert order.ends_at == ends_at + timedelta(days=3) and order.period == 1
    assert order.status == OrderStatus.ACTIVE
    still = CardAllocation.objects.filter(order=order, released_at__isnull=True)
    assert sorted(still.values_list("pk", flat=True)) == cards
    # Credited to the balance, then paid from it in the same batch: the balance is unchanged.
    credit = LedgerTransaction.objects.get(payment=payment, kind=TransactionKind.PAYMENT_CREDIT)
    paid = LedgerTransaction.objects.get(kind=TransactionKind.EXTENSION_PAYMENT)
    assert (paid.extension_id, paid.order_id, paid.payment_id) == (
        extension.pk,
        order.pk,
        payment.pk,
    )
    assert credit.entries.get(amount__gt=0).amount == Decimal("201.60")
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER
    assert system_account(LedgerAccountKind.REVENUE).balance == revenue_before + Decimal("201.60")
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")
    assert not PaymentEvent.objects.filter(payment=payment, kind=PaymentEventKind.CREDITED)
    # The page says what happened, and shows no credit to the balance.
    html = page_of(customer_client, payment)
    assert f"Confirmed on chain: extension {extension.reference} is paid" in html
    assert 'data-field="credited"' not in html
    # The customer is told the new end, and nothing about a credit.
    assert [m.subject for m in mail.outbox] == [f"Order {order.reference}: your rental is extended"]


def test_an_overpayment_leaves_the_surplus_on_the_balance(
    chain, customer_client, customer, extension
):
    payment = open_payment(customer_client, extension)
    payment = send_and_confirm(chain, payment, units=250_000_000)

    assert payment.status == PaymentStatus.CONFIRMED
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER + Decimal("48.40")
    (surplus,) = PaymentEvent.objects.filter(payment=payment, kind=PaymentEventKind.CREDITED)
    assert surplus.data["amount"] == "48.40"
    html = page_of(customer_client, payment)
    assert 'data-field="credited">48.40 USD<' in html


def test_money_arriving_after_the_rental_ended_stays_on_the_balance(
    chain, customer_client, customer, extension, django_capture_on_commit_callbacks
):
    order = extension.order
    payment = open_payment(customer_client, extension)
    end_in(order, timedelta(seconds=-1))
    with django_capture_on_commit_callbacks(execute=True):
        order_end(order_id=order.pk, now=timezone.now())
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.CANCELLED
    mail.outbox.clear()

    payment = send_and_confirm(chain, payment, capture=django_capture_on_commit_callbacks)

    assert payment.status == PaymentStatus.CLOSED
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER + Decimal("201.60")
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT)
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")
    order.refresh_from_db()
    assert (order.status, order.period) == (OrderStatus.ENDED, 0)
    (credited,) = PaymentEvent.objects.filter(payment=payment, kind=PaymentEventKind.CREDITED)
    assert credited.data["amount"] == "201.60"
    [email] = [m for m in mail.outbox if "credited" in m.subject]
    assert f"It was not needed for extension {extension.reference}" in email.body
    html = page_of(customer_client, payment)
    assert "its extension was paid another way or cancelled, or the rental ended first" in html
    assert 'data-field="credited">201.60 USD<' in html


def test_paying_from_the_balance_closes_the_open_payment(
    chain, customer_client, customer, extension
):
    payment = open_payment(customer_client, extension)

    extension_pay_from_balance(extension_id=extension.pk, customer=customer)

    payment.refresh_from_db()
    assert payment.status == PaymentStatus.CLOSED
    # Money sent to it anyway reaches the balance.
    payment = send_and_confirm(chain, payment)
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER
    assert LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT).count() == 1
    assert Order.objects.get(pk=extension.order_id).period == 1


def test_a_payment_after_its_expiry_goes_to_review_then_an_operator_settles_it(
    chain, customer_client, customer, extension, operator
):
    payment = open_payment(customer_client, extension)
    expiry = datetime.fromtimestamp(chain.block_timestamp(chain.head()) + 5, tz=UTC)
    CryptoPayment.objects.filter(pk=payment.pk).update(expires_at=expiry)
    chain.set_next_block_timestamp(int(expiry.timestamp()) + 60)

    payment = send_and_confirm(chain, payment)

    assert (payment.status, payment.review_reason) == (
        PaymentStatus.NEEDS_REVIEW,
        ReviewReason.PAID_LATE,
    )
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("201.60")

    payment_mark_settled(payment_id=payment.pk, actor=operator, reason="late by a minute")

    payment.refresh_from_db()
    extension.refresh_from_db()
    assert payment.status == PaymentStatus.RESOLVED
    assert extension.status == ExtensionStatus.PAID
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")


def test_a_choice_outside_the_list_is_refused(chain, customer_client, extension):
    url = reverse("payments:extension_pay_crypto", kwargs={"extension_id": extension.pk})
    for value in ("", "local:USDT", "mainnet:tUSDC", "local:tUSDC "):
        response = customer_client.post(url, {"stablecoin": value})
        assert response.status_code == 400
        assert "Choose a stablecoin and network from the list." in response.content.decode()
    assert not CryptoPayment.objects.exists()


def test_the_api_shows_an_extension_payment(chain, customer_client, customer, extension):
    payment = open_payment(customer_client, extension)
    api = APIClient()
    raw = token_create(owner=customer, name="test", scopes=("read",), expires_at=None).raw
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    response = api.get(reverse("api:payment_detail", kwargs={"payment_id": payment.pk}))

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["purpose"], body["order_id"], body["amount_due_usd"]) == (
        "extension",
        None,
        "201.60",
    )


def test_operators_see_an_extension_payment_as_one(
    chain, customer_client, extension, operator_client
):
    payment = open_payment(customer_client, extension)
    url = reverse("payments:ops_payment", kwargs={"payment_id": payment.pk})

    page = operator_client.get(url)

    assert page.status_code == 200
    html = page.content.decode()
    assert (
        f"Extension {extension.reference} of order {extension.order.reference}" in html
        and "Top-up of the USD balance" not in html
    )


def test_less_than_due_at_expiry_goes_to_review_and_can_be_credited(
    chain, customer_client, customer, extension, operator
):
    from payments.crypto.services.payments import payments_expire
    from payments.models import ChainCursor

    payment = open_payment(customer_client, extension)
    payment = send_and_confirm(chain, payment, units=100_000_000)
    assert payment.status == PaymentStatus.DETECTED  # partly received, still open
    past = timezone.now() - timedelta(minutes=5)
    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=past, monitor_until=past + timedelta(hours=1)
    )
    ChainCursor.objects.filter(network="local").update(last_scan_at=timezone.now())

    assert payments_expire() == 1

    payment.refresh_from_db()
    assert (payment.status, payment.review_reason) == (
        PaymentStatus.NEEDS_REVIEW,
        ReviewReason.UNDERPAID,
    )
    assert Order.objects.get(pk=extension.order_id).status == OrderStatus.ACTIVE  # untouched

    # "Mark settled" cannot pay an extension with less than its price: refused, nothing moves.
    with pytest.raises(ExtensionNoLongerPayable):
        payment_mark_settled(payment_id=payment.pk, actor=operator, reason="customer asked")
    payment.refresh_from_db()
    assert payment.status == PaymentStatus.NEEDS_REVIEW
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER
    assert not PaymentEvent.objects.filter(payment=payment, kind=PaymentEventKind.CREDITED)

    # The operator credits what arrived instead; the extension still waits for its price.
    payment_credit_balance(payment_id=payment.pk, actor=operator, reason="customer asked")

    payment.refresh_from_db()
    extension.refresh_from_db()
    assert payment.status == PaymentStatus.RESOLVED
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER + Decimal("100.00")
    assert PaymentEvent.objects.filter(payment=payment, kind=PaymentEventKind.CREDITED).exists()


def test_the_minute_sweep_closes_the_payment_of_an_extension_cancelled_by_the_end(
    chain, customer_client, customer, extension, django_capture_on_commit_callbacks
):
    """Rental cancels the awaiting extension when the rental ends (it cannot call payments):
    the sweep that expires payments closes its live payment, so its page stops asking for
    money; money sent there anyway reaches the balance."""
    from payments.tasks import expire_payments

    order = extension.order
    payment = open_payment(customer_client, extension)
    assert 'data-field="instructions"' in page_of(customer_client, payment)
    end_in(order, timedelta(seconds=-1))
    with django_capture_on_commit_callbacks(execute=True):
        order_end(order_id=order.pk, now=timezone.now())
    payment.refresh_from_db()
    assert payment.status == PaymentStatus.AWAITING  # rental cancelled the extension only

    assert expire_payments() == 1

    payment.refresh_from_db()
    assert payment.status == PaymentStatus.CLOSED
    assert payment.events.filter(
        to_status=PaymentStatus.CLOSED, reason__contains="the rental ended"
    ).exists()
    html = page_of(customer_client, payment)
    assert 'data-field="instructions"' not in html and 'data-field="closed"' in html
    assert expire_payments() == 0  # nothing more to close
    payment = send_and_confirm(chain, payment)
    assert customer_account(customer).balance == BALANCE_AFTER_ORDER + Decimal("201.60")
