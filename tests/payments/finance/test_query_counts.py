"""The console's pages run the same number of queries for 1 and for 30 rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from tests.conftest import set_stock


def count_queries(client, url, params=None) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, params or {})
        if response.streaming:
            b"".join(response.streaming_content)
    assert response.status_code == 200
    return len(queries)


@pytest.fixture
def customers_with_activity(make_customer, credit, catalogue, place_order):
    """Each customer gets a credit and an order paid from it: two transactions, four entries,
    an order and two acting users to show."""
    for gpu_model in catalogue.values():
        set_stock(gpu_model, 1000)

    def make(count):
        for _ in range(count):
            customer = make_customer()
            credit(customer, "1000.00")
            order = place_order(customer, catalogue["h100"])
            balance_pay_order(order_id=order.pk, customer=customer)

    return make


PAGES = {
    # page: (url, query string, expected queries)
    # The session comes from the cache (Redis) and the staff groups with the user:
    # user (the guard and the navigation share it), count, page, total owed
    "balances": (reverse("payments:finance_balances"), {}, 4),
    "balances searched": (reverse("payments:finance_balances"), {"email": "example"}, 4),
    # user with groups, count, transactions, their entries, and the user's and group
    # permissions (order links to the admin for staff who may view orders)
    "journal": (reverse("payments:finance_journal"), {}, 6),
    "journal filtered": (
        reverse("payments:finance_journal"),
        {"kind": "order_payment", "date_from": "2000-01-01", "order": ""},
        6,
    ),
    # user with the finance group, the entries
    "journal csv": (reverse("payments:finance_journal_csv"), {}, 2),
    # user with groups, last run, the withdrawal totals and the withdrawals per status
    "dashboard": (reverse("payments:finance_dashboard"), {}, 4),
}


@pytest.mark.parametrize("page", PAGES)
def test_query_count_is_fixed_for_1_and_30_customers(finance_client, customers_with_activity, page):
    url, params, expected = PAGES[page]
    customers_with_activity(1)
    with_one = count_queries(finance_client, url, params)

    customers_with_activity(29)
    with_thirty = count_queries(finance_client, url, params)

    assert with_one == with_thirty == expected
