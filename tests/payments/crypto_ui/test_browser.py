"""The payment page in a real browser: countdown, copy buttons, live status, phone width."""

import re

import pytest
from playwright.sync_api import expect

from payments.models import CryptoPayment, PaymentStatus
from payments.services.crypto import payment_create_for_order

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
    page.get_by_role("button", name="Sign In").click()

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
    transfer(payment, block=100)
    CryptoPayment.objects.filter(pk=payment.pk).update(
        status=PaymentStatus.DETECTED, seen_units=payment.amount_due_units
    )
    move_cursor("local", 101)
    expect(page.locator("#payment-status")).to_contain_text(
        "seen in block 100 · confirmations 2/3", timeout=12_000
    )
    assert page.csp_violations == []
