"""The order page's content is kept per worker by the state it shows (rental.order_page): every
change of the order, its payments or the customer's balance is on the very next request."""

import re

from django.test import Client
from django.urls import reverse

from payments.crypto.services.order_payments import order_cancel
from payments.models import TransferStatus
from rental import order_page


def page(client, order) -> str:
    response = client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    assert response.status_code == 200
    return response.content.decode()


def unmasked(html: str) -> str:
    """The page without its CSRF tokens (masked afresh for every response)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)


def test_the_second_request_is_served_from_the_kept_content(customer_client, order, payment):
    first = page(customer_client, order)
    kept = len(order_page._contents)
    second = page(customer_client, order)
    assert len(order_page._contents) == kept  # the same state: nothing new rendered
    assert unmasked(second) == unmasked(first)
    assert payment.reference in second


def test_a_transfer_seen_is_on_the_very_next_request(customer_client, order, payment, transfer):
    before = page(customer_client, order)
    assert 'data-field="payment-confirming"' not in before
    transfer(payment, units=100_000_000, status=TransferStatus.SEEN)
    after = page(customer_client, order)
    assert '<span data-field="payment-confirming">100.000000 tUSDC confirming</span>' in after
    assert "100.00 USD received of 893.76 USD" in after


def test_a_balance_credit_is_on_the_very_next_request(customer_client, customer, order, credit):
    assert "Your USD balance: 0.00 USD." in page(customer_client, order)
    credit(customer, "1000.00")
    after = page(customer_client, order)
    assert "Your USD balance: 1,000.00 USD." in after
    assert "Pay with balance · 893.76 USD" in after


def test_a_cancellation_is_on_the_very_next_request(customer_client, customer, order, payment):
    assert 'data-field="status">Awaiting payment<' in page(customer_client, order)
    order_cancel(order_id=order.pk, customer=customer)
    after = page(customer_client, order)
    assert 'data-field="status">Cancelled<' in after
    assert "Cancel this order" not in after


def test_each_visitor_gets_the_csrf_token_of_its_own_session(customer, order, payment):
    """The kept content carries no token: each response has the requesting browser's, and a
    form of the content posted with it is accepted (another browser's is refused)."""
    first, second = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    first.force_login(customer)
    second.force_login(customer)
    cancel = reverse("payments:order_cancel", kwargs={"order_id": order.pk})
    form = re.compile(
        rf'<form method="post" action="{cancel}">\s*'
        r'<input type="hidden" name="csrfmiddlewaretoken" value="([^"]+)">'
    )
    tokens = [form.search(page(browser, order)).group(1) for browser in (first, second)]
    assert second.post(cancel, {"csrfmiddlewaretoken": tokens[0]}).status_code == 403
    assert second.post(cancel, {"csrfmiddlewaretoken": tokens[1]}).status_code == 302
    order.refresh_from_db()
    assert order.status == "cancelled"


# The payment page's content is kept the same way ({% kept %}, payments_tags).


def payment_page(client, payment) -> str:
    response = client.get(reverse("payments:payment_detail", kwargs={"payment_id": payment.pk}))
    assert response.status_code == 200
    return response.content.decode()


def test_the_payment_page_is_served_from_the_kept_content(customer_client, payment):
    from payments.templatetags import payments_tags

    first = payment_page(customer_client, payment)
    kept = len(payments_tags._kept)
    second = payment_page(customer_client, payment)
    assert len(payments_tags._kept) == kept
    assert unmasked(second) == unmasked(first)


def test_a_transfer_is_on_the_payment_pages_very_next_request(customer_client, payment, transfer):
    assert "Nothing has arrived at this address yet." in payment_page(customer_client, payment)
    transfer(payment, units=100_000_000, block=100, status=TransferStatus.SEEN)
    after = payment_page(customer_client, payment)
    assert "Nothing has arrived at this address yet." not in after
    assert "Send the remaining 793.760000 tUSDC" in after
    transfer(payment, units=793_760_000, block=101, status=TransferStatus.CONFIRMED)
    assert "Send the remaining 793.760000 tUSDC" not in payment_page(customer_client, payment)


def test_a_declaration_is_on_the_payment_pages_very_next_request(customer, payment):
    """And the declaration form of the kept content carries the visitor's own CSRF token."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)
    declare = reverse("payments:payment_declare", kwargs={"payment_id": payment.pk})
    html = payment_page(browser, payment)
    token = re.search(
        rf'<form method="post" action="{declare}" class="declare-form">\s*'
        r'<input type="hidden" name="csrfmiddlewaretoken" value="([^"]+)">',
        html,
    ).group(1)
    response = browser.post(declare, {"csrfmiddlewaretoken": token, "tx_hash": ""})
    assert response.status_code == 302
    assert 'data-field="declaration"' in payment_page(browser, payment)
