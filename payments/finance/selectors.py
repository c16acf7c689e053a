"""Reads for the finance console: balances, journal, receipts awaiting allocation,
reconciliation reports.

Every read runs a fixed number of queries whatever the number of rows (pages use
select_related / prefetch_related; nothing is loaded per row).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from rental.models import OrderStatus
from rental.money import usd

from ..chain.selectors import network_name
from ..models import (
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    PaymentStatus,
    ReconciliationRun,
    TransactionKind,
    TransferStatus,
    WithdrawalStatus,
)
from .services import ATTENDED_STATUSES, Check

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


# Receipts awaiting allocation

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _unallocated_entries(**lookups) -> QuerySet[LedgerEntry]:
    return LedgerEntry.objects.filter(
        transaction__payment=OuterRef("pk"), account__kind=LedgerAccountKind.UNALLOCATED, **lookups
    )


def _holding_money() -> QuerySet[CryptoPayment]:
    return CryptoPayment.objects.annotate(
        unallocated=F("receipted_usd") + F("written_off_usd") - F("allocated_usd")
    ).filter(unallocated__gt=0)


def unallocated_payments() -> QuerySet[CryptoPayment]:
    """Every payment holding money in the receipts awaiting allocation, the longest waiting
    first, each with its customer and:

    - `unallocated`: the amount (USD);
    - `unallocated_since`: when that money arrived — the first receipt posted after the last
      allocation out of it (every allocation takes all the payment holds);
    - `stranded`: True when nobody will act on it (its status is not one of
      reconciliation.ATTENDED_STATUSES); `in_review`: True when it is before the operators
      (else, not stranded, the payment is still open and the watcher settles it).

    One query for any number of rows."""
    last_allocated = Subquery(
        _unallocated_entries(amount__lt=0)
        .order_by("-transaction__created_at")
        .values("transaction__created_at")[:1]
    )
    since = Subquery(
        _unallocated_entries(
            amount__gt=0,
            transaction__created_at__gt=Coalesce(OuterRef("last_allocated"), Value(EPOCH)),
        )
        .order_by("transaction__created_at")
        .values("transaction__created_at")[:1]
    )
    return (
        _holding_money()
        .annotate(
            last_allocated=last_allocated,
            unallocated_since=since,
            stranded=Case(
                When(status__in=ATTENDED_STATUSES, then=Value(False)),
                default=Value(True),
                output_field=BooleanField(),
            ),
            in_review=Case(
                When(status=PaymentStatus.NEEDS_REVIEW, then=Value(True)),
                default=Value(False),
                output_field=BooleanField(),
            ),
        )
        .select_related("customer")
        .order_by(F("unallocated_since").asc(nulls_first=True), "pk")
    )


@dataclass(frozen=True, slots=True)
class UnallocatedSummary:
    """The account's balance beside what the payments hold: they differ only when the
    ledger and the payments disagree (the reconciliation lists it)."""

    balance: Decimal
    on_payments: Decimal
    stranded: int

    @property
    def matches(self) -> bool:
        return self.balance == self.on_payments


def unallocated_summary() -> UnallocatedSummary:
    """Two queries: the account's cached balance (zero before the first receipt) and the
    payments' total with how many of them are stranded."""
    balance = (
        LedgerAccount.objects.filter(kind=LedgerAccountKind.UNALLOCATED, customer=None)
        .values_list("balance", flat=True)
        .first()
    )
    totals = _holding_money().aggregate(
        total=Sum("unallocated"), stranded=Count("pk", filter=~Q(status__in=ATTENDED_STATUSES))
    )
    return UnallocatedSummary(
        balance=usd(balance or 0),
        on_payments=usd(totals["total"] or 0),
        stranded=totals["stranded"] or 0,
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
_TRANSFER_COLUMNS = [
    ("network", _("Network"), network_name),
    ("asset", _("Asset"), _SAME),
    ("tx_hash", _("Transaction hash"), _SAME),
    ("log_index", _("Log"), _SAME),
    ("status", _("Transfer status"), _label(TransferStatus)),
    ("amount", _("Amount (USD)"), _SAME),
    ("payment_reference", _("Payment"), _SAME),
]
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
    Check.RECEIPTS_VS_CHAIN: [
        ("network", _("Network"), network_name),
        ("asset", _("Asset"), _SAME),
        ("ledger", _("In the ledger (USD)"), _SAME),
        ("chain", _("Confirmed on chain (USD)"), _SAME),
        ("difference", _("Difference (USD)"), _SAME),
    ],
    Check.TRANSFER_NOT_IN_LEDGER: _TRANSFER_COLUMNS,
    Check.REVERSED_IN_LEDGER: _TRANSFER_COLUMNS,
    Check.UNALLOCATED_VS_PAYMENTS: [
        ("ledger", _("Receipts awaiting allocation (USD)"), _SAME),
        ("payments", _("Unallocated on the payments (USD)"), _SAME),
        ("difference", _("Difference (USD)"), _SAME),
    ],
    Check.STRANDED: [
        ("payment_reference", _("Payment"), _SAME),
        ("customer_email", _("Customer"), _SAME),
        ("status", _("Status"), _label(PaymentStatus)),
        ("unallocated", _("Unallocated (USD)"), _SAME),
    ],
    Check.WITHDRAWAL_LEDGER: [
        ("withdrawal_reference", _("Withdrawal"), _SAME),
        ("status", _("Status"), _label(WithdrawalStatus)),
        ("amount", _("Amount (USD)"), _SAME),
        ("held", _("Held in withdrawals pending (USD)"), _SAME),
        ("paid", _("In withdrawals paid out (USD)"), _SAME),
        ("taken", _("Taken from the balance (USD)"), _SAME),
    ],
    Check.WITHDRAWALS_PAID: [
        ("network", _("Network"), network_name),
        ("asset", _("Asset"), _SAME),
        ("ledger", _("Withdrawals paid out in the ledger (USD)"), _SAME),
        ("withdrawals", _("Withdrawals paid on chain (USD)"), _SAME),
        ("difference", _("Difference (USD)"), _SAME),
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
