"""Order → stablecoin payment → a real transfer on the local chain → confirmed on the page."""

import re

import pytest
from playwright.sync_api import expect

from payments.chain.scanning import scan_network
from payments.models import CryptoPayment, PaymentStatus
from rental.models import Order, OrderStatus

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_order_paid_in_the_local_stablecoin_confirms_on_the_page(
    new_page, chain, catalogue, customer
):
    page = new_page()
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()

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


def test_an_order_paid_in_two_transfers_asks_for_the_remainder_then_for_nothing(
    new_page, chain, catalogue, customer
):
    page = new_page(viewport={"width": 390, "height": 844})  # a phone
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()

    page.goto("/configure/?gpu_model=h100-80gb&duration_days=3&lots=1&preparation=ubuntu")
    page.get_by_role("button", name="Review order").click()
    page.get_by_role("button", name=re.compile("Confirm order")).click()
    page.get_by_label(re.compile("tUSDC on Local test chain")).check()
    page.get_by_role("button", name="Pay 201.60 USD in stablecoins").click()
    payment = CryptoPayment.objects.get()
    scan_network(network_key="local")

    def requested_units() -> int:
        """What the page's EIP-681 request asks the wallet to send."""
        uri = page.locator('[data-field="uri"]').text_content()
        return int(re.search(r"&uint256=(\d+)$", uri).group(1))

    assert requested_units() == 201_600_000

    # The customer's wallet sends 150 tUSDC only; the worker confirms it.
    chain.transfer(payment.deposit_address.address, 150_000_000)
    chain.mine(3)
    scan_network(network_key="local")
    expect(page.locator('[data-field="uri"]')).to_have_text(
        re.compile(r"&uint256=51600000$"), timeout=15_000
    )
    expect(page.locator('[data-field="instructions"]')).to_contain_text(
        "Send the remaining 51.600000 tUSDC"
    )
    expect(page.locator('[data-field="received"]')).to_have_text("150.000000 tUSDC")
    page.goto(f"/account/orders/{payment.order_id}/")
    expect(page.locator('[data-field="amount-due"]')).to_contain_text("Amount due: 51.60 USD")
    expect(page.locator('[data-field="amount-received"]')).to_have_text(
        "150.00 USD received of 201.60 USD"
    )

    # The wallet pays what the page's request asks for now; then nothing is asked any more.
    page.get_by_role("link", name="Go to the payment: address, amount and status").click()
    chain.transfer(payment.deposit_address.address, requested_units())
    chain.mine(3)
    scan_network(network_key="local")
    expect(page.locator('[data-field="payment-status"]')).to_have_text("Confirmed", timeout=15_000)
    expect(page.locator('[data-section="instructions"]')).to_have_count(0)
    expect(page.locator('[data-field="received"]')).to_have_text("201.600000 tUSDC")
    expect(page.locator('[data-field="credited"]')).to_have_count(0)  # exactly the total
    assert CryptoPayment.objects.get().status == PaymentStatus.CONFIRMED
    assert Order.objects.get().status == OrderStatus.PROVISIONING
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.csp_violations == []
