"""Receipts: a cheap GPU model (1 USD a lot) with room for many orders, customers with a
balance, and the anvil helpers for a top-up confirmed on chain."""

from decimal import Decimal

import pytest

from payments.chain.scanning import scan_network
from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.payments import payment_create_top_up
from rental.models import GpuModel, LotPrice
from tests.conftest import set_stock


@pytest.fixture
def cheap_model(db) -> GpuModel:
    model = GpuModel.objects.create(
        slug="test-1usd",
        name="Test 1 USD",
        vendor="Test",
        compute_platform="cuda",
        memory_gb_per_card=16,
        cards_per_lot=1,
        description="test",
    )
    set_stock(model, 60)
    LotPrice.objects.create(gpu_model=model, duration_days=3, price_usd=Decimal("1.00"))
    return model


@pytest.fixture
def paid_order(catalogue, place_order, credit):
    """An order of `who`, paid from a balance credited for it: two H100 lots for 7 days."""

    def make(who, *, lots=2, duration_days=7, model="h100"):
        order = place_order(who, catalogue[model], lots=lots, duration_days=duration_days)
        credit(who, f"{order.total_usd}")
        return balance_pay_order(order_id=order.pk, customer=who)

    return make


@pytest.fixture
def top_up_payment(chain, customer):
    def make(amount="50.00", who=None):
        payment = payment_create_top_up(
            customer=who or customer,
            amount_usd=Decimal(amount),
            network_key="local",
            asset_symbol="tUSDC",
        )
        scan_network(network_key="local")  # the watcher is running
        return payment

    return make


@pytest.fixture
def pay(chain):
    def send(payment, units: int | None = None) -> str:
        units = int(payment.amount_due_units) if units is None else units
        return chain.transfer(payment.deposit_address.address, units)

    return send
