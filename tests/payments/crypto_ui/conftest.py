"""Crypto payment pages without a chain: the local network is enabled by settings alone (its
RPC URL points nowhere and is never called); chain states are written with the ORM."""

from datetime import timedelta
from decimal import Decimal
from itertools import count

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from payments.crypto.services.payments import payment_create_for_order, payment_create_top_up
from payments.crypto.services.settling import settle
from payments.crypto.services.status import payment_set_status
from payments.locks import lock_payments, lock_payments_with_siblings
from payments.models import (
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    PaymentStatus,
    ReviewReason,
    TransferStatus,
)
from rental.services import order_send_to_review

TOKEN = "0x" + "11" * 20
SENDER = "0x" + "22" * 20
_hashes = count(1)


@pytest.fixture
def local_network(settings):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": "http://127.0.0.1:9"}
    settings.LOCAL_TOKEN_ADDRESS = TOKEN
    settings.PAYMENT_CONFIRMATIONS = {**settings.PAYMENT_CONFIRMATIONS, "local": 3}


@pytest.fixture
def no_network(settings):
    settings.PAYMENT_RPC_URLS = dict.fromkeys(settings.PAYMENT_RPC_URLS)


@pytest.fixture
def order(customer, catalogue, place_order):
    """Two H100 lots for 7 days: 893.76 USD."""
    return place_order(customer, catalogue["h100"], lots=2, duration_days=7)


@pytest.fixture
def payment(local_network, order, customer) -> CryptoPayment:
    return payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )


@pytest.fixture
def top_up(local_network, customer):
    def make(amount="50.00", who=None) -> CryptoPayment:
        return payment_create_top_up(
            customer=who or customer,
            amount_usd=Decimal(amount),
            network_key="local",
            asset_symbol="tUSDC",
        )

    return make


def tx_hash() -> str:
    return "0x" + f"{next(_hashes):064x}"


@pytest.fixture
def transfer():
    """A Transfer log to the payment's address, as the watcher stores it; a confirmed one is
    settled as the watcher settles it (its receipt in the ledger, the payment's state)."""

    def make(payment, *, units=None, block=100, status=TransferStatus.SEEN) -> ChainTransfer:
        units = int(payment.amount_due_units) if units is None else units
        row = ChainTransfer.objects.create(
            network=payment.network,
            chain_id=payment.chain_id,
            tx_hash=tx_hash(),
            log_index=0,
            block_number=block,
            block_hash=tx_hash(),
            block_timestamp=timezone.now() - timedelta(minutes=1),
            token_address=payment.token_address,
            from_address=SENDER,
            to_address=payment.deposit_address.address,
            amount_units=units,
            payment=payment,
            status=status,
            confirmed_at=timezone.now() if status == TransferStatus.CONFIRMED else None,
        )
        if status in (TransferStatus.SEEN, TransferStatus.CONFIRMED):
            with transaction.atomic():
                settle(lock_payments_with_siblings([payment.pk]), touched=[payment.pk])
            payment.refresh_from_db()
        return row

    return make


def move_cursor(network: str, next_block: int) -> None:
    ChainCursor.objects.filter(network=network).update(next_block=next_block)


@pytest.fixture
def other_customer(make_customer):
    return make_customer(email="mallory@example.com", first_name="Mal", last_name="Lory")


@pytest.fixture
def other_client(other_customer) -> Client:
    browser = Client()
    browser.force_login(other_customer)
    return browser


@pytest.fixture
def in_review(payment, transfer):
    """The order's payment, underpaid at expiry: 800 of 893.76 tUSDC confirmed."""
    received = transfer(payment, units=800_000_000, block=50, status=TransferStatus.CONFIRMED)
    with transaction.atomic():
        payment_set_status(
            lock_payments([payment.pk])[payment.pk],
            to_status=PaymentStatus.NEEDS_REVIEW,
            review_reason=ReviewReason.UNDERPAID,
            reason="underpaid at expiry",
        )
        order_send_to_review(order_id=payment.order_id, reason="underpaid at expiry")
    payment.refresh_from_db()
    payment.received_transfer = received
    return payment
