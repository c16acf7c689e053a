"""At phone width (360 px) the statement and "My orders" show every column on screen: amount,
balance, total and status are read without scrolling sideways."""

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import expect

from payments.crypto.services.balance_payment import balance_pay_order

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 360, "height": 740}


def logged_in_phone(new_page, live_server, user, language):
    page = new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    client = Client()
    client.force_login(user)
    page.context.add_cookies(
        [
            {"name": name, "value": value, "url": live_server.url}
            for name, value in (
                (settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value),
                (settings.LANGUAGE_COOKIE_NAME, language),
            )
        ]
    )
    return page


def assert_on_screen(page, cell, label):
    expect(cell).to_be_visible()
    box = cell.bounding_box()
    assert box is not None, label
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (label, box)
    # The text itself fits too: nothing of it is clipped inside the cell.
    assert cell.evaluate("cell => cell.scrollWidth <= cell.clientWidth"), label


@pytest.mark.parametrize("language", ["en", "it"])
def test_statement_and_orders_fit_a_phone(
    new_page, live_server, catalogue, customer, credit, place_order, language
):
    credit(customer, "32345.67", reason="Bank transfer received from our customer's bank")
    paid = place_order(customer, catalogue["b200"], lots=3, duration_days=30)
    balance_pay_order(order_id=paid.pk, customer=customer)
    place_order(customer, catalogue["mi300x"], lots=2, duration_days=7)
    page = logged_in_phone(new_page, live_server, customer, language)

    page.goto("/account/balance/")
    rows = page.locator("table.statement tbody tr")
    expect(rows).to_have_count(2)
    for index in range(2):
        row = rows.nth(index)
        assert_on_screen(page, row.locator("td").nth(3), f"amount, row {index}")
        assert_on_screen(page, row.locator("td").nth(4), f"balance, row {index}")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    page.goto("/account/orders/")
    rows = page.locator("table.orders tbody tr")
    expect(rows).to_have_count(2)
    for index in range(2):
        row = rows.nth(index)
        assert_on_screen(page, row.locator("td").nth(6), f"total, row {index}")
        assert_on_screen(page, row.locator("td").nth(7), f"status, row {index}")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.csp_violations == []
