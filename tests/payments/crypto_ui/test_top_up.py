"""Topping up the USD balance in a stablecoin."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from payments.models import CryptoPayment, PaymentPurpose

TOP_UP = reverse("payments:top_up")


def test_the_statement_links_to_the_top_up(customer_client):
    html = customer_client.get(reverse("payments:statement")).content.decode()
    assert f'href="{TOP_UP}"' in html


def test_the_form_offers_the_enabled_stablecoins(customer_client, local_network):
    html = customer_client.get(TOP_UP).content.decode()
    assert 'name="amount"' in html
    assert 'value="local:tUSDC"' in html
    assert "From 10.00 to 100,000.00 USD" in html


def test_without_an_enabled_network_there_is_no_form(customer_client, no_network):
    html = customer_client.get(TOP_UP).content.decode()
    assert "Stablecoin payment is not available right now." in html
    assert 'name="amount"' not in html


def test_a_valid_top_up_creates_the_payment_and_shows_it(customer_client, customer, local_network):
    response = customer_client.post(TOP_UP, {"amount": "125.50", "stablecoin": "local:tUSDC"})
    payment = CryptoPayment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "payments:payment_detail", kwargs={"payment_id": payment.pk}
    )
    assert payment.purpose == PaymentPurpose.TOP_UP
    assert payment.customer == customer
    assert payment.amount_due_usd == Decimal("125.50")
    assert payment.amount_due_units == 125_500_000


def test_the_minimum_comes_from_the_settings(customer_client, local_network, settings):
    settings.TOP_UP_MINIMUM_USD = "50.00"
    response = customer_client.post(TOP_UP, {"amount": "49.99", "stablecoin": "local:tUSDC"})
    assert response.status_code == 400
    assert "The minimum top-up is 50.00 USD." in response.content.decode()
    assert not CryptoPayment.objects.exists()


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("9.99", "The minimum top-up is 10.00 USD."),
        ("0", "The minimum top-up is 10.00 USD."),
        ("-20", "The minimum top-up is 10.00 USD."),
        ("abc", "Enter the amount as a number, such as 25.00."),
        ("NaN", "Enter the amount as a number, such as 25.00."),
        ("12.345", "Enter at most two decimal places (cents)."),
        ("100000.01", "A top-up is at most 100,000.00 USD."),
        ("", "Enter the amount in USD."),
    ],
)
def test_a_bad_amount_is_refused_with_a_field_message(
    customer_client, local_network, amount, message
):
    response = customer_client.post(TOP_UP, {"amount": amount, "stablecoin": "local:tUSDC"})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not CryptoPayment.objects.exists()


def test_the_largest_top_up_is_accepted(customer_client, local_network):
    response = customer_client.post(TOP_UP, {"amount": "100000.00", "stablecoin": "local:tUSDC"})
    assert response.status_code == 302
    assert CryptoPayment.objects.get().amount_due_usd == Decimal("100000.00")


def test_an_unknown_stablecoin_is_refused(customer_client, local_network):
    response = customer_client.post(TOP_UP, {"amount": "20", "stablecoin": "base:USDC"})
    assert response.status_code == 400
    assert "Choose a stablecoin and network from the list." in response.content.decode()
    assert not CryptoPayment.objects.exists()


def test_anonymous_visitors_are_sent_to_the_login_page():
    response = Client().get(TOP_UP)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
