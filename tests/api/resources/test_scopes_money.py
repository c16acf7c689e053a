"""The extension, refund, withdrawal, receipt and payment-history endpoints × token: none →
401, a token with every other scope → 403, the scope alone is enough; nothing changes on a
refusal. A withdrawal needs "withdraw", which no other scope implies."""

from decimal import Decimal

import pytest

from payments.ledger.services.refunds import order_end_early_with_refund
from payments.models import CryptoPayment, LedgerTransaction, Receipt, Withdrawal
from payments.withdrawals.services import withdrawal_request
from rental.models import OrderExtension
from rental.services import extension_create
from tests.api.contract import assert_matches_schema
from tests.payments.withdrawals.conftest import CUSTOMER_WALLET

from .conftest import problem_of

STABLECOIN = {"network": "local", "asset": "tUSDC"}
WITHDRAWAL = {"amount": "10.00", **STABLECOIN, "to_address": CUSTOMER_WALLET}

# (method, path template, scope it needs, body)
ENDPOINTS = [
    ("get", "/api/v1/orders/{order_id}/extensions/", "read", None),
    ("post", "/api/v1/orders/{order_id}/extensions/", "order", {"duration_days": 3}),
    ("get", "/api/v1/extensions/{extension_id}/", "read", None),
    ("post", "/api/v1/extensions/{extension_id}/pay/balance/", "pay", None),
    ("post", "/api/v1/extensions/{extension_id}/payments/", "pay", STABLECOIN),
    ("post", "/api/v1/extensions/{extension_id}/cancel/", "order", None),
    ("get", "/api/v1/orders/{ended_id}/refund/", "read", None),
    ("get", "/api/v1/payments/", "read", None),
    ("get", "/api/v1/receipts/", "read", None),
    ("get", "/api/v1/receipts/{number}/", "read", None),
    ("get", "/api/v1/receipts/{number}/pdf/", "read", None),
    ("get", "/api/v1/withdrawals/", "read", None),
    ("post", "/api/v1/withdrawals/", "withdraw", WITHDRAWAL),
    ("get", "/api/v1/withdrawals/{withdrawal_id}/", "read", None),
]
SCOPES = ("read", "order", "pay", "withdraw")


@pytest.fixture
def world(customer, active_order, operator, local_network):
    order = active_order()
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    ended = active_order(lots=1)
    order_end_early_with_refund(
        order_id=ended.pk, actor=operator, reason="Host failed", host_failed=True
    )
    withdrawal = withdrawal_request(
        customer=customer,
        amount_usd=Decimal("10.00"),
        network="local",
        asset="tUSDC",
        to_address=CUSTOMER_WALLET,
        request_key="world",
    )
    return {
        "order_id": order.pk,
        "extension_id": extension.pk,
        "ended_id": ended.pk,
        "number": Receipt.objects.filter(customer=customer).values_list("number", flat=True)[0],
        "withdrawal_id": withdrawal.pk,
    }


def snapshot() -> tuple:
    return (
        list(OrderExtension.objects.order_by("pk").values_list("status", flat=True)),
        CryptoPayment.objects.count(),
        LedgerTransaction.objects.count(),
        Withdrawal.objects.count(),
    )


def send(client, method, template, body, world):
    path = template.format(**world)
    if method == "get":
        return client.get(path)
    return client.post(path, body)


@pytest.mark.parametrize(("method", "template", "scope", "body"), ENDPOINTS)
def test_no_token_is_401(anonymous, world, method, template, scope, body):
    before = snapshot()

    response = send(anonymous, method, template, body, world)

    assert response.status_code == 401
    assert_matches_schema(response, method, template.replace("{ended_id}", "{order_id}"))
    assert snapshot() == before


@pytest.mark.parametrize(("method", "template", "scope", "body"), ENDPOINTS)
def test_a_token_with_every_other_scope_is_403(
    client_for, customer, world, method, template, scope, body
):
    before = snapshot()
    without = client_for(customer, scopes=[other for other in SCOPES if other != scope])

    response = send(without, method, template, body, world)

    assert response.status_code == 403
    assert_matches_schema(response, method, template.replace("{ended_id}", "{order_id}"))
    assert f"“{scope}”" in problem_of(response)["detail"]
    assert snapshot() == before


@pytest.mark.parametrize(("method", "template", "scope", "body"), ENDPOINTS)
def test_the_scope_alone_is_enough(client_for, customer, world, method, template, scope, body):
    response = send(client_for(customer, scopes=[scope]), method, template, body, world)

    assert response.status_code < 400, response.content
    if template.endswith("/pdf/"):
        assert response["Content-Type"] == "application/pdf"
    else:
        assert_matches_schema(response, method, template.replace("{ended_id}", "{order_id}"))
