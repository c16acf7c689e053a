"""The payment history and an order's payments through the API, and the list filters
(`status`, `created_after`, `created_before`, `order`) on orders and payments: a filter the
server does not know is a 400 naming what it accepts, never ignored."""

from datetime import timedelta
from decimal import Decimal
from uuid import uuid4

import pytest
from django.utils import timezone

from payments.crypto.selectors.history import customer_payments, state_condition
from payments.crypto.selectors.state import PaymentState, payment_state
from payments.crypto.services.payments import payment_create_for_order, payment_create_top_up
from payments.models import CryptoPayment
from rental.models import OrderStatus
from tests.api.contract import assert_matches_schema

from .conftest import field_errors

pytestmark = pytest.mark.usefixtures("local_network")

PAYMENTS = "/api/v1/payments/"
ORDERS = "/api/v1/orders/"


@pytest.fixture
def payments(customer, order):
    """The order's stablecoin payment and a top-up of 50.00 USD, newest last."""
    for_order = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    top_up = payment_create_top_up(
        customer=customer, amount_usd="50.00", network_key="local", asset_symbol="tUSDC"
    )
    return for_order, top_up


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_the_history_lists_every_payment_newest_first(api, payments):
    for_order, top_up = payments

    response = api.get(PAYMENTS)

    assert_matches_schema(response, "get", "/api/v1/payments/")
    assert ids(response) == [top_up.pk, for_order.pk]
    row = response.json()["results"][1]
    assert row["purpose"] == "order" and row["order_id"] == for_order.order_id
    assert row["status"] == "awaiting" and row["amount_due_usd"] == "893.76"
    assert row["url"] == f"{PAYMENTS}{for_order.pk}/"
    # Each row says what payments_retrieve says of the state.
    detail = api.get(row["url"]).json()
    assert (detail["status"], detail["amount_still_due_usd"]) == (
        row["status"],
        row["amount_still_due_usd"],
    )


def test_the_status_filter_is_the_answers_state(api, order, payments):
    for_order, top_up = payments
    api.post(f"{ORDERS}{order.pk}/cancel/")  # closes the order's payment

    closed = api.get(f"{PAYMENTS}?status=closed")
    awaiting = api.get(f"{PAYMENTS}?status=awaiting")

    assert ids(closed) == [for_order.pk]
    assert [row["status"] for row in closed.json()["results"]] == ["closed"]
    assert ids(awaiting) == [top_up.pk]
    assert ids(api.get(f"{PAYMENTS}?status=paid")) == []


def test_order_and_date_filters(api, order, payments):
    for_order, top_up = payments
    now = timezone.now()
    tomorrow = (now + timedelta(days=1)).date().isoformat()
    yesterday = (now - timedelta(days=1)).date().isoformat()

    assert ids(api.get(f"{PAYMENTS}?order={order.pk}")) == [for_order.pk]
    assert ids(api.get(f"{PAYMENTS}?created_after={tomorrow}")) == []
    assert ids(api.get(f"{PAYMENTS}?created_after={yesterday}&created_before={tomorrow}")) == [
        top_up.pk,
        for_order.pk,
    ]
    after_first = (for_order.created_at + timedelta(microseconds=1)).isoformat()
    encoded = after_first.replace("+", "%2B")  # the offset's "+" in a query string
    assert ids(api.get(f"{PAYMENTS}?created_after={encoded}")) == [top_up.pk]


def test_an_orders_payments_are_its_own(api, order, payments):
    for_order, _top_up = payments

    response = api.get(f"{ORDERS}{order.pk}/payments/")

    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/payments/")
    assert ids(response) == [for_order.pk]
    assert ids(api.get(f"{ORDERS}{order.pk}/payments/?status=closed")) == []


def test_another_customers_order_payments_are_404(client_for, other_customer, order, payments):
    mallory = client_for(other_customer)

    assert mallory.get(f"{ORDERS}{order.pk}/payments/").status_code == 404
    assert ids(mallory.get(PAYMENTS)) == []
    assert ids(mallory.get(f"{PAYMENTS}?order={order.pk}")) == []


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("status=confirmed", "status", "Unknown status “confirmed”. Use one of: awaiting,"),
        ("status=", "status", "Use one of:"),
        ("created_after=yesterday", "created_after", "Give created_after as YYYY-MM-DD"),
        ("created_after=2030-02-30", "created_after", "YYYY-MM-DD"),
        ("created_before=٢٠٣٠-01-01", "created_before", "YYYY-MM-DD"),
        ("created_before=2030-01-01T10:00:00", "created_before", "with its offset"),
        ("created_after=2030-01-02&created_before=2030-01-01", "created_before", "later than"),
        ("order=٣", "order", "digits 0 to 9"),
        ("order=0", "order", "digits 0 to 9"),
    ],
)
def test_a_bad_filter_is_a_400_naming_what_it_accepts(api, payments, query, field, message):
    response = api.get(f"{PAYMENTS}?{query}")

    assert response.status_code == 400
    assert_matches_schema(response, "get", "/api/v1/payments/")
    errors = field_errors(response)
    assert any(message in text for text in errors[field]), errors


def test_the_unknown_status_lists_every_allowed_one(api):
    response = api.get(f"{PAYMENTS}?status=nope")

    [message] = field_errors(response)["status"]
    assert message.endswith(", ".join(PaymentState.values) + ".")


# ------------------------------------------------------------------------ orders


def test_orders_filter_by_status_and_dates(api, customer, order, catalogue, place_order):
    second = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    api.post(f"{ORDERS}{second.pk}/cancel/")
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()

    assert ids(api.get(f"{ORDERS}?status=cancelled")) == [second.pk]
    assert ids(api.get(f"{ORDERS}?status=awaiting_payment")) == [order.pk]
    assert ids(api.get(f"{ORDERS}?status=active")) == []
    assert ids(api.get(f"{ORDERS}?created_before={tomorrow}")) == [second.pk, order.pk]
    assert ids(api.get(f"{ORDERS}?created_after={tomorrow}")) == []


@pytest.mark.parametrize("query", ["status=open", "status=Cancelled", "created_after=٢٠٢٦-01-01"])
def test_a_bad_order_filter_is_a_400(api, order, query):
    response = api.get(f"{ORDERS}?{query}")

    assert response.status_code == 400
    assert_matches_schema(response, "get", "/api/v1/orders/")
    if query.startswith("status"):
        [message] = field_errors(response)["status"]
        assert message.endswith(", ".join(OrderStatus.values) + ".")


def test_the_filters_keep_to_the_cursor(api, customer, catalogue, place_order, settings):
    made = [place_order(customer, catalogue["h100"], lots=1, duration_days=3).pk for _ in range(3)]

    first = api.get(f"{ORDERS}?status=awaiting_payment&page_size=2").json()
    rest = api.get(first["next"]).json()

    assert [row["id"] for row in first["results"] + rest["results"]] == made[::-1]
    assert "status=awaiting_payment" in first["next"]
    assert CryptoPayment.objects.count() == 0


def test_the_state_filter_decides_as_the_payment_page_does(customer, payments):
    """state_condition is payment_state made by the database: for every state, at a time
    before and after the expiry, it selects exactly the payments the page gives that state."""
    for_order, _top_up = payments
    for now in (timezone.now(), for_order.expires_at + timedelta(seconds=1)):
        for state in PaymentState.values:
            selected = set(
                customer_payments(customer=customer)
                .filter(state_condition(state, now=now))
                .values_list("pk", flat=True)
            )
            decided = {
                payment.pk
                for payment in customer_payments(customer=customer)
                if payment_state(
                    status=payment.status,
                    due=payment.amount_due_units,
                    received=payment.received_units,
                    seen=payment.seen_units,
                    expires_at=payment.expires_at,
                    now=now,
                )
                == state
            }
            assert selected == decided, (state, now)
    assert CryptoPayment.objects.filter(state_condition("time_up", now=now)).count() == 2


@pytest.mark.parametrize("path", [PAYMENTS, "/api/v1/withdrawals/"])
def test_a_list_costs_the_same_queries_for_1_and_4_rows(api, customer, credit, path):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from payments.withdrawals.services import withdrawal_request
    from tests.payments.withdrawals.conftest import CUSTOMER_WALLET

    credit(customer, "500.00")

    def add_row():
        if path == PAYMENTS:
            payment_create_top_up(
                customer=customer, amount_usd="50.00", network_key="local", asset_symbol="tUSDC"
            )
        else:
            withdrawal_request(
                customer=customer,
                amount_usd=Decimal("10.00"),
                network="local",
                asset="tUSDC",
                to_address=CUSTOMER_WALLET,
                request_key=str(uuid4()),
            )

    def queries() -> int:
        api.get(path)  # the token's last use is written once a minute: not counted below
        with CaptureQueriesContext(connection) as captured:
            assert len(ids(api.get(path))) == rows
        return len(captured)

    add_row()
    rows = 1
    one = queries()
    for _ in range(3):
        add_row()
    rows = 4
    assert queries() == one
