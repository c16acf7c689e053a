"""The payment page: what to send, where, until when, and the live status."""

import html as html_lib
from datetime import UTC

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.crypto.services.review import payment_mark_invalid
from payments.models import PaymentStatus, ReviewReason, TransferStatus
from tests.states import payment_expire_now

from .conftest import TOKEN, move_cursor


def page_url(payment):
    return reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})


def status_url(payment):
    return reverse("payments:payment_status", kwargs={"payment_id": payment.pk})


def declare_url(payment):
    return reverse("payments:payment_declare", kwargs={"payment_id": payment.pk})


def test_the_page_shows_asset_network_address_amount_expiry_and_qr(customer_client, payment):
    html = customer_client.get(page_url(payment)).content.decode()
    address = payment.deposit_address.address
    assert 'data-field="asset">tUSDC (Test USD Coin)' in html
    assert "Local test chain (chain id 31337)" in html
    assert f'data-field="address">{address}</code>' in html
    assert 'data-field="amount">893.760000 tUSDC</strong>' in html
    assert "= 893.76 USD" in html
    # Copy buttons carry the exact values: the address and the decimal amount.
    assert f'data-copy="{address}"' in html
    assert 'data-copy="893.760000"' in html
    # The expiry: an ISO timestamp for the countdown, the absolute time without JS.
    expires = payment.expires_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert f'data-expires-at="{expires}"' in html
    assert "Pay before " in html
    # The QR code, inline, and the EIP-681 request it carries.
    assert '<svg width="' in html
    uri = f"ethereum:{TOKEN}@31337/transfer?address={address}&uint256=893760000"
    assert uri in html_lib.unescape(html)
    # The guide's wording, with this payment's values.
    assert "Send exactly 893.760000 tUSDC on Local test chain" in html
    assert "Use the asset, network, address, amount and expiry shown here" in html
    assert "confirms neither the receipt of the funds nor the provisioning" in html


def test_the_page_has_no_inline_script_or_style(customer_client, payment):
    html = customer_client.get(page_url(payment)).content.decode()
    assert "<script>" not in html and "<script " not in html.replace('<script src="', "")
    assert "style=" not in html
    assert "hx-on" not in html


def test_a_top_up_payment_shows_its_amount(customer_client, top_up):
    payment = top_up("25.50")
    html = customer_client.get(page_url(payment)).content.decode()
    assert 'data-field="amount">25.500000 tUSDC</strong>' in html
    assert "Top-up of your USD balance: 25.50 USD." in html


def test_the_status_polls_while_waiting(customer_client, payment, settings):
    settings.PAYMENT_SCAN_INTERVAL_SECONDS = 1  # make run's watcher
    response = customer_client.get(status_url(payment), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="payment-status"')
    assert "<html" not in html
    # The poll says what the page shows (the whole amount still due): a change brings the
    # new instructions along.
    assert f'hx-get="{status_url(payment)}?shown=awaiting-893760000"' in html
    assert 'hx-trigger="every 1s"' in html  # twice a block of the local chain (2 s)
    assert "Waiting for the transfer" in html
    assert "Nothing has arrived at this address yet." in html


def test_the_status_polls_no_faster_than_the_watcher_looks(customer_client, payment, settings):
    """On a 2-second chain watched every 5 s (production's pace), twice a look: every 3 s."""
    settings.PAYMENT_SCAN_INTERVAL_SECONDS = 5
    html = customer_client.get(status_url(payment)).content.decode()
    assert 'hx-trigger="every 3s"' in html


def test_a_seen_transfer_shows_its_block_and_confirmations(
    customer_client, payment, transfer, settings
):
    settings.PAYMENT_SCAN_INTERVAL_SECONDS = 1  # make run's watcher
    seen = transfer(payment, block=100)  # settled as the watcher settles a seen transfer
    assert (payment.status, payment.seen_units) == (
        PaymentStatus.DETECTED,
        payment.amount_due_units,
    )
    move_cursor("local", 101)  # read up to 100, the head being one block further

    html = customer_client.get(status_url(payment)).content.decode()
    assert "Transfer seen, confirming" in html
    assert "893.760000 tUSDC seen in block 100 · confirmations 2/3" in html
    assert '<progress value="2" max="3">' in html
    assert seen.tx_hash in html
    assert 'hx-trigger="every 1s"' in html
    assert 'data-field="remaining"' not in html

    move_cursor("local", 102)
    html = customer_client.get(status_url(payment)).content.decode()
    assert "confirmations 3/3" in html


def test_a_partial_transfer_asks_for_the_remainder(customer_client, payment, transfer):
    transfer(payment, units=800_000_000, block=10)
    assert (payment.status, payment.seen_units) == (PaymentStatus.DETECTED, 800_000_000)
    html = customer_client.get(status_url(payment)).content.decode()
    assert "send the remaining 93.760000 tUSDC at the same address" in html


def test_a_confirmed_payment_stops_polling(customer_client, payment, transfer, order):
    transfer(payment, block=100, status=TransferStatus.CONFIRMED)
    assert (payment.status, payment.received_units) == (
        PaymentStatus.CONFIRMED,
        payment.amount_due_units,
    )
    html = customer_client.get(status_url(payment)).content.decode()
    assert "Confirmed" in html
    assert f"Confirmed on chain: order {order.reference} is paid" in html
    assert "893.760000 tUSDC confirmed in block 100." in html
    assert "hx-get" not in html and "hx-trigger" not in html


def test_a_reorged_transfer_is_not_shown(customer_client, payment, transfer):
    gone = transfer(payment, block=100, status=TransferStatus.REORGED)
    html = customer_client.get(status_url(payment)).content.decode()
    assert gone.tx_hash not in html


@pytest.mark.parametrize(
    ("status", "reason", "text"),
    [
        (PaymentStatus.EXPIRED, "", "This payment expired with nothing received."),
        (
            PaymentStatus.NEEDS_REVIEW,
            ReviewReason.UNDERPAID,
            "Less than the amount due arrived before the expiry.",
        ),
        (
            PaymentStatus.NEEDS_REVIEW,
            ReviewReason.PAID_LATE,
            "The money arrived after the payment expired.",
        ),
        (PaymentStatus.INVALID, "", "An operator marked this payment invalid."),
    ],
)
def test_expired_and_review_are_explained(
    customer_client, payment, transfer, operator, status, reason, text
):
    # Each reached as it happens: the time runs out on nothing (expired) or on part of the
    # amount (underpaid); the whole amount after the expiry (paid late); an operator's
    # "invalid" on an underpaid one.
    if reason == ReviewReason.UNDERPAID or status == PaymentStatus.INVALID:
        transfer(payment, units=800_000_000, status=TransferStatus.CONFIRMED)
    payment_expire_now(payment)
    if reason == ReviewReason.PAID_LATE:
        transfer(payment, status=TransferStatus.CONFIRMED)
    if status == PaymentStatus.INVALID:
        payment_mark_invalid(payment_id=payment.pk, actor=operator, reason="not ours")
    payment.refresh_from_db()
    assert payment.status == status
    assert reason in ("", payment.review_reason)
    html = customer_client.get(page_url(payment)).content.decode()
    assert text in html
    assert "data-expires-at" not in html  # no countdown once the payment is no longer live


@pytest.mark.parametrize("url_for", [page_url, status_url])
def test_another_customers_payment_is_not_found(other_client, payment, url_for):
    assert other_client.get(url_for(payment)).status_code == 404


def test_another_customer_cannot_declare(other_client, payment):
    response = other_client.post(declare_url(payment), {"tx_hash": ""})
    assert response.status_code == 404
    payment.refresh_from_db()
    assert payment.declared_at is None


@pytest.mark.parametrize("url_for", [page_url, status_url])
def test_anonymous_visitors_are_sent_to_the_login_page(payment, url_for):
    response = Client().get(url_for(payment))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_the_page_runs_a_fixed_number_of_queries(customer_client, payment, transfer):
    transfer(payment, block=100)
    with CaptureQueriesContext(connection) as one:
        customer_client.get(page_url(payment))
    for block in range(101, 110):
        transfer(payment, block=block)
    with CaptureQueriesContext(connection) as ten:
        html = customer_client.get(page_url(payment)).content.decode()
    assert html.count("seen in block") == 10
    # The session comes from the cache (Redis): user with staff groups, payment with address
    # and order, cursor, transfers.
    assert len(one) == len(ten) == 4
