"""The statement by date (created_after / created_before: a date, 00:00 UTC, or a date and time
with its offset; the lists' filters of api.resources.filters) and as the balance page's CSV
download, byte for byte."""

import csv
import io
from datetime import UTC, datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from tests.api.contract import assert_matches_schema

from .conftest import field_errors, problem_of

STATEMENT = "/api/v1/balance/statement/"
CSV = "/api/v1/balance/statement.csv"
TIMES = [
    datetime(2026, 1, 10, 23, 59, 59, tzinfo=UTC),
    datetime(2026, 1, 11, 0, 0, 0, tzinfo=UTC),
    datetime(2026, 1, 12, 12, 0, 0, tzinfo=UTC),
]


@pytest.fixture
def dated_statement(customer, other_customer, credit, monkeypatch):
    """Credits of 10, 20 and 30 USD at TIMES (the ledger stamps its clock's time), and one of
    another customer on the middle day."""

    def credit_at(user, amount, when):
        with monkeypatch.context() as clock:
            clock.setattr(timezone, "now", lambda: when)
            credit(user, amount)

    for amount, when in zip(("10.00", "20.00", "30.00"), TIMES, strict=True):
        credit_at(customer, amount, when)
    credit_at(other_customer, "999.00", TIMES[1])


def _amounts(response):
    return [(row["amount_usd"], row["running_balance_usd"]) for row in response.json()["results"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [("30.00", "60.00"), ("20.00", "30.00"), ("10.00", "10.00")]),
        ("created_after=2026-01-11", [("30.00", "60.00"), ("20.00", "30.00")]),
        ("created_before=2026-01-11", [("10.00", "10.00")]),
        ("created_after=2026-01-11&created_before=2026-01-12", [("20.00", "30.00")]),
        ("created_after=2026-01-13", []),
        ("created_before=2026-01-10", []),
        ("created_before=2026-01-10T23:59:59Z", []),
        (
            "created_after=2026-01-10T23:59:59Z&created_before=2026-01-11T00:00:01%2B00:00",
            [("20.00", "30.00"), ("10.00", "10.00")],
        ),
        ("created_after=2026-01-11T02:00:00%2B02:00", [("30.00", "60.00"), ("20.00", "30.00")]),
    ],
)
def test_date_filters_keep_the_running_balances_of_the_whole_statement(
    api, dated_statement, query, expected
):
    response = api.get(f"{STATEMENT}?{query}")

    assert response.status_code == 200
    assert_matches_schema(response, "get", STATEMENT)
    assert _amounts(response) == expected


def test_a_date_range_pages_with_its_cursor(api, dated_statement):
    first = api.get(f"{STATEMENT}?created_after=2026-01-10&page_size=1")
    following = api.get(first.json()["next"])

    assert "created_after=2026-01-10" in first.json()["next"]
    assert _amounts(first) + _amounts(following) == [("30.00", "60.00"), ("20.00", "30.00")]
    assert _amounts(api.get(following.json()["next"])) == [("10.00", "10.00")]
    assert api.get(following.json()["next"]).json()["next"] is None


GIVE = "as YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SS with its offset (Z or +HH:MM)."
ORDERED = "created_before must be later than created_after."


@pytest.mark.parametrize("path", [STATEMENT, CSV])
@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("created_after=2026-1-11", "created_after", GIVE),
        ("created_after=٢٠٢٦-٠١-١١", "created_after", GIVE),
        ("created_after=２０２６-01-11", "created_after", GIVE),
        ("created_before=2026-02-30", "created_before", GIVE),
        ("created_before=2026-01-11T00:00:00", "created_before", GIVE),  # no offset
        ("created_before=2026-01-11T25:00:00Z", "created_before", GIVE),
        ("created_before=yesterday", "created_before", GIVE),
        ("created_after=", "created_after", GIVE),
        ("created_after=2026-01-12&created_before=2026-01-12", "created_before", ORDERED),
        ("created_after=2026-01-12&created_before=2026-01-11", "created_before", ORDERED),
    ],
)
def test_bad_dates_are_a_400_problem(api, dated_statement, path, query, field, message):
    response = api.get(f"{path}?{query}")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert_matches_schema(response, "get", path)
    assert message in field_errors(response)[field][0]


def _csv(response) -> bytes:
    return b"".join(response.streaming_content)


def test_the_csv_is_the_pages_download_byte_for_byte(
    api, customer, customer_client, credit, catalogue, place_order, dated_statement
):
    credit(customer, "500.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    balance_pay_order(order_id=order.pk, customer=customer)
    credit(customer, "5.00", reason="=HYPERLINK(evil)")  # a formula is neutralised alike

    response = api.get(CSV)
    page = customer_client.get(reverse("payments:statement_csv"))

    assert response.status_code == 200
    assert response["Content-Type"] == page["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == page["Content-Disposition"]
    assert "no-store" in response["Cache-Control"]
    body = _csv(response)
    assert body == _csv(page)
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert rows[0] == ["date", "kind", "memo", "order", "amount_usd", "running_balance_usd"]
    assert [row[3:] for row in rows[1:]] == [
        ["", "10.00", "10.00"],
        ["", "20.00", "30.00"],
        ["", "30.00", "60.00"],
        ["", "500.00", "560.00"],
        [order.reference, "-201.60", "358.40"],
        ["", "5.00", "363.40"],
    ]
    assert rows[6][2] == "'=HYPERLINK(evil)"
    assert "999.00" not in body.decode()


def test_the_csv_by_date_is_the_pages_lines_of_that_range(api, customer_client, dated_statement):
    page_lines = _csv(customer_client.get(reverse("payments:statement_csv"))).splitlines()

    ranged = _csv(api.get(f"{CSV}?created_after=2026-01-11&created_before=2026-01-12"))

    assert ranged.splitlines() == [page_lines[0], page_lines[2]]
    assert ranged.splitlines()[1].endswith(b",20.00,30.00")


@pytest.mark.parametrize("accept", ["text/csv", "*/*", "text/*"])
def test_the_csv_answers_what_accepts_csv(api, dated_statement, accept):
    response = api.get(CSV, headers={"HTTP_ACCEPT": accept})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"


def test_the_csv_refuses_another_media_type_with_a_problem(api, dated_statement):
    response = api.get(CSV, headers={"HTTP_ACCEPT": "application/json"})

    assert response.status_code == 406
    assert_matches_schema(response, "get", CSV)


def test_the_csv_needs_a_token_with_read(client_for, anonymous, customer, dated_statement):
    unauthenticated = anonymous.get(CSV)
    assert unauthenticated.status_code == 401
    assert problem_of(unauthenticated)["status"] == 401
    refused = client_for(customer, ["pay"]).get(CSV)
    assert refused.status_code == 403
    assert "“read” scope" in problem_of(refused)["detail"]


def test_another_customers_csv_has_only_their_lines(client_for, other_customer, dated_statement):
    body = _csv(client_for(other_customer).get(CSV)).decode()
    assert body.splitlines()[1].endswith(",999.00,999.00")
    assert len(body.splitlines()) == 2
