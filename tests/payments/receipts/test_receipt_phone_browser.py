"""A withdrawal's receipt at phone width (390 px): its description carries the customer's 0x
address, which wraps inside the card, so the amount and the total stay on screen, and on
paper. The receipt is in the language it was issued in, the site around it in the visitor's."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from payments.ledger.services.posting import customer_account, ledger_post, system_account
from payments.models import LedgerAccountKind, Receipt, TransactionKind, Withdrawal
from tests.states import withdrawal_walk
from tests.ui.test_phone_tables_browser import logged_in_phone

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ADDRESS = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
PHONE_390 = {"width": 390, "height": 844}


def paid_withdrawal_receipt(customer, credit) -> Receipt:
    """A withdrawal of 5,251.60 USD paid out to ADDRESS, posted as the worker posts it."""
    amount = Decimal("5251.60")
    withdrawal = Withdrawal.objects.create(
        customer=customer,
        amount_usd=amount,
        network="local",
        chain_id=31337,
        asset="tUSDC",
        token_address="0x" + "11" * 20,
        decimals=6,
        amount_units=5_251_600_000,
        to_address=ADDRESS,
        confirmations_required=3,
    )
    withdrawal_walk(withdrawal, "paid", tx_hash="0x" + "cd" * 32)
    pending = system_account(LedgerAccountKind.WITHDRAWALS_PENDING)
    credit(customer, f"{amount}")
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_REQUEST,
        lines=[(customer_account(customer), -amount), (pending, amount)],
        memo="test request",
        idempotency_key="test-withdrawal-request",
        withdrawal=withdrawal,
    )
    paid = system_account(LedgerAccountKind.WITHDRAWALS_PAID, asset="tUSDC", network="local")
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_PAID,
        lines=[(pending, -amount), (paid, amount)],
        memo="test withdrawal",
        idempotency_key="test-withdrawal",
        withdrawal=withdrawal,
    )
    return Receipt.objects.get()


def inside(page, selector: str, width: int) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)


def test_a_withdrawal_receipt_fits_a_phone_with_its_amount_and_total(
    new_page, live_server, make_customer, credit
):
    italian = make_customer(language="it", first_name="Carla", last_name="Cliente")
    receipt = paid_withdrawal_receipt(italian, credit)
    assert receipt.language == "it" and ADDRESS in receipt.description
    page = logged_in_phone(new_page, live_server, italian, "en")
    page.set_viewport_size(PHONE_390)

    page.goto(f"/account/receipts/{receipt.number}/")
    # The receipt in Italian, as issued; the site around it in the visitor's English.
    expect(page.locator('[data-field="title"]')).to_have_text("Ricevuta R-000001")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("body > header")).to_contain_text("My orders")
    expect(page.locator('[data-field="pdf-link"]')).to_have_text("Download the PDF")
    expect(page.locator('[data-field="amount"]')).to_have_text("5.251,60 USD")
    expect(page.locator('[data-field="total"]')).to_have_text("5.251,60 USD")
    for selector in ('[data-field="description"]', '[data-field="amount"]', '[data-field="total"]'):
        expect(page.locator(selector)).to_be_visible()
        inside(page, selector, PHONE_390["width"])
    card = page.locator("article.receipt").bounding_box()
    amount = page.locator('[data-field="amount"]').bounding_box()
    assert amount["x"] + amount["width"] <= card["x"] + card["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_390["width"]
    assert page.locator(".table-scroll").evaluate("el => el.scrollWidth <= el.clientWidth")

    page.emulate_media(media="print")
    expect(page.locator("body > header")).to_be_hidden()
    expect(page.locator('[data-field="total"]')).to_be_visible()
    inside(page, '[data-field="total"]', PHONE_390["width"])
    assert page.csp_violations == []
