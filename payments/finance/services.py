"""Reconciliation: check the ledger against itself, against the orders and against the chain,
and store the report.

Every check is one aggregate query (a bounded number of queries whatever the size of the
ledger), and each reads one consistent snapshot, so a posting that commits while the checks run
never shows up as a false discrepancy inside one check (a check comparing two sides reads both
in one statement). Periods are whole UTC days, both ends included; the checks of the money
(receipts against the chain, receipts awaiting allocation, stranded money) cover all time.

A discrepancy is stored as ``{"check": <Check value>, "detail": <English summary>, "rows":
[{...}]}``: one discrepancy per offending transaction, account or order, its rows naming what
is involved. Amounts are strings (JSON has no decimal type), token amounts too (base units).
The console shows each check's translated label beside the rows; ``detail`` is the plain record
kept for logs and the admin. The rows of each check:

- trial_balance: sum
- unbalanced_transaction: transaction_id, kind, sum, entries
- account_balance: account_id, account_kind, customer_email, cached, computed
- order_payment_count: order_id, order_reference, status, payment_transactions
- payment_for_unpaid_order: transaction_id, order_id, order_reference, status
- receipts_vs_chain (one per network and asset): network, asset, ledger, chain, difference
  (ledger minus chain, USD)
- transfer_not_in_ledger, reversed_in_ledger (one per transfer): transfer_id, network, asset,
  tx_hash, log_index, status, units, amount (USD, rounded down), payment_id, payment_reference
- unallocated_vs_payments: ledger, payments, difference (ledger minus payments, USD)
- stranded (one per payment): payment_id, payment_reference, customer_email, status,
  unallocated (USD)
- withdrawal_ledger (one per withdrawal): withdrawal_id, withdrawal_reference, status, amount,
  held (in withdrawals pending), paid (in withdrawals paid out), taken (from the balance)
- withdrawals_paid (one per network and asset): network, asset, ledger (withdrawals paid out),
  withdrawals (the paid withdrawals, checked on chain), difference (USD)
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db import models, transaction
from django.db.models import (
    Case,
    Count,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast, Coalesce, Mod, Power
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental.models import Order, OrderStatus, OrderStatusChange
from rental.money import usd

from ..chain.networks import units_to_usd
from ..models import (
    AMOUNT,
    LIVE_STATUSES,
    TOKEN_UNITS,
    WITHDRAWAL_PENDING_STATUSES,
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    PaymentStatus,
    ReconciliationRun,
    TransactionKind,
    TransferStatus,
    Withdrawal,
    WithdrawalStatus,
)

# A reconciliation covers at most this many days (a leap year), both ends included.
MAX_PERIOD_DAYS = 366

# An order in one of these statuses has been paid, whatever happened to it since.
PAID_STATUSES = frozenset(
    {OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE, OrderStatus.ENDED}
)

# Money left unallocated on a payment in one of these statuses is looked after: the payment is
# open (the watcher settles it when the rest arrives) or in front of an operator. On a payment
# in any other status nobody will act on it: it is stranded.
ATTENDED_STATUSES = frozenset({*LIVE_STATUSES, PaymentStatus.NEEDS_REVIEW})

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
    RECEIPTS_VS_CHAIN = (
        "receipts_vs_chain",
        _("Crypto receipts in the ledger that differ from the transfers confirmed on chain"),
    )
    TRANSFER_NOT_IN_LEDGER = (
        "transfer_not_in_ledger",
        _("Transfers confirmed on chain whose value is not in the ledger"),
    )
    REVERSED_IN_LEDGER = (
        "reversed_in_ledger",
        _(
            "Transfers in the ledger that are no longer confirmed on chain "
            "(a reversal awaiting its write-off)"
        ),
    )
    UNALLOCATED_VS_PAYMENTS = (
        "unallocated_vs_payments",
        _("Receipts awaiting allocation that differ from what the payments hold unallocated"),
    )
    STRANDED = (
        "stranded",
        _("Money left unallocated on payments that nobody will act on"),
    )
    WITHDRAWAL_LEDGER = (
        "withdrawal_ledger",
        _("Withdrawals whose postings in the ledger do not match their status"),
    )
    WITHDRAWALS_PAID = (
        "withdrawals_paid",
        _("Withdrawals paid out in the ledger that differ from the withdrawals paid on chain"),
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
            *_receipts_against_chain(),
            *_transfers_against_ledger(),
            *_unallocated_against_payments(),
            *_stranded_payments(),
            *_withdrawals_against_ledger(),
            *_withdrawals_paid_against_ledger(),
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


# Amounts are whole cents. PostgreSQL sums them exactly; SQLite (the embedded default) sums
# them as floating point, so 41158.08 could come back as 41158.0800000001 and differ from the
# cached balance (seen in `make soak`). A sum counts as non-zero from half a cent.
HALF_CENT = Decimal("0.005")


def _nonzero(name: str) -> Q:
    return Q(**{f"{name}__gte": HALF_CENT}) | Q(**{f"{name}__lte": -HALF_CENT})


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
        .filter(_nonzero("total") | Q(entry_count__lt=2))
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
        LedgerAccount.objects.annotate(
            computed=_sum("entries__amount"),
            difference=ExpressionWrapper(F("balance") - F("computed"), output_field=_decimal()),
        )
        .filter(
            _nonzero("difference")
            | (
                Q(kind=LedgerAccountKind.CUSTOMER_BALANCE)
                & (Q(balance__lt=0) | Q(computed__lte=-HALF_CENT))
            )
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


# 4. The money: receipts against the chain, receipts awaiting allocation, stranded money


def _decimal(**kwargs) -> models.DecimalField:
    return models.DecimalField(**(kwargs or AMOUNT))


def _confirmed_cents():
    """Per payment: the value of its confirmed transfers in whole cents, rounded down once on
    their sum, as settlement posts it (payments.chain.networks.units_to_usd). Integer arithmetic on
    numeric values (no division that could round): exact, whatever the token's decimals."""
    tokens = _decimal(**TOKEN_UNITS)
    one_token = Power(Value(Decimal(10)), Cast("payment__decimals", tokens))
    scaled = F("units") * Value(Decimal(100))
    cents = (
        ChainTransfer.objects.filter(payment=OuterRef("pk"), status=TransferStatus.CONFIRMED)
        .order_by()
        .values("payment", "payment__decimals")
        .annotate(units=Sum("amount_units"))
        .annotate(cents=(scaled - Mod(scaled, one_token)) / one_token)
        .values("cents")
    )
    return Coalesce(Subquery(cents), Value(Decimal(0)), output_field=tokens)


def _receipts_against_chain() -> list[dict]:
    """Per network and asset: what the ledger received (minus the balance of its crypto
    receipts account, write-offs included) against what the chain confirmed on our payments
    (each payment's confirmed units rounded down to the cent once). Both sides in one
    statement."""
    ledger_side = (
        LedgerAccount.objects.filter(kind=LedgerAccountKind.CRYPTO_RECEIPTS, customer=None)
        .annotate(ledger=_sum("entries__amount"), cents=Value(ZERO, output_field=_decimal()))
        .values_list("network", "asset", "ledger", "cents")
    )
    chain_side = (
        CryptoPayment.objects.order_by()
        .values("network", "asset")
        .annotate(
            ledger=Value(ZERO, output_field=_decimal()),
            cents=Sum(_confirmed_cents(), output_field=_decimal(**TOKEN_UNITS)),
        )
        .values_list("network", "asset", "ledger", "cents")
    )
    sides: dict[tuple[str, str], list[Decimal]] = {}
    for network, asset, ledger, cents in ledger_side.union(chain_side, all=True):
        side = sides.setdefault((network, asset), [ZERO, ZERO])
        side[0] -= ledger or 0
        side[1] += Decimal(cents or 0) / 100
    discrepancies = []
    for (network, asset), (ledger, chain) in sorted(sides.items()):
        ledger, chain = usd(ledger), usd(chain)
        if ledger == chain:
            continue
        discrepancies.append(
            _discrepancy(
                Check.RECEIPTS_VS_CHAIN,
                f"{asset} on {network}: the ledger received {ledger} USD, the transfers "
                f"confirmed on chain are worth {chain} USD.",
                [
                    {
                        "network": network,
                        "asset": asset,
                        "ledger": _amount(ledger),
                        "chain": _amount(chain),
                        "difference": _amount(ledger - chain),
                    }
                ],
            )
        )
    return discrepancies


def _transfers_against_ledger() -> list[dict]:
    """Transfers confirmed on chain that are not in the ledger, and transfers in the ledger
    that are no longer confirmed (reversed, awaiting a write-off). One query for both."""
    confirmed = Q(status=TransferStatus.CONFIRMED)
    rows = (
        ChainTransfer.objects.filter(
            (confirmed & Q(receipted=False)) | (~confirmed & Q(receipted=True))
        )
        .order_by("pk")
        .values_list(
            "pk",
            "network",
            "payment__asset",
            "tx_hash",
            "log_index",
            "status",
            "amount_units",
            "payment__decimals",
            "payment_id",
        )
    )
    discrepancies = []
    for pk, network, asset, tx_hash, log_index, status, units, decimals, payment_id in rows:
        amount = units_to_usd(units, decimals) if decimals is not None else None
        reference = CryptoPayment(pk=payment_id).reference if payment_id else ""
        if status == TransferStatus.CONFIRMED:
            check = Check.TRANSFER_NOT_IN_LEDGER
            detail = f"Transfer {pk} ({tx_hash} log {log_index}) is confirmed on {network}"
            detail += f" and not in the ledger ({reference or 'no payment'})."
        else:
            check = Check.REVERSED_IN_LEDGER
            detail = f"Transfer {pk} ({tx_hash} log {log_index}) on {network} is {status}"
            detail += f" and still in the ledger ({reference}): write it off or confirm it again."
        discrepancies.append(
            _discrepancy(
                check,
                detail,
                [
                    {
                        "transfer_id": pk,
                        "network": network,
                        "asset": asset or "",
                        "tx_hash": tx_hash,
                        "log_index": log_index,
                        "status": status,
                        "units": str(int(units)),
                        "amount": _amount(amount) if amount is not None else "",
                        "payment_id": payment_id,
                        "payment_reference": reference,
                    }
                ],
            )
        )
    return discrepancies


def _unallocated_expression():
    return F("receipted_usd") + F("written_off_usd") - F("allocated_usd")


def _unallocated_against_payments() -> list[dict]:
    """The balance of the receipts awaiting allocation (the sum of its entries) against what
    the payments hold unallocated. Both sides in one statement."""
    ledger_side = (
        LedgerAccount.objects.filter(kind=LedgerAccountKind.UNALLOCATED, customer=None)
        .annotate(ledger=_sum("entries__amount"), held=Value(ZERO, output_field=_decimal()))
        .values_list("ledger", "held")
    )
    payments_side = (
        CryptoPayment.objects.order_by()
        .annotate(whole=Value(1))
        .values("whole")
        .annotate(ledger=Value(ZERO, output_field=_decimal()), held=_sum(_unallocated_expression()))
        .values_list("ledger", "held")
    )
    ledger = held = ZERO
    for in_ledger, on_payments in ledger_side.union(payments_side, all=True):
        ledger += in_ledger or 0
        held += on_payments or 0
    ledger, held = usd(ledger), usd(held)
    if ledger == held:
        return []
    return [
        _discrepancy(
            Check.UNALLOCATED_VS_PAYMENTS,
            f"The receipts awaiting allocation hold {usd(ledger)} USD; the payments hold "
            f"{usd(held)} USD unallocated.",
            [
                {
                    "ledger": _amount(ledger),
                    "payments": _amount(held),
                    "difference": _amount(ledger - held),
                }
            ],
        )
    ]


def _stranded_payments() -> list[dict]:
    """Payments holding unallocated money in a status nobody acts on (ATTENDED_STATUSES)."""
    rows = (
        CryptoPayment.objects.annotate(unallocated=_unallocated_expression())
        .filter(unallocated__gt=0)
        .exclude(status__in=ATTENDED_STATUSES)
        .order_by("pk")
        .values_list("pk", "status", "customer__email", "unallocated")
    )
    return [
        _discrepancy(
            Check.STRANDED,
            f"Payment {CryptoPayment(pk=pk).reference} ({status}, {email}) holds {usd(amount)} "
            "USD unallocated and nobody will act on it.",
            [
                {
                    "payment_id": pk,
                    "payment_reference": CryptoPayment(pk=pk).reference,
                    "customer_email": email,
                    "status": status,
                    "unallocated": _amount(amount),
                }
            ],
        )
        for pk, status, email, amount in rows
    ]


# 5. Withdrawals: what the ledger holds and paid out for each, against its status (a paid
# withdrawal was checked on chain: its transfer of the token to the address, confirmed)


def _withdrawal_sum(account_kind: str):
    return _sum(
        "ledger_transactions__entries__amount",
        filter=Q(ledger_transactions__entries__account__kind=account_kind),
    )


def _withdrawals_against_ledger() -> list[dict]:
    """Per withdrawal: held in the withdrawals pending while it is pending, in the withdrawals
    paid out once paid, taken from the balance unless rejected. One grouped query, only the
    withdrawals that differ come back."""
    amount = F("amount_usd")
    zero = Value(ZERO, output_field=_decimal())
    pending = Q(status__in=WITHDRAWAL_PENDING_STATUSES)
    rows = (
        Withdrawal.objects.annotate(
            held=_withdrawal_sum(LedgerAccountKind.WITHDRAWALS_PENDING),
            paid=_withdrawal_sum(LedgerAccountKind.WITHDRAWALS_PAID),
            taken=-_withdrawal_sum(LedgerAccountKind.CUSTOMER_BALANCE),
        )
        .annotate(
            held_off=F("held") - Case(When(pending, then=amount), default=zero),
            paid_off=F("paid")
            - Case(When(status=WithdrawalStatus.PAID, then=amount), default=zero),
            taken_off=F("taken")
            - Case(When(status=WithdrawalStatus.REJECTED, then=zero), default=amount),
        )
        .filter(_nonzero("held_off") | _nonzero("paid_off") | _nonzero("taken_off"))
        .order_by("pk")
        .values_list("pk", "status", "amount_usd", "held", "paid", "taken")
    )
    return [
        _discrepancy(
            Check.WITHDRAWAL_LEDGER,
            f"Withdrawal {Withdrawal(pk=pk).reference} ({status}, {usd(amount)} USD): "
            f"{usd(held)} USD held, {usd(paid)} USD paid out, {usd(taken)} USD taken from "
            "the balance in the ledger.",
            [
                {
                    "withdrawal_id": pk,
                    "withdrawal_reference": Withdrawal(pk=pk).reference,
                    "status": status,
                    "amount": _amount(amount),
                    "held": _amount(held),
                    "paid": _amount(paid),
                    "taken": _amount(taken),
                }
            ],
        )
        for pk, status, amount, held, paid, taken in rows
    ]


def _withdrawals_paid_against_ledger() -> list[dict]:
    """Per network and asset: the withdrawals paid out account (the sum of its entries)
    against the paid withdrawals. Both sides in one statement."""
    ledger_side = (
        LedgerAccount.objects.filter(kind=LedgerAccountKind.WITHDRAWALS_PAID, customer=None)
        .annotate(ledger=_sum("entries__amount"), paid=Value(ZERO, output_field=_decimal()))
        .values_list("network", "asset", "ledger", "paid")
    )
    paid_side = (
        Withdrawal.objects.filter(status=WithdrawalStatus.PAID)
        .order_by()
        .values("network", "asset")
        .annotate(ledger=Value(ZERO, output_field=_decimal()), paid=_sum("amount_usd"))
        .values_list("network", "asset", "ledger", "paid")
    )
    sides: dict[tuple[str, str], list[Decimal]] = {}
    for network, asset, ledger, paid in ledger_side.union(paid_side, all=True):
        side = sides.setdefault((network, asset), [ZERO, ZERO])
        side[0] += ledger or 0
        side[1] += paid or 0
    discrepancies = []
    for (network, asset), (ledger, paid) in sorted(sides.items()):
        ledger, paid = usd(ledger), usd(paid)
        if ledger == paid:
            continue
        discrepancies.append(
            _discrepancy(
                Check.WITHDRAWALS_PAID,
                f"{asset} on {network}: the ledger paid out {ledger} USD of withdrawals, the "
                f"withdrawals paid on chain are {paid} USD.",
                [
                    {
                        "network": network,
                        "asset": asset,
                        "ledger": _amount(ledger),
                        "withdrawals": _amount(paid),
                        "difference": _amount(ledger - paid),
                    }
                ],
            )
        )
    return discrepancies


# 6. Totals per kind


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
