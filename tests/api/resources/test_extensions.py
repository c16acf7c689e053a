"""Extending a rental through the API: ask, list, follow, pay from the balance or in a
stablecoin, cancel. The rules are the extend page's (rental's extension_create) and the pay
page's (payments' extension services): the API and the pages act on the same rows."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from payments.ledger.services.posting import customer_account
from payments.models import CryptoPayment, LedgerTransaction, PaymentPurpose, TransactionKind
from rental.models import ExtensionStatus, Order, OrderExtension
from tests.api.contract import assert_matches_schema

from .conftest import field_errors, problem_of

ORDER_EXTENSIONS = "/api/v1/orders/{order_id}/extensions/"
EXTENSION = "/api/v1/extensions/{extension_id}/"
# H100: 2.80 USD per card-hour on a 3-day lot, 72 hours: 201.60 per lot, 2 lots.
THREE_DAYS_TOTAL = "403.20"


def extensions_of(order) -> list[tuple]:
    return list(
        OrderExtension.objects.filter(order=order)
        .order_by("pk")
        .values_list("duration_days", "status", "total_usd")
    )


def ask(api, order, duration=3, **kwargs):
    path = ORDER_EXTENSIONS.format(order_id=order.pk)
    return api.post(path, {"duration_days": duration}, **kwargs)


def test_extend_then_pay_from_the_balance_moves_the_end(
    api, customer, active_order, django_capture_on_commit_callbacks
):
    order = active_order()
    old_end = order.ends_at
    balance_before = customer_account(customer).balance

    created = ask(api, order)

    assert created.status_code == 201, created.content
    assert_matches_schema(created, "post", "/api/v1/orders/{order_id}/extensions/")
    data = created.json()
    extension = OrderExtension.objects.get(order=order)
    assert created["Location"] == EXTENSION.format(extension_id=extension.pk)
    assert data["id"] == extension.pk and data["reference"] == extension.reference
    assert data["status"] == "awaiting_payment" and data["duration_days"] == 3
    assert (data["lots"], data["lot_price_usd"], data["total_usd"]) == (2, "201.60", "403.20")
    assert data["payable"] is True and data["can_cancel"] is True
    assert data["balance_covers"] is True and data["shortfall_usd"] == "0.00"
    assert data["receipt"] is None and data["period_ends_at"] is None

    listed = api.get(ORDER_EXTENSIONS.format(order_id=order.pk))
    assert listed.status_code == 200
    assert_matches_schema(listed, "get", "/api/v1/orders/{order_id}/extensions/")
    assert [row["id"] for row in listed.json()["results"]] == [extension.pk]

    with django_capture_on_commit_callbacks(execute=True):
        paid = api.post(f"/api/v1/extensions/{extension.pk}/pay/balance/")

    assert paid.status_code == 200, paid.content
    assert_matches_schema(paid, "post", "/api/v1/extensions/{extension_id}/pay/balance/")
    order.refresh_from_db()
    assert order.ends_at == old_end + timedelta(days=3)
    body = paid.json()
    assert body["status"] == "paid" and body["payable"] is False and body["can_cancel"] is False
    assert body["period_ends_at"] == order.ends_at.isoformat().replace("+00:00", "Z")
    assert customer_account(customer).balance == balance_before - Decimal(THREE_DAYS_TOTAL)
    # Its receipt is in the answer, and answers in JSON and as the page's PDF.
    receipt = body["receipt"]
    assert receipt["reference"] == f"R-{receipt['number']:06d}"
    detail = api.get(receipt["url"])
    assert detail.status_code == 200 and detail.json()["extension_id"] == extension.pk
    assert detail.json()["amount_usd"] == THREE_DAYS_TOTAL
    assert api.get(receipt["pdf_url"])["Content-Type"] == "application/pdf"
    # Paying again answers the paid extension and charges nothing more.
    again = api.post(f"/api/v1/extensions/{extension.pk}/pay/balance/")
    assert again.status_code == 200 and again.json()["status"] == "paid"
    assert LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT).count() == 1
    order.refresh_from_db()
    assert order.ends_at == old_end + timedelta(days=3)


def test_the_order_says_whether_it_can_be_extended_and_for_how_much(api, active_order, order):
    running = active_order()

    detail = api.get(f"/api/v1/orders/{running.pk}/")

    assert_matches_schema(detail, "get", "/api/v1/orders/{order_id}/")
    assert detail.json()["can_extend"] is True
    offers = {offer["duration_days"]: offer for offer in detail.json()["extension_offers"]}
    assert sorted(offers) == [3, 7, 30]
    assert offers[3]["total_usd"] == THREE_DAYS_TOTAL and offers[3]["lot_price_usd"] == "201.60"
    new_end = running.ends_at + timedelta(days=3)
    assert offers[3]["new_ends_at"] == new_end.isoformat().replace("+00:00", "Z")
    # What the offer says is what asking for it freezes.
    assert ask(api, running).json()["total_usd"] == offers[3]["total_usd"]
    waiting = api.get(f"/api/v1/orders/{order.pk}/").json()
    assert waiting["can_extend"] is False and waiting["extension_offers"] == []


def test_asking_twice_for_the_same_duration_answers_the_one_waiting(api, active_order):
    order = active_order()
    first = ask(api, order).json()

    second = ask(api, order)

    assert second.status_code == 201 and second.json()["id"] == first["id"]
    assert extensions_of(order) == [(3, ExtensionStatus.AWAITING_PAYMENT, Decimal("403.20"))]


def test_another_duration_while_one_waits_is_a_409_naming_it(api, active_order):
    order = active_order()
    first = ask(api, order).json()

    response = ask(api, order, 7)

    assert response.status_code == 409
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/extensions/")
    detail = problem_of(response)["detail"]
    assert first["reference"] in detail and "pay or cancel it first" in detail
    assert len(extensions_of(order)) == 1


def test_an_order_that_is_not_running_cannot_be_extended(api, order):
    response = ask(api, order)

    assert response.status_code == 409
    assert problem_of(response)["detail"] == (
        "Only an active rental can be extended, before its end."
    )
    assert not OrderExtension.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"duration_days": 5},
        {"duration_days": "٣"},
        {"duration_days": "3 "},
        {"duration_days": True},
        {"duration_days": [3]},
        {"duration_days": 3.0},
        {},
        {"duration_days": 3, "total_usd": "1.00"},
    ],
)
def test_bad_input_is_a_400_and_creates_nothing(api, active_order, body):
    order = active_order()

    response = api.post(ORDER_EXTENSIONS.format(order_id=order.pk), body)

    assert response.status_code == 400, response.content
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/extensions/")
    errors = field_errors(response)
    assert set(errors) <= {"duration_days", "total_usd"} and errors
    assert not OrderExtension.objects.exists()


def test_the_same_idempotency_key_replays_the_first_answer(api, active_order):
    order = active_order()
    headers = {"HTTP_IDEMPOTENCY_KEY": "extend-1"}

    first = ask(api, order, headers=headers)
    replay = ask(api, order, headers=headers)
    other_body = ask(api, order, 7, headers=headers)

    assert first.status_code == replay.status_code == 201
    assert replay["Idempotent-Replayed"] == "true" and replay.json() == first.json()
    assert other_body.status_code == 422
    assert len(extensions_of(order)) == 1


def test_another_customers_order_and_extension_are_404_and_change_nothing(
    api, client_for, other_customer, active_order, local_network
):
    order = active_order()
    extension_id = ask(api, order).json()["id"]
    mallory = client_for(other_customer)
    before = extensions_of(order)

    answers = [
        mallory.get(ORDER_EXTENSIONS.format(order_id=order.pk)),
        mallory.post(ORDER_EXTENSIONS.format(order_id=order.pk), {"duration_days": 3}),
        mallory.get(EXTENSION.format(extension_id=extension_id)),
        mallory.post(f"/api/v1/extensions/{extension_id}/pay/balance/"),
        mallory.post(
            f"/api/v1/extensions/{extension_id}/payments/", {"network": "local", "asset": "tUSDC"}
        ),
        mallory.post(f"/api/v1/extensions/{extension_id}/cancel/"),
    ]

    assert [answer.status_code for answer in answers] == [404] * 6
    assert problem_of(answers[0])["detail"] == "No such order in your account."
    assert problem_of(answers[2])["detail"] == "No such extension in your account."
    assert extensions_of(order) == before
    assert not CryptoPayment.objects.exists()
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT).exists()


@pytest.mark.parametrize("extension_id", ["0", "-1", "99999999999999999999", "%D9%A3"])
def test_tampered_extension_ids_are_404(api, extension_id):
    response = api.get(f"/api/v1/extensions/{extension_id}/")

    assert response.status_code == 404
    assert problem_of(response)["status"] == 404


def test_cancel_then_cancel_again_is_a_409(api, active_order):
    order = active_order()
    extension_id = ask(api, order).json()["id"]

    cancelled = api.post(f"/api/v1/extensions/{extension_id}/cancel/")
    again = api.post(f"/api/v1/extensions/{extension_id}/cancel/")
    paying = api.post(f"/api/v1/extensions/{extension_id}/pay/balance/")

    assert cancelled.status_code == 200, cancelled.content
    assert_matches_schema(cancelled, "post", "/api/v1/extensions/{extension_id}/cancel/")
    assert cancelled.json()["status"] == "cancelled"
    assert again.status_code == 409
    assert problem_of(again)["detail"] == "This extension is no longer awaiting payment."
    assert paying.status_code == 409
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT).exists()


def test_a_balance_short_of_the_extension_is_a_409_and_charges_nothing(api, customer, active_order):
    # 900.00 in, 893.76 for the order: 6.24 USD left.
    order = active_order(balance="900.00")
    extension_id = ask(api, order).json()["id"]

    response = api.post(f"/api/v1/extensions/{extension_id}/pay/balance/")

    assert response.status_code == 409
    assert problem_of(response)["detail"].endswith("396.96 USD are missing.")
    assert customer_account(customer).balance == Decimal("6.24")
    assert OrderExtension.objects.get(pk=extension_id).status == ExtensionStatus.AWAITING_PAYMENT
    detail = api.get(EXTENSION.format(extension_id=extension_id)).json()
    assert detail["balance_covers"] is False and detail["shortfall_usd"] == "396.96"


@pytest.mark.usefixtures("local_network")
def test_a_stablecoin_payment_for_the_extension(api, active_order):
    order = active_order()
    extension_id = ask(api, order).json()["id"]

    response = api.post(
        f"/api/v1/extensions/{extension_id}/payments/", {"network": "local", "asset": "tUSDC"}
    )

    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", "/api/v1/extensions/{extension_id}/payments/")
    payment = CryptoPayment.objects.get(extension_id=extension_id)
    assert payment.purpose == PaymentPurpose.EXTENSION
    assert response.json()["amount_due_usd"] == THREE_DAYS_TOTAL
    assert response["Location"] == f"/api/v1/payments/{payment.pk}/"
    detail = api.get(EXTENSION.format(extension_id=extension_id)).json()
    assert detail["payment_id"] == payment.pk
    # Listed with the order's payments, and bad input opens nothing more.
    listed = api.get(f"/api/v1/orders/{order.pk}/payments/").json()["results"]
    assert [row["id"] for row in listed] == [payment.pk]
    bad = api.post(f"/api/v1/extensions/{extension_id}/payments/", {"network": "local", "asset": 5})
    assert bad.status_code == 400 and CryptoPayment.objects.count() == 1


def test_the_extend_page_and_the_api_act_on_the_same_extension(api, customer, active_order):
    order = active_order()
    period = order.period
    browser = Client()
    browser.force_login(customer)

    page = browser.post(reverse("rental:order_extend", args=[order.pk]), {"duration_days": "3"})
    assert page.status_code == 302
    [extension] = OrderExtension.objects.filter(order=order)

    # The API finds the page's extension, asking for the same duration gives it back.
    assert ask(api, order).json()["id"] == extension.pk
    listed = api.get(ORDER_EXTENSIONS.format(order_id=order.pk)).json()["results"]
    assert [(row["id"], row["total_usd"]) for row in listed] == [(extension.pk, "403.20")]
    # Paid by the API, the pay page shows it paid; paying on the page charges nothing more.
    assert api.post(f"/api/v1/extensions/{extension.pk}/pay/balance/").status_code == 200
    browser.post(reverse("payments:extension_pay_balance", args=[extension.pk]))
    assert LedgerTransaction.objects.filter(kind=TransactionKind.EXTENSION_PAYMENT).count() == 1
    page = browser.get(reverse("payments:extension_pay", args=[extension.pk]))
    assert page.status_code == 200
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.PAID
    assert Order.objects.get(pk=order.pk).period == period + 1


def test_the_list_costs_the_same_queries_for_1_and_3_extensions(api, active_order):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    order = active_order()
    path = ORDER_EXTENSIONS.format(order_id=order.pk)

    def queries(rows: int) -> int:
        api.get(path)  # the token's last use is written once a minute: not counted below
        with CaptureQueriesContext(connection) as captured:
            response = api.get(path)
        assert len(response.json()["results"]) == rows
        return len(captured)

    first = ask(api, order).json()["id"]
    api.post(f"/api/v1/extensions/{first}/pay/balance/")  # paid: it has a receipt
    one = queries(1)
    second = ask(api, order).json()["id"]
    api.post(f"/api/v1/extensions/{second}/cancel/")
    ask(api, order, 7)

    assert queries(3) == one
    receipts = [row["receipt"] for row in api.get(path).json()["results"]]
    assert [receipt is not None for receipt in receipts] == [False, False, True]
