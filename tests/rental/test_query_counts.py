"""Key pages run a fixed number of queries, the same with 1 and with 50 orders."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.conftest import set_stock


def count_queries(client, url, **kwargs) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, **kwargs)
    assert response.status_code == 200
    return len(queries)


@pytest.fixture
def orders_of(place_order, catalogue, settings):
    # One customer's page with 50 orders awaiting payment: the limit is not what is measured.
    settings.MAX_UNPAID_ORDERS = 50
    for gpu_model in catalogue.values():
        set_stock(gpu_model, 1000)

    def make(customer, count):
        models = list(catalogue.values())
        return [place_order(customer, models[i % len(models)], lots=1) for i in range(count)]

    return make


PAGES = {
    # page: (url builder, expected queries)
    # The session comes from the cache (Redis) and the staff groups with the user (one
    # query): user, the stock version, GPU models, prices; free cards per host, held lots.
    # (This test's own uncommitted orders keep the catalogue out of its cache, rental/stock.py;
    # tests/rental/test_catalogue_cache.py counts a cached one.)
    "catalogue": (lambda order: reverse("rental:catalogue"), 6),
    "configurator summary": (
        lambda order: reverse("rental:configure") + "?gpu_model=b200-180gb&lots=3&duration_days=7",
        # The htmx partial: the stock version (the models are kept on it, rental/stock.py;
        # this test's uncommitted orders keep them out of the cache), models, prices, free
        # cards per host, held lots; no session needed.
        5,
    ),
    # User with their staff groups (navigation), page count, orders.
    "orders list": (lambda order: reverse("rental:order_list"), 3),
    # User with their staff groups (navigation), order, timeline, balance for the payment step.
    "order page": (lambda order: reverse("rental:order_detail", kwargs={"order_id": order.pk}), 4),
}


@pytest.mark.parametrize("page", PAGES)
def test_query_count_is_fixed_for_1_and_50_orders(
    customer_client, customer, orders_of, catalogue, page
):
    url_for, expected = PAGES[page]
    first = orders_of(customer, 1)[0]
    headers = {"HX-Request": "true"} if page == "configurator summary" else {}
    with_one = count_queries(customer_client, url_for(first), headers=headers)

    orders_of(customer, 49)
    with_fifty = count_queries(customer_client, url_for(first), headers=headers)

    assert with_one == with_fifty == expected


def test_orders_list_pages_through_all_fifty_newest_first(customer_client, customer, orders_of):
    orders = orders_of(customer, 50)
    first = customer_client.get(reverse("rental:order_list")).content.decode()
    second = customer_client.get(reverse("rental:order_list"), {"page": 2}).content.decode()
    assert all(order.reference in first for order in orders[25:])
    assert all(order.reference in second for order in orders[:25])
    assert not any(order.reference in second for order in orders[25:])
    assert "Page 1 of 2" in first
    assert "Page 2 of 2" in second
    # A page number that is not one shows a page rather than an error.
    assert customer_client.get(reverse("rental:order_list"), {"page": "abc"}).status_code == 200
    assert (
        "Page 2 of 2"
        in customer_client.get(reverse("rental:order_list"), {"page": 99}).content.decode()
    )
