"""“I have paid”: the customer's declaration, recorded once, never a change of money state."""

import pytest
from django.test import Client
from django.urls import reverse

from payments.models import PaymentEvent, PaymentStatus, TransferStatus
from tests.states import payment_walk

HASH = "0x" + "ab" * 32


def page_url(payment):
    return reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})


def declare_url(payment):
    return reverse("payments:payment_declare", kwargs={"payment_id": payment.pk})


def test_a_declaration_with_a_hash_is_recorded_and_shown(customer_client, payment):
    response = customer_client.post(declare_url(payment), {"tx_hash": f" {HASH} "})
    assert response.status_code == 302
    assert response["Location"] == page_url(payment)

    payment.refresh_from_db()
    assert payment.declared_at is not None
    assert payment.declared_tx_hash == HASH
    assert payment.status == PaymentStatus.AWAITING  # a declaration moves no money state
    assert PaymentEvent.objects.filter(payment=payment, kind="declared").count() == 1

    html = customer_client.get(page_url(payment)).content.decode()
    assert "You declared this payment on " in html
    assert f'data-field="declared-tx-hash">{HASH}</code>' in html
    assert "This records your declaration only" in html
    assert "confirms neither the receipt of the funds nor the provisioning" in html
    assert declare_url(payment) not in html  # the form is gone


def test_a_declaration_without_a_hash_is_recorded(customer_client, payment):
    response = customer_client.post(declare_url(payment), {"tx_hash": "  "})
    assert response.status_code == 302
    payment.refresh_from_db()
    assert payment.declared_at is not None
    assert payment.declared_tx_hash == ""
    html = customer_client.get(page_url(payment)).content.decode()
    assert "You declared this payment on " in html
    assert 'data-field="declared-tx-hash"' not in html


def test_a_hash_in_capitals_is_stored_in_lower_case(customer_client, payment):
    customer_client.post(declare_url(payment), {"tx_hash": "0x" + "AB" * 32})
    payment.refresh_from_db()
    assert payment.declared_tx_hash == HASH


@pytest.mark.parametrize(
    "bad",
    [
        "ab" * 32,  # no 0x
        "0x" + "ab" * 31,  # too short
        "0x" + "ab" * 32 + "a",  # too long
        "0x" + "zz" * 32,  # not hexadecimal
        "0x" + "ab" * 31 + "a\n",
    ],
)
def test_a_malformed_hash_is_refused_and_nothing_is_recorded(customer_client, payment, bad):
    response = customer_client.post(declare_url(payment), {"tx_hash": bad})
    assert response.status_code == 400
    html = response.content.decode()
    assert "A transaction hash is 0x followed by 64 hexadecimal characters" in html
    assert 'aria-invalid="true"' in html
    payment.refresh_from_db()
    assert payment.declared_at is None
    assert not PaymentEvent.objects.filter(payment=payment, kind="declared").exists()


def test_a_repeat_keeps_and_shows_the_first_declaration(customer_client, payment):
    customer_client.post(declare_url(payment), {"tx_hash": HASH})
    payment.refresh_from_db()
    first_at = payment.declared_at

    other = "0x" + "cd" * 32
    response = customer_client.post(declare_url(payment), {"tx_hash": other})
    assert response.status_code == 302
    payment.refresh_from_db()
    assert (payment.declared_at, payment.declared_tx_hash) == (first_at, HASH)
    assert PaymentEvent.objects.filter(payment=payment, kind="declared").count() == 1
    html = customer_client.get(page_url(payment)).content.decode()
    assert HASH in html
    assert other not in html


def test_a_declaration_without_the_csrf_token_is_refused(customer, payment):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)
    response = browser.post(declare_url(payment), {"tx_hash": HASH})
    assert response.status_code == 403
    payment.refresh_from_db()
    assert payment.declared_at is None


def test_declaring_needs_a_post(customer_client, payment):
    assert customer_client.get(declare_url(payment)).status_code == 405


def test_a_confirmed_payment_offers_no_declaration(customer_client, payment, transfer):
    transfer(payment, status=TransferStatus.CONFIRMED)
    assert payment.status == PaymentStatus.CONFIRMED
    html = customer_client.get(page_url(payment)).content.decode()
    assert declare_url(payment) not in html


@pytest.mark.parametrize(
    "status", [PaymentStatus.CONFIRMED, PaymentStatus.RESOLVED, PaymentStatus.INVALID]
)
def test_a_crafted_declaration_of_a_closed_payment_changes_nothing(
    customer_client, payment, status, django_capture_on_commit_callbacks
):
    payment_walk(payment, status)

    with django_capture_on_commit_callbacks() as queued:
        response = customer_client.post(declare_url(payment), {"tx_hash": HASH})

    assert response.status_code == 409
    assert "already settled or closed: there is nothing to declare" in response.content.decode()
    payment.refresh_from_db()
    assert (payment.declared_at, payment.declared_tx_hash) == (None, "")
    assert not PaymentEvent.objects.filter(payment=payment, kind="declared").exists()
    assert queued == []  # the worker is not asked to look
