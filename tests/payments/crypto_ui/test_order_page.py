"""The order page's payment step offers the stablecoins of the enabled networks."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.models import CryptoPayment, PaymentStatus


def order_url(order):
    return reverse("rental:order_detail", kwargs={"order_id": order.pk})


def pay_url(order):
    return reverse("payments:pay_crypto", kwargs={"order_id": order.pk})


def test_the_order_page_offers_one_choice_per_asset_and_network(
    customer_client, order, local_network
):
    html = customer_client.get(order_url(order)).content.decode()
    assert f'action="{pay_url(order)}"' in html
    assert 'value="local:tUSDC"' in html
    assert "tUSDC on Local test chain (anvil)" in html
    assert "Stablecoin payment is not available right now." not in html
    # The balance option is still there.
    assert 'data-field="balance-option"' in html


def test_the_public_networks_are_offered_by_name(customer_client, order, settings):
    settings.PAYMENT_RPC_URLS = dict.fromkeys(settings.PAYMENT_RPC_URLS) | {
        "base": "http://127.0.0.1:9"
    }
    html = customer_client.get(order_url(order)).content.decode()
    assert "USDC on Base" in html
    assert "USDT on Base" in html
    assert 'value="base:USDC"' in html
    assert 'value="ethereum:USDC"' not in html


def test_without_an_enabled_network_the_page_says_so_and_has_no_form(
    customer_client, order, no_network
):
    html = customer_client.get(order_url(order)).content.decode()
    assert "Stablecoin payment is not available right now." in html
    assert pay_url(order) not in html
    assert 'name="stablecoin"' not in html


def test_choosing_a_stablecoin_creates_the_payment_and_shows_it(
    customer_client, customer, order, local_network
):
    response = customer_client.post(pay_url(order), {"stablecoin": "local:tUSDC"})
    payment = CryptoPayment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "payments:payment_detail", kwargs={"payment_id": payment.pk}
    )
    assert (payment.customer, payment.order, payment.asset) == (customer, order, "tUSDC")
    assert payment.amount_due_units == 893_760_000


def test_an_order_with_a_live_payment_links_to_it(customer_client, order, payment):
    html = customer_client.get(order_url(order)).content.decode()
    link = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    assert 'data-field="live-payment"' in html
    assert f'href="{link}"' in html
    assert "A payment in tUSDC on Local test chain (anvil) is open for this order." in html


def test_a_payment_being_confirmed_leaves_only_the_link(customer_client, order, payment):
    CryptoPayment.objects.filter(pk=payment.pk).update(status=PaymentStatus.DETECTED)
    html = customer_client.get(order_url(order)).content.decode()
    assert 'data-field="live-payment"' in html
    assert pay_url(order) not in html


def test_choosing_the_same_stablecoin_again_reopens_the_same_payment(
    customer_client, order, payment
):
    response = customer_client.post(pay_url(order), {"stablecoin": "local:tUSDC"})
    assert response["Location"].endswith(f"/account/payments/{payment.pk}/")
    assert CryptoPayment.objects.count() == 1


@pytest.mark.parametrize("choice", ["", "base:USDC", "local:USDT", "nonsense"])
def test_an_unknown_choice_is_refused_with_a_field_message(
    customer_client, order, local_network, choice
):
    response = customer_client.post(pay_url(order), {"stablecoin": choice})
    assert response.status_code == 400
    assert "Choose a stablecoin and network from the list." in response.content.decode()
    assert not CryptoPayment.objects.exists()


def test_a_cancelled_order_cannot_be_paid(customer_client, customer, order, local_network):
    customer_client.post(reverse("payments:order_cancel", kwargs={"order_id": order.pk}))
    response = customer_client.post(pay_url(order), {"stablecoin": "local:tUSDC"})
    assert response.status_code == 409
    assert "This order is no longer awaiting payment." in response.content.decode()
    assert not CryptoPayment.objects.exists()


def test_another_customers_order_is_not_found(other_client, order, local_network):
    response = other_client.post(pay_url(order), {"stablecoin": "local:tUSDC"})
    assert response.status_code == 404
    assert not CryptoPayment.objects.exists()


def test_the_order_page_runs_the_same_queries_with_a_live_payment(customer_client, order, payment):
    with CaptureQueriesContext(connection) as queries:
        assert customer_client.get(order_url(order)).status_code == 200
    # Session, user, staff groups, order, timeline, and one for balance + live payment.
    assert len(queries) == 6
