"""The configurator's live summary in a real browser: a lots value out of range or not a whole
number shows the field's message and no total, instead of leaving the old price up."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LOTS_MESSAGE = "Enter a whole number of lots from 1 to 10."


def test_bad_lots_show_the_field_message_and_no_total(new_page, catalogue):
    page = new_page()
    page.goto("/configure/?gpu_model=h100-80gb&duration_days=7&lots=2")
    summary = page.locator("#summary")
    total = page.locator('#summary [data-field="total"]')
    total_line = page.locator("#total-line")
    expect(total).to_have_text("893.76 USD")

    for bad in ("11", "0", "-1", "2.5", ""):
        page.locator("#id_lots").fill(bad)
        expect(summary.locator('[data-field="summary-errors"]')).to_contain_text(
            f"Lots: {LOTS_MESSAGE}"
        )
        expect(total).to_have_count(0)
        expect(total_line).to_have_text("Correct the marked fields to see the price.")
        lots = page.locator("#id_lots")
        expect(lots).to_have_attribute("aria-invalid", "true")
        expect(lots).to_have_accessible_description(re.compile(re.escape(LOTS_MESSAGE)))

        # A good value brings the price back.
        page.locator("#id_lots").fill("3")
        expect(total).to_have_text("1,340.64 USD")
        expect(total_line).to_have_text("1,340.64 USD for 3 cards")
        expect(page.locator("#id_lots")).not_to_have_attribute("aria-invalid", "true")
    assert page.csp_violations == []
