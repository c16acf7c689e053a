"""Orders through the API: create, list, detail, cancel; the configurator form's rules and
messages, the owner's 404, idempotent creation."""

from decimal import Decimal

import pytest
from django.conf import settings

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Order, OrderStatus, OrderStatusChange
from rental.services.provisioning import order_mark_prepared, order_set_ssh_key
from tests.api.contract import assert_matches_schema
from tests.conftest import lots_available, set_stock
from tests.states import order_to_active

from .conftest import SSH_KEY, field_errors, problem_of

ORDERS = "/api/v1/orders/"


def body(**changes) -> dict:
    data = {"gpu_model": "h100-80gb", "duration_days": 7, "lots": 2, "preparation": "ubuntu"}
    data.update(changes)
    return {key: value for key, value in data.items() if value is not ...}


@pytest.fixture
def h100(catalogue):
    body_slug = catalogue["h100"].slug
    assert body_slug == "h100-80gb", body_slug  # the slug the bodies below use
    return catalogue["h100"]


def test_create_places_the_order_the_form_would(api, customer, h100):
    response = api.post(ORDERS, body())

    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", "/api/v1/orders/")
    order = Order.objects.get(customer=customer)
    data = response.json()
    assert data["id"] == order.pk
    assert response["Location"] == f"/api/v1/orders/{order.pk}/"
    assert data["status"] == OrderStatus.AWAITING_PAYMENT
    assert data["total_usd"] == "893.76" and data["lot_price_usd"] == "446.88"
    assert data["currency"] == "USD"
    assert (data["lots"], data["total_cards"], data["duration_days"]) == (2, 2, 7)
    assert data["hold_until"] is not None and data["access"] == []
    assert [entry["kind"] for entry in data["timeline"]] == ["status"]
    assert order.total_usd == Decimal("893.76")


def test_list_shows_only_own_orders_newest_first(api, customer, other_customer, h100, place_order):
    first = place_order(customer, h100)
    second = place_order(customer, h100, lots=3)
    place_order(other_customer, h100)

    response = api.get(ORDERS)

    assert response.status_code == 200
    assert_matches_schema(response, "get", "/api/v1/orders/")
    assert [row["id"] for row in response.json()["results"]] == [second.pk, first.pk]


def test_list_is_cursor_paginated(api, customer, h100, place_order, settings):
    settings.MAX_UNPAID_ORDERS = 10
    made = [place_order(customer, h100).pk for _ in range(3)]

    page = api.get(ORDERS + "?page_size=2").json()
    assert [row["id"] for row in page["results"]] == made[::-1][:2]
    rest = api.get(page["next"]).json()
    assert [row["id"] for row in rest["results"]] == made[:1]
    assert rest["next"] is None and rest["previous"]


def test_detail_of_an_active_order_has_access_and_ssh_commands(api, customer, credit, order):
    # Paid from the balance (cards allocated), prepared by an operator, then active.
    credit(customer, "2000.00")
    balance_pay_order(order_id=order.pk, customer=customer)
    order_set_ssh_key(order_id=order.pk, customer=customer, key_text=SSH_KEY)
    order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04")
    order_to_active(order)
    [host] = {allocation.host for allocation in order.allocations.select_related("host")}

    response = api.get(f"{ORDERS}{order.pk}/")

    assert response.status_code == 200
    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/")
    data = response.json()
    assert data["status"] == "active" and data["access_notes"] == "Ubuntu 24.04"
    [access] = data["access"]
    assert access["cards"] == [1, 2]
    assert access["ssh_command"].startswith("ssh ") and host.ssh_host in access["ssh_command"]


def test_detail_of_another_customers_order_is_404(client_for, other_customer, order):
    response = client_for(other_customer).get(f"{ORDERS}{order.pk}/")

    assert response.status_code == 404
    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/")
    assert problem_of(response)["detail"] == "No such order in your account."


@pytest.mark.parametrize("path", ["abc/", "%D9%A5/", "99999999999999999999999/", "0/"])
def test_tampered_order_ids_are_404(api, order, path):
    response = api.get(ORDERS + path)
    assert response.status_code == 404
    assert problem_of(response)["status"] == 404


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"lots": 0}, "lots", "Enter a whole number of lots from 1 to 10."),
        ({"lots": 11}, "lots", "Enter a whole number of lots from 1 to 10."),
        ({"lots": "٥"}, "lots", "Enter a whole number of lots from 1 to 10."),
        ({"lots": "１０"}, "lots", "Enter a whole number of lots from 1 to 10."),
        ({"lots": 2.0}, "lots", None),
        ({"lots": True}, "lots", None),
        ({"lots": [2]}, "lots", None),
        ({"lots": ...}, "lots", "Enter a whole number of lots from 1 to 10."),
        ({"gpu_model": "h900"}, "gpu_model", "Choose a GPU model from the catalogue."),
        ({"gpu_model": 5}, "gpu_model", None),
        ({"duration_days": 5}, "duration_days", "Choose a duration of 3, 7 or 30 days."),
        ({"duration_days": "٧"}, "duration_days", "Choose a duration of 3, 7 or 30 days."),
        ({"preparation": "windows"}, "preparation", None),
        ({"preparation": "custom"}, "custom_preparation", None),
        ({"custom_preparation": ["apt"]}, "custom_preparation", None),
        ({"price_usd": "0.01"}, "price_usd", "This field is not part of this request."),
    ],
)
def test_bad_input_is_a_400_with_field_errors_and_creates_nothing(
    api, customer, h100, changes, field, message
):
    response = api.post(ORDERS, body(**changes))

    assert response.status_code == 400, response.content
    assert_matches_schema(response, "post", "/api/v1/orders/")
    errors = field_errors(response)
    assert field in errors, errors
    if message:
        assert errors[field] == [message]
    assert not Order.objects.filter(customer=customer).exists()


@pytest.mark.parametrize("raw", ['["h100-80gb"]', '"lots"', "{not json"])
def test_a_body_that_is_not_an_object_is_a_400(api, customer, h100, raw):
    response = api.post(ORDERS, raw=raw)
    assert response.status_code == 400
    assert problem_of(response)["status"] == 400
    assert not Order.objects.filter(customer=customer).exists()


def test_out_of_stock_is_a_409_with_the_forms_message(api, customer, h100):
    set_stock(h100, 1)

    response = api.post(ORDERS, body(lots=2))

    assert response.status_code == 409
    assert_matches_schema(response, "post", "/api/v1/orders/")
    assert problem_of(response)["detail"] == (
        "Only 1 lot of this model is available right now; you asked for 2. "
        "Choose fewer lots or another model."
    )
    assert not Order.objects.filter(customer=customer).exists()
    assert lots_available(h100) == 1


def test_too_many_unpaid_orders_is_a_409(api, customer, h100, place_order):
    for _ in range(settings.MAX_UNPAID_ORDERS):
        place_order(customer, h100)

    response = api.post(ORDERS, body())

    assert response.status_code == 409
    assert "awaiting payment" in problem_of(response)["detail"]
    assert Order.objects.filter(customer=customer).count() == settings.MAX_UNPAID_ORDERS


def test_the_same_idempotency_key_twice_creates_one_order(api, customer, h100):
    key = {"HTTP_IDEMPOTENCY_KEY": "order-2026-12-01-a"}

    first = api.post(ORDERS, body(), headers=key)
    second = api.post(ORDERS, body(), headers=key)

    assert first.status_code == second.status_code == 201
    assert second["Idempotent-Replayed"] == "true"
    assert second.json() == first.json()
    assert Order.objects.filter(customer=customer).count() == 1
    other = api.post(ORDERS, body(lots=3), headers=key)
    assert other.status_code == 422
    assert_matches_schema(other, "post", "/api/v1/orders/")
    assert Order.objects.filter(customer=customer).count() == 1


def test_cancel_releases_the_lots(api, order, h100):
    held = lots_available(h100)

    response = api.post(f"{ORDERS}{order.pk}/cancel/")

    assert response.status_code == 200, response.content
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/cancel/")
    assert response.json()["status"] == OrderStatus.CANCELLED
    order.refresh_from_db()
    assert order.status == OrderStatus.CANCELLED
    assert lots_available(h100) == held + order.lots


def test_cancel_twice_is_a_409_and_changes_nothing(api, order):
    api.post(f"{ORDERS}{order.pk}/cancel/")
    changes = OrderStatusChange.objects.filter(order=order).count()

    response = api.post(f"{ORDERS}{order.pk}/cancel/")

    assert response.status_code == 409
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/cancel/")
    assert problem_of(response)["detail"] == "Only an order awaiting payment can be cancelled."
    assert OrderStatusChange.objects.filter(order=order).count() == changes


def test_cancel_of_another_customers_order_is_404_and_changes_nothing(
    client_for, other_customer, order
):
    response = client_for(other_customer).post(f"{ORDERS}{order.pk}/cancel/")

    assert response.status_code == 404
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/cancel/")
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT


def test_cancel_with_a_wrong_type_is_a_400(api, order):
    response = api.post(f"{ORDERS}{order.pk}/cancel/", {"money_confirmed": "yes"})

    assert response.status_code == 400
    assert field_errors(response) == {"money_confirmed": ["Send this field as true or false."]}
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT
