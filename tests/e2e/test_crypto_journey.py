"""Order → stablecoin payment → a real transfer on the local chain → confirmed on the page."""

import re

import pytest
from playwright.sync_api import expect

from payments.models import CryptoPayment, PaymentStatus
from payments.services.scanning import scan_network
from rental.models import Order, OrderStatus

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_order_paid_in_the_local_stablecoin_confirms_on_the_page(
    new_page, chain, catalogue, customer
):
    page = new_page()
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Sign In").click()

    page.goto("/configure/?gpu_model=h100-80gb&duration_days=3&lots=1&preparation=ubuntu")
    page.get_by_role("button", name="Review order").click()
    page.get_by_role("button", name=re.compile("Confirm order")).click()
    expect(page.locator('[data-field="status"]')).to_have_text("Awaiting payment")

    page.get_by_label(re.compile("tUSDC on Local test chain")).check()
    page.get_by_role("button", name="Pay 201.60 USD in stablecoins").click()
    expect(page.locator('[data-field="amount"]')).to_have_text("201.600000 tUSDC")
    payment = CryptoPayment.objects.get()
    expect(page.locator('[data-field="address"]')).to_have_text(payment.deposit_address.address)
    expect(page.locator('[data-field="payment-status"]')).to_have_text("Waiting for the transfer")
    expect(page.locator("svg").first).to_be_visible()  # the QR code
    scan_network(network_key="local")  # the worker is running

    # The customer pays from a wallet; the worker sees it, then confirms it at N blocks.
    tx_hash = chain.transfer(payment.deposit_address.address, int(payment.amount_due_units))
    page.get_by_label(re.compile("Transaction hash")).fill(tx_hash)
    page.get_by_role("button", name="I have paid").click()
    expect(page.locator('[data-field="declaration"]')).to_contain_text("You declared this payment")
    chain.mine(1)
    scan_network(network_key="local")
    expect(page.locator('[data-field="payment-status"]')).to_have_text(
        "Transfer seen, confirming", timeout=15_000
    )
    expect(page.locator(f'[data-transfer="{tx_hash.lower()}"]')).to_contain_text("confirmations")

    chain.mine(2)
    scan_network(network_key="local")
    expect(page.locator('[data-field="payment-status"]')).to_have_text("Confirmed", timeout=15_000)
    assert CryptoPayment.objects.get().status == PaymentStatus.CONFIRMED
    assert Order.objects.get().status == OrderStatus.PROVISIONING  # paid, cards allocated
    page.goto(f"/account/orders/{payment.order_id}/")
    expect(page.locator('[data-field="status"]')).to_have_text("Provisioning")
    assert page.csp_violations == []
