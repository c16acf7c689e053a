"""The payment page in a real browser: countdown, copy buttons, live status, phone width; the
page following the payment's state (a partial transfer, a confirmation, a cancelled order)."""

import re

import pytest
from playwright.sync_api import expect

from payments.crypto.services.payments import payment_create_for_order
from payments.models import PaymentStatus, TransferStatus

from .conftest import move_cursor

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_payment_page_counts_down_copies_and_follows_the_status_on_a_phone(
    new_page,
    local_network,
    order,
    customer,
    transfer,
):
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    page = new_page(
        viewport={"width": 360, "height": 740}, permissions=["clipboard-read", "clipboard-write"]
    )
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()

    page.goto(f"/account/orders/{order.pk}/")
    page.get_by_role("link", name="Go to the payment: address, amount and status").click()
    expect(page.locator('[data-field="amount"]')).to_have_text("893.760000 tUSDC")

    # The countdown replaces nothing but adds the time left, ticking.
    expect(page.locator("[data-countdown-left]")).to_be_visible()
    expect(page.locator("[data-countdown-value]")).to_have_text(re.compile(r"^\d+:\d\d$"))

    # Copy buttons show their feedback.
    copy = page.get_by_role("button", name="Copy the address")
    copy.click()
    expect(page.locator("button.copied")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == payment.deposit_address.address
    page.get_by_role("button", name="Copy the amount").click()
    assert page.evaluate("navigator.clipboard.readText()") == "893.760000"

    # Nothing is wider than the phone: the address wraps.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    # The status follows the chain by itself.
    transfer(payment, block=100)  # seen: the payment is "detected", as the watcher leaves it
    assert (payment.status, payment.seen_units) == (
        PaymentStatus.DETECTED,
        payment.amount_due_units,
    )
    move_cursor("local", 101)
    expect(page.locator("#payment-status")).to_contain_text(
        "seen in block 100 · confirmations 2/3", timeout=12_000
    )
    assert page.csp_violations == []


def sign_in(page, customer) -> None:
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()


def test_a_partial_payment_turns_the_open_page_into_a_request_for_the_remainder(
    new_page, local_network, order, customer, transfer
):
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    page = new_page(
        viewport={"width": 360, "height": 740}, permissions=["clipboard-read", "clipboard-write"]
    )
    sign_in(page, customer)
    page.goto(f"/account/payments/{payment.pk}/")
    uri = page.locator('[data-field="uri"]')
    expect(uri).to_have_text(re.compile(r"&uint256=893760000$"))

    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)

    # Without a reload, the next poll brings the instructions for what is still due.
    expect(uri).to_have_text(re.compile(r"&uint256=793760000$"), timeout=12_000)
    expect(page.locator('[data-field="instructions"]')).to_contain_text(
        "Send the remaining 793.760000 tUSDC"
    )
    expect(page.locator('[data-field="amount"]')).to_have_text("793.760000 tUSDC")
    expect(page.get_by_role("link", name="Open in a wallet app")).to_have_attribute(
        "href", re.compile(r"&uint256=793760000$")
    )
    expect(page.locator('[data-field="received"]')).to_have_text("100.000000 tUSDC")
    # The swapped-in part works as the first one did: countdown and copy buttons.
    expect(page.locator("[data-countdown-value]")).to_have_text(re.compile(r"^\d+:\d\d$"))
    page.get_by_role("button", name="Copy the amount").click()
    assert page.evaluate("navigator.clipboard.readText()") == "793.760000"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.csp_violations == []


def test_a_confirmed_payment_leaves_no_instructions_on_the_open_page(
    new_page, local_network, order, customer, transfer
):
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    page = new_page(viewport={"width": 360, "height": 740})
    sign_in(page, customer)
    page.goto(f"/account/payments/{payment.pk}/")
    expect(page.locator('[data-section="instructions"]')).to_be_visible()

    transfer(payment, status=TransferStatus.CONFIRMED)

    expect(page.locator('[data-field="payment-status"]')).to_have_text("Confirmed", timeout=12_000)
    expect(page.locator('[data-section="instructions"]')).to_have_count(0)
    expect(page.locator('[data-section="payment-summary"]')).to_contain_text(
        "There is nothing to send on this payment."
    )
    expect(page.locator("svg.payment-qr")).to_have_count(0)
    expect(page.locator("[data-expires-at]")).to_have_count(0)
    expect(page.get_by_role("button", name="Copy the amount")).to_have_count(0)
    page.get_by_role("link", name="Go to the order").click()
    expect(page.locator('[data-field="status"]')).to_have_text(re.compile("Paid|Provisioning"))

    # Loaded afresh, the page says the same.
    page.goto(f"/account/payments/{payment.pk}/")
    expect(page.locator('[data-field="confirmed"]')).to_contain_text(
        f"order {order.reference} is paid"
    )
    expect(page.locator('[data-section="instructions"]')).to_have_count(0)
    assert page.csp_violations == []


def test_an_order_cancelled_with_money_received_shows_it_on_the_balance(
    new_page, local_network, order, customer, transfer
):
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    page = new_page(viewport={"width": 360, "height": 740})
    sign_in(page, customer)

    page.goto(f"/account/orders/{order.pk}/")
    expect(page.locator('[data-field="amount-due"]')).to_contain_text("Amount due: 793.76 USD")
    expect(page.locator('[data-field="amount-received"]')).to_have_text(
        "100.00 USD received of 893.76 USD"
    )
    page.get_by_role("button", name="Cancel this order").click()
    expect(page.locator('[data-field="money-received"]')).to_contain_text(
        "100.00 USD confirmed on payment"
    )
    page.get_by_role("button", name="Cancel the order and credit the money to my balance").click()

    expect(page.locator('[data-field="status"]')).to_have_text("Cancelled")
    expect(page.locator('[data-field="cancelled-money"]')).to_contain_text(
        "The 100.00 USD that arrived for it is credited to your USD balance"
    )
    expect(page.get_by_text("Nothing will be charged for it.")).to_have_count(0)
    page.get_by_role("link", name="See your balance statement").click()
    expect(page.locator('[data-field="balance"]')).to_have_text("Balance: 100.00 USD")
    expect(page.locator("tr", has_text="Payment credited to the balance")).to_contain_text(
        "100.00 USD"
    )

    # The payment itself says where its money went, and asks for nothing.
    page.goto(f"/account/payments/{payment.pk}/")
    expect(page.locator('[data-field="credited"]')).to_have_text("100.00 USD")
    expect(page.locator('[data-section="instructions"]')).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.csp_violations == []
