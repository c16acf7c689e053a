"""The anonymous catalogue answered from the cache right after the session and locale middleware
(rental/middleware.py): the same response, header by header, as the whole stack gives; never
stale (the stock version is read on every request); never anyone's page but an anonymous
visitor's of that language with nothing to show them.

A response that took the short way has no `user` on its request: the authentication
middleware, after it, never ran. Transactional tests: the version moves at COMMIT.
"""

from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib import messages
from django.contrib.messages.storage.cookie import CookieStorage
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import reverse

from rental import stock
from rental.models import LotPrice
from tests.conftest import set_stock

pytestmark = pytest.mark.django_db(transaction=True)

MIDDLEWARE = "rental.middleware.AnonymousCatalogueMiddleware"


@pytest.fixture(autouse=True)
def _fresh_stock_cache():
    stock.clear()
    yield
    stock.clear()


def took_the_short_way(response) -> bool:
    return not hasattr(response.wsgi_request, "user")


def headers_of(response) -> dict:
    return {name.lower(): value for name, value in response.items()}


@pytest.mark.parametrize(
    "request_headers",
    [
        {},
        {"HTTP_ACCEPT_LANGUAGE": "it-IT,it;q=0.9"},
        {"secure": True},  # HSTS, on HTTPS only
    ],
    ids=["english", "italian", "https"],
)
@override_settings(SECURE_HSTS_SECONDS=3600, SECURE_HSTS_INCLUDE_SUBDOMAINS=True)
def test_the_kept_response_is_the_whole_stacks_header_by_header(catalogue, request_headers):
    url = reverse("rental:catalogue")
    without = [name for name in settings.MIDDLEWARE if name != MIDDLEWARE]
    with override_settings(MIDDLEWARE=without):
        whole_stack = Client().get(url, **request_headers)
    first, kept = (Client().get(url, **request_headers) for _ in range(2))
    assert not took_the_short_way(first) and took_the_short_way(kept)
    assert whole_stack.status_code == kept.status_code == 200
    assert headers_of(kept) == headers_of(whole_stack) == headers_of(first)
    assert kept.content == whole_stack.content
    assert not kept.cookies
    for name in ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"):
        assert kept[name]  # the security headers, there as in the whole stack's
    assert "Cookie" in kept["Vary"] and "Accept-Language" in kept["Vary"]
    assert ("Strict-Transport-Security" in kept) == bool(request_headers.get("secure"))


def test_a_price_change_is_on_the_next_short_way_response(catalogue):
    url, client = reverse("rental:catalogue"), Client()
    client.get(url)
    before = client.get(url)
    assert took_the_short_way(before) and "1,234.50 USD" not in before.content.decode()
    LotPrice.objects.filter(gpu_model=catalogue["b200"], duration_days=7).update(
        price_usd=Decimal("1234.50")
    )
    after = client.get(url)
    assert "1,234.50 USD" in after.content.decode()
    again = client.get(url)
    assert took_the_short_way(again) and "1,234.50 USD" in again.content.decode()


def test_an_order_is_on_the_next_short_way_response(catalogue, customer, place_order):
    url, client = reverse("rental:catalogue"), Client()
    set_stock(catalogue["h100"], 2)
    client.get(url)
    assert took_the_short_way(client.get(url))
    place_order(customer, catalogue["h100"], lots=2)
    client.get(url)
    kept = client.get(url)
    assert took_the_short_way(kept)
    card = kept.content.decode().split(f'data-model="{catalogue["h100"].slug}"', 1)[1]
    assert "0 lots available" in card.split("</article>", 1)[0]


def test_a_customer_never_gets_the_kept_page(catalogue, customer):
    url = reverse("rental:catalogue")
    anonymous = Client()
    anonymous.get(url)
    assert took_the_short_way(anonymous.get(url))
    logged_in = Client()
    logged_in.force_login(customer)
    response = logged_in.get(url)
    html = response.content.decode()
    assert not took_the_short_way(response)
    assert "Log out" in html and "Log in" not in html and "csrfmiddlewaretoken" in html
    assert "no-store" in response["Cache-Control"]


def test_a_message_is_shown_not_the_kept_page(catalogue, rf):
    url = reverse("rental:catalogue")
    client = Client()
    client.get(url)
    assert took_the_short_way(client.get(url))
    # A message in the messages cookie, as a redirect after an action leaves it.
    storage, carrier = CookieStorage(rf.get(url)), HttpResponse()
    storage.add(messages.INFO, "Your order was cancelled.")
    storage.update(carrier)
    client.cookies[CookieStorage.cookie_name] = carrier.cookies[CookieStorage.cookie_name].value
    response = client.get(url)
    assert not took_the_short_way(response)
    assert "Your order was cancelled." in response.content.decode()


def test_a_session_cookie_or_a_query_string_takes_the_whole_stack(catalogue, customer):
    url = reverse("rental:catalogue")
    client = Client()
    client.get(url)
    assert took_the_short_way(client.get(url))
    assert not took_the_short_way(client.get(url, {"page": "1"}))
    client.cookies[settings.SESSION_COOKIE_NAME] = "not-a-session"
    response = client.get(url)
    assert not took_the_short_way(response) and "no-store" in response["Cache-Control"]


def test_each_language_gets_its_own_kept_page(catalogue):
    url = reverse("rental:catalogue")
    english, italian = Client(), Client(HTTP_ACCEPT_LANGUAGE="it")
    for client in (english, italian, english, italian):
        client.get(url)
    english_page, italian_page = english.get(url), italian.get(url)
    assert took_the_short_way(english_page) and took_the_short_way(italian_page)
    assert '<html lang="en">' in english_page.content.decode()
    assert english_page["Content-Language"] == "en"
    assert '<html lang="it">' in italian_page.content.decode()
    assert italian_page["Content-Language"] == "it"


def test_a_host_not_allowed_is_refused_on_the_short_way_too(catalogue):
    url = reverse("rental:catalogue")
    Client().get(url)
    assert took_the_short_way(Client().get(url))
    assert Client().get(url, HTTP_HOST="evil.example").status_code == 400
