"""Reconciliation: check the ledger against itself and against the orders, and store the report.

Every check is one aggregate query (a bounded number of queries whatever the size of the
ledger), and each reads one consistent snapshot, so a posting that commits while the checks run
never shows up as a false discrepancy inside one check. Periods are whole UTC days, both ends
included.

A discrepancy is stored as ``{"check": <Check value>, "detail": <English summary>, "rows":
[{...}]}``: one discrepancy per offending transaction, account or order, its rows naming what
is involved. Amounts are strings (JSON has no decimal type). The console shows each check's
translated label beside the rows; ``detail`` is the plain record kept for logs and the admin.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db import models, transaction
from django.db.models import Count, F, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental.models import Order, OrderStatus, OrderStatusChange
from rental.money import usd

from ..models import (
    AMOUNT,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    ReconciliationRun,
    TransactionKind,
)

# A reconciliation covers at most this many days (a leap year), both ends included.
MAX_PERIOD_DAYS = 366

# An order in one of these statuses has been paid, whatever happened to it since.
PAID_STATUSES = frozenset(
    {OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE, OrderStatus.ENDED}
)

ZERO = Decimal("0.00")


class Check(models.TextChoices):
    """What each stored discrepancy is about (its "check" value)."""

    TRIAL_BALANCE = "trial_balance", _("The entries of the period do not sum to zero")
    UNBALANCED_TRANSACTION = (
        "unbalanced_transaction",
        _("Transactions whose entries do not sum to zero, or that have fewer than two entries"),
    )
    ACCOUNT_BALANCE = (
        "account_balance",
        _("Accounts whose cached balance differs from the sum of their entries, or is negative"),
    )
    ORDER_PAYMENT_COUNT = (
        "order_payment_count",
        _("Orders marked paid in the period without exactly one order payment transaction"),
    )
    PAYMENT_FOR_UNPAID_ORDER = (
        "payment_for_unpaid_order",
        _("Order payment transactions of the period whose order is not paid"),
    )


@dataclass(frozen=True, slots=True)
class Period:
    start: date
    end: date

    @property
    def starts_at(self) -> datetime:
        return datetime.combine(self.start, time.min, tzinfo=UTC)

    @property
    def ends_before(self) -> datetime:
        return datetime.combine(self.end + timedelta(days=1), time.min, tzinfo=UTC)

    def lookup(self, field: str) -> Q:
        return Q(**{f"{field}__gte": self.starts_at, f"{field}__lt": self.ends_before})


def period_check(*, period_start: date, period_end: date) -> Period:
    """Refuse a period that ends before it starts or is longer than MAX_PERIOD_DAYS."""
    if period_start > period_end:
        raise ValueError("a reconciliation period ends on or after its start")
    if (period_end - period_start).days + 1 > MAX_PERIOD_DAYS:
        raise ValueError(f"a reconciliation period covers at most {MAX_PERIOD_DAYS} days")
    return Period(start=period_start, end=period_end)


def reconciliation_run(
    *, period_start: date, period_end: date, triggered_by: User | None = None
) -> ReconciliationRun:
    """Run every check on the period (UTC days, both included); store and return the report.

    Takes no lock: the checks only read, and the report is a new row.
    """
    period = period_check(period_start=period_start, period_end=period_end)
    with transaction.atomic():
        trial_balance = _trial_balance(period)
        discrepancies = [
            *_trial_balance_discrepancies(period, trial_balance),
            *_unbalanced_transactions(period),
            *_account_balance_mismatches(),
            *_orders_without_one_payment(period),
            *_payments_for_unpaid_orders(period),
        ]
        return ReconciliationRun.objects.create(
            period_start=period.start,
            period_end=period.end,
            triggered_by=triggered_by,
            ok=not discrepancies,
            discrepancies=discrepancies,
            totals_by_kind=_totals_by_kind(period),
            trial_balance=trial_balance,
        )


def _amount(value: Decimal | None) -> str:
    return str(usd(value if value is not None else ZERO))


def _discrepancy(check: Check, detail: str, rows: list[dict]) -> dict:
    return {"check": check.value, "detail": detail, "rows": rows}


def _sum(expression, **extra) -> Coalesce:
    return Coalesce(
        Sum(expression, **extra), Value(ZERO), output_field=models.DecimalField(**AMOUNT)
    )


# 1. Trial balance


def _trial_balance(period: Period) -> Decimal:
    total = LedgerEntry.objects.filter(period.lookup("transaction__created_at")).aggregate(
        total=_sum("amount")
    )["total"]
    return usd(total)


def _trial_balance_discrepancies(period: Period, trial_balance: Decimal) -> list[dict]:
    if trial_balance == 0:
        return []
    return [
        _discrepancy(
            Check.TRIAL_BALANCE,
            f"The entries of the transactions created from {period.start} to {period.end} "
            f"sum to {trial_balance} USD instead of zero.",
            [{"sum": _amount(trial_balance)}],
        )
    ]


def _unbalanced_transactions(period: Period) -> list[dict]:
    rows = (
        LedgerTransaction.objects.filter(period.lookup("created_at"))
        .annotate(total=_sum("entries__amount"), entry_count=Count("entries"))
        .filter(~Q(total=0) | Q(entry_count__lt=2))
        .order_by("pk")
        .values_list("pk", "kind", "total", "entry_count")
    )
    return [
        _discrepancy(
            Check.UNBALANCED_TRANSACTION,
            f"Transaction {pk} ({kind}) has {count} entries summing to {usd(total)} USD.",
            [
                {
                    "transaction_id": pk,
                    "kind": kind,
                    "sum": _amount(total),
                    "entries": count,
                }
            ],
        )
        for pk, kind, total, count in rows
    ]


# 2. Cached balances


def _account_balance_mismatches() -> list[dict]:
    """Every account's cached balance against the sum of its entries (all time); a customer's
    balance is never negative. One grouped query over all accounts."""
    rows = (
        LedgerAccount.objects.annotate(computed=_sum("entries__amount"))
        .filter(
            ~Q(balance=F("computed"))
            | (Q(kind=LedgerAccountKind.CUSTOMER_BALANCE) & (Q(balance__lt=0) | Q(computed__lt=0)))
        )
        .order_by("pk")
        .values_list("pk", "kind", "customer__email", "asset", "network", "balance", "computed")
    )
    discrepancies = []
    for pk, kind, email, asset, network, cached, computed in rows:
        label = " · ".join(part for part in (kind, email or "", asset, network) if part)
        discrepancies.append(
            _discrepancy(
                Check.ACCOUNT_BALANCE,
                f"Account {pk} ({label}): cached balance {usd(cached)} USD, "
                f"sum of entries {usd(computed)} USD.",
                [
                    {
                        "account_id": pk,
                        "account_kind": kind,
                        "customer_email": email or "",
                        "cached": _amount(cached),
                        "computed": _amount(computed),
                    }
                ],
            )
        )
    return discrepancies


# 3. Orders and their payments


def _orders_without_one_payment(period: Period) -> list[dict]:
    marked_paid = OrderStatusChange.objects.filter(
        period.lookup("created_at"), to_status=OrderStatus.PAID
    ).values("order_id")
    rows = (
        Order.objects.filter(pk__in=Subquery(marked_paid), status__in=PAID_STATUSES)
        .annotate(
            payments=Count(
                "ledger_transactions",
                filter=Q(ledger_transactions__kind=TransactionKind.ORDER_PAYMENT),
            )
        )
        .exclude(payments=1)
        .order_by("pk")
        .values_list("pk", "status", "payments")
    )
    return [
        _discrepancy(
            Check.ORDER_PAYMENT_COUNT,
            f"Order {pk} ({status}) was marked paid in the period and has {payments} "
            "order payment transactions instead of one.",
            [
                {
                    "order_id": pk,
                    "order_reference": Order(pk=pk).reference,
                    "status": status,
                    "payment_transactions": payments,
                }
            ],
        )
        for pk, status, payments in rows
    ]


def _payments_for_unpaid_orders(period: Period) -> list[dict]:
    rows = (
        LedgerTransaction.objects.filter(
            period.lookup("created_at"), kind=TransactionKind.ORDER_PAYMENT
        )
        .exclude(order__status__in=PAID_STATUSES)
        .order_by("pk")
        .values_list("pk", "order_id", "order__status")
    )
    return [
        _discrepancy(
            Check.PAYMENT_FOR_UNPAID_ORDER,
            f"Order payment transaction {pk} points to order {order_id} whose status is "
            f"{status or 'unknown'}.",
            [
                {
                    "transaction_id": pk,
                    "order_id": order_id,
                    "order_reference": Order(pk=order_id).reference if order_id else "",
                    "status": status or "",
                }
            ],
        )
        for pk, order_id, status in rows
    ]


# 4. Totals per kind


def _totals_by_kind(period: Period) -> dict[str, dict]:
    """Per transaction kind: how many transactions, and the sum of their positive entries
    (the money moved). Every kind is listed, with zeros when it has no transaction."""
    rows = (
        LedgerTransaction.objects.filter(period.lookup("created_at"))
        .values("kind")
        .annotate(
            count=Count("pk", distinct=True),
            positive=_sum("entries__amount", filter=Q(entries__amount__gt=0)),
        )
        .order_by("kind")
    )
    totals = {kind: {"count": 0, "total": _amount(ZERO)} for kind in TransactionKind.values}
    for row in rows:
        totals[row["kind"]] = {"count": row["count"], "total": _amount(row["positive"])}
    return totals
