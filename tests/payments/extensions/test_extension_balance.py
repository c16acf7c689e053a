"""Paying an extension from the USD balance: one ledger transaction at the price frozen when
it was asked for, the end moved on the same cards; refused clearly when the balance is short
or the extension can no longer be paid; once only under concurrent clicks."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from payments.crypto.services.extensions import extension_pay_from_balance
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    LedgerAccountKind,
    LedgerTransaction,
    Receipt,
    TransactionKind,
)
from rental.models import (
    CardAllocation,
    ExtensionStatus,
    LotPrice,
    Order,
    OrderExtension,
)
from rental.services import extension_cancel, extension_create
from tests.concurrency import run_concurrently
from tests.rental.extensions.helpers import end_in
from tests.rental.test_order_emails import utc


def pay_page(extension) -> str:
    return reverse("payments:extension_pay", kwargs={"extension_id": extension.pk})


def pay_balance_url(extension) -> str:
    return reverse("payments:extension_pay_balance", kwargs={"extension_id": extension.pk})


def extension_payments() -> list[LedgerTransaction]:
    return list(LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT))


def test_the_balance_pays_the_extension_at_the_price_frozen_when_asked(
    customer_client, customer, active_order, django_capture_on_commit_callbacks
):
    order = active_order(customer, lots=2)  # 5000.00 - 893.76 for the order
    cards = sorted(CardAllocation.objects.filter(order=order).values_list("pk", flat=True))
    ends_at = order.ends_at
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=7)
    # The catalogue's price changes after the extension was asked for.
    LotPrice.objects.filter(gpu_model=order.gpu_model, duration_days=7).update(
        price_usd=Decimal("999.00")
    )
    revenue_before = system_account(LedgerAccountKind.REVENUE).balance

    page = customer_client.get(pay_page(extension)).content.decode()
    assert "Pay with balance · 893.76 USD" in page and "Your USD balance: 4,106.24 USD." in page
    with django_capture_on_commit_callbacks(execute=True):
        response = customer_client.post(pay_balance_url(extension), follow=True)

    html = response.content.decode()
    assert f"Extension {extension.reference} is paid from your USD balance." in html
    order.refresh_from_db()
    assert order.ends_at == ends_at + timedelta(days=7) and order.period == 1
    assert utc(order.ends_at) in html
    assert 'data-field="extension-status">Paid<' in html
    (posted,) = extension_payments()
    assert (posted.extension_id, posted.order_id, posted.actor_id) == (
        extension.pk,
        order.pk,
        customer.pk,
    )
    assert sorted(posted.entries.values_list("amount", flat=True)) == [
        Decimal("-893.76"),
        Decimal("893.76"),
    ]
    assert customer_account(customer).balance == Decimal("3212.48")
    assert system_account(LedgerAccountKind.REVENUE).balance == revenue_before + Decimal("893.76")
    assert Receipt.objects.filter(transaction=posted, amount_usd=Decimal("893.76")).exists()
    still = CardAllocation.objects.filter(order=order, released_at__isnull=True)
    assert sorted(still.values_list("pk", flat=True)) == cards


def test_a_short_balance_is_refused_and_nothing_is_charged(customer_client, customer, active_order):
    order = active_order(customer, balance="446.88")  # the order takes it all
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)

    page = customer_client.get(pay_page(extension)).content.decode()
    assert "Your balance is short by 201.60 USD." in page
    response = customer_client.post(pay_balance_url(extension))

    assert response.status_code == 409
    assert (
        "The balance is 0.00 USD; 201.60 USD are needed. Nothing was charged."
        in response.content.decode()
    )
    assert extension_payments() == []
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT
    assert Order.objects.get(pk=order.pk).period == 0


def test_a_cancelled_extension_or_an_ended_rental_is_not_charged(
    customer_client, customer, active_order
):
    order = active_order(customer)
    cancelled = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    extension_cancel(extension_id=cancelled.pk, customer=customer)
    refused = customer_client.post(pay_balance_url(cancelled))
    assert refused.status_code == 409
    assert "This extension can no longer be paid" in refused.content.decode()

    late = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    end_in(order, timedelta(seconds=-1))
    refused = customer_client.post(pay_balance_url(late))
    assert refused.status_code == 409
    assert "This extension can no longer be paid" in refused.content.decode()
    assert extension_payments() == []
    assert customer_account(customer).balance == Decimal("4553.12")


def test_another_customers_extension_is_not_found(make_customer, customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    stranger = Client()
    stranger.force_login(make_customer())

    assert stranger.get(pay_page(extension)).status_code == 404
    assert stranger.post(pay_balance_url(extension)).status_code == 404
    cancel = reverse("payments:extension_cancel", kwargs={"extension_id": extension.pk})
    assert stranger.post(cancel).status_code == 404
    crypto = reverse("payments:extension_pay_crypto", kwargs={"extension_id": extension.pk})
    assert stranger.post(crypto, {"stablecoin": "local:tUSDC"}).status_code == 404
    # A tampered id: one that does not exist, or not a number.
    missing = reverse("payments:extension_pay_balance", kwargs={"extension_id": extension.pk + 99})
    client = Client()
    client.force_login(customer)
    assert client.post(missing).status_code == 404
    assert client.post(f"/account/extensions/{extension.pk}x/pay/balance/").status_code == 404
    assert client.post("/account/extensions/١/pay/balance/").status_code == 404
    assert extension_payments() == []
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT


def test_a_post_without_the_csrf_token_is_refused(customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(customer)

    assert strict.post(pay_balance_url(extension)).status_code == 403
    cancel = reverse("payments:extension_cancel", kwargs={"extension_id": extension.pk})
    assert strict.post(cancel).status_code == 403
    assert extension_payments() == []
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT


def test_the_customer_can_cancel_the_extension(customer_client, customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    cancel = reverse("payments:extension_cancel", kwargs={"extension_id": extension.pk})

    response = customer_client.post(cancel, follow=True)

    assert f"Extension {extension.reference} is cancelled." in response.content.decode()
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.CANCELLED
    again = customer_client.post(cancel)
    assert again.status_code == 409
    assert "This extension is no longer awaiting payment." in again.content.decode()


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_clicks_pay_the_extension_once(customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=7)
    ends_at = order.ends_at
    reached = []

    def click(_index):
        reached.append(_index)
        return extension_pay_from_balance(extension_id=extension.pk, customer=customer)

    results = run_concurrently(click, 10, workers=10)

    assert len(reached) == 10  # every click reached the service, at once (a barrier)
    assert all(isinstance(result, OrderExtension) for result in results), results
    assert all(result.status == ExtensionStatus.PAID for result in results)
    assert len(extension_payments()) == 1
    assert customer_account(customer).balance == Decimal("4553.12") - Decimal("446.88")
    order.refresh_from_db()
    assert order.ends_at == ends_at + timedelta(days=7) and order.period == 1
