"""An extension's price is held like an order's lots: ORDER_HOLD_MINUTES without a payment,
then the tick cancels it (asked for again, it gets today's price); a stablecoin payment holds
it until that payment expires; too close to the end, stablecoins are refused."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from payments.chain.scanning import scan_network
from payments.crypto.services.extensions import (
    ExtensionNotPayable,
    TooLateForStablecoins,
    extension_open_crypto_payment,
    extension_pay_from_balance,
)
from payments.crypto.services.payments import payment_expire
from payments.models import CryptoPayment, LedgerTransaction, PaymentStatus, TransactionKind
from rental.models import ExtensionStatus, LotPrice
from rental.services import extension_create
from rental.services.lifecycle import rentals_tick
from tests.rental.extensions.helpers import end_in


@pytest.fixture
def extension(customer, active_order, settings):
    settings.ORDER_HOLD_MINUTES = 30
    order = active_order(customer)
    return extension_create(order_id=order.pk, customer=customer, duration_days=3)


def test_an_unpaid_extension_loses_its_price_after_the_hold(customer, extension):
    assert extension.hold_until is not None
    rentals_tick(now=timezone.now() + timedelta(minutes=29))
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT

    report = rentals_tick(now=timezone.now() + timedelta(minutes=31))

    assert report.extensions_released == [extension.pk]
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.CANCELLED
    assert "Price held for 30 minutes" in extension.status_changes.last().reason
    with pytest.raises(ExtensionNotPayable):
        extension_pay_from_balance(extension_id=extension.pk, customer=customer)
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT)


def test_asking_again_after_the_hold_gets_todays_price(customer, extension):
    extension.hold_until = timezone.now() - timedelta(seconds=1)
    extension.save(update_fields=["hold_until"])
    LotPrice.objects.filter(gpu_model_id=extension.order.gpu_model_id, duration_days=3).update(
        price_usd=Decimal("150.00")
    )

    again = extension_create(order_id=extension.order_id, customer=customer, duration_days=3)

    assert again.pk != extension.pk
    assert again.lot_price_usd == Decimal("150.00")
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.CANCELLED


def test_a_stablecoin_payment_holds_the_price_until_it_expires(chain, customer, extension):
    payment = extension_open_crypto_payment(
        extension_id=extension.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    extension.refresh_from_db()
    assert extension.hold_until is None
    rentals_tick(now=timezone.now() + timedelta(minutes=31))
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT

    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    scan_network(network_key="local")
    assert payment_expire(payment_id=payment.pk) == 1

    payment.refresh_from_db()
    extension.refresh_from_db()
    assert payment.status == PaymentStatus.EXPIRED
    assert extension.status == ExtensionStatus.CANCELLED
    assert payment.reference in extension.status_changes.last().reason


def test_too_close_to_the_end_stablecoins_are_refused_with_the_way_out(
    chain, customer, customer_client, extension
):
    end_in(extension.order, timedelta(minutes=20))
    with pytest.raises(TooLateForStablecoins):
        extension_open_crypto_payment(
            extension_id=extension.pk,
            customer=customer,
            network_key="local",
            asset_symbol="tUSDC",
        )
    url = reverse("payments:extension_pay_crypto", kwargs={"extension_id": extension.pk})
    response = customer_client.post(url, {"stablecoin": "local:tUSDC"})
    assert response.status_code == 409
    assert "pay this extension from your USD balance instead" in response.content.decode()
    assert not CryptoPayment.objects.filter(extension=extension).exists()
    extension_pay_from_balance(extension_id=extension.pk, customer=customer)
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.PAID
