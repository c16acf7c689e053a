"""The payment page in every state of the payment: it shows only what fits that state.

Instructions, QR code, copy buttons and countdown only while money is still due, for the amount
still due; once nothing more is due, what happened to the money instead.
"""

import html as html_lib
import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from payments.crypto.selectors.payment_page import customer_payment_view
from payments.crypto.selectors.state import PaymentState
from payments.crypto.services.order_payments import order_cancel
from payments.models import CryptoPayment, PaymentStatus, ReviewReason, TransferStatus
from tests.states import payment_expire_now, payment_walk

from .conftest import TOKEN


def page_url(payment):
    return reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})


def status_url(payment):
    return reverse("payments:payment_status", kwargs={"payment_id": payment.pk})


def get(client, payment, **headers) -> str:
    response = client.get(page_url(payment), headers=headers)
    assert response.status_code == 200
    return html_lib.unescape(response.content.decode())


def uri_units(html: str) -> list[int]:
    """The uint256 of every EIP-681 request on the page (the link and the printed URI)."""
    request = rf"ethereum:{TOKEN}@31337/transfer\?address=0x[0-9a-fA-F]{{40}}&uint256=(\d+)"
    return [int(units) for units in re.findall(request, html)]


def assert_nothing_to_send(html: str) -> None:
    assert 'data-section="instructions"' not in html
    assert "Send exactly" not in html
    assert "Send the remaining" not in html
    assert "ethereum:" not in html  # no payment request, as link, text or QR
    assert "<svg" not in html  # no QR code
    assert "data-expires-at" not in html  # no countdown
    assert "Copy the amount" not in html
    assert "Copy the address" not in html


# ------------------------------------------------------------------------- money still due


def test_awaiting_shows_the_instructions_for_the_whole_amount(customer_client, payment):
    html = get(customer_client, payment)
    assert 'data-state="awaiting"' in html
    assert 'data-section="instructions"' in html
    assert "Send exactly 893.760000 tUSDC on Local test chain" in html
    assert 'data-field="amount">893.760000 tUSDC</strong>' in html
    assert 'data-copy="893.760000"' in html
    assert uri_units(html) == [893_760_000, 893_760_000]
    assert "data-expires-at" in html
    assert "Nothing has arrived at this address yet." in html


@pytest.mark.parametrize("status", [TransferStatus.SEEN, TransferStatus.CONFIRMED])
def test_after_a_partial_transfer_everything_asks_for_the_remainder(
    customer_client, payment, transfer, status
):
    sent = transfer(payment, units=100_000_000, status=status)
    assert payment.status == PaymentStatus.DETECTED
    html = get(customer_client, payment)

    assert 'data-state="partly_received"' in html
    assert "Partly received" in html
    # The instructions, the copy button and the QR code are for what is still due.
    assert "Send the remaining 793.760000 tUSDC on Local test chain" in html
    assert "Send exactly 893.760000" not in html
    assert 'data-field="amount">793.760000 tUSDC</strong>' in html
    assert "= 793.76 USD" in html
    assert 'data-copy="793.760000"' in html
    assert 'data-copy="893.760000"' not in html
    assert uri_units(html) == [793_760_000, 793_760_000]
    assert "data-expires-at" in html  # still live: the countdown runs
    # What arrived is shown with its transaction.
    assert sent.tx_hash in html
    if status == TransferStatus.CONFIRMED:
        assert 'data-field="received">100.000000 tUSDC' in html
    else:
        assert 'data-field="confirming">100.000000 tUSDC' in html


def test_the_qr_code_encodes_the_remainder(customer_client, payment, transfer):
    transfer(payment, units=100_000_000)
    view = customer_payment_view(customer=payment.customer, payment_id=payment.pk)
    assert view.amount_still_due_units == 793_760_000
    assert view.uri.endswith("&uint256=793760000")
    assert "<svg" in view.qr_svg


def test_the_amount_still_due_is_never_negative(customer_client, payment, transfer):
    transfer(payment, units=int(payment.amount_due_units) + 5_000_000)  # seen, more than due
    view = customer_payment_view(customer=payment.customer, payment_id=payment.pk)
    assert view.amount_still_due_units == 0
    assert view.shows_instructions is False
    assert view.state == PaymentState.CONFIRMING


def test_the_full_amount_seen_and_confirming_asks_for_nothing_more(
    customer_client, payment, transfer
):
    transfer(payment)  # seen, not yet confirmed
    html = get(customer_client, payment)
    assert 'data-state="confirming"' in html
    assert "It counts once it has all its confirmations" in html
    assert 'data-field="confirming">893.760000 tUSDC' in html
    assert_nothing_to_send(html)


# --------------------------------------------------------------------------- nothing due


def test_a_confirmed_payment_says_paid_and_asks_for_nothing(
    customer_client, payment, transfer, order
):
    sent = transfer(payment, status=TransferStatus.CONFIRMED)
    assert payment.status == PaymentStatus.CONFIRMED
    html = get(customer_client, payment)

    assert 'data-state="paid"' in html
    assert_nothing_to_send(html)
    assert f"order {order.reference} is paid" in html
    order_url = reverse("rental:order_detail", kwargs={"order_id": order.pk})
    assert f'href="{order_url}"' in html
    assert sent.tx_hash in html
    assert "893.760000 tUSDC confirmed in block 100." in html
    assert 'data-field="received">893.760000 tUSDC' in html
    assert 'data-field="credited"' not in html  # nothing more than due arrived


def test_a_confirmed_overpayment_shows_the_surplus_credited(customer_client, payment, transfer):
    transfer(payment, units=int(payment.amount_due_units) + 6_240_000, status="confirmed")
    html = get(customer_client, payment)
    assert 'data-state="paid"' in html
    assert_nothing_to_send(html)
    assert re.search(r'data-field="credited">\s*6.24 USD', html)
    assert "credited to your USD balance" in html
    assert f'href="{reverse("payments:statement")}"' in html


def test_a_confirmed_top_up_shows_the_credit(customer_client, top_up, transfer):
    payment = top_up("25.50")
    transfer(payment, status=TransferStatus.CONFIRMED)
    html = get(customer_client, payment)
    assert 'data-state="paid"' in html
    assert_nothing_to_send(html)
    assert re.search(r'data-field="credited">\s*25.50 USD', html)


def test_an_expired_payment_asks_for_nothing(customer_client, payment):
    assert payment_expire_now(payment).status == PaymentStatus.EXPIRED
    html = get(customer_client, payment)
    assert 'data-state="expired"' in html
    assert "This payment expired with nothing received." in html
    assert_nothing_to_send(html)


def test_a_live_payment_past_its_expiry_asks_for_nothing(customer_client, payment, transfer):
    transfer(payment, units=100_000_000)
    past = timezone.now() - timedelta(minutes=1)
    CryptoPayment.objects.filter(pk=payment.pk).update(expires_at=past, monitor_until=past)
    html = get(customer_client, payment)
    assert 'data-state="time_up"' in html
    assert "The time to pay has run out" in html
    assert 'data-field="confirming">100.000000 tUSDC' in html
    assert_nothing_to_send(html)


def test_a_closed_payment_says_where_its_money_went(customer_client, customer, payment, transfer):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    order_cancel(order_id=payment.order_id, customer=customer, money_confirmed=True)
    payment.refresh_from_db()
    assert payment.status == PaymentStatus.CLOSED
    html = get(customer_client, payment)

    assert 'data-state="closed"' in html
    assert_nothing_to_send(html)
    assert re.search(r'data-field="credited">\s*100.00 USD', html)
    assert "credited to your USD balance" in html
    assert f'href="{reverse("payments:statement")}"' in html
    assert "Do not send anything more to this address." in html


def test_a_closed_payment_with_nothing_received_says_nothing_is_due(
    customer_client, customer, payment
):
    order_cancel(order_id=payment.order_id, customer=customer)
    html = get(customer_client, payment)
    assert 'data-state="closed"' in html
    assert_nothing_to_send(html)
    assert 'data-field="credited"' not in html
    assert "Nothing arrived on it" in html


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        (ReviewReason.UNDERPAID, "Less than the amount due arrived before the expiry."),
        (ReviewReason.PAID_LATE, "The money arrived after the payment expired."),
        (ReviewReason.OVERPAID, "More than the amount due arrived."),
        (ReviewReason.UNMATCHED, "A transfer arrived that does not match this payment."),
        (ReviewReason.REVERSED, "A confirmed transfer was reversed by the network."),
    ],
)
def test_a_payment_in_review_gives_the_reason_and_asks_for_nothing(
    customer_client, payment, transfer, reason, text
):
    transfer(payment, units=100_000_000, status=TransferStatus.CONFIRMED)
    payment_walk(payment, PaymentStatus.NEEDS_REVIEW, review_reason=reason)
    html = get(customer_client, payment)
    assert 'data-state="in_review"' in html
    assert text in html
    assert "You do not need to send anything now." in html
    assert 'data-field="received">100.000000 tUSDC' in html
    assert_nothing_to_send(html)


@pytest.mark.parametrize(
    ("status", "state", "text"),
    [
        (PaymentStatus.RESOLVED, "resolved", "An operator resolved this payment."),
        (PaymentStatus.INVALID, "invalid", "An operator marked this payment invalid."),
    ],
)
def test_resolved_and_invalid_payments_ask_for_nothing(
    customer_client, payment, status, state, text
):
    payment_walk(payment, status)  # through review, as an operator decides
    html = get(customer_client, payment)
    assert f'data-state="{state}"' in html
    assert text in html
    assert_nothing_to_send(html)


# ---------------------------------------------------------------------- the live status


def test_the_polled_status_brings_the_new_instructions_when_they_change(
    customer_client, payment, transfer
):
    first = get(customer_client, payment)
    shown = re.search(r'hx-get="([^"]+)"', first).group(1)
    transfer(payment, units=100_000_000)

    polled = html_lib.unescape(
        customer_client.get(shown, headers={"HX-Request": "true"}).content.decode()
    )
    assert 'hx-swap-oob="true"' in polled
    assert "Send the remaining 793.760000 tUSDC" in polled
    assert uri_units(polled) == [793_760_000, 793_760_000]
    # The next poll asks with what the page now shows: nothing to swap out of band.
    again = re.search(r'hx-get="([^"]+)"', polled).group(1)
    unchanged = customer_client.get(again, headers={"HX-Request": "true"}).content.decode()
    assert "hx-swap-oob" not in unchanged
    assert "793.760000 tUSDC" in unchanged  # the status itself still says what arrived


def test_the_polled_status_removes_the_instructions_once_paid(customer_client, payment, transfer):
    shown = re.search(r'hx-get="([^"]+)"', get(customer_client, payment)).group(1)
    transfer(payment, status=TransferStatus.CONFIRMED)
    polled = html_lib.unescape(
        customer_client.get(shown, headers={"HX-Request": "true"}).content.decode()
    )
    assert 'hx-swap-oob="true"' in polled
    assert 'id="payment-facts"' in polled
    assert 'data-section="instructions"' not in polled
    assert "ethereum:" not in polled


# ------------------------------------------------------------------------- the language


def italian(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    return client


def test_amounts_are_shown_in_italian_and_copied_and_requested_in_machine_form(
    customer_client, payment, transfer
):
    transfer(payment, units=100_000_000)
    html = get(italian(customer_client), payment)
    assert 'data-field="amount">793,760000 tUSDC</strong>' in html
    assert "793.760000 tUSDC" not in html
    assert 'data-field="confirming">100,000000 tUSDC' in html
    assert 'data-copy="793.760000"' in html  # what a wallet expects
    assert uri_units(html) == [793_760_000, 793_760_000]


@pytest.mark.parametrize(
    ("language", "shown"), [("en", "1,234.500000 tUSDC"), ("it", "1.234,500000 tUSDC")]
)
def test_large_amounts_are_grouped_in_the_readers_language(
    customer_client, top_up, language, shown
):
    payment = top_up("1234.50")
    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    html = get(customer_client, payment)
    assert f'data-field="amount">{shown}</strong>' in html
    assert 'data-copy="1234.500000"' in html
    assert uri_units(html) == [1_234_500_000, 1_234_500_000]
