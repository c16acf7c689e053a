"""The balance, its statement (cursor pages with true running balances) and the SSH keys."""

import pytest

from accounts.models import User
from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import OrderStatus
from rental.services.provisioning import order_mark_prepared, order_set_ssh_key
from tests.api.contract import assert_matches_schema

from .conftest import SSH_KEY, field_errors, problem_of

OTHER_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 other@box"
)


def test_balance_of_a_new_account_is_zero(api):
    response = api.get("/api/v1/balance/")
    assert response.status_code == 200
    assert_matches_schema(response, "get", "/api/v1/balance/")
    assert response.json() == {"balance_usd": "0.00", "currency": "USD"}


def test_statement_pages_keep_true_running_balances(api, customer, other_customer, credit):
    for amount in ("10.00", "20.00", "30.00", "40.00", "50.00"):
        credit(customer, amount)
    credit(other_customer, "999.00")

    first = api.get("/api/v1/balance/statement/?page_size=2")
    assert first.status_code == 200
    assert_matches_schema(first, "get", "/api/v1/balance/statement/")
    rows = first.json()["results"]
    following = api.get(first.json()["next"]).json()
    rows += following["results"]
    rows += api.get(following["next"]).json()["results"]

    assert [row["amount_usd"] for row in rows] == ["50.00", "40.00", "30.00", "20.00", "10.00"]
    assert [row["running_balance_usd"] for row in rows] == [
        "150.00",
        "100.00",
        "60.00",
        "30.00",
        "10.00",
    ]
    assert all(row["memo"] == "Bank transfer received" for row in rows)


def test_account_ssh_key_is_saved_read_and_removed(api, customer):
    saved = api.put("/api/v1/account/ssh-key/", {"ssh_public_key": f"  {SSH_KEY}  "})

    assert saved.status_code == 200, saved.content
    assert_matches_schema(saved, "put", "/api/v1/account/ssh-key/")
    assert saved.json()["ssh_public_key"] == SSH_KEY
    assert saved.json()["fingerprint"].startswith("SHA256:")
    customer.refresh_from_db()
    assert customer.ssh_public_key == SSH_KEY
    read = api.get("/api/v1/account/ssh-key/")
    assert_matches_schema(read, "get", "/api/v1/account/ssh-key/")
    assert read.json() == saved.json()

    removed = api.put("/api/v1/account/ssh-key/", {"ssh_public_key": ""})
    assert removed.json() == {"ssh_public_key": "", "fingerprint": None, "key_type": None}
    assert User.objects.get(pk=customer.pk).ssh_public_key == ""


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"ssh_public_key": "-----BEGIN OPENSSH PRIVATE KEY-----"}, "This is a private key."),
        ({"ssh_public_key": "ssh-dss AAAA"}, "is not a supported key type"),
        ({"ssh_public_key": ["ssh-ed25519"]}, "Send this field as a JSON string."),
        ({}, "Paste your SSH public key."),
    ],
)
def test_a_bad_account_key_is_a_400_and_keeps_the_saved_one(api, customer, data, message):
    customer.ssh_public_key = SSH_KEY
    customer.save(update_fields=["ssh_public_key"])

    response = api.put("/api/v1/account/ssh-key/", data)

    assert response.status_code == 400
    assert_matches_schema(response, "put", "/api/v1/account/ssh-key/")
    assert message in field_errors(response)["ssh_public_key"][0]
    assert User.objects.get(pk=customer.pk).ssh_public_key == SSH_KEY


def test_an_orders_key_is_set_while_allowed(api, customer, order):
    response = api.put(
        f"/api/v1/orders/{order.pk}/ssh-key/", {"ssh_public_key": SSH_KEY, "save_on_account": True}
    )

    assert response.status_code == 200, response.content
    assert_matches_schema(response, "put", "/api/v1/orders/{order_id}/ssh-key/")
    assert response.json()["ssh_key_fingerprint"].startswith("SHA256:")
    order.refresh_from_db()
    assert order.ssh_public_key == SSH_KEY
    assert User.objects.get(pk=customer.pk).ssh_public_key == SSH_KEY


def test_an_orders_key_is_refused_once_the_hosts_are_prepared(api, customer, credit, order):
    credit(customer, "2000.00")
    balance_pay_order(order_id=order.pk, customer=customer)
    order_set_ssh_key(order_id=order.pk, customer=customer, key_text=SSH_KEY)
    prepared = order_mark_prepared(order_id=order.pk, actor=None, access_notes="")
    assert prepared.status == OrderStatus.PROVISIONING and prepared.prepared_at

    response = api.put(f"/api/v1/orders/{order.pk}/ssh-key/", {"ssh_public_key": OTHER_KEY})

    assert response.status_code == 409
    assert_matches_schema(response, "put", "/api/v1/orders/{order_id}/ssh-key/")
    assert "already prepared" in problem_of(response)["detail"]
    order.refresh_from_db()
    assert order.ssh_public_key == SSH_KEY


def test_another_customers_order_key_is_404(client_for, other_customer, order):
    response = client_for(other_customer).put(
        f"/api/v1/orders/{order.pk}/ssh-key/", {"ssh_public_key": SSH_KEY}
    )

    assert response.status_code == 404
    order.refresh_from_db()
    assert order.ssh_public_key == ""
