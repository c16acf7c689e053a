"""Issue 23, F1: an order whose id is at least 1,769,786,010,696,155,136 answered 500 on paying
from the balance, cancelling and opening a crypto payment, pages and API alike: the per-order
advisory lock's key (a namespace plus the order id) overflowed PostgreSQL's bigint
(`pg_advisory_xact_lock(numeric) does not exist`). The keys now cannot overflow for any id the
database can hold."""

import pytest
from django.db import connection
from django.urls import reverse

from rental.models import Order, OrderStatus

HUGE = 2**63 - 10  # near the largest id a bigint primary key can hold


@pytest.fixture
def huge_ids():
    """The next orders get ids near the bigint maximum; the counter is put back afterwards."""
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {Order._meta.db_table} ALTER COLUMN id RESTART WITH {HUGE}")
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {Order._meta.db_table} ALTER COLUMN id RESTART WITH 1")


@pytest.mark.django_db(transaction=True)
def test_an_order_with_a_huge_id_is_paid_from_the_balance(
    huge_ids, customer, customer_client, credit, catalogue, place_order
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    assert order.pk >= 1_769_786_010_696_155_136

    response = customer_client.post(
        reverse("payments:pay_with_balance", kwargs={"order_id": order.pk})
    )

    assert response.status_code == 302
    order.refresh_from_db()
    assert order.status in (OrderStatus.PAID, OrderStatus.PROVISIONING)


@pytest.mark.django_db(transaction=True)
def test_an_order_with_a_huge_id_is_cancelled(
    huge_ids, customer, customer_client, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    assert order.pk >= 1_769_786_010_696_155_136

    response = customer_client.post(reverse("payments:order_cancel", kwargs={"order_id": order.pk}))

    assert response.status_code == 302
    order.refresh_from_db()
    assert order.status == OrderStatus.CANCELLED


def test_the_advisory_keys_cannot_overflow_for_any_id():
    from payments.locks import order_mutex_key
    from pilot.locks import pilot_mutex_key

    for order_id in (1, 2**31, HUGE, 2**63 - 1):
        for key in (order_mutex_key(order_id), pilot_mutex_key(order_id)):
            assert -(2**63) <= key < 2**63
    assert order_mutex_key(7) != pilot_mutex_key(7)
    assert order_mutex_key(7) != order_mutex_key(8)
