"""Reads of withdrawals: what the customer's and finance's pages show of one (`WithdrawalView`,
the one place that decides it), the customer's list, finance's queue and the totals.

Nothing here calls a node: the last check's result and confirmations come from the check the
worker stored (payments.withdrawals.services.withdrawal_check).
"""

from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from django.db.models import Count, JSONField, OuterRef, Prefetch, QuerySet, Subquery, Sum
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from accounts.statements import CompiledQuery
from rental.money import usd

from ..chain.networks import all_networks
from ..chain.withdrawal_check import CHECK_EVENT, CheckResult, check_message, token_text
from ..models import (
    WITHDRAWAL_PENDING_STATUSES,
    WITHDRAWAL_TRANSITIONS,
    LedgerAccount,
    LedgerAccountKind,
    Receipt,
    TransactionKind,
    Withdrawal,
    WithdrawalEvent,
    WithdrawalStatus,
)
from .services.decisions import MONEY_LEFT, TRANSFER_ON_ITS_WAY

# What happens next, for the customer, in each status.
NEXT_STEP = {
    WithdrawalStatus.REQUESTED: _(
        "The amount is held from your balance. Finance reviews the request; once approved, it "
        "sends the stablecoin from its own wallet to your address."
    ),
    WithdrawalStatus.APPROVED: _(
        "Approved: finance is sending the transfer from its wallet. This page shows it as "
        "soon as finance enters the transaction."
    ),
    WithdrawalStatus.SENT: _(
        "Finance has sent the transfer. The worker checks it on chain and marks the "
        "withdrawal paid once it has all its confirmations; this status refreshes by itself."
    ),
    WithdrawalStatus.PAID: _("Paid: the transfer to your address is confirmed on chain."),
    WithdrawalStatus.REJECTED: _("Rejected: the amount is back on your USD balance."),
}


# What finance reads about a sent withdrawal, by what its last check found.
WATCHING_GUIDANCE = _(
    "The worker checks this transaction on chain every few seconds until it pays the withdrawal."
)
ON_ITS_WAY_GUIDANCE = _(
    "The transfer is on its way to the customer's address: the worker marks the withdrawal "
    "paid once it has all its confirmations. Money has left, so it can no longer be rejected "
    "or its hash taken back."
)
SHORT_GUIDANCE = _(
    "This transaction sent less than the amount: it will never pay the withdrawal. Take the "
    "hash back, then send the whole amount in one new transaction and enter its hash; the "
    "short transfer already reached the customer (settle it with them)."
)


@dataclass(frozen=True, slots=True)
class WithdrawalView:
    withdrawal: Withdrawal
    network_name: str
    last_check: dict | None  # the data of the last check event
    receipt_number: int | None = None  # the receipt issued when it was paid

    @property
    def pending(self) -> bool:
        """Still moving: the page refreshes its status."""
        return self.withdrawal.status in WITHDRAWAL_PENDING_STATUSES

    # What the pages may show and offer, from the status (templates never compare statuses).
    @property
    def is_paid(self) -> bool:
        return self.withdrawal.status == WithdrawalStatus.PAID

    @property
    def is_rejected(self) -> bool:
        return self.withdrawal.status == WithdrawalStatus.REJECTED

    @property
    def is_sent(self) -> bool:
        return self.withdrawal.status == WithdrawalStatus.SENT

    @property
    def can_approve(self) -> bool:
        return WithdrawalStatus.APPROVED in _next(self.withdrawal) and not self.is_sent

    @property
    def can_enter_hash(self) -> bool:
        return WithdrawalStatus.SENT in _next(self.withdrawal)

    @property
    def last_result(self) -> str:
        """The last check's result code for the hash now entered ("" before any)."""
        check = self.last_check
        if not check or check.get("tx_hash") != self.withdrawal.tx_hash:
            return ""
        return check.get("result", "")

    @property
    def fell_short(self) -> bool:
        """The sent transaction carries less than the amount: it will never pay."""
        return self.is_sent and self.last_result == CheckResult.SHORT_AMOUNT

    # The service refuses these once the transaction carries the transfer (decisions.py): the
    # page offers them only when the last check says they can work.
    @property
    def can_take_hash_back(self) -> bool:
        return (
            self.is_sent
            and WithdrawalStatus.APPROVED in _next(self.withdrawal)
            and self.last_result not in TRANSFER_ON_ITS_WAY
        )

    @property
    def can_reject(self) -> bool:
        if WithdrawalStatus.REJECTED not in _next(self.withdrawal):
            return False
        return not (self.is_sent and self.last_result in MONEY_LEFT)

    @property
    def sent_guidance(self) -> str:
        """What finance is told about a sent withdrawal, from its last check."""
        if not self.is_sent:
            return ""
        if self.fell_short:
            return str(SHORT_GUIDANCE)
        if self.last_result in TRANSFER_ON_ITS_WAY:
            return str(ON_ITS_WAY_GUIDANCE)
        return str(WATCHING_GUIDANCE)

    @property
    def status_label(self) -> str:
        return self.withdrawal.get_status_display()

    @property
    def next_step(self) -> str:
        return NEXT_STEP.get(self.withdrawal.status, "")

    @property
    def amount_tokens(self) -> str:
        return token_text(int(self.withdrawal.amount_units), self.withdrawal.decimals)

    @property
    def check_reason(self) -> str:
        """The last check's reason in the active language, for the hash now entered."""
        check = self.last_check
        if not check or check.get("tx_hash") != self.withdrawal.tx_hash:
            return ""
        return check_message(check.get("result", ""), check.get("params") or {}) or (
            self.withdrawal.check_detail
        )

    @property
    def confirmations(self) -> tuple[int, int] | None:
        """(seen, required) while the transfer gathers its confirmations."""
        check = self.last_check
        if (
            self.withdrawal.status != WithdrawalStatus.SENT
            or not check
            or check.get("result") != CheckResult.CONFIRMING
        ):
            return None
        params = check.get("params") or {}
        return int(params.get("confirmations", 0)), int(params.get("required", 0))


def _next(withdrawal: Withdrawal) -> frozenset[str]:
    return WITHDRAWAL_TRANSITIONS.get(withdrawal.status, frozenset())


def _network_name(key: str) -> str:
    network = all_networks().get(key)
    return str(network.name) if network else key


def _last_check(withdrawal: Withdrawal) -> dict | None:
    return (
        WithdrawalEvent.objects.filter(withdrawal=withdrawal, data__kind=CHECK_EVENT)
        .order_by("-pk")
        .values_list("data", flat=True)
        .first()
    )


def _receipt_number(withdrawal: Withdrawal) -> int | None:
    if withdrawal.status != WithdrawalStatus.PAID:
        return None
    return (
        Receipt.objects.filter(
            transaction__withdrawal=withdrawal,
            transaction__kind=TransactionKind.WITHDRAWAL_PAID,
        )
        .values_list("number", flat=True)
        .first()
    )


def withdrawal_view(withdrawal: Withdrawal) -> WithdrawalView:
    """What a page shows of the withdrawal: one query for its last check while it has a
    hash, one for its receipt once paid."""
    return WithdrawalView(
        withdrawal=withdrawal,
        network_name=_network_name(withdrawal.network),
        last_check=_last_check(withdrawal) if withdrawal.tx_hash else None,
        receipt_number=_receipt_number(withdrawal),
    )


def customer_withdrawal_view(*, customer: User, withdrawal_id: int) -> WithdrawalView:
    """The customer's own withdrawal; another customer's raises Withdrawal.DoesNotExist."""
    withdrawal = Withdrawal.objects.filter(customer=customer).get(pk=withdrawal_id)
    return withdrawal_view(withdrawal)


def customer_withdrawals(*, customer: User) -> QuerySet[Withdrawal]:
    """The customer's withdrawals, newest first."""
    return Withdrawal.objects.filter(customer=customer).order_by("-created_at", "-pk")


def _last_check_column() -> Subquery:
    last_check = (
        WithdrawalEvent.objects.filter(withdrawal=OuterRef("pk"), data__kind=CHECK_EVENT)
        .order_by("-pk")
        .values("data")[:1]
    )
    return Subquery(last_check, output_field=JSONField())


def customer_withdrawal_rows(*, customer: User) -> QuerySet[Withdrawal]:
    """The customer's withdrawals, newest first, each with its last check and its receipt's
    number annotated (for `row_views`: one query for any number of rows)."""
    paid_receipt = Receipt.objects.filter(
        transaction__withdrawal_id=OuterRef("pk"),
        transaction__kind=TransactionKind.WITHDRAWAL_PAID,
    ).values("number")[:1]
    return customer_withdrawals(customer=customer).annotate(
        last_check=_last_check_column(), receipt_number=Subquery(paid_receipt)
    )


def row_views(withdrawals) -> list[WithdrawalView]:
    """Rows of `customer_withdrawal_rows` as the views `withdrawal_view` gives (no query)."""
    return [
        WithdrawalView(
            withdrawal=withdrawal,
            network_name=_network_name(withdrawal.network),
            last_check=withdrawal.last_check if withdrawal.tx_hash else None,
            receipt_number=withdrawal.receipt_number
            if withdrawal.status == WithdrawalStatus.PAID
            else None,
        )
        for withdrawal in withdrawals
    ]


@dataclass(frozen=True, slots=True)
class WithdrawalPreview:
    """What the confirmation page says will happen."""

    units: int
    decimals: int
    balance_after: Decimal


def withdrawal_preview(
    *, network_key: str, asset_symbol: str, amount_usd, balance
) -> WithdrawalPreview:
    """The token units a valid request of `amount_usd` sends and the balance it leaves (no
    query: the network and asset come from the settings)."""
    asset = all_networks()[network_key].asset(asset_symbol)
    return WithdrawalPreview(
        units=asset.to_units(amount_usd),
        decimals=asset.decimals,
        balance_after=balance - amount_usd,
    )


_ANY_CUSTOMER_ID = -7_963  # stands for the customer's id while the statement is compiled


@cache
def _pending_query() -> CompiledQuery:
    return CompiledQuery(
        Withdrawal.objects.filter(
            customer_id=_ANY_CUSTOMER_ID, status__in=WITHDRAWAL_PENDING_STATUSES
        ).order_by("-created_at", "-pk"),
        customer=_ANY_CUSTOMER_ID,
    )


def customer_withdrawals_pending(*, customer: User) -> list[Withdrawal]:
    """The customer's withdrawals still in progress, newest first (for the balance page; as
    customer_withdrawals, the statement compiled once per process)."""
    return _pending_query().objects(customer=customer.pk)


# ---------------------------------------------------------------------------- finance

QUEUE_FILTERS = {
    "pending": WITHDRAWAL_PENDING_STATUSES,
    **{status: (status,) for status in WithdrawalStatus.values},
    "all": tuple(WithdrawalStatus.values),
}


def finance_withdrawals(*, show: str = "pending") -> QuerySet[Withdrawal]:
    """The queue: by default every withdrawal waiting on finance or the chain, the oldest
    first (the first to act on); a finished status lists the newest first."""
    statuses = QUEUE_FILTERS.get(show, WITHDRAWAL_PENDING_STATUSES)
    rows = (
        Withdrawal.objects.filter(status__in=statuses)
        .select_related("customer")
        .annotate(last_check=_last_check_column())
    )
    if show == "pending":
        return rows.order_by("created_at", "pk")
    return rows.order_by("-created_at", "-pk")


def queue_views(withdrawals) -> list[WithdrawalView]:
    """A page of `finance_withdrawals` as views (their last check is annotated: no query)."""
    return [
        WithdrawalView(
            withdrawal=withdrawal,
            network_name=_network_name(withdrawal.network),
            last_check=withdrawal.last_check,
        )
        for withdrawal in withdrawals
    ]


def finance_withdrawal_counts() -> dict[str, int]:
    """How many withdrawals are in each status (one grouped query)."""
    counts = dict.fromkeys(WithdrawalStatus.values, 0)
    for row in Withdrawal.objects.values("status").annotate(n=Count("pk")).order_by():
        counts[row["status"]] = row["n"]
    return counts


def _status_label(status: str) -> str:
    return WithdrawalStatus(status).label if status in WithdrawalStatus.values else status


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One line of a withdrawal's history, in the reader's language."""

    event: WithdrawalEvent

    @property
    def is_check(self) -> bool:
        return (self.event.data or {}).get("kind") == CHECK_EVENT

    @property
    def what(self) -> str:
        event = self.event
        if self.is_check:
            return str(_("Checked on chain"))
        if event.from_status:
            return f"{_status_label(event.from_status)} → {_status_label(event.to_status)}"
        return str(_status_label(event.to_status))

    @property
    def reason(self) -> str:
        data = self.event.data or {}
        if data.get("kind") == CHECK_EVENT:
            return check_message(data.get("result", ""), data.get("params") or {})
        return self.event.reason


@dataclass(frozen=True, slots=True)
class FinanceWithdrawal:
    view: WithdrawalView
    events: list[HistoryRow]


def finance_withdrawal(*, withdrawal_id: int) -> FinanceWithdrawal:
    """One withdrawal with its customer, who decided, and its whole history with the acting
    users (three queries). Raises Withdrawal.DoesNotExist."""
    events = WithdrawalEvent.objects.select_related("actor").order_by("created_at", "pk")
    withdrawal = (
        Withdrawal.objects.select_related("customer", "decided_by")
        .prefetch_related(Prefetch("events", queryset=events))
        .get(pk=withdrawal_id)
    )
    history = list(withdrawal.events.all())
    checks = [e.data for e in history if (e.data or {}).get("kind") == CHECK_EVENT]
    view = WithdrawalView(
        withdrawal=withdrawal,
        network_name=_network_name(withdrawal.network),
        last_check=checks[-1] if checks else None,
    )
    return FinanceWithdrawal(view=view, events=[HistoryRow(event) for event in history])


@dataclass(frozen=True, slots=True)
class PaidTotal:
    asset: str
    network: str
    network_name: str
    total: Decimal


@dataclass(frozen=True, slots=True)
class WithdrawalTotals:
    pending: Decimal  # the withdrawals pending account's balance
    paid: list[PaidTotal]  # per asset and network


def withdrawal_totals() -> WithdrawalTotals:
    """What the ledger holds for withdrawals: pending, and paid out per asset and network
    (one query)."""
    rows = (
        LedgerAccount.objects.filter(
            customer=None,
            kind__in=(LedgerAccountKind.WITHDRAWALS_PENDING, LedgerAccountKind.WITHDRAWALS_PAID),
        )
        .values("kind", "asset", "network")
        .annotate(total=Sum("balance"))
        .order_by("network", "asset")
    )
    pending, paid = Decimal("0.00"), []
    for row in rows:
        if row["kind"] == LedgerAccountKind.WITHDRAWALS_PENDING:
            pending += row["total"] or 0
        else:
            paid.append(
                PaidTotal(
                    asset=row["asset"],
                    network=row["network"],
                    network_name=_network_name(row["network"]),
                    total=usd(row["total"] or 0),
                )
            )
    return WithdrawalTotals(pending=usd(pending), paid=paid)
