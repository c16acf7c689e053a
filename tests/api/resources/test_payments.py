"""Paying through the API: from the balance, crypto payments (open, status, declare), top-ups.
Each answer is what the payment pages' services and selector decide."""

from decimal import Decimal

import pytest

from payments.models import CryptoPayment, LedgerTransaction, TransactionKind
from rental.models import Order, OrderStatus
from tests.api.contract import assert_matches_schema

from .conftest import field_errors, problem_of

TX_HASH = "0x" + "ab" * 32


def test_create_order_then_pay_from_the_balance_through_the_api(
    api, customer, credit, catalogue, django_capture_on_commit_callbacks
):
    credit(customer, "1000.00")
    created = api.post(
        "/api/v1/orders/",
        {"gpu_model": "h100-80gb", "duration_days": 7, "lots": 2, "preparation": "pytorch"},
    )
    order_id = created.json()["id"]

    with django_capture_on_commit_callbacks(execute=True):
        paid = api.post(f"/api/v1/orders/{order_id}/pay/balance/")

    assert paid.status_code == 200, paid.content
    assert_matches_schema(paid, "post", "/api/v1/orders/{order_id}/pay/balance/")
    assert paid.json()["status"] in {OrderStatus.PAID, OrderStatus.PROVISIONING}
    assert Order.objects.filter(customer=customer).count() == 1
    payment = LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT)
    assert payment.count() == 1 and payment.get().order_id == order_id
    balance = api.get("/api/v1/balance/")
    assert_matches_schema(balance, "get", "/api/v1/balance/")
    assert balance.json() == {"balance_usd": "106.24", "currency": "USD"}
    # Paying again answers the paid order and posts nothing more.
    again = api.post(f"/api/v1/orders/{order_id}/pay/balance/")
    assert again.status_code == 200
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).count() == 1


def test_a_balance_short_of_the_total_is_a_409_stating_the_shortfall(api, customer, credit, order):
    credit(customer, "100.00")

    response = api.post(f"/api/v1/orders/{order.pk}/pay/balance/")

    assert response.status_code == 409
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/pay/balance/")
    assert problem_of(response)["detail"] == (
        "The balance is 100.00 USD; 893.76 USD are needed. Nothing was charged. "
        "793.76 USD are missing."
    )
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).exists()


def test_paying_another_customers_order_is_404(client_for, other_customer, credit, order):
    credit(other_customer, "5000.00")

    response = client_for(other_customer).post(f"/api/v1/orders/{order.pk}/pay/balance/")

    assert response.status_code == 404
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).exists()


@pytest.mark.usefixtures("local_network")
def test_open_a_crypto_payment_then_follow_and_declare_it(api, order):
    response = api.post(
        f"/api/v1/orders/{order.pk}/payments/", {"network": "local", "asset": "tUSDC"}
    )

    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/payments/")
    data = response.json()
    payment = CryptoPayment.objects.get(order=order)
    assert data["id"] == payment.pk
    assert (data["asset"], data["network"]) == ("tUSDC", "local")
    assert data["deposit_address"] == payment.deposit_address.address
    assert data["amount_due_units"] == "893760000" and data["amount_due"] == "893.760000"
    assert data["amount_still_due"] == "893.760000" and data["amount_due_usd"] == "893.76"
    assert data["payment_uri"].startswith(f"ethereum:{payment.token_address}@")
    assert data["payment_uri"].endswith("&uint256=893760000")
    assert data["status"] == "awaiting" and data["confirmations"] == {"seen": 0, "required": 3}

    status = api.get(f"/api/v1/payments/{payment.pk}/")
    assert status.status_code == 200
    assert_matches_schema(status, "get", "/api/v1/payments/{payment_id}/")
    assert status.json()["can_declare"] is True

    declared = api.post(f"/api/v1/payments/{payment.pk}/declare/", {"tx_hash": "0x" + "AB" * 32})
    assert declared.status_code == 200, declared.content
    assert_matches_schema(declared, "post", "/api/v1/payments/{payment_id}/declare/")
    payment.refresh_from_db()
    assert payment.declared_at is not None and payment.declared_tx_hash == TX_HASH
    # Only the declaration: the money state is untouched.
    assert declared.json()["status"] == "awaiting" and declared.json()["can_declare"] is False
    assert payment.received_units == 0


@pytest.mark.usefixtures("local_network")
@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"network": "mainnet", "asset": "tUSDC"}, "network"),
        ({"network": "local", "asset": "DOGE"}, "network"),
        ({"network": "local"}, "network"),
        ({"network": ["local"], "asset": "tUSDC"}, "network"),
    ],
)
def test_an_unknown_stablecoin_is_a_400_and_opens_nothing(api, order, data, field):
    response = api.post(f"/api/v1/orders/{order.pk}/payments/", data)

    assert response.status_code == 400
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/payments/")
    assert field in field_errors(response)
    assert not CryptoPayment.objects.exists()


@pytest.mark.usefixtures("local_network")
def test_a_payment_for_a_cancelled_order_is_a_409(api, order):
    api.post(f"/api/v1/orders/{order.pk}/cancel/")

    response = api.post(
        f"/api/v1/orders/{order.pk}/payments/", {"network": "local", "asset": "tUSDC"}
    )

    assert response.status_code == 409
    assert problem_of(response)["detail"] == "This order is no longer awaiting payment."
    assert not CryptoPayment.objects.exists()


@pytest.fixture
def payment(local_network, order, customer):
    from payments.crypto.services.payments import payment_create_for_order

    return payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )


def test_another_customers_payment_is_404_and_cannot_be_declared(
    client_for, other_customer, payment
):
    other = client_for(other_customer)

    seen = other.get(f"/api/v1/payments/{payment.pk}/")
    declared = other.post(f"/api/v1/payments/{payment.pk}/declare/", {})

    assert seen.status_code == declared.status_code == 404
    assert_matches_schema(seen, "get", "/api/v1/payments/{payment_id}/")
    assert_matches_schema(declared, "post", "/api/v1/payments/{payment_id}/declare/")
    assert problem_of(seen)["detail"] == "No such payment in your account."
    payment.refresh_from_db()
    assert payment.declared_at is None


@pytest.mark.parametrize("tx_hash", ["0x1234", "ab" * 33, 12, "0x" + "٥" * 64])
def test_a_bad_transaction_hash_is_a_400_and_declares_nothing(api, payment, tx_hash):
    response = api.post(f"/api/v1/payments/{payment.pk}/declare/", {"tx_hash": tx_hash})

    assert response.status_code == 400
    assert_matches_schema(response, "post", "/api/v1/payments/{payment_id}/declare/")
    assert "tx_hash" in field_errors(response)
    payment.refresh_from_db()
    assert payment.declared_at is None


@pytest.mark.usefixtures("local_network")
def test_a_top_up_opens_a_payment_for_the_amount(api, customer):
    response = api.post(
        "/api/v1/top-ups/", {"amount": "50.00", "network": "local", "asset": "tUSDC"}
    )

    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", "/api/v1/top-ups/")
    payment = CryptoPayment.objects.get(customer=customer)
    assert payment.purpose == "top_up" and payment.amount_due_usd == Decimal("50.00")
    assert response.json()["order_id"] is None
    assert response.json()["amount_due_units"] == "50000000"


@pytest.mark.usefixtures("local_network")
@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("5.00", "The minimum top-up is 10.00 USD."),
        ("100000.01", "A top-up is at most 100,000.00 USD."),
        ("10.001", "Enter at most two decimal places (cents)."),
        ("٥٠", "Enter the amount as a number, such as 25.00."),
        ("1e3", "Enter the amount as a number, such as 25.00."),
        (50.0, 'Send this amount as a JSON string, such as "25.00".'),
    ],
)
def test_a_bad_top_up_amount_is_a_400_and_opens_nothing(api, amount, message):
    response = api.post(
        "/api/v1/top-ups/", {"amount": amount, "network": "local", "asset": "tUSDC"}
    )

    assert response.status_code == 400
    assert_matches_schema(response, "post", "/api/v1/top-ups/")
    assert field_errors(response) == {"amount": [message]}
    assert not CryptoPayment.objects.exists()
