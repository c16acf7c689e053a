"""In a real browser: from a paid order to its receipt, printed without the site's navigation,
the PDF downloaded, and the pages at phone width."""

import os
import re

import pytest
from playwright.sync_api import expect

from payments.models import Receipt

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def log_in(page, customer):
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator('[data-field="account-balance"]')).to_be_visible()


def test_from_the_order_to_its_receipt_printed_and_downloaded(new_page, customer, paid_order):
    order = paid_order(customer)
    receipt = Receipt.objects.get()
    page = new_page(viewport={"width": 390, "height": 844})  # a phone
    log_in(page, customer)

    page.goto(f"/account/orders/{order.pk}/")
    page.locator('[data-field="order-receipt"]').click()
    expect(page).to_have_url(re.compile(rf"/account/receipts/{receipt.number}/$"))
    expect(page.locator('[data-field="title"]')).to_have_text("Receipt R-000001")
    expect(page.locator('[data-field="amount"]')).to_have_text("893.76 USD")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing wider than the phone
    if os.environ.get("RECEIPT_SHOTS"):
        page.screenshot(path=f"{os.environ['RECEIPT_SHOTS']}/receipt-phone.png", full_page=True)

    page.emulate_media(media="print")
    expect(page.locator("body > header")).to_be_hidden()
    expect(page.locator('[data-field="pdf-link"]')).to_be_hidden()
    expect(page.locator('[data-field="amount"]')).to_be_visible()
    page.emulate_media(media="screen")

    with page.expect_download() as download:
        page.locator('[data-field="pdf-link"]').click()
    assert download.value.suggested_filename == "receipt-R-000001.pdf"
    with open(download.value.path(), "rb") as pdf:
        assert pdf.read(5) == b"%PDF-"

    page.goto("/account/payments/")
    expect(page.locator('[data-field="receipt-link"]')).to_have_text("R-000001")
    if os.environ.get("RECEIPT_SHOTS"):
        page.screenshot(path=f"{os.environ['RECEIPT_SHOTS']}/history-phone.png", full_page=True)
    assert page.csp_violations == []
