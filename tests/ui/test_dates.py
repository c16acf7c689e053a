"""One date format per language, with the zone, wherever a date is shown: "1 December 2026,
14:05 UTC" in English, "1 dicembre 2026, 14:05 UTC" in Italian (month in lower case)."""

import re
from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import formats, translation

from rental.models import Order, OrderStatusChange

PLACED = datetime(2026, 12, 1, 14, 5, tzinfo=UTC)
HELD = datetime(2027, 3, 5, 9, 7, tzinfo=UTC)
ITALIAN_MONTHS = (
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre"
)
ANY_DATE = {
    "en": re.compile(r"^\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC$"),
    "it": re.compile(rf"^\d{{1,2}} ({ITALIAN_MONTHS.replace(' ', '|')}) \d{{4}}, \d\d:\d\d UTC$"),
}
EXPECTED = {
    "en": ("1 December 2026, 14:05 UTC", "5 March 2027, 09:07 UTC"),
    "it": ("1 dicembre 2026, 14:05 UTC", "5 marzo 2027, 09:07 UTC"),
}


def speak(client, language):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language


def texts(html: str, pattern: str) -> list[str]:
    return [" ".join(re.sub(r"<[^>]+>", "", found).split()) for found in re.findall(pattern, html)]


@pytest.fixture
def order(customer, catalogue, place_order):
    order = place_order(customer, catalogue["h100"], lots=1)
    Order.objects.filter(pk=order.pk).update(created_at=PLACED, hold_until=HELD)
    OrderStatusChange.objects.filter(order=order).update(created_at=PLACED)
    return order


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_order_timeline_and_hold_show_the_language_s_format_with_the_zone(
    customer_client, order, language
):
    speak(customer_client, language)
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    placed, held = EXPECTED[language]
    timeline = html[html.index('id="order-timeline"') :]
    timeline = timeline[: timeline.index("</section>")]
    assert texts(timeline, r"<time [^>]*>(.*?)</time>") == [placed]
    assert f'<time datetime="{PLACED.isoformat()}">' in timeline
    assert texts(html, r'data-field="hold">.*?<time [^>]*>(.*?)</time>') == [held]
    assert "UTC UTC" not in html


@pytest.mark.parametrize("language", ["en", "it"])
def test_my_orders_and_the_statement_show_the_same_format(
    customer_client, customer, credit, order, language
):
    credit(customer, "10.00")
    speak(customer_client, language)
    orders = customer_client.get(reverse("rental:order_list")).content.decode()
    assert texts(orders, r'<td data-label="[^"]*">([^<]*UTC)</td>') == [EXPECTED[language][0]]

    statement = customer_client.get(reverse("payments:statement")).content.decode()
    (shown,) = texts(statement, r"<tr data-entry=\"\d+\">\s*<td[^>]*>(.*?)</td>")
    assert ANY_DATE[language].match(shown), shown


def test_italian_month_names_are_lower_case_and_both_formats_agree():
    for month in range(1, 13):
        moment = datetime(2026, month, 1, 8, 0, tzinfo=UTC)
        with translation.override("it"):
            text = formats.date_format(moment, "DATETIME_FORMAT")
            assert text == formats.date_format(moment, "SHORT_DATETIME_FORMAT")
        assert text.split()[1] == ITALIAN_MONTHS.split()[month - 1], text
    with translation.override("en"):
        assert formats.date_format(PLACED, "SHORT_DATETIME_FORMAT") == EXPECTED["en"][0]
