"""The order page's layout is kept per worker around its content (accounts.kept_layout): what
it shows (language, staff roles, the path, messages) is on the very next request, and each
response carries one CSRF token of its own, in the layout's forms and the content's alike."""

import re

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts import kept_layout
from accounts.roles import FINANCE

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture(autouse=True)
def _fresh_layouts():
    kept_layout.forget()
    yield
    kept_layout.forget()


@pytest.fixture
def order(customer, catalogue, place_order):
    from tests.conftest import set_stock

    set_stock(catalogue["h100"], 2)
    return place_order(customer, catalogue["h100"], lots=1)


def page(client, order, query: str = "") -> str:
    url = reverse("rental:order_detail", kwargs={"order_id": order.pk}) + query
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_second_request_takes_the_kept_layout(customer_client, order):
    first = page(customer_client, order)
    kept = len(kept_layout._kept)
    second = page(customer_client, order)
    assert kept == 1 and len(kept_layout._kept) == 1
    assert TOKEN.sub("", second) == TOKEN.sub("", first)
    assert f"Order {order.reference}" in second and "Log out" in second


def test_one_token_per_response_that_works(customer, order):
    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    pages = [page(client, order) for _ in range(2)]
    tokens = [TOKEN.findall(html) for html in pages]
    assert all(len(found) >= 3 for found in tokens)  # logout, language, the content's forms
    assert all(len(set(found)) == 1 for found in tokens)  # one token in the whole response
    assert tokens[0][0] != tokens[1][0]  # masked anew per response
    assert "kept-token-" not in "".join(pages) and "kept-content-" not in "".join(pages)
    response = client.post(reverse("account_logout"), {"csrfmiddlewaretoken": tokens[1][0]})
    assert response.status_code == 302 and "_auth_user_id" not in client.session


def test_a_new_staff_role_is_on_the_next_request(customer_client, customer, order):
    assert 'href="/finance/"' not in page(customer_client, order)
    page(customer_client, order)
    customer.groups.add(Group.objects.get_or_create(name=FINANCE)[0])
    assert 'href="/finance/"' in page(customer_client, order)


def test_the_language_is_on_the_next_request(customer_client, order):
    assert '<html lang="en">' in page(customer_client, order)
    customer_client.post(reverse("set_language"), {"language": "it", "next": "/"})
    html = page(customer_client, order)
    assert '<html lang="it">' in html and f"Ordine {order.reference}" in html


def test_the_path_is_the_language_forms_next(customer_client, order):
    page(customer_client, order)
    html = page(customer_client, order, "?tab=1")
    path = reverse("rental:order_detail", kwargs={"order_id": order.pk})
    assert f'name="next" value="{path}?tab=1"' in html
    assert f'name="next" value="{path}"' in page(customer_client, order)


def test_a_message_is_shown_once_then_the_kept_layout(customer_client, order):
    page(customer_client, order)
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b"
    response = customer_client.post(
        reverse("rental:order_ssh_key", kwargs={"order_id": order.pk}),
        {"ssh_public_key": key},
        follow=True,
    )
    shown = response.content.decode()
    assert f"Your SSH key is saved on order {order.reference}." in shown
    assert "Your SSH key is saved" not in page(customer_client, order)
