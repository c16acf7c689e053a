"""Finance's console at phone width (390 px): the last reconciliation (run by a member of
finance with a long address) and the withdrawals' totals fit the screen, no sideways scroll."""

import os

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from payments.finance.services import reconciliation_run
from payments.models import Withdrawal
from tests.payments.receipts.test_receipt_phone_browser import paid_withdrawal_receipt
from tests.ui.test_phone_tables_browser import logged_in_phone

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_console_and_the_withdrawal_pages_fit_a_phone(
    new_page, live_server, finance_user, customer, credit, language
):
    paid_withdrawal_receipt(customer, credit)  # a "Paid out in tUSDC on …" total
    today = timezone.now().date()
    run = reconciliation_run(period_start=today, period_end=today, triggered_by=finance_user)
    withdrawal = Withdrawal.objects.get()
    page = logged_in_phone(new_page, live_server, finance_user, language)
    page.set_viewport_size({"width": 390, "height": 844})

    for path in (
        "/finance/",
        "/finance/withdrawals/?show=all",
        f"/finance/withdrawals/{withdrawal.pk}/",
        f"/finance/reconciliation/?run={run.pk}",
    ):
        page.goto(path)
        expect(page.locator("main h1")).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)
        if os.environ.get("UI_SHOTS"):
            name = path.strip("/").replace("/", "_").replace("?", "_")
            page.screenshot(path=f"{os.environ['UI_SHOTS']}/{language}_{name}.png", full_page=True)
    page.goto("/finance/")
    for field in ("run-by", "withdrawals-pending", "withdrawals-paid-local-tUSDC"):
        box = page.locator(f'[data-field="{field}"]').bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (field, box)
    assert page.csp_violations == []
