"""The account's API tokens page: create (shown once, stored hashed), list, revoke."""

import hashlib
import re
from datetime import timedelta

from django.db import connection
from django.test import Client
from django.utils import timezone

from api.models import ApiToken
from api.tokens import token_create

PAGE = "/account/api-tokens/"
CREATE = "/account/api-tokens/new/"
TOKEN_RE = re.compile(r"gr_[0-9a-f]{8}_[A-Za-z0-9_-]{43}")


def _create(client, **data):
    data = {"name": "CI", "scopes": ["read", "order"], **data}
    return client.post(CREATE, data)


def test_the_page_needs_a_login(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_account_page_links_to_it(customer_client):
    assert PAGE in customer_client.get("/account/").content.decode()


def test_a_created_token_is_shown_once_and_stored_hashed(customer_client, customer):
    response = _create(customer_client, expires_on=str(timezone.now().date() + timedelta(days=3)))
    assert response.status_code == 200
    html = response.content.decode()
    raw = TOKEN_RE.search(html).group(0)
    assert "shown only this once" in html
    token = ApiToken.objects.get(owner=customer)
    assert token.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert token.prefix == raw[3:11]
    assert token.scope_set == {"read", "order"}
    assert token.expires_at.date() == timezone.now().date() + timedelta(days=4)
    # The raw token is nowhere in the database.
    with connection.cursor() as cursor:
        cursor.execute("SELECT row_to_json(t)::text FROM api_apitoken t")
        rows = " ".join(row[0] for row in cursor.fetchall())
    assert raw not in rows and raw.split("_", 2)[2] not in rows
    # The list shows the prefix, never the token again.
    again = customer_client.get(PAGE).content.decode()
    assert raw not in again and f"gr_{token.prefix}_" in again
    assert "CI" in again and "Order: place and cancel orders" in again
    # The token works.
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.get("/api/v1/catalogue/").status_code == 200


def test_bad_input_is_400_with_field_errors_and_creates_nothing(customer_client, customer):
    today = timezone.now().date()
    cases = [
        ({"name": ""}, "Give the token a name."),
        ({"name": "x" * 101}, "Keep the name to 100 characters"),
        ({"scopes": []}, "Choose at least one scope."),
        ({"scopes": ["admin"]}, "Choose scopes from the list"),
        ({"expires_on": str(today - timedelta(days=1))}, "Choose today or a later day."),
        ({"expires_on": str(today + timedelta(days=400))}, "Choose a day within 366 days."),
        ({"expires_on": "٢٠٣٠-٠١-٠١"}, "Enter a date as YYYY-MM-DD"),
        ({"expires_on": "31/01/2030"}, "Enter a date as YYYY-MM-DD"),
    ]
    for data, message in cases:
        response = _create(customer_client, **data)
        assert response.status_code == 400, data
        assert message in response.content.decode(), data
    assert not ApiToken.objects.exists()


def test_revoke_own_token(customer_client, customer):
    token = token_create(owner=customer, name="laptop", scopes=["read"]).token
    response = customer_client.post(f"{PAGE}{token.pk}/revoke/")
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    page = customer_client.get(PAGE).content.decode()
    assert "Revoked" in page and f"{PAGE}{token.pk}/revoke/" not in page


def test_another_users_token_is_404_and_stays_live(customer_client, make_customer):
    other = make_customer()
    theirs = token_create(owner=other, name="theirs", scopes=["read"]).token
    assert customer_client.post(f"{PAGE}{theirs.pk}/revoke/").status_code == 404
    for bad in ("999999", "٣", "abc"):
        assert customer_client.post(f"{PAGE}{bad}/revoke/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None
    assert "theirs" not in customer_client.get(PAGE).content.decode()


def test_revoke_needs_post(customer_client, customer):
    token = token_create(owner=customer, name="laptop", scopes=["read"]).token
    assert customer_client.get(f"{PAGE}{token.pk}/revoke/").status_code == 405


def test_csrf_is_required(customer):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)
    assert browser.post(CREATE, {"name": "x", "scopes": ["read"]}).status_code == 403
    token = token_create(owner=customer, name="laptop", scopes=["read"]).token
    assert browser.post(f"{PAGE}{token.pk}/revoke/").status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None
    assert ApiToken.objects.count() == 1


def test_the_page_speaks_italian(customer_client):
    response = customer_client.get(PAGE, HTTP_ACCEPT_LANGUAGE="it")
    customer_client.cookies["django_language"] = "it"
    html = customer_client.get(PAGE).content.decode()
    assert response.status_code == 200
    assert "Crea un token" in html


def _scopes_cell(html: str, token) -> str:
    row = re.search(rf'<tr data-token-id="{token.pk}">(.*?)</tr>', html, re.S).group(1)
    return re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[2]  # name, token, scopes, …


def test_the_list_names_each_scope_by_its_label(customer_client, customer):
    token = token_create(owner=customer, name="ci", scopes=["read", "pay"]).token
    cell = _scopes_cell(customer_client.get(PAGE).content.decode(), token)
    assert "Read: catalogue, orders, payments, balance" in cell
    assert "Pay: pay orders, open and declare crypto payments, top up" in cell
    assert "Order:" not in cell
    customer_client.cookies["django_language"] = "it"
    italian = _scopes_cell(customer_client.get(PAGE).content.decode(), token)
    assert "Read: catalogo, ordini, pagamenti, saldo" in italian
    assert "Pay: pagare ordini, aprire e dichiarare pagamenti crypto, ricaricare" in italian
