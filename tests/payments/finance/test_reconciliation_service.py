"""payments.finance.services.reconciliation_run, and the nightly task that calls it."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from payments.finance.services import reconciliation_run
from payments.ledger.services.posting import customer_account, ledger_post, system_account
from payments.models import (
    LedgerAccount,
    LedgerEntry,
    LedgerTransaction,
    ReconciliationRun,
    TransactionKind,
)
from payments.tasks import reconcile_daily
from rental.services import order_set_status


def today():
    return timezone.now().date()


def run_today(**kwargs) -> ReconciliationRun:
    return reconciliation_run(period_start=today(), period_end=today(), **kwargs)


def of_check(run, check) -> list[dict]:
    return [row for d in run.discrepancies if d["check"] == check for row in d["rows"]]


@pytest.fixture
def healthy_ledger(customer, make_customer, credit, catalogue, place_order):
    alan = make_customer(email="alan@example.com")
    credit(customer, "500.00")
    credit(alan, "70.00")
    order = place_order(customer, catalogue["h100"])
    balance_pay_order(order_id=order.pk, customer=customer)
    return order


def test_a_healthy_ledger_reconciles_with_no_discrepancy(healthy_ledger, finance_user):
    order = healthy_ledger

    run = run_today(triggered_by=finance_user)

    run.refresh_from_db()
    assert run.ok is True
    assert run.discrepancies == []
    assert run.trial_balance == Decimal("0.00")
    assert run.triggered_by == finance_user
    assert (run.period_start, run.period_end) == (today(), today())
    assert run.totals_by_kind == {
        "crypto_receipt": {"count": 0, "total": "0.00"},
        "top_up": {"count": 0, "total": "0.00"},
        "order_payment": {"count": 1, "total": f"{order.total_usd:.2f}"},
        "overpayment_credit": {"count": 0, "total": "0.00"},
        "payment_credit": {"count": 0, "total": "0.00"},
        "adjustment": {"count": 2, "total": "570.00"},
        "refund": {"count": 0, "total": "0.00"},
        "reversal": {"count": 0, "total": "0.00"},
        "extension_payment": {"count": 0, "total": "0.00"},
        "withdrawal_request": {"count": 0, "total": "0.00"},
        "withdrawal_return": {"count": 0, "total": "0.00"},
        "withdrawal_paid": {"count": 0, "total": "0.00"},
    }


def test_a_debit_adjustment_counts_its_positive_side(customer, credit, finance_user):
    from payments.ledger.services.balance import balance_adjust

    credit(customer, "100.00")
    balance_adjust(
        customer=customer,
        amount=Decimal("30.00"),
        credit=False,
        reason="Duplicate",
        actor=finance_user,
        request_key="k-1",
    )
    run = run_today()
    assert run.ok
    assert run.totals_by_kind["adjustment"] == {"count": 2, "total": "130.00"}


def test_the_period_bounds_the_totals_and_the_order_checks(healthy_ledger):
    yesterday = today() - timedelta(days=1)
    now = timezone.now()
    order_set_status(
        order_id=healthy_ledger.pk,
        to_status="active",
        actor=None,
        reason="t",
        starts_at=now,
        ends_at=now + timedelta(days=7),
    )

    run = reconciliation_run(period_start=yesterday, period_end=yesterday)

    assert run.ok
    assert all(total["count"] == 0 for total in run.totals_by_kind.values())


def test_a_corrupted_cached_balance_is_listed(healthy_ledger, customer):
    account = customer_account(customer)
    computed = account.balance
    LedgerAccount.objects.filter(pk=account.pk).update(balance=computed + Decimal("10.00"))

    run = run_today()

    assert run.ok is False
    assert of_check(run, "account_balance") == [
        {
            "account_id": account.pk,
            "account_kind": "customer_balance",
            "customer_email": "grace@example.com",
            "cached": f"{computed + Decimal('10.00'):.2f}",
            "computed": f"{computed:.2f}",
        }
    ]
    assert [d["check"] for d in run.discrepancies] == ["account_balance"]
    assert "grace@example.com" in run.discrepancies[0]["detail"]


def test_a_system_account_cache_is_checked_too(healthy_ledger):
    revenue = system_account("revenue")
    LedgerAccount.objects.filter(pk=revenue.pk).update(balance=Decimal("1.00"))
    rows = of_check(run_today(), "account_balance")
    assert [(row["account_id"], row["account_kind"], row["cached"]) for row in rows] == [
        (revenue.pk, "revenue", "1.00")
    ]


def test_an_order_marked_paid_without_a_payment_is_listed(customer, catalogue, place_order):
    order = place_order(customer, catalogue["h200"])
    order_set_status(order_id=order.pk, to_status="paid", actor=None, reason="test")

    run = run_today()

    assert run.ok is False
    assert of_check(run, "order_payment_count") == [
        {
            "order_id": order.pk,
            "order_reference": order.reference,
            "status": "paid",
            "payment_transactions": 0,
        }
    ]


def test_an_order_payment_for_an_unpaid_order_is_listed(customer, credit, catalogue, place_order):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"])
    posted, _ = ledger_post(
        kind=TransactionKind.ORDER_PAYMENT,
        lines=[
            (customer_account(customer), -order.total_usd),
            (system_account("revenue"), order.total_usd),
        ],
        memo="paid, but the order was never marked paid",
        idempotency_key="test-unmarked",
        order=order,
    )

    run = run_today()

    assert of_check(run, "payment_for_unpaid_order") == [
        {
            "transaction_id": posted.pk,
            "order_id": order.pk,
            "order_reference": order.reference,
            "status": "awaiting_payment",
        }
    ]
    assert [d["check"] for d in run.discrepancies] == ["payment_for_unpaid_order"]


@pytest.fixture
def balance_triggers_off():
    """Switch off the database's commit-time balance check inside this test's transaction
    (which rolls back, and the switch with it): the only way to plant an unbalanced
    transaction for the reconciliation to find. A table with pending deferred checks cannot
    be altered, so those checks run first."""
    tables = {
        "payments_ledgerentry": "ledgerentry_balanced",
        "payments_ledgertransaction": "ledgertransaction_balanced",
    }

    def switch(action: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for table, trigger in tables.items():
                cursor.execute(f"ALTER TABLE {table} {action} TRIGGER {trigger}")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")

    switch("DISABLE")
    yield
    switch("ENABLE")


def test_an_unbalanced_transaction_is_listed(customer, credit, balance_triggers_off):
    credit(customer, "20.00")
    broken = LedgerTransaction.objects.create(
        kind=TransactionKind.ADJUSTMENT, memo="one-legged", idempotency_key="broken"
    )
    LedgerEntry.objects.create(
        transaction=broken, account=system_account("adjustments"), amount=Decimal("-5.00")
    )

    run = run_today()

    assert run.ok is False
    assert run.trial_balance == Decimal("-5.00")
    assert of_check(run, "trial_balance") == [{"sum": "-5.00"}]
    assert of_check(run, "unbalanced_transaction") == [
        {"transaction_id": broken.pk, "kind": "adjustment", "sum": "-5.00", "entries": 1}
    ]


def test_discrepancies_are_stored_as_plain_json(customer, catalogue, place_order):
    order = place_order(customer, catalogue["h200"])
    order_set_status(order_id=order.pk, to_status="paid", actor=None, reason="test")
    run = run_today()
    stored = ReconciliationRun.objects.get(pk=run.pk)
    assert json.loads(json.dumps(stored.discrepancies)) == run.discrepancies
    assert set(stored.discrepancies[0]) == {"check", "detail", "rows"}


@pytest.mark.parametrize(
    ("start", "end"),
    [(1, 0), (0, 366)],  # ends before it starts; 367 days
    ids=["reversed", "too long"],
)
def test_a_bad_period_is_refused(db, start, end):
    base = today() - timedelta(days=400)
    with pytest.raises(ValueError):
        reconciliation_run(
            period_start=base + timedelta(days=start), period_end=base + timedelta(days=end)
        )
    assert ReconciliationRun.objects.count() == 0


def test_a_year_of_366_days_is_accepted(db):
    run = reconciliation_run(period_start=today() - timedelta(days=365), period_end=today())
    assert run.ok


def queries_of_a_run() -> int:
    with CaptureQueriesContext(connection) as queries:
        run_today()
    return len(queries)


def test_the_number_of_queries_does_not_grow_with_the_ledger(
    make_customer, credit, catalogue, place_order
):
    first = make_customer()
    credit(first, "500.00")
    order = place_order(first, catalogue["h100"])
    balance_pay_order(order_id=order.pk, customer=first)
    with_one = queries_of_a_run()

    for _ in range(30):
        customer = make_customer()
        credit(customer, "500.00")
    with_thirty_one = queries_of_a_run()

    assert with_one == with_thirty_one


def test_the_daily_task_stores_a_run_for_yesterday(healthy_ledger):
    reconcile_daily.delay()

    run = ReconciliationRun.objects.get()
    yesterday = today() - timedelta(days=1)
    assert (run.period_start, run.period_end) == (yesterday, yesterday)
    assert run.triggered_by is None
    assert run.ok
    # Today's activity is not yesterday's.
    assert run.totals_by_kind["adjustment"]["count"] == 0


def test_the_daily_task_is_scheduled_at_half_past_two_utc():
    from config.celery_app import app

    schedule = app.conf.beat_schedule["reconcile-daily"]
    assert schedule["task"] == "payments.tasks.reconcile_daily"
    assert schedule["schedule"] == crontab(hour=2, minute=30)
    assert settings.CELERY_TIMEZONE == "UTC"
    assert reconcile_daily.name == "payments.tasks.reconcile_daily"
