"""The journal: every ledger transaction with its entries, filtered, paged and exported."""

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from payments.models import LedgerTransaction

URL = reverse("payments:finance_journal")
CSV_URL = reverse("payments:finance_journal_csv")


@pytest.fixture
def ledger(customer, make_customer, credit, catalogue, place_order):
    """Grace: a 500.00 credit, then an order paid from it. Alan: a 70.00 credit."""
    alan = make_customer(email="alan@example.com", first_name="Alan", last_name="Turing")
    grace_credit = credit(customer, "500.00", reason="Wire from Grace")
    alan_credit = credit(alan, "70.00", reason="Wire from Alan")
    order = place_order(customer, catalogue["h100"])
    balance_pay_order(order_id=order.pk, customer=customer)
    payment = LedgerTransaction.objects.get(kind="order_payment")
    return {
        "alan": alan,
        "order": order,
        "grace_credit": grace_credit,
        "alan_credit": alan_credit,
        "payment": payment,
    }


def listed(response) -> set[int]:
    return {int(pk) for pk in re.findall(r'data-transaction="(\d+)"', response.content.decode())}


def test_every_transaction_is_listed_newest_first_with_its_details(finance_client, ledger):
    response = finance_client.get(URL)
    html = response.content.decode()
    order, payment = ledger["order"], ledger["payment"]

    order_of_rows = [int(pk) for pk in re.findall(r'data-transaction="(\d+)"', html)]
    assert order_of_rows == sorted(order_of_rows, reverse=True)
    assert set(order_of_rows) == {ledger["grace_credit"].pk, ledger["alan_credit"].pk, payment.pk}

    row = re.search(rf'<tr data-transaction="{payment.pk}">.*?</tr>', html, re.S).group(0)
    admin_url = reverse("admin:rental_order_change", args=[order.pk])
    assert f'<a href="{admin_url}">{order.reference}</a>' in row
    assert "Order payment" in row
    assert "grace@example.com" in row  # the acting user: the customer who paid
    assert "Customer balance · grace@example.com: <span" in row
    assert f"-{order.total_usd}" in row
    assert f"+{order.total_usd}" in row
    assert "Revenue" in row


def test_filter_by_kind(finance_client, ledger):
    assert listed(finance_client.get(URL, {"kind": "order_payment"})) == {ledger["payment"].pk}
    assert listed(finance_client.get(URL, {"kind": "adjustment"})) == {
        ledger["grace_credit"].pk,
        ledger["alan_credit"].pk,
    }
    assert listed(finance_client.get(URL, {"kind": "refund"})) == set()


@pytest.mark.parametrize("spelling", ["grace@example.com", "GRACE@Example.com"])
def test_filter_by_customer_email_exact_and_case_insensitive(finance_client, ledger, spelling):
    grace = {ledger["grace_credit"].pk, ledger["payment"].pk}
    assert listed(finance_client.get(URL, {"customer": spelling})) == grace
    # Exact: a part of the address matches nobody.
    assert listed(finance_client.get(URL, {"customer": "race@example.com"})) == set()


def test_filter_by_customer_id(finance_client, ledger):
    alan = ledger["alan"]
    assert listed(finance_client.get(URL, {"customer": str(alan.pk)})) == {ledger["alan_credit"].pk}


@pytest.mark.parametrize("spelling", ["{pk}", "GR-{pk:06d}", "gr-{pk}"])
def test_filter_by_order(finance_client, ledger, spelling):
    order = ledger["order"]
    response = finance_client.get(URL, {"order": spelling.format(pk=order.pk)})
    assert listed(response) == {ledger["payment"].pk}


def test_filter_by_dates_in_utc_both_included(finance_client, ledger):
    today = timezone.now().date()
    everything = {ledger["grace_credit"].pk, ledger["alan_credit"].pk, ledger["payment"].pk}
    day = today.isoformat()
    tomorrow = (today + timedelta(days=1)).isoformat()
    yesterday = (today - timedelta(days=1)).isoformat()
    assert listed(finance_client.get(URL, {"date_from": day, "date_to": day})) == everything
    assert listed(finance_client.get(URL, {"date_from": tomorrow})) == set()
    assert listed(finance_client.get(URL, {"date_to": yesterday})) == set()
    assert listed(finance_client.get(URL, {"date_from": yesterday})) == everything


def test_filters_combine(finance_client, ledger):
    response = finance_client.get(URL, {"customer": "grace@example.com", "kind": "adjustment"})
    assert listed(response) == {ledger["grace_credit"].pk}


BAD_FILTERS = [
    ({"date_from": "yesterday"}, "date_from", "Enter a date as YYYY-MM-DD"),
    ({"date_to": "2026-02-30"}, "date_to", "Enter a date as YYYY-MM-DD"),
    ({"date_to": "9999-12-31"}, "date_to", "Enter a date as YYYY-MM-DD"),
    ({"date_from": "2026-03-02", "date_to": "2026-03-01"}, "date_to", "on or after the start"),
    ({"kind": "bonus"}, "kind", "Choose a kind from the list."),
    ({"order": "abc"}, "order", "Enter the order&#x27;s number"),
    ({"order": "-3"}, "order", "Enter the order&#x27;s number"),
    ({"order": "99999999999999999999"}, "order", "Enter the order&#x27;s number"),
    ({"customer": "grace at example"}, "customer", "full email address or their numeric id"),
    ({"customer": "²"}, "customer", "full email address or their numeric id"),
    ({"order": "²"}, "order", "Enter the order&#x27;s number"),
    ({"order": "GR-٣"}, "order", "Enter the order&#x27;s number"),
]


@pytest.mark.parametrize(("params", "field", "message"), BAD_FILTERS)
def test_bad_filters_answer_400_with_the_field_message_and_no_rows(
    finance_client, ledger, params, field, message
):
    response = finance_client.get(URL, params)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert field in response.context["form"].errors
    assert listed(response) == set()


@pytest.mark.parametrize(("params", "field", "message"), BAD_FILTERS)
def test_the_csv_refuses_bad_filters_too(finance_client, ledger, params, field, message):
    response = finance_client.get(CSV_URL, params)
    assert response.status_code == 400
    assert message in response.content.decode()


def read_csv(response) -> list[list[str]]:
    assert response.status_code == 200
    assert response.streaming
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


def test_the_csv_has_a_header_and_one_line_per_entry(finance_client, finance_user, ledger):
    response = finance_client.get(CSV_URL)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="journal.csv"'
    header, *lines = read_csv(response)

    assert header == [
        "transaction_id",
        "created_at",
        "kind",
        "memo",
        "actor_email",
        "order_reference",
        "account_kind",
        "customer_email",
        "asset",
        "network",
        "amount_usd",
    ]
    assert len(lines) == 6  # three transactions of two entries
    order, payment = ledger["order"], ledger["payment"]
    total = f"{order.total_usd:.2f}"
    payment_lines = [line for line in lines if line[0] == str(payment.pk)]
    assert sorted((line[6], line[7], line[10]) for line in payment_lines) == [
        ("customer_balance", "grace@example.com", f"-{total}"),
        ("revenue", "", total),
    ]
    assert all(line[4] == "grace@example.com" for line in payment_lines)
    assert all(line[5] == order.reference for line in payment_lines)
    credit_lines = [line for line in lines if line[0] == str(ledger["grace_credit"].pk)]
    assert sorted((line[6], line[10]) for line in credit_lines) == [
        ("adjustments", "-500.00"),
        ("customer_balance", "500.00"),
    ]
    assert {line[3] for line in credit_lines} == {"Wire from Grace"}
    assert {line[4] for line in credit_lines} == {finance_user.email}
    # Every transaction's lines sum to zero, in the export as in the ledger.
    assert sum(Decimal(line[10]) for line in lines) == 0
    # Oldest transaction first.
    ids = [int(line[0]) for line in lines]
    assert ids == sorted(ids)


def test_the_csv_follows_the_filters(finance_client, ledger):
    _, *lines = read_csv(finance_client.get(CSV_URL, {"customer": "alan@example.com"}))
    assert {line[0] for line in lines} == {str(ledger["alan_credit"].pk)}
    assert len(lines) == 2


def test_the_csv_does_not_let_a_spreadsheet_run_a_memo(finance_client, customer, credit):
    credit(customer, "5.00", reason='=HYPERLINK("http://evil")')
    _, *lines = read_csv(finance_client.get(CSV_URL))
    assert {line[3] for line in lines} == {'\'=HYPERLINK("http://evil")'}


def test_the_journal_links_to_the_csv_with_the_same_filters(finance_client, ledger):
    html = finance_client.get(URL, {"kind": "adjustment", "page": "1"}).content.decode()
    assert f'href="{CSV_URL}?kind=adjustment"' in html


def test_the_journal_pages_by_fifty_and_keeps_the_filters(finance_client, customer, credit):
    posted = [credit(customer, "1.00") for _ in range(51)]
    first = finance_client.get(URL, {"kind": "adjustment"})
    second = finance_client.get(URL, {"kind": "adjustment", "page": "2"})
    assert listed(first) == {txn.pk for txn in posted[1:]}
    assert listed(second) == {posted[0].pk}
    assert "?kind=adjustment&amp;page=2" in first.content.decode()
    assert "Page 2 of 2" in second.content.decode()
