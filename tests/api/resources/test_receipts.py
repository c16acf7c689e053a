"""Receipts (list, JSON, the page's PDF) and an order's refund through the API: what the
receipt pages and the order page show, looked up through the owner."""

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from payments.ledger.services.refunds import order_end_early_with_refund
from payments.models import LedgerTransaction, Receipt, TransactionKind
from tests.api.contract import assert_matches_schema

from .conftest import problem_of

RECEIPTS = "/api/v1/receipts/"


@pytest.fixture
def paid(customer, credit, order):
    """The `order` fixture paid from the balance: its receipt is issued."""
    credit(customer, "1000.00")
    balance_pay_order(order_id=order.pk, customer=customer)
    return order


def _without_dates(pdf: bytes) -> bytes:
    return re.sub(rb"/CreationDate \([^)]*\)", b"", pdf)


def test_the_paid_order_carries_its_receipt_which_answers_in_json_and_pdf(api, customer, paid):
    receipt = Receipt.objects.get(customer=customer, kind=TransactionKind.ORDER_PAYMENT)

    order = api.get(f"/api/v1/orders/{paid.pk}/").json()

    assert order["receipt"] == {
        "number": receipt.number,
        "reference": receipt.reference,
        "url": f"{RECEIPTS}{receipt.number}/",
        "pdf_url": f"{RECEIPTS}{receipt.number}/pdf/",
    }
    assert order["refund"] is None
    detail = api.get(order["receipt"]["url"])
    assert detail.status_code == 200
    assert_matches_schema(detail, "get", "/api/v1/receipts/{number}/")
    data = detail.json()
    assert (data["kind"], data["amount_usd"], data["order_id"]) == (
        "order_payment",
        "893.76",
        paid.pk,
    )
    assert data["customer_name"] == "Grace Hopper" and data["method"] == "USD balance"
    assert data["title"] == f"Receipt {receipt.reference}"

    pdf = api.get(order["receipt"]["pdf_url"])
    assert pdf.status_code == 200
    assert pdf["Content-Type"] == "application/pdf"
    assert pdf["Content-Disposition"] == f'attachment; filename="receipt-{receipt.reference}.pdf"'
    browser = Client()
    browser.force_login(customer)
    page_pdf = browser.get(reverse("payments:receipt_pdf", args=[receipt.number]))
    assert _without_dates(pdf.content) == _without_dates(page_pdf.content)


def test_the_pdf_answers_a_client_that_accepts_only_pdf(api, paid):
    number = Receipt.objects.get().number

    pdf = api.get(f"{RECEIPTS}{number}/pdf/", headers={"HTTP_ACCEPT": "application/pdf"})
    missing = api.get(f"{RECEIPTS}{number + 1}/pdf/", headers={"HTTP_ACCEPT": "application/pdf"})

    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert missing.status_code == 404
    assert problem_of(missing)["detail"] == "No such receipt in your account."


def test_the_list_is_newest_first_and_filters_by_order(
    api, customer, paid, credit, catalogue, place_order
):
    other = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    credit(customer, "1000.00")
    balance_pay_order(order_id=other.pk, customer=customer)

    listed = api.get(RECEIPTS)
    only_other = api.get(f"{RECEIPTS}?order={other.pk}")

    assert listed.status_code == 200
    assert_matches_schema(listed, "get", "/api/v1/receipts/")
    receipts = Receipt.objects.filter(customer=customer).order_by("-number")
    numbers = list(receipts.values_list("number", flat=True))
    assert [row["number"] for row in listed.json()["results"]] == numbers
    [row] = only_other.json()["results"]
    assert row["order_id"] == other.pk and row["kind"] == "order_payment"


@pytest.mark.parametrize("value", ["٣", "abc", "-1", "1.5", ""])
def test_a_bad_order_filter_is_a_400(api, paid, value):
    response = api.get(f"{RECEIPTS}?order={value}")

    assert response.status_code == 400
    assert_matches_schema(response, "get", "/api/v1/receipts/")
    assert problem_of(response)["errors"][0]["field"] == "order"


def test_another_customers_receipt_is_404(client_for, other_customer, paid):
    number = Receipt.objects.get().number
    mallory = client_for(other_customer)

    answers = [
        mallory.get(f"{RECEIPTS}{number}/"),
        mallory.get(f"{RECEIPTS}{number}/pdf/"),
    ]

    assert [answer.status_code for answer in answers] == [404, 404]
    assert problem_of(answers[0])["detail"] == "No such receipt in your account."
    assert mallory.get(RECEIPTS).json()["results"] == []


# ------------------------------------------------------------------------ refunds


def test_an_order_not_ended_early_has_no_refund_and_says_the_rule(api, paid):
    response = api.get(f"/api/v1/orders/{paid.pk}/refund/")

    assert response.status_code == 404
    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/refund/")
    detail = problem_of(response)["detail"]
    assert detail.startswith("This order was not ended early: nothing was refunded.")
    assert "an operator ends it early" in detail


def test_an_order_ended_early_shows_its_refund_as_the_page_does(
    api, customer, active_order, operator, django_capture_on_commit_callbacks
):
    order = active_order()
    with django_capture_on_commit_callbacks(execute=True):
        outcome = order_end_early_with_refund(
            order_id=order.pk, actor=operator, reason="Power supply failed", host_failed=True
        )

    response = api.get(f"/api/v1/orders/{order.pk}/refund/")

    assert response.status_code == 200, response.content
    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/refund/")
    refund = response.json()
    credited = (
        LedgerTransaction.objects.get(order=order, kind=TransactionKind.REFUND)
        .entries.get(amount__gt=0)
        .amount
    )
    assert refund["hours"] == outcome.hours and Decimal(refund["amount_usd"]) == credited
    assert refund["reason"] == "Power supply failed" and refund["currency"] == "USD"
    assert "actor_email" not in refund  # who ended it is the operators' business
    receipt = Receipt.objects.get(customer=customer, kind=TransactionKind.REFUND)
    assert refund["receipt"]["number"] == receipt.number
    detail = api.get(f"/api/v1/orders/{order.pk}/")
    assert_matches_schema(detail, "get", "/api/v1/orders/{order_id}/")
    assert detail.json()["refund"] == refund
    assert detail.json()["can_extend"] is False
    # The order page says the same hours and amount.
    browser = Client()
    browser.force_login(customer)
    page = browser.get(reverse("rental:order_detail", args=[order.pk])).content.decode()
    assert f"{outcome.hours} hours refunded ({credited:,.2f} USD)" in re.sub(r"\s+", " ", page)


def test_another_customers_refund_is_404(client_for, other_customer, paid):
    response = client_for(other_customer).get(f"/api/v1/orders/{paid.pk}/refund/")

    assert response.status_code == 404
    assert problem_of(response)["detail"] == "No such order in your account."


def test_the_list_costs_the_same_queries_for_1_and_3_receipts(
    api, customer, paid, credit, catalogue, place_order
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries(rows: int) -> int:
        api.get(RECEIPTS)  # the token's last use is written once a minute: not counted below
        with CaptureQueriesContext(connection) as captured:
            response = api.get(RECEIPTS)
        assert len(response.json()["results"]) == rows
        return len(captured)

    one = queries(1)
    for _ in range(2):
        more = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
        credit(customer, "1000.00")
        balance_pay_order(order_id=more.pk, customer=customer)

    assert queries(3) == one
