import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from payments.ledger.services.posting import customer_account
from rental.models import Order, OrderStatus

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_customer_credited_by_finance_pays_from_the_balance_and_sees_the_statement_line(
    new_page, catalogue, customer, credit
):
    credit(customer, "1000.00", reason="Bank transfer received")
    page = new_page()
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator('[data-field="account-balance"]')).to_contain_text("1,000.00 USD")

    page.goto("/configure/?gpu_model=h100-80gb&duration_days=7&lots=2&preparation=ubuntu")
    expect(page.locator('[data-field="total"]').first).to_have_text("893.76 USD")
    page.get_by_role("button", name="Review order").click()
    page.get_by_role("button", name=re.compile("Confirm order")).click()
    expect(page.locator('[data-field="status"]')).to_have_text("Awaiting payment")

    page.get_by_role("button", name="Pay with balance · 893.76 USD").click()
    expect(page.locator('[data-field="status"]')).to_have_text("Provisioning")
    expect(page.get_by_role("status")).to_contain_text("is paid from your USD balance")
    order = Order.objects.get()
    assert order.status == OrderStatus.PROVISIONING  # paid, cards allocated
    assert customer_account(customer).balance == Decimal("106.24")

    page.goto("/account/balance/")
    expect(page.locator('[data-field="balance"]')).to_have_text("Balance: 106.24 USD")
    payment_row = page.locator("tr", has_text=order.reference)
    expect(payment_row).to_contain_text("-893.76 USD")
    expect(payment_row).to_contain_text("106.24 USD")
    payment_row.get_by_role("link", name=order.reference).click()
    expect(page).to_have_url(re.compile(rf"/account/orders/{order.pk}/$"))
    assert page.csp_violations == []
