"""The order page's payment step offers the stablecoins of the enabled networks, and lists the
order's payments with their state and what arrived on them."""

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from payments.crypto.services.order_payments import order_cancel
from payments.crypto.services.payments import payment_create_for_order, payment_expire
from payments.models import CryptoPayment, DepositAddress, PaymentStatus, TransferStatus
from rental.models import OrderStatus
from tests.states import payment_walk


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
    assert "tUSDC on Local test chain" in html
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
    assert "A payment in tUSDC on Local test chain is open for this order." in html


def test_a_payment_being_confirmed_leaves_only_the_link(
    customer_client, order, payment, transfer
):
    transfer(payment)  # seen, confirming
    assert payment.status == PaymentStatus.DETECTED
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
    # The session comes from the cache (Redis): user with staff groups, order, timeline, and
    # one for balance + live payment.
    assert len(queries) == 4


# ------------------------------------------------------ the order's payments and what arrived


def test_after_a_partial_payment_the_amount_due_is_what_remains(
    customer_client, order, payment, transfer
):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    html = customer_client.get(order_url(order)).content.decode()
    assert "Amount due: 793.76 USD" in html
    assert "100.00 USD received of 893.76 USD" in html
    assert "the whole order at once" not in html
    row = html[html.index(f'data-payment="{payment.pk}"') :]
    assert 'data-state="partly_received"' in row
    assert "Partly received" in row
    assert "100.000000 tUSDC received" in row
    assert "Still to send: 793.760000 tUSDC." in html
    # Money arrived on the open payment: no switching to another stablecoin.
    assert pay_url(order) not in html


def test_money_still_confirming_counts_as_arrived_and_says_so(
    customer_client, order, payment, transfer
):
    transfer(payment, units=100_000_000)  # seen, not yet confirmed
    html = customer_client.get(order_url(order)).content.decode()
    assert "Amount due: 793.76 USD" in html
    assert "(100.00 USD of it still confirming)" in html
    assert "100.000000 tUSDC confirming" in html


def test_nothing_arrived_shows_the_whole_total(customer_client, order, payment):
    html = customer_client.get(order_url(order)).content.decode()
    assert "Amount due: 893.76 USD, the whole order at once." in html
    assert "received of" not in html
    assert 'data-state="awaiting"' in html
    assert "Waiting for the transfer" in html


def test_the_order_lists_every_payment_newest_first(
    customer_client, customer, order, payment, settings
):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "base": "http://127.0.0.1:9"}
    replacement = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="base", asset_symbol="USDC"
    )
    html = customer_client.get(order_url(order)).content.decode()
    newest, oldest = html.index(replacement.reference), html.index(payment.reference)
    assert newest < oldest
    assert 'data-field="order-payments"' in html
    closed = html[oldest:]
    assert "tUSDC on Local test chain" in closed
    assert "Closed" in closed[: closed.index("</li>")]
    assert "A payment in USDC on Base is open for this order." in html


def test_a_partial_payment_is_listed_in_italian(customer_client, order, payment, transfer):
    transfer(payment, units=1_234_500_000 - 1_000_000_000, status=TransferStatus.CONFIRMED)
    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    html = customer_client.get(order_url(order)).content.decode()
    assert "234,500000 tUSDC" in html
    assert "234.500000 tUSDC" not in html


def test_a_cancelled_order_with_money_says_it_is_credited(
    customer_client, customer, order, payment, transfer
):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    order_cancel(order_id=order.pk, customer=customer, money_confirmed=True)
    html = customer_client.get(order_url(order)).content.decode()
    assert "This order is cancelled and its lots were released." in html
    assert "Nothing will be charged for it." not in html
    assert "The 100.00 USD that arrived for it is credited to your USD balance" in html
    assert f'href="{reverse("payments:statement")}"' in html
    row = html[html.index(f'data-payment="{payment.pk}"') :]
    assert "Closed" in row
    assert "100.000000 tUSDC received" in row
    assert "100.00 USD credited to your USD balance" in row


def test_a_cancelled_order_with_money_confirming_says_it_follows(
    customer_client, customer, order, payment, transfer
):
    transfer(payment, units=100_000_000)  # seen, not yet confirmed
    order_cancel(order_id=order.pk, customer=customer, money_confirmed=True)
    html = customer_client.get(order_url(order)).content.decode()
    assert "Nothing will be charged for it." not in html
    assert (
        f"100.000000 tUSDC on payment {payment.reference} is still confirming: it is credited "
        "to your USD balance once confirmed."
    ) in html


def test_a_cancelled_order_without_money_charges_nothing(customer_client, customer, order):
    order_cancel(order_id=order.pk, customer=customer)
    html = customer_client.get(order_url(order)).content.decode()
    assert "This order is cancelled and its lots were released." in html
    assert "Nothing will be charged for it." in html
    assert "credited to your USD balance" not in html


def test_an_order_in_review_lists_its_payment_and_what_arrived(
    customer_client, order, payment, transfer
):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    CryptoPayment.objects.filter(pk=payment.pk).update(expires_at=timezone.now())
    assert payment_expire(payment_id=payment.pk) == 1
    order.refresh_from_db()
    assert order.status == OrderStatus.PAYMENT_REVIEW
    html = customer_client.get(order_url(order)).content.decode()
    row = html[html.index(f'data-payment="{payment.pk}"') :]
    assert 'data-state="in_review"' in row
    assert "Under review" in row
    assert "100.000000 tUSDC received" in row


def add_closed_payments(order, count: int) -> None:
    """Old payments of the order, as replaced ones are left: closed (through the setter, from
    a new payment's status), nothing received."""
    template = CryptoPayment.objects.filter(order=order).first()
    start = DepositAddress.objects.count() + 1000
    for index in range(start, start + count):
        address = DepositAddress.objects.create(
            derivation_index=index, address="0x" + f"{index:040x}"
        )
        replaced = CryptoPayment.objects.create(
            customer=order.customer,
            purpose=template.purpose,
            order=order,
            network=template.network,
            chain_id=template.chain_id,
            asset=template.asset,
            token_address=template.token_address,
            decimals=template.decimals,
            deposit_address=address,
            amount_due_usd=template.amount_due_usd,
            amount_due_units=template.amount_due_units,
            confirmations_required=template.confirmations_required,
            expires_at=template.expires_at,
            monitor_until=template.monitor_until,
        )
        payment_walk(replaced, PaymentStatus.CLOSED)


def test_the_order_page_runs_as_many_queries_for_1_and_50_payments(
    customer_client, order, payment, transfer
):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    with CaptureQueriesContext(connection) as one:
        customer_client.get(order_url(order))
    add_closed_payments(order, 49)
    with CaptureQueriesContext(connection) as fifty:
        html = customer_client.get(order_url(order)).content.decode()
    assert html.count("data-payment=") == 50
    # The session comes from the cache (Redis): user with staff groups, order, timeline, and
    # one for balance + the order's payments.
    assert len(one) == len(fifty) == 4


def test_a_cancelled_order_page_runs_as_many_queries_for_1_and_50_payments(
    customer_client, customer, order, payment, transfer
):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    order_cancel(order_id=order.pk, customer=customer, money_confirmed=True)
    with CaptureQueriesContext(connection) as one:
        customer_client.get(order_url(order))
    add_closed_payments(order, 49)
    with CaptureQueriesContext(connection) as fifty:
        html = customer_client.get(order_url(order)).content.decode()
    assert html.count("data-payment=") == 50
    assert "The 100.00 USD that arrived for it is credited to your USD balance" in html
    assert len(one) == len(fifty)
