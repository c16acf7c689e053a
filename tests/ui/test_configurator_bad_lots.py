"""The configurator with a lots value it cannot price: the field's message, no total and no
total line, on the htmx summary and on the page alike."""

import re

import pytest
from django.urls import reverse

CONFIGURE = reverse("rental:configure")
LOTS_MESSAGE = "Enter a whole number of lots from 1 to 10."
BAD_LOTS = ["11", "0", "-1", "\u22121", "2.5", "", "   "]
VALID = {"gpu_model": "h100-80gb", "duration_days": "7", "preparation": "ubuntu"}


def total_line(html: str) -> str:
    match = re.search(r'<p id="total-line"[^>]*>(.*?)</p>', html, flags=re.DOTALL)
    assert match, "no total line"
    return " ".join(re.sub(r"<[^>]+>", "", match.group(1)).split())


def summary_errors(html: str) -> list[str]:
    match = re.search(r'<ul class="errorlist" data-field="summary-errors">(.*?)</ul>', html, re.S)
    assert match, "the summary lists no errors"
    return [" ".join(item.split()) for item in re.findall(r"<li[^>]*>(.*?)</li>", match.group(1))]


@pytest.mark.parametrize("lots", BAD_LOTS)
def test_the_htmx_summary_shows_the_lots_message_and_no_total(client, catalogue, lots):
    response = client.get(CONFIGURE, {**VALID, "lots": lots}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200  # htmx swaps only 2xx answers
    assert html.lstrip().startswith('<aside id="summary"')
    assert summary_errors(html) == [f"Lots: {LOTS_MESSAGE}"]
    assert 'data-error-for="lots"' in html
    assert 'data-field="total"' not in html
    assert "USD" not in html
    # The total beside the button is replaced too (out of band), with no price in it.
    assert 'id="total-line" class="total-line" data-field="total-line" hx-swap-oob="true"' in html
    assert total_line(html) == "Correct the marked fields to see the price."


@pytest.mark.parametrize("lots", BAD_LOTS)
def test_the_page_shows_the_lots_message_at_the_field_and_no_total(client, catalogue, lots):
    response = client.get(CONFIGURE, {**VALID, "lots": lots})
    html = response.content.decode()
    assert response.status_code == 200
    field_errors = html[html.index('id="id_lots_error"') :]
    assert LOTS_MESSAGE in field_errors[: field_errors.index("</ul>")]
    assert re.search(r'<input[^>]*name="lots"[^>]*aria-invalid="true"', html)
    assert summary_errors(html) == [f"Lots: {LOTS_MESSAGE}"]
    assert 'data-field="total"' not in html
    assert total_line(html) == "Correct the marked fields to see the price."


def test_a_good_value_after_a_bad_one_prices_again(client, catalogue):
    client.get(CONFIGURE, {**VALID, "lots": "11"}, headers={"HX-Request": "true"})
    html = client.get(
        CONFIGURE, {**VALID, "lots": "10"}, headers={"HX-Request": "true"}
    ).content.decode()
    assert 'data-field="summary-errors"' not in html
    assert total_line(html) == "4,468.80 USD for 10 cards"


def test_the_form_leaves_checking_to_the_server(client, catalogue):
    """The browser's own validation would stop htmx from asking for the summary at all."""
    html = client.get(CONFIGURE).content.decode()
    assert re.search(r'<form id="configurator"[^>]*\bnovalidate\b', html)
