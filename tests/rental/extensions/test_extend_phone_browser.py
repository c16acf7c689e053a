"""The extend page at phone width (390 px): each option is one label, the radio beside its
price and its new end, each on its own line; clicking the radio itself picks the option."""

import pytest
from playwright.sync_api import expect

from tests.ui.test_phone_tables_browser import logged_in_phone

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.parametrize("language", ["en", "it"])
def test_each_offer_is_a_clean_label_and_its_radio_clicks(
    new_page, live_server, customer, active_order, language
):
    order = active_order(customer, lots=2)
    page = logged_in_phone(new_page, live_server, customer, language)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/account/orders/{order.pk}/extend/")

    for days in (3, 7, 30):
        offer = page.locator(f'[data-offer="{days}"]')
        radio, price = (
            offer.locator('input[type="radio"]'),
            offer.locator('[data-field="offer-price"]'),
        )
        end = offer.locator('[data-field="offer-end"]')
        boxes = [radio.bounding_box(), price.bounding_box(), end.bounding_box()]
        assert not overlap(boxes[0], boxes[1]) and not overlap(boxes[0], boxes[2])
        assert not overlap(boxes[1], boxes[2])
        assert boxes[2]["y"] >= boxes[1]["y"] + boxes[1]["height"] - 1  # the end below the price
        assert all(box["x"] + box["width"] <= 390 for box in boxes)
        radio.click()  # would time out if the text lay over it
        expect(radio).to_be_checked()
    page.locator('[data-offer="7"] [data-field="offer-end"]').click()  # the text picks it too
    expect(page.locator('[data-offer="7"] input[type="radio"]')).to_be_checked()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.csp_violations == []
