"""The API's order detail shows each host's access from the same read as the page
(rental.selectors.order_access): the same SSH commands, the same state and times."""

import re

import pytest
from django.test import Client

from api.tokens import token_create
from tests.api.contract import assert_matches_schema

from .conftest import ended, erased_by_worker, page, tenancies, to_ready

pytestmark = pytest.mark.django_db


def detail(customer, order) -> dict:
    token = token_create(owner=customer, name="script", scopes=["read"]).raw
    response = Client().get(f"/api/v1/orders/{order.pk}/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/")
    return response.json()


def test_the_api_and_the_page_give_the_same_access(customer, customer_client, hosts, paid, sshd):
    hosts(2, cards=1)
    order = to_ready(paid(lots=2))
    first, second = tenancies(order)
    data = detail(customer, order)
    assert [host["ssh_command"] for host in data["access"]] == re.findall(
        r'data-field="ssh-command">([^<]+)<', page(customer_client, order)
    )
    [one, two] = data["access"]
    assert one["host_name"] == first.host.name
    assert one["ssh_user"] == first.account and two["ssh_user"] == second.account
    assert one["ssh_command"] == f"ssh -p {sshd.port} {first.account}@{sshd.host}"
    assert one["state"] == "ready"
    assert one["cards"] == one["cards_verified"] == [first.cards[0] + 1]
    assert one["ready_at"] is not None and one["erased_at"] is None

    ended(order)
    erased_by_worker(first)
    first.refresh_from_db()
    data = detail(customer, order)
    assert [host["state"] for host in data["access"]] == ["erased", "revoking"]
    assert data["access"][0]["erased_at"] is not None
    assert data["access"][1]["revoke_started_at"] is not None
