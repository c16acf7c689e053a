"""The reconciliation page and the console's summary of the last run."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from payments.finance.services import reconciliation_run
from payments.ledger.services.posting import customer_account
from payments.models import LedgerAccount, ReconciliationRun
from rental.services import order_set_status

URL = reverse("payments:finance_reconciliation")
DASHBOARD = reverse("payments:finance_dashboard")


def today():
    return timezone.now().date()


def section(html: str, check: str) -> str:
    return re.search(rf'<article data-check="{check}">.*?</article>', html, re.S).group(0)


def test_the_form_proposes_the_last_thirty_days(finance_client):
    html = finance_client.get(URL).content.decode()
    start = (today() - timedelta(days=29)).isoformat()
    assert f'name="date_from" value="{start}"' in html
    assert f'name="date_to" value="{today().isoformat()}"' in html
    assert "No reconciliation has run yet." in html


def test_running_a_healthy_period_stores_and_shows_an_ok_run(
    finance_client, finance_user, customer, credit, catalogue, place_order
):
    credit(customer, "500.00")
    order = place_order(customer, catalogue["h100"])
    balance_pay_order(order_id=order.pk, customer=customer)
    period = {
        "date_from": (today() - timedelta(days=6)).isoformat(),
        "date_to": today().isoformat(),
    }

    response = finance_client.post(URL, period)

    run = ReconciliationRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{URL}?run={run.pk}"
    assert run.ok and run.triggered_by == finance_user
    assert (run.period_start, run.period_end) == (today() - timedelta(days=6), today())

    html = finance_client.get(response["Location"]).content.decode()
    assert "OK: no discrepancy" in html
    assert "None: every check passed." in html
    assert "Fiona Nance (finance@example.com)" in html
    payments = re.search(r'<tr data-kind="order_payment">.*?</tr>', html, re.S).group(0)
    assert '<td class="amount" data-field="count">1</td>' in payments
    assert f'data-field="total">{order.total_usd:.2f}</td>' in payments
    adjustments = re.search(r'<tr data-kind="adjustment">.*?</tr>', html, re.S).group(0)
    assert 'data-field="total">500.00</td>' in adjustments


def test_a_run_with_discrepancies_lists_every_row_involved(
    finance_client, customer, credit, catalogue, place_order
):
    credit(customer, "80.00")
    account = customer_account(customer)
    LedgerAccount.objects.filter(pk=account.pk).update(balance="95.00")
    unpaid = place_order(customer, catalogue["h200"])
    order_set_status(order_id=unpaid.pk, to_status="paid", actor=None, reason="test")
    period = {"date_from": today().isoformat(), "date_to": today().isoformat()}

    response = finance_client.post(URL, period, follow=True)

    html = response.content.decode()
    assert "2 discrepancies" in html
    balances = section(html, "account_balance")
    assert "Accounts whose cached balance differs from the sum of their entries" in balances
    assert "grace@example.com" in balances
    assert "95.00" in balances and "80.00" in balances
    orders = section(html, "order_payment_count")
    assert unpaid.reference in orders
    assert "Paid" in orders


BAD_PERIODS = [
    ({"date_from": "2026-03-10", "date_to": "2026-03-01"}, "date_to", "on or after the start"),
    ({"date_from": "2024-01-01", "date_to": "2025-01-01"}, "date_to", "at most 366 days"),
    ({"date_from": "2026-02-30", "date_to": "2026-03-01"}, "date_from", "Enter a date as"),
    ({"date_from": "last week", "date_to": "2026-03-01"}, "date_from", "Enter a date as"),
    ({"date_from": "2026-03-01"}, "date_to", "Enter a date."),
    ({}, "date_from", "Enter a date."),
]


@pytest.mark.parametrize(("data", "field", "message"), BAD_PERIODS)
def test_a_bad_period_answers_400_and_runs_nothing(finance_client, data, field, message):
    response = finance_client.post(URL, data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert field in response.context["form"].errors
    assert ReconciliationRun.objects.count() == 0


def test_a_leap_year_is_accepted(finance_client):
    response = finance_client.post(URL, {"date_from": "2024-01-01", "date_to": "2024-12-31"})
    assert response.status_code == 302
    assert ReconciliationRun.objects.get().period_end.isoformat() == "2024-12-31"


@pytest.mark.parametrize("run", ["999999", "abc", "99999999999999999999"])
def test_an_unknown_run_is_not_found(finance_client, run):
    assert finance_client.get(URL, {"run": run}).status_code == 404


def test_recent_runs_are_listed_newest_first(finance_client, finance_user, db):
    older = reconciliation_run(period_start=today(), period_end=today())
    newer = reconciliation_run(period_start=today(), period_end=today(), triggered_by=finance_user)
    html = finance_client.get(URL).content.decode()
    assert re.findall(r'<tr data-run="(\d+)">', html) == [str(newer.pk), str(older.pk)]
    assert "the daily schedule" in html


def test_the_console_shows_the_last_run_and_its_result(
    finance_client, finance_user, customer, credit
):
    credit(customer, "10.00")
    reconciliation_run(period_start=today(), period_end=today())
    LedgerAccount.objects.filter(pk=customer_account(customer).pk).update(balance="11.00")
    last = reconciliation_run(
        period_start=today() - timedelta(days=1), period_end=today(), triggered_by=finance_user
    )

    html = finance_client.get(DASHBOARD).content.decode()

    summary = re.search(r'<dl class="summary-list" data-run="(\d+)">.*?</dl>', html, re.S)
    assert summary.group(1) == str(last.pk)
    assert "1 discrepancy" in summary.group(0)
    period = f"{(today() - timedelta(days=1)).isoformat()} to {today().isoformat()}"
    assert period in summary.group(0)
    assert "finance@example.com" in summary.group(0)
    assert f'href="{URL}?run={last.pk}"' in html


def test_the_console_says_when_everything_reconciled(finance_client, db):
    reconciliation_run(period_start=today(), period_end=today())
    html = finance_client.get(DASHBOARD).content.decode()
    assert "OK: no discrepancy" in html
    assert "the daily schedule" in html


def test_the_console_links_to_every_page(finance_client):
    html = finance_client.get(DASHBOARD).content.decode()
    for name in ("balances", "journal", "unallocated", "adjustment", "reconciliation"):
        assert f'href="{reverse(f"payments:finance_{name}")}"' in html
    assert "No reconciliation has run yet." in html
