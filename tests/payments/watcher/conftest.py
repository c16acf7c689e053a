from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from payments.chain.scanning import scan_network
from payments.crypto.services.payments import payment_create_for_order, payment_create_top_up
from payments.models import ChainCursor, CryptoPayment


@pytest.fixture
def order_payment(chain, customer, catalogue, place_order):
    """A 201.60 tUSDC payment for a 3-day H100 lot, with the local network's cursor started."""

    def make(who=None, lots=1):
        who = who or customer
        order = place_order(who, catalogue["h100"], lots=lots, duration_days=3)
        payment = payment_create_for_order(
            order_id=order.pk, customer=who, network_key="local", asset_symbol="tUSDC"
        )
        scan_network(network_key="local")  # the watcher is running
        return payment

    return make


@pytest.fixture
def top_up_payment(chain, customer):
    def make(amount="50.00"):
        from decimal import Decimal

        payment = payment_create_top_up(
            customer=customer, amount_usd=Decimal(amount), network_key="local", asset_symbol="tUSDC"
        )
        scan_network(network_key="local")
        return payment

    return make


@pytest.fixture
def pay(chain):
    """Send token units to a payment's deposit address (one block), return the tx hash."""

    def send(payment: CryptoPayment, units: int | None = None, **kwargs) -> str:
        units = int(payment.amount_due_units) if units is None else units
        return chain.transfer(payment.deposit_address.address, units, **kwargs)

    return send


@pytest.fixture
def scan():
    def run():
        return scan_network(network_key="local")

    return run


def units(usd: str) -> int:
    from decimal import Decimal

    return int(Decimal(usd) * 10**6)


def block_time(chain, number: int) -> datetime:
    return datetime.fromtimestamp(chain.block_timestamp(number), tz=UTC)


def age_cursor_scan(minutes: int = 0):
    ChainCursor.objects.filter(network="local").update(
        last_scan_at=timezone.now() - timedelta(minutes=minutes)
    )


@pytest.fixture
def operator_client(make_customer):
    from django.contrib.auth.models import Group
    from django.test import Client

    from tests.mfa_fixtures import enrol_totp

    user = make_customer(email="ops@example.com", first_name="Otto", last_name="Perator")
    user.groups.add(Group.objects.get_or_create(name="operators")[0])
    enrol_totp(user)
    browser = Client()
    browser.force_login(user)
    return browser
