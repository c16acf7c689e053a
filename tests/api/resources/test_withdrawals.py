"""Withdrawals through the API: the withdraw page's form checks the body, its service holds the
amount; money leaving the site needs the token's own "withdraw" scope."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api.idempotency import idempotency_keys_purge
from payments.ledger.services.posting import customer_account
from payments.models import Withdrawal, WithdrawalStatus
from payments.withdrawals.services import withdrawal_approve, withdrawal_reject
from tests.api.contract import assert_matches_schema
from tests.payments.withdrawals.conftest import CUSTOMER_WALLET, pending_total

from .conftest import field_errors, problem_of

pytestmark = pytest.mark.usefixtures("local_network")

WITHDRAWALS = "/api/v1/withdrawals/"
EVERY_SCOPE = ("read", "order", "pay", "withdraw")


@pytest.fixture
def funded(customer, credit):
    credit(customer, "100.00")
    return customer


@pytest.fixture
def wallet(client_for, funded):
    """The customer's client with every scope, "withdraw" included."""
    return client_for(funded, scopes=EVERY_SCOPE)


def body(**changes) -> dict:
    data = {
        "amount": "25.00",
        "network": "local",
        "asset": "tUSDC",
        "to_address": CUSTOMER_WALLET.lower(),
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not ...}


def balance(customer) -> Decimal:
    return customer_account(customer).balance


def assert_nothing_moved(customer):
    assert balance(customer) == Decimal("100.00")
    assert pending_total() == Decimal("0.00")
    assert not Withdrawal.objects.exists()


def test_withdraw_holds_the_amount_and_follows_it_to_paid_or_rejected(wallet, funded, finance_user):
    response = wallet.post(WITHDRAWALS, body())

    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", "/api/v1/withdrawals/")
    withdrawal = Withdrawal.objects.get(customer=funded)
    assert response["Location"] == f"{WITHDRAWALS}{withdrawal.pk}/"
    data = response.json()
    assert data["reference"] == withdrawal.reference and data["status"] == "requested"
    assert data["amount_usd"] == "25.00" and data["amount_units"] == "25000000"
    assert data["amount"] == "25.00"
    assert data["to_address"] == CUSTOMER_WALLET  # checksummed, as the page stores it
    assert data["next_step"].startswith("The amount is held from your balance.")
    assert data["receipt"] is None and data["confirmations"] is None
    assert balance(funded) == Decimal("75.00") and pending_total() == Decimal("25.00")

    withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)
    detail = wallet.get(f"{WITHDRAWALS}{withdrawal.pk}/")
    assert detail.status_code == 200
    assert_matches_schema(detail, "get", "/api/v1/withdrawals/{withdrawal_id}/")
    assert detail.json()["status"] == "approved"

    withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="Wrong chain")
    rejected = wallet.get(f"{WITHDRAWALS}{withdrawal.pk}/").json()
    assert rejected["status"] == "rejected" and rejected["reject_reason"] == "Wrong chain"
    assert balance(funded) == Decimal("100.00")

    listed = wallet.get(WITHDRAWALS)
    assert listed.status_code == 200
    assert_matches_schema(listed, "get", "/api/v1/withdrawals/")
    [row] = listed.json()["results"]
    assert row == rejected


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"amount": "5.00"}, "amount", "The minimum withdrawal is 10.00 USD."),
        ({"amount": "100.01"}, "amount", "Your balance is 100.00 USD"),
        ({"amount": "10.001"}, "amount", "Enter at most two decimal places (cents)."),
        ({"amount": "-20.00"}, "amount", "The minimum withdrawal is 10.00 USD."),
        ({"amount": "٢٥.00"}, "amount", "Enter the amount as a number"),
        ({"amount": 25}, "amount", 'Send this amount as a JSON string, such as "25.00".'),
        ({"amount": "NaN"}, "amount", "Enter the amount as a number"),
        ({"amount": ...}, "amount", "Enter the amount in USD."),
        ({"to_address": "0x1234"}, "to_address", "An address is 0x followed by 40"),
        ({"to_address": "0x" + "0" * 40}, "to_address", "The zero address burns"),
        (
            {"to_address": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293bc"},
            "to_address",
            "checksum",
        ),
        ({"to_address": ["0x"]}, "to_address", "Send this field as a JSON string."),
        ({"network": "mainnet"}, "network", ""),
        ({"asset": "DOGE"}, "network", ""),
        ({"request_key": "x"}, "request_key", "This field is not part of this request."),
    ],
)
def test_bad_input_is_a_400_on_its_field_and_moves_nothing(wallet, funded, changes, field, message):
    response = wallet.post(WITHDRAWALS, body(**changes))

    assert response.status_code == 400, response.content
    assert_matches_schema(response, "post", "/api/v1/withdrawals/")
    errors = field_errors(response)
    assert field in errors, errors
    assert any(message in text for text in errors[field]), errors
    assert_nothing_moved(funded)


def test_a_deposit_address_of_the_site_is_refused(wallet, funded, order, client_for):
    opened = client_for(funded).post(
        f"/api/v1/orders/{order.pk}/payments/", {"network": "local", "asset": "tUSDC"}
    )
    deposit = opened.json()["deposit_address"]

    response = wallet.post(WITHDRAWALS, body(to_address=deposit))

    assert response.status_code == 400
    assert "deposit address of this site" in field_errors(response)["to_address"][0]
    assert not Withdrawal.objects.exists()


@pytest.mark.parametrize("scopes", [("read", "order", "pay"), ("pay",), ("read",)])
def test_only_a_token_with_the_withdraw_scope_may_withdraw(client_for, funded, scopes):
    response = client_for(funded, scopes=scopes).post(WITHDRAWALS, body())

    assert response.status_code == 403
    assert_matches_schema(response, "post", "/api/v1/withdrawals/")
    assert "“withdraw”" in problem_of(response)["detail"]
    assert_nothing_moved(funded)


def test_the_withdraw_scope_alone_may_withdraw_but_not_read(client_for, funded):
    only = client_for(funded, scopes=("withdraw",))

    created = only.post(WITHDRAWALS, body())

    assert created.status_code == 201
    assert only.get(WITHDRAWALS).status_code == 403


def test_the_same_idempotency_key_withdraws_once(wallet, funded):
    headers = {"HTTP_IDEMPOTENCY_KEY": "withdraw-1"}

    first = wallet.post(WITHDRAWALS, body(), headers=headers)
    replay = wallet.post(WITHDRAWALS, body(), headers=headers)
    other = wallet.post(WITHDRAWALS, body(amount="30.00"), headers=headers)

    assert first.status_code == replay.status_code == 201
    assert replay["Idempotent-Replayed"] == "true" and replay.json() == first.json()
    assert other.status_code == 422
    assert Withdrawal.objects.count() == 1 and balance(funded) == Decimal("75.00")


def test_the_service_keeps_the_key_after_the_api_forgot_it(wallet, funded):
    def a_day_later():  # the purge of the beat, a day after the keys were used
        assert idempotency_keys_purge(now=timezone.now() + timedelta(hours=25)) >= 1

    headers = {"HTTP_IDEMPOTENCY_KEY": "withdraw-2"}
    first = wallet.post(WITHDRAWALS, body(), headers=headers).json()
    a_day_later()

    again = wallet.post(WITHDRAWALS, body(), headers=headers)
    a_day_later()
    changed = wallet.post(WITHDRAWALS, body(amount="30.00"), headers=headers)

    assert again.status_code == 201 and again.json()["id"] == first["id"]
    assert changed.status_code == 409
    assert problem_of(changed)["detail"].startswith("This form was already sent with other values")
    assert Withdrawal.objects.count() == 1 and balance(funded) == Decimal("75.00")


def test_another_customers_withdrawal_is_404(wallet, funded, client_for, other_customer):
    withdrawal_id = wallet.post(WITHDRAWALS, body()).json()["id"]
    mallory = client_for(other_customer, scopes=EVERY_SCOPE)

    response = mallory.get(f"{WITHDRAWALS}{withdrawal_id}/")

    assert response.status_code == 404
    assert problem_of(response)["detail"] == "No such withdrawal in your account."
    assert mallory.get(WITHDRAWALS).json()["results"] == []


def test_the_page_and_the_api_hold_the_same_amount(wallet, funded):
    browser = Client()
    browser.force_login(funded)
    page = browser.post(
        reverse("payments:withdraw"),
        {
            "amount": "25.00",
            "stablecoin": "local:tUSDC",
            "to_address": CUSTOMER_WALLET.lower(),
            "request_key": "0b6c2a56-8a3e-4a57-9d7e-1f1f7b1e0a01",
            "step": "send",
        },
    )
    assert page.status_code == 302
    api = wallet.post(WITHDRAWALS, body())
    assert api.status_code == 201

    rows = list(
        Withdrawal.objects.order_by("pk").values_list(
            "amount_usd", "amount_units", "network", "asset", "to_address", "status"
        )
    )
    assert rows[0] == rows[1]
    assert rows[0][-1] == WithdrawalStatus.REQUESTED
    assert balance(funded) == Decimal("50.00") and pending_total() == Decimal("50.00")
    # The API lists the page's withdrawal too, newest first.
    listed = wallet.get(WITHDRAWALS).json()["results"]
    assert [row["id"] for row in listed] == list(
        Withdrawal.objects.order_by("-pk").values_list("pk", flat=True)
    )
