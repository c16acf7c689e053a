"""The catalogue is cached on the stock version (rental/stock.py, migration 0011's triggers)
and is never stale: every committed change is on the very next request, for a customer and for
an anonymous visitor; the anonymous page is cached whole and is nobody's.

Transactional tests: the version moves at COMMIT, as in production.
"""

import datetime
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from rental import stock
from rental.hosts.services import host_set_state
from rental.models import Host, HostState, LotPrice, Order, StockVersion
from tests.conftest import set_stock

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh_stock_cache():
    stock.clear()
    yield
    stock.clear()


def lots_shown(client, gpu_model) -> str:
    html = client.get(reverse("rental:catalogue")).content.decode()
    card = html.split(f'data-model="{gpu_model.slug}"', 1)[1].split("</article>", 1)[0]
    return card.split('<footer>\n      <p class="muted">', 1)[1].split("</p>", 1)[0]


@pytest.fixture
def anonymous(client):
    return client


@pytest.fixture
def logged_in(django_user_model, customer):
    from django.test import Client

    client = Client()
    client.force_login(customer)
    return client


@pytest.fixture(params=["anonymous", "logged in"])
def visitor(request, anonymous, logged_in):
    return anonymous if request.param == "anonymous" else logged_in


def current_version() -> int:
    stock.version()  # creates the row after a flush
    return StockVersion.objects.get(id=1).value


def test_the_version_moves_once_per_committed_stock_change_and_not_for_others(catalogue):
    host = set_stock(catalogue["h100"], 2)[0]
    before = current_version()
    with transaction.atomic():
        Host.objects.filter(pk=host.pk).update(notes="rack 4")  # not in the catalogue
    assert current_version() == before
    with transaction.atomic():
        Host.objects.filter(pk=host.pk).update(cards=1)
        Host.objects.filter(pk=host.pk).update(cards=2)
    assert current_version() == before + 1  # once per transaction
    with pytest.raises(RuntimeError), transaction.atomic():
        Host.objects.filter(pk=host.pk).update(cards=1)
        raise RuntimeError
    assert current_version() == before + 1  # rolled back: nothing changed


def test_a_transaction_that_changed_stock_is_not_served_from_the_cache(catalogue):
    set_stock(catalogue["h100"], 2)
    assert stock.version() is not None
    with transaction.atomic():
        LotPrice.objects.filter(gpu_model=catalogue["h100"]).update(price_usd=Decimal("1.00"))
        assert stock.version() is None
    assert stock.version() is not None


def test_an_order_taking_the_last_lots_is_on_the_next_request(
    visitor, catalogue, customer, place_order
):
    set_stock(catalogue["h100"], 2)
    assert lots_shown(visitor, catalogue["h100"]) == "2 lots available"
    assert lots_shown(visitor, catalogue["h100"]) == "2 lots available"  # from the cache
    place_order(customer, catalogue["h100"], lots=2)
    assert lots_shown(visitor, catalogue["h100"]) == "0 lots available"


def test_a_host_going_out_of_service_is_on_the_next_request(visitor, catalogue, operator):
    host = set_stock(catalogue["h200"], 3)[0]
    assert lots_shown(visitor, catalogue["h200"]) == "3 lots available"
    host_set_state(
        host_id=host.pk, to_state=HostState.OUT_OF_SERVICE, actor=operator, reason="fans"
    )
    assert lots_shown(visitor, catalogue["h200"]) == "0 lots available"


def test_a_price_change_is_on_the_next_request(visitor, catalogue):
    url = reverse("rental:catalogue")
    assert "1,234.50 USD" not in visitor.get(url).content.decode()
    LotPrice.objects.filter(gpu_model=catalogue["b200"], duration_days=7).update(
        price_usd=Decimal("1234.50")
    )
    assert "1,234.50 USD" in visitor.get(url).content.decode()


def test_a_hold_ending_without_a_write_is_on_the_next_request(
    visitor, catalogue, customer, place_order
):
    set_stock(catalogue["mi300x"], 1)
    order = place_order(customer, catalogue["mi300x"], lots=1)
    Order.objects.filter(pk=order.pk).update(hold_until=timezone.now() + datetime.timedelta(0, 1))
    assert lots_shown(visitor, catalogue["mi300x"]) == "0 lots available"
    while timezone.now() <= Order.objects.get(pk=order.pk).hold_until:
        pass  # the hold ends; nothing is written
    assert lots_shown(visitor, catalogue["mi300x"]) == "1 lot available"


def test_the_anonymous_page_is_cached_whole_and_carries_nothing_of_the_visitor(
    anonymous, catalogue
):
    url = reverse("rental:catalogue")
    first = anonymous.get(url)
    with CaptureQueriesContext(connection) as queries:
        second = anonymous.get(url)
    assert [query["sql"] for query in queries] == [stock._VERSION_SQL]
    assert second.content == first.content
    for response in (first, second):
        html = response.content.decode()
        assert "csrfmiddlewaretoken" not in html and "Log in" in html
        assert not response.cookies  # no Set-Cookie at all
        assert "no-store" not in response.get("Cache-Control", "")
    assert first["Content-Language"] == "en"


def test_the_cached_anonymous_page_follows_the_language(anonymous, catalogue):
    url = reverse("rental:catalogue")
    assert '<html lang="en">' in anonymous.get(url).content.decode()
    anonymous.get(reverse("switch_language", args=["it"]), {"next": url})
    html = anonymous.get(url).content.decode()
    assert '<html lang="it">' in html and "Noleggia" in html
    anonymous.get(reverse("switch_language", args=["en"]), {"next": url})
    assert '<html lang="en">' in anonymous.get(url).content.decode()


def test_a_customer_never_gets_the_anonymous_page_nor_the_reverse(
    anonymous, logged_in, customer, catalogue
):
    url = reverse("rental:catalogue")
    for first, second in ((anonymous, logged_in), (logged_in, anonymous)):
        stock.clear()
        first.get(url)
        first.get(url)
        customer_html = logged_in.get(url).content.decode()
        anonymous_html = anonymous.get(url).content.decode()
        assert "Log out" in customer_html and "csrfmiddlewaretoken" in customer_html
        assert "Log in" not in customer_html
        assert "Log out" not in anonymous_html and "Log in" in anonymous_html
        assert "csrfmiddlewaretoken" not in anonymous_html


def test_a_message_for_an_anonymous_visitor_is_shown_not_cached(client, customer, catalogue):
    url = reverse("rental:catalogue")
    client.get(url)
    client.force_login(customer)
    response = client.post(reverse("account_logout"))
    assert response.status_code == 302
    assert response["Location"] == url
    html = client.get(url).content.decode()
    assert "You are logged out." in html and "Log in" in html
    assert "You are logged out." not in client.get(url).content.decode()


def test_a_cached_catalogue_costs_one_query_for_a_customer(logged_in, catalogue):
    url = reverse("rental:catalogue")
    logged_in.get(url)
    with CaptureQueriesContext(connection) as queries:
        assert logged_in.get(url).status_code == 200
    # The user with their staff groups (the session is in the cache), then the version.
    assert len(queries) == 2
    assert stock._VERSION_SQL in [query["sql"] for query in queries]


def csrf_token_in(html: str) -> str:
    return html.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]


def test_each_customer_gets_a_token_of_their_own_that_works(catalogue, make_customer):
    from django.test import Client

    url = reverse("rental:catalogue")
    clients = []
    for _ in range(2):
        client = Client(enforce_csrf_checks=True)
        client.force_login(make_customer())
        clients.append(client)
    pages = [client.get(url).content.decode() for client in clients * 2]
    tokens = [csrf_token_in(html) for html in pages]
    assert len(set(tokens)) == 4  # masked anew for every response
    assert "csrf-slot-" not in "".join(pages)
    for client, token in zip(clients, tokens[2:], strict=True):
        response = client.post(reverse("account_logout"), {"csrfmiddlewaretoken": token})
        assert response.status_code == 302  # the token from a cached page is accepted
        assert "_auth_user_id" not in client.session


def test_staff_and_customers_do_not_share_a_cached_page(catalogue, customer, make_customer):
    from django.contrib.auth.models import Group
    from django.test import Client

    from accounts.roles import FINANCE

    finance = make_customer()
    finance.groups.add(Group.objects.get_or_create(name=FINANCE)[0])
    url = reverse("rental:catalogue")
    seen = {}
    for user in (finance, customer, finance, customer):
        client = Client()
        client.force_login(user)
        seen.setdefault(user.pk, []).append(client.get(url).content.decode())
    assert all('href="/finance/"' in html for html in seen[finance.pk])
    assert all('href="/finance/"' not in html for html in seen[customer.pk])


def test_the_anonymous_page_varies_on_the_cookie_for_shared_caches(anonymous, catalogue):
    response = anonymous.get(reverse("rental:catalogue"))
    assert "Cookie" in response["Vary"]  # a logged-in visitor's page is another page


def configurator_stock(client, gpu_model) -> str:
    url = reverse("rental:configure") + f"?gpu_model={gpu_model.slug}&lots=1&duration_days=7"
    html = client.get(url).content.decode()
    return html.split('data-field="stock">', 1)[1].split("</p>", 1)[0]


def test_the_configurator_keeps_the_catalogue_and_follows_stock_on_the_next_request(
    visitor, catalogue, customer, place_order
):
    set_stock(catalogue["h100"], 2)
    assert configurator_stock(visitor, catalogue["h100"]) == "2 lots available"
    with CaptureQueriesContext(connection) as queries:
        assert configurator_stock(visitor, catalogue["h100"]) == "2 lots available"
    assert not any("rental_gpumodel" in query["sql"] for query in queries.captured_queries)
    place_order(customer, catalogue["h100"], lots=2)
    assert configurator_stock(visitor, catalogue["h100"]) == (
        "Only 0 lots of this model are available right now."
    )


def test_a_price_change_is_in_the_configurator_on_the_next_request(visitor, catalogue):
    url = reverse("rental:configure") + f"?gpu_model={catalogue['b200'].slug}&duration_days=7"
    assert "1,234.50 USD" not in visitor.get(url).content.decode()
    LotPrice.objects.filter(gpu_model=catalogue["b200"], duration_days=7).update(
        price_usd=Decimal("1234.50")
    )
    assert "1,234.50 USD" in visitor.get(url).content.decode()


def test_visitors_naming_hosts_without_end_keep_a_bounded_number_of_pages(
    anonymous, catalogue, settings
):
    # A host pattern in ALLOWED_HOSTS: each host name is a page kept apart (its links).
    settings.ALLOWED_HOSTS = [".example.test"]
    url = reverse("rental:catalogue")
    for number in range(stock.MAX_ENTRIES + 20):
        response = anonymous.get(url, HTTP_HOST=f"h{number}.example.test")
        assert response.status_code == 200 and "Log in" in response.content.decode()
    assert len(stock._entries) == stock.MAX_ENTRIES
    # Still answered from the cache for a host kept before the bound.
    with CaptureQueriesContext(connection) as queries:
        assert anonymous.get(url, HTTP_HOST="h0.example.test").status_code == 200
    assert [query["sql"] for query in queries] == [stock._VERSION_SQL]
