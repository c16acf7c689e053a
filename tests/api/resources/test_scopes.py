"""Every endpoint × token: none → 401, a token without the scope → 403, and nothing changes."""

import pytest

from accounts.models import BillingDetails
from api.models import ApiToken
from api.tokens import token_create
from payments.models import CryptoPayment, LedgerTransaction
from pilot.models import PilotDecision
from rental.models import Order, OrderStatus
from tests.api.contract import assert_matches_schema

from .conftest import SSH_KEY, problem_of

# (method, path template, scope it needs, body)
ENDPOINTS = [
    ("get", "/api/v1/orders/", "read", None),
    (
        "post",
        "/api/v1/orders/",
        "order",
        {"gpu_model": "h100-80gb", "duration_days": 7, "lots": 1, "preparation": "ubuntu"},
    ),
    ("get", "/api/v1/orders/{order_id}/", "read", None),
    ("post", "/api/v1/orders/{order_id}/cancel/", "order", {}),
    ("put", "/api/v1/orders/{order_id}/ssh-key/", "order", {"ssh_public_key": SSH_KEY}),
    ("post", "/api/v1/orders/{order_id}/pay/balance/", "pay", None),
    ("get", "/api/v1/orders/{order_id}/payments/", "read", None),
    ("post", "/api/v1/orders/{order_id}/payments/", "pay", {"network": "local", "asset": "tUSDC"}),
    ("get", "/api/v1/orders/{order_id}/pilot/reports/", "read", None),
    ("get", "/api/v1/orders/{order_id}/pilot/decisions/", "read", None),
    (
        "post",
        "/api/v1/orders/{order_id}/pilot/decisions/",
        "order",
        {"kind": "launch", "motivation": "Go."},
    ),
    ("get", "/api/v1/payments/{payment_id}/", "read", None),
    ("post", "/api/v1/payments/{payment_id}/declare/", "pay", {}),
    ("post", "/api/v1/top-ups/", "pay", {"amount": "50.00", "network": "local", "asset": "tUSDC"}),
    ("get", "/api/v1/balance/", "read", None),
    ("get", "/api/v1/balance/statement/", "read", None),
    ("get", "/api/v1/account/ssh-key/", "read", None),
    ("put", "/api/v1/account/ssh-key/", "order", {"ssh_public_key": SSH_KEY}),
    # Part B: the SSH key's removal, billing details, tokens.
    ("delete", "/api/v1/account/ssh-key/", "order", None),
    ("get", "/api/v1/account/billing/", "read", None),
    ("put", "/api/v1/account/billing/", "order", {"company_name": "Hopper Labs"}),
    ("patch", "/api/v1/account/billing/", "order", {"vat_number": "IT1"}),
    ("get", "/api/v1/tokens/", "tokens", None),
    ("post", "/api/v1/tokens/", "tokens", {"name": "ci", "scopes": ["tokens"]}),
    ("get", "/api/v1/tokens/{token_id}/", "tokens", None),
    ("delete", "/api/v1/tokens/{token_id}/", "tokens", None),
]
SCOPES = ("read", "order", "pay", "tokens")


@pytest.fixture
def world(customer, credit, order, local_network):
    from payments.crypto.services.payments import payment_create_for_order

    credit(customer, "5000.00")
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    customer.ssh_public_key = SSH_KEY
    customer.save(update_fields=["ssh_public_key"])
    kept = token_create(owner=customer, name="kept", scopes=["read"])
    return {"order_id": order.pk, "payment_id": payment.pk, "token_id": kept.token.pk}


def snapshot(customer) -> tuple:
    return (
        Order.objects.count(),
        list(Order.objects.values_list("status", "ssh_public_key")),
        CryptoPayment.objects.filter(declared_at__isnull=False).count(),
        CryptoPayment.objects.count(),
        LedgerTransaction.objects.count(),
        PilotDecision.objects.count(),
        type(customer).objects.get(pk=customer.pk).ssh_public_key,
        list(BillingDetails.objects.values_list("company_name", "vat_number", "address")),
        # The tests' own clients are tokens named "script": every other token.
        list(ApiToken.objects.exclude(name="script").values_list("name", "revoked_at")),
    )


def send(client, method, template, body, world):
    path = template.format(**world)
    if method in {"get", "delete"}:
        return getattr(client, method)(path)
    return getattr(client, method)(path, body)


@pytest.mark.parametrize(("method", "template", "scope", "body"), ENDPOINTS)
def test_no_token_is_401(anonymous, customer, world, method, template, scope, body):
    before = snapshot(customer)

    response = send(anonymous, method, template, body, world)

    assert response.status_code == 401
    assert_matches_schema(response, method, template)
    assert problem_of(response)["status"] == 401
    assert snapshot(customer) == before


@pytest.mark.parametrize(("method", "template", "scope", "body"), ENDPOINTS)
def test_a_token_without_the_scope_is_403(
    client_for, customer, world, method, template, scope, body
):
    before = snapshot(customer)
    without = client_for(customer, scopes=[other for other in SCOPES if other != scope])

    response = send(without, method, template, body, world)

    assert response.status_code == 403
    assert_matches_schema(response, method, template)
    assert f"“{scope}”" in problem_of(response)["detail"]
    assert snapshot(customer) == before


@pytest.mark.parametrize(("method", "template", "scope", "body"), ENDPOINTS)
def test_the_scope_alone_is_enough(client_for, customer, world, method, template, scope, body):
    response = send(client_for(customer, scopes=[scope]), method, template, body, world)

    assert response.status_code < 400 or response.status_code == 409, response.content
    if response.status_code == 204:  # no content: nothing to check against the schema
        assert response.content == b""
    else:
        assert_matches_schema(response, method, template)


def test_a_read_only_token_cannot_place_an_order(client_for, customer, catalogue):
    response = client_for(customer, scopes=["read"]).post(
        "/api/v1/orders/",
        {"gpu_model": "h100-80gb", "duration_days": 7, "lots": 1, "preparation": "ubuntu"},
    )
    assert response.status_code == 403
    assert not Order.objects.filter(customer=customer, status=OrderStatus.AWAITING_PAYMENT).exists()


# Every path once, with the methods it has (OPTIONS and HEAD are answered for each).
PATHS = sorted({template for _method, template, _scope, _body in ENDPOINTS})


def _methods_of(template) -> set[str]:
    return {method for method, path, _scope, _body in ENDPOINTS if path == template}


def _get_scope(template) -> str | None:
    return next(
        (scope for method, path, scope, _ in ENDPOINTS if (method, path) == ("get", template)), None
    )


@pytest.mark.parametrize("template", PATHS)
def test_options_answers_any_token_and_changes_nothing(
    client_for, anonymous, customer, world, template
):
    path = template.format(**world)
    before = snapshot(customer)
    for scopes in ([scope] for scope in SCOPES):
        client = client_for(customer, scopes=scopes)
        response = client.client.options(path, **client.headers)
        assert response.status_code == 200, (scopes, response.content)
        assert response.json()["name"]
    unauthenticated = anonymous.client.options(path)
    assert unauthenticated.status_code == 401
    assert problem_of(unauthenticated)["status"] == 401
    assert snapshot(customer) == before


@pytest.mark.parametrize("template", PATHS)
def test_head_needs_what_get_needs_and_is_405_without_get(
    client_for, anonymous, customer, world, template
):
    path = template.format(**world)
    before = snapshot(customer)
    get_scope = _get_scope(template) or "read"
    reader = client_for(customer, scopes=[get_scope])
    response = reader.client.head(path, **reader.headers)
    if "get" in _methods_of(template):
        assert response.status_code == 200, response.content
        writer = client_for(customer, scopes=[scope for scope in SCOPES if scope != get_scope])
        refused = writer.client.head(path, **writer.headers)
        assert refused.status_code == 403
        assert refused["Content-Type"].startswith("application/problem+json")
    else:
        assert response.status_code == 405, response.content
        assert response["Content-Type"].startswith("application/problem+json")
        assert "HEAD" not in response["Allow"]
    assert anonymous.client.head(path).status_code == 401
    assert snapshot(customer) == before
