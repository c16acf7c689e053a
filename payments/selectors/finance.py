"""Reads for the finance console: balances, journal, reconciliation reports.

Every read runs a fixed number of queries whatever the number of rows (pages use
select_related / prefetch_related; nothing is loaded per row).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, Sum
from django.utils.translation import gettext_lazy as _

from rental.models import OrderStatus
from rental.money import usd

from ..models import (
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    ReconciliationRun,
    TransactionKind,
)
from ..services.reconciliation import Check

# Balances


def customer_balances(*, email_contains: str = "") -> QuerySet[LedgerAccount]:
    """Every customer's balance account with its customer, ordered by email."""
    accounts = LedgerAccount.objects.filter(kind=LedgerAccountKind.CUSTOMER_BALANCE)
    if email_contains:
        accounts = accounts.filter(customer__email__icontains=email_contains)
    return accounts.select_related("customer").order_by("customer__email", "pk")


def customer_balances_total(*, email_contains: str = "") -> Decimal:
    """What we owe the customers listed by `customer_balances` with the same search."""
    total = customer_balances(email_contains=email_contains).aggregate(total=Sum("balance"))
    return usd(total["total"] or 0)


# Journal


@dataclass(frozen=True, slots=True)
class JournalFilters:
    """Dates are UTC days, both included; a customer is given by email or by id."""

    date_from: date | None = None
    date_to: date | None = None
    kind: str = ""
    customer_email: str = ""
    customer_id: int | None = None
    order_id: int | None = None


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _journal_filtered(filters: JournalFilters) -> QuerySet[LedgerTransaction]:
    transactions = LedgerTransaction.objects.all()
    if filters.date_from:
        transactions = transactions.filter(created_at__gte=_day_start(filters.date_from))
    if filters.date_to:
        next_day = filters.date_to + timedelta(days=1)
        transactions = transactions.filter(created_at__lt=_day_start(next_day))
    if filters.kind:
        transactions = transactions.filter(kind=filters.kind)
    if filters.order_id is not None:
        transactions = transactions.filter(order_id=filters.order_id)
    if filters.customer_id is not None or filters.customer_email:
        # The customer's transactions: those that touch their balance, and those of their
        # orders (a crypto payment of an order never touches the balance).
        if filters.customer_id is not None:
            on_balance = Q(account__customer_id=filters.customer_id)
            on_order = Q(order__customer_id=filters.customer_id)
        else:
            on_balance = Q(account__customer__email__iexact=filters.customer_email)
            on_order = Q(order__customer__email__iexact=filters.customer_email)
        touches_balance = Exists(LedgerEntry.objects.filter(on_balance, transaction=OuterRef("pk")))
        transactions = transactions.filter(Q(touches_balance) | on_order)
    return transactions


def journal_transactions(*, filters: JournalFilters) -> QuerySet[LedgerTransaction]:
    """Matching transactions, newest first, each with its acting user, order and entries
    (three queries for any page, plus the count)."""
    entries = LedgerEntry.objects.select_related("account__customer").order_by("pk")
    return (
        _journal_filtered(filters)
        .select_related("actor", "order")
        .prefetch_related(Prefetch("entries", queryset=entries))
        .order_by("-created_at", "-pk")
    )


def journal_entries(*, filters: JournalFilters) -> QuerySet[LedgerEntry]:
    """Every entry of the matching transactions, oldest transaction first (the order of an
    accounting export), with everything a CSV line needs in the same query."""
    return (
        LedgerEntry.objects.filter(transaction__in=_journal_filtered(filters).values("pk"))
        .select_related("transaction__actor", "transaction__order", "account__customer")
        .order_by("transaction__created_at", "transaction_id", "pk")
    )


# Reconciliation


def reconciliation_runs_recent(*, limit: int = 20) -> list[ReconciliationRun]:
    return list(ReconciliationRun.objects.select_related("triggered_by")[:limit])


def reconciliation_run_last() -> ReconciliationRun | None:
    return ReconciliationRun.objects.select_related("triggered_by").first()


def reconciliation_run_get(*, run_id: int) -> ReconciliationRun:
    """Raises ReconciliationRun.DoesNotExist."""
    return ReconciliationRun.objects.select_related("triggered_by").get(pk=run_id)


def _label(choices) -> Callable[[object], object]:
    def label(value):
        return choices(value).label if value in choices.values else value

    return label


# The columns each check's rows are shown with: (key in the stored row, header, formatter).
_SAME = str
CHECK_COLUMNS = {
    Check.TRIAL_BALANCE: [("sum", _("Sum (USD)"), _SAME)],
    Check.UNBALANCED_TRANSACTION: [
        ("transaction_id", _("Transaction"), _SAME),
        ("kind", _("Kind"), _label(TransactionKind)),
        ("sum", _("Sum (USD)"), _SAME),
        ("entries", _("Entries"), _SAME),
    ],
    Check.ACCOUNT_BALANCE: [
        ("account_id", _("Account"), _SAME),
        ("account_kind", _("Kind"), _label(LedgerAccountKind)),
        ("customer_email", _("Customer"), _SAME),
        ("cached", _("Cached balance (USD)"), _SAME),
        ("computed", _("Sum of entries (USD)"), _SAME),
    ],
    Check.ORDER_PAYMENT_COUNT: [
        ("order_reference", _("Order"), _SAME),
        ("status", _("Status"), _label(OrderStatus)),
        ("payment_transactions", _("Payment transactions"), _SAME),
    ],
    Check.PAYMENT_FOR_UNPAID_ORDER: [
        ("transaction_id", _("Transaction"), _SAME),
        ("order_reference", _("Order"), _SAME),
        ("status", _("Order status"), _label(OrderStatus)),
    ],
}


@dataclass(frozen=True, slots=True)
class ReportSection:
    """The discrepancies of one check: a title and a table."""

    check: str
    title: str
    headers: list
    lines: list[list]


@dataclass(frozen=True, slots=True)
class KindTotal:
    kind: str
    label: str
    count: int
    total: Decimal


@dataclass(frozen=True, slots=True)
class RunReport:
    run: ReconciliationRun
    sections: list[ReportSection]
    totals: list[KindTotal]

    @property
    def discrepancy_count(self) -> int:
        return len(self.run.discrepancies)


def _section(check: str, discrepancies: list[dict]) -> ReportSection:
    rows = [row for discrepancy in discrepancies for row in discrepancy.get("rows", [])]
    if check in Check.values:
        columns = CHECK_COLUMNS[Check(check)]
        title = Check(check).label
    else:  # stored by another version of the checks: show it as it is
        keys = list(dict.fromkeys(key for row in rows for key in row))
        columns = [(key, key, _SAME) for key in keys]
        title = check
    return ReportSection(
        check=check,
        title=title,
        headers=[header for _key, header, _fmt in columns],
        lines=[[fmt(row.get(key, "")) for key, _header, fmt in columns] for row in rows],
    )


def reconciliation_report(*, run: ReconciliationRun) -> RunReport:
    """A stored run laid out for reading: its discrepancies grouped by check (in the order the
    checks run) and its totals per transaction kind. No query."""
    by_check: dict[str, list[dict]] = {}
    for discrepancy in run.discrepancies:
        by_check.setdefault(discrepancy.get("check", ""), []).append(discrepancy)
    stored = run.totals_by_kind
    # The kinds in their declared order (the database keeps JSON keys in an order of its own).
    kinds = [kind for kind in TransactionKind.values if kind in stored]
    kinds += sorted(kind for kind in stored if kind not in TransactionKind.values)
    totals = [
        KindTotal(
            kind=kind,
            label=_label(TransactionKind)(kind),
            count=int(stored[kind].get("count", 0)),
            total=Decimal(stored[kind].get("total", "0")),
        )
        for kind in kinds
    ]
    return RunReport(
        run=run,
        sections=[_section(check, items) for check, items in by_check.items()],
        totals=totals,
    )
