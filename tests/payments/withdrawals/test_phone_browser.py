"""At phone width (360 px) the withdrawal form, its confirmation and the withdrawal's page fit
the screen: the address and the hash wrap instead of pushing the page sideways."""

import pytest
from playwright.sync_api import expect

from payments.withdrawals.services import withdrawal_approve, withdrawal_enter_hash
from tests.ui.test_phone_tables_browser import PHONE, logged_in_phone

from .conftest import CUSTOMER_WALLET

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("chain"),
]


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_withdrawal_pages_fit_a_phone(
    new_page, live_server, funded, request_withdrawal, finance_user
):
    page = logged_in_phone(new_page, live_server, funded, "it")

    page.goto("/account/balance/withdraw/")
    page.get_by_label("Importo (USD)").fill("25.00")
    page.get_by_label("L'indirizzo del tuo wallet").fill(CUSTOMER_WALLET.lower())
    page.get_by_role("button", name="Continua").click()
    expect(page.locator('[data-field="address"]')).to_have_text(CUSTOMER_WALLET)
    assert fits(page)
    page.get_by_role("button", name="Conferma il prelievo").click()
    expect(page.locator('[data-field="withdrawal-status"]')).to_have_text("Richiesto")
    assert fits(page)

    withdrawal = funded.withdrawals.get()
    withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash="0x" + "ab" * 32)
    # The page refreshes its status by itself (htmx, every 5 s) and shows the hash.
    expect(page.locator('[data-field="tx-hash"]')).to_be_visible(timeout=15_000)
    box = page.locator('[data-field="tx-hash"]').bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    assert fits(page)
    assert page.csp_violations == []
