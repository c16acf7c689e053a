"""The payment history: every crypto payment with its state and every balance movement with
its receipt, newest first, in as many queries for 1 row as for 50."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.crypto.services.payments import payment_create_top_up
from payments.models import Receipt

HISTORY = reverse("payments:history")


@pytest.fixture
def local_network(settings):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": "http://127.0.0.1:9"}
    settings.LOCAL_TOKEN_ADDRESS = "0x" + "11" * 20


def top_up(customer, amount="25.00"):
    return payment_create_top_up(
        customer=customer, amount_usd=Decimal(amount), network_key="local", asset_symbol="tUSDC"
    )


def queries_of(client) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(HISTORY)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def test_payments_and_movements_with_state_and_links(
    customer_client, customer, local_network, paid_order
):
    payment = top_up(customer)
    order = paid_order(customer)
    receipt = Receipt.objects.get()

    html = customer_client.get(HISTORY).content.decode()

    row = html.split(f'data-payment="{payment.pk}"')[1].split("</tr>")[0]
    assert payment.reference in row
    assert reverse("payments:payment_detail", kwargs={"payment_id": payment.pk}) in row
    assert 'data-field="state">Waiting for the transfer<' in row
    assert "Top-up" in row and "tUSDC on" in row
    movements = html.split('data-section="movements"')[1]
    assert "Order payment" in movements and "Adjustment" in movements
    assert f'href="{reverse("payments:receipt", kwargs={"number": receipt.number})}"' in movements
    assert reverse("rental:order_detail", kwargs={"order_id": order.pk}) in movements
    # Newest first: the order payment before the credit that funded it.
    assert movements.index("Order payment") < movements.index("Adjustment")


def test_another_customers_payments_and_movements_are_not_listed(
    customer, make_customer, local_network, paid_order
):
    payment = top_up(customer)
    paid_order(customer)
    stranger = Client()
    stranger.force_login(make_customer())
    html = stranger.get(HISTORY).content.decode()
    assert payment.reference not in html
    assert "No stablecoin payment yet." in html and "No movement yet." in html


def test_the_page_runs_as_many_queries_for_1_and_50_rows(
    customer_client, customer, local_network, credit
):
    top_up(customer)
    credit(customer, "1.00")
    one, html = queries_of(customer_client)
    assert html.count("data-payment=") == 1 and html.count("data-entry=") == 1

    for _ in range(49):
        top_up(customer)
        credit(customer, "1.00")
    fifty, html = queries_of(customer_client)
    assert html.count("data-payment=") == 50 and html.count("data-entry=") == 50
    assert one == fifty


def test_a_tampered_page_number_shows_the_first_page(customer_client, customer, credit):
    credit(customer, "1.00")
    response = customer_client.get(HISTORY, {"movements": "１", "payments": "-3"})
    assert response.status_code == 200
    assert response.content.decode().count("data-entry=") == 1


def test_the_navigation_links_to_the_history(customer_client):
    html = customer_client.get(reverse("accounts:overview")).content.decode()
    assert html.count(f'href="{HISTORY}"') == 2  # the navigation and the account's links
