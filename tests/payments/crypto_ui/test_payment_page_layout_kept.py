"""The payment page's layout is kept per worker around its content (accounts.kept_layout), as
the order page's is: what the layout shows (language, staff roles, the path) is on the very
next request, and each response carries one CSRF token of its own, in the layout's forms and
the content's ("I have paid") alike, which the site accepts."""

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts import kept_layout
from accounts.roles import OPERATORS

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
HASH = "0x" + "cd" * 32


@pytest.fixture(autouse=True)
def _fresh_layouts():
    kept_layout.forget()
    yield
    kept_layout.forget()


def page(client, payment, query: str = "") -> str:
    url = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk}) + query
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_second_request_takes_the_kept_layout(customer_client, payment):
    first = page(customer_client, payment)
    assert len(kept_layout._kept) == 1
    second = page(customer_client, payment)
    assert len(kept_layout._kept) == 1
    assert TOKEN.sub("", second) == TOKEN.sub("", first)
    assert f"<title>Payment {payment.reference}" in second
    assert "Log out" in second and 'id="deposit-address"' in second


def test_one_token_per_response_and_the_declaration_is_accepted(customer, payment):
    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    pages = [page(client, payment) for _ in range(2)]
    tokens = [TOKEN.findall(html) for html in pages]
    assert all(len(found) >= 3 for found in tokens)  # logout, language, "I have paid"
    assert all(len(set(found)) == 1 for found in tokens)  # one token in the whole response
    assert tokens[0][0] != tokens[1][0]  # masked anew per response
    assert "kept-token-" not in "".join(pages) and "kept-content-" not in "".join(pages)
    response = client.post(
        reverse("payments:payment_declare", kwargs={"payment_id": payment.pk}),
        {"tx_hash": HASH, "csrfmiddlewaretoken": tokens[1][0]},
    )
    assert response.status_code == 302
    payment.refresh_from_db()
    assert payment.declared_tx_hash == HASH
    assert f'data-field="declared-tx-hash">{HASH}</code>' in page(client, payment)


def test_a_new_staff_role_is_on_the_next_request(customer_client, customer, payment):
    assert 'href="/ops/"' not in page(customer_client, payment)
    page(customer_client, payment)
    customer.groups.add(Group.objects.get_or_create(name=OPERATORS)[0])
    assert 'href="/ops/"' in page(customer_client, payment)


def test_the_language_is_on_the_next_request(customer_client, payment):
    assert '<html lang="en">' in page(customer_client, payment)
    customer_client.post(reverse("set_language"), {"language": "it", "next": "/"})
    html = page(customer_client, payment)
    assert '<html lang="it">' in html and f"Pagamento {payment.reference}" in html


def test_another_customers_payment_is_not_found(other_client, payment, customer_client):
    page(customer_client, payment)  # kept for its owner
    url = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    response = other_client.get(url)
    assert response.status_code == 404
    assert payment.reference not in response.content.decode()
