"""Posting to the double-entry ledger: the only place entries are written.

Accounts are locked in primary-key order (payments.locks has the whole lock order).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import Case, DecimalField, F, Value, When
from django.db.models.functions import Round
from django.utils import timezone

from accounts.models import User
from rental.models import Order
from rental.money import usd

from ...bulk import any_of, insert_rows
from ...exceptions import IdempotencyConflict, InsufficientBalance
from ...locks import lock_accounts
from ...models import (
    AMOUNT,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
)
from .events import balance_credited_emit
from .receipts import receipts_issue

Line = tuple[LedgerAccount, Decimal]
logger = logging.getLogger(__name__)


def customer_account(customer: User) -> LedgerAccount:
    """The customer's balance account, created on first use."""
    account, _ = LedgerAccount.objects.get_or_create(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=customer
    )
    return account


def system_account(kind: str, *, asset: str = "", network: str = "") -> LedgerAccount:
    if kind == LedgerAccountKind.CUSTOMER_BALANCE:
        raise ValueError("customer balance accounts belong to a customer")
    account, _ = LedgerAccount.objects.get_or_create(
        kind=kind, customer=None, asset=asset, network=network
    )
    return account


def customer_accounts(customer_ids: Iterable[int]) -> dict[int, LedgerAccount]:
    """The balance accounts of these customers by customer id, created where missing (two or
    three queries whatever their number)."""
    ids = set(customer_ids)
    found = {
        a.customer_id: a
        for a in LedgerAccount.objects.filter(
            kind=LedgerAccountKind.CUSTOMER_BALANCE, customer_id__in=ids
        )
    }
    missing = ids - set(found)
    if missing:
        LedgerAccount.objects.bulk_create(
            [
                LedgerAccount(kind=LedgerAccountKind.CUSTOMER_BALANCE, customer_id=customer_id)
                for customer_id in missing
            ],
            ignore_conflicts=True,
        )
        found.update(
            (a.customer_id, a)
            for a in LedgerAccount.objects.filter(
                kind=LedgerAccountKind.CUSTOMER_BALANCE, customer_id__in=missing
            )
        )
    return found


@dataclass(frozen=True, slots=True)
class Posting:
    """One balanced transaction to post (see ledger_post_many)."""

    kind: str
    lines: Sequence[tuple[LedgerAccount, Decimal]]
    memo: str
    idempotency_key: str
    actor: User | None = None
    order: Order | None = None
    payment: object | None = None
    extension: object | None = None  # rental.OrderExtension
    withdrawal: object | None = None  # payments.Withdrawal


def _validated(lines: Sequence[Line]) -> list[Line]:
    if len(lines) < 2:
        raise ValueError("a ledger transaction needs at least two entries")
    checked = []
    for account, amount in lines:
        if not isinstance(amount, Decimal) or usd(amount) != amount:
            raise ValueError(f"amounts are Decimals with at most two places, not {amount!r}")
        if amount == 0:
            raise ValueError("a ledger entry is never zero")
        checked.append((account, usd(amount)))
    if sum(amount for _, amount in checked) != 0:
        raise ValueError("a ledger transaction's entries must sum to zero")
    return checked


def ledger_post(
    *,
    kind: str,
    lines: Sequence[Line],
    memo: str,
    idempotency_key: str,
    actor: User | None = None,
    order: Order | None = None,
    reverses: LedgerTransaction | None = None,
    payment=None,
    extension=None,
    withdrawal=None,
) -> tuple[LedgerTransaction, bool]:
    """Post one balanced transaction; return it and whether it was created now.

    Idempotent: a second call with the same key returns the first transaction and writes
    nothing (IdempotencyConflict when that key was used for other lines). Raises
    InsufficientBalance when a customer's balance would go below zero.
    """
    lines = _validated(lines)
    with transaction.atomic():
        lock_accounts(account for account, _ in lines)
        existing = LedgerTransaction.objects.filter(idempotency_key=idempotency_key).first()
        if existing is not None:
            same_lines = sorted(existing.entries.values_list("account_id", "amount")) == sorted(
                (account.pk, amount) for account, amount in lines
            )
            if (
                existing.kind != kind
                or existing.order_id != (order.pk if order else None)
                or not same_lines
            ):
                raise IdempotencyConflict()
            return existing, False
        posting = Posting(
            kind, lines, memo, idempotency_key, actor, order, payment, extension, withdrawal
        )
        (posted,) = _write([posting], reverses=reverses)
    return _instance(posted, posting, reverses), True


def ledger_post_many(postings: Sequence[Posting]) -> list[Posted]:
    """Post many balanced transactions with a fixed number of queries: lock every account
    once (primary-key order), skip keys already posted with the same lines, insert the
    transactions and their entries in bulk, and move each cached balance with one UPDATE.
    Returns what was created (Posted: primary keys and columns, no model instances).

    The batch form of ledger_post for settlement; same rules, same InsufficientBalance, same
    IdempotencyConflict when a key was already used for other lines (a caller whose state
    says the money is new must never have it silently dropped).
    """
    checked = [
        Posting(
            p.kind,
            _validated(p.lines),
            p.memo,
            p.idempotency_key,
            p.actor,
            p.order,
            p.payment,
            p.extension,
            p.withdrawal,
        )
        for p in postings
    ]
    if not checked:
        return []
    with transaction.atomic():
        lock_accounts(account for posting in checked for account, _ in posting.lines)
        done: dict[str, tuple] = defaultdict(tuple)
        for key, kind, account_id, amount in LedgerEntry.objects.filter(
            transaction__idempotency_key__in=any_of([p.idempotency_key for p in checked])
        ).values_list("transaction__idempotency_key", "transaction__kind", "account_id", "amount"):
            done[key] += ((kind, account_id, amount),)
        fresh, seen = [], {}
        for posting in checked:
            key = posting.idempotency_key
            lines = tuple(sorted((posting.kind, a.pk, amount) for a, amount in posting.lines))
            if key in done or key in seen:
                if tuple(sorted(done.get(key) or seen[key])) != lines:
                    raise IdempotencyConflict()
                continue
            seen[key] = lines
            fresh.append(posting)
        return _write(fresh) if fresh else []


@dataclass(frozen=True, slots=True)
class Posted:
    """A transaction `_write` inserted: its primary key and columns, without a model instance
    (a batch of 1,000 built 1,000 LedgerTransaction and 2,000 LedgerEntry instances only to
    insert them)."""

    pk: int
    kind: str
    memo: str
    actor_id: int | None
    order_id: int | None
    payment_id: int | None
    extension_id: int | None
    withdrawal_id: int | None
    reverses_id: int | None
    idempotency_key: str
    created_at: datetime


_TRANSACTION_FIELDS = (
    "kind",
    "memo",
    "actor",
    "order",
    "payment",
    "extension",
    "withdrawal",
    "reverses",
    "idempotency_key",
    "created_at",
)


def _pk(obj) -> int | None:
    return obj.pk if obj is not None else None


def _write(postings: Sequence[Posting], *, reverses=None) -> list[Posted]:
    """Insert validated postings whose accounts the caller has locked: one INSERT of the
    transactions, one of their entries (plain rows, payments.bulk.insert_rows), one UPDATE of
    the touched balances, whatever their number."""
    deltas: dict[int, Decimal] = defaultdict(Decimal)
    accounts: dict[int, LedgerAccount] = {}
    for posting in postings:
        for account, amount in posting.lines:
            deltas[account.pk] += amount
            accounts[account.pk] = account
    customer_ids = [
        pk for pk, a in accounts.items() if a.kind == LedgerAccountKind.CUSTOMER_BALANCE
    ]
    if customer_ids:
        current = dict(
            LedgerAccount.objects.filter(pk__in=customer_ids).values_list("pk", "balance")
        )
        for pk in customer_ids:
            if current[pk] + deltas[pk] < 0:
                raise InsufficientBalance(available=current[pk], required=-deltas[pk])
    now = timezone.now()
    rows = [
        (
            p.kind,
            p.memo[:500],
            _pk(p.actor),
            _pk(p.order),
            _pk(p.payment),
            _pk(p.extension),
            _pk(p.withdrawal),
            _pk(reverses),
            p.idempotency_key,
            now,
        )
        for p in postings
    ]
    ids = insert_rows(LedgerTransaction, _TRANSACTION_FIELDS, rows, returning=("id",))
    posted = [Posted(pk, *row) for (pk,), row in zip(ids, rows, strict=True)]
    insert_rows(
        LedgerEntry,
        ("transaction", "account", "amount"),
        [
            (txn.pk, account.pk, amount)
            for txn, posting in zip(posted, postings, strict=True)
            for account, amount in posting.lines
        ],
    )
    moved = {pk: delta for pk, delta in deltas.items() if delta}
    if moved:
        # Rounded to the cent in SQL: SQLite (the embedded default) adds in floating point, and
        # 0.10 + 0.70 - 0.80 there is -1.1e-16, which the "never negative" check refused.
        LedgerAccount.objects.filter(pk__in=list(moved)).update(
            balance=Round(
                F("balance")
                + Case(
                    *(When(pk=pk, then=Value(delta)) for pk, delta in moved.items()),
                    output_field=DecimalField(**AMOUNT),
                ),
                2,
                output_field=DecimalField(**AMOUNT),
            )
        )
    receipts_issue(postings, posted)  # numbered in this transaction: takes the last lock
    balance_credited_emit(postings, posted)  # webhooks: balance.credited
    transaction.on_commit(lambda: _log(posted, postings))
    return posted


def _instance(txn: Posted, posting: Posting, reverses=None) -> LedgerTransaction:
    """The model instance of one posted transaction, as if loaded (ledger_post's answer)."""
    instance = LedgerTransaction(
        pk=txn.pk,
        kind=txn.kind,
        memo=txn.memo,
        actor=posting.actor,
        order=posting.order,
        reverses=reverses,
        payment=posting.payment,
        extension=posting.extension,
        withdrawal=posting.withdrawal,
        idempotency_key=txn.idempotency_key,
        created_at=txn.created_at,
    )
    instance._state.adding, instance._state.db = False, connection.alias
    return instance


def _log(posted: Sequence[Posted], postings: Sequence[Posting]) -> None:
    """After the commit: one log line per ledger transaction with its order and payment when
    the batch is one transaction (a posting by hand, an order paid from the balance); a batch
    of many (a settlement) logs ONE summary line, its count and total per kind, and each
    transaction at DEBUG. Seen before: 1,000 lines for one settlement of 500 confirmations."""
    if len(posted) == 1 or logger.isEnabledFor(logging.DEBUG):
        level = logging.INFO if len(posted) == 1 else logging.DEBUG
        for txn, posting in zip(posted, postings, strict=True):
            _log_one(level, txn, posting)
    if len(posted) < 2:
        return
    count: dict[str, int] = defaultdict(int)
    total: dict[str, Decimal] = defaultdict(Decimal)
    for txn, posting in zip(posted, postings, strict=True):
        count[txn.kind] += 1
        total[txn.kind] += sum(amount for _, amount in posting.lines if amount > 0)
    logger.info(
        "ledger batch of %d transactions (%s .. %s) posted: %s",
        len(posted),
        posted[0].pk,
        posted[-1].pk,
        ", ".join(f"{count[kind]} {kind} {total[kind]} USD" for kind in sorted(count)),
        extra={
            "event": "ledger_batch",
            "ledger_transactions": len(posted),
            "first_ledger_transaction": posted[0].pk,
            "last_ledger_transaction": posted[-1].pk,
            "kinds": {kind: count[kind] for kind in sorted(count)},
            "amount_usd": {kind: str(total[kind]) for kind in sorted(total)},
        },
    )


def _log_one(level: int, txn: Posted, posting: Posting) -> None:
    order = Order(pk=txn.order_id).reference if txn.order_id else ""
    payment = CryptoPayment(pk=txn.payment_id).reference if txn.payment_id else ""
    amount = sum(amount for _, amount in posting.lines if amount > 0)
    refs = " ".join(filter(None, [order and f"order {order}", payment and f"payment {payment}"]))
    logger.log(
        level,
        "ledger transaction %s (%s) posted %s USD%s: %s",
        txn.pk,
        txn.kind,
        amount,
        f" for {refs}" if refs else "",
        txn.memo,
        extra={
            "event": "ledger_posting",
            "ledger_transaction": txn.pk,
            "kind": txn.kind,
            "amount_usd": str(amount),
            "order": order,
            "payment": payment,
            "actor_id": txn.actor_id,
        },
    )


def ledger_reverse(*, transaction_id: int, memo: str, actor: User | None) -> LedgerTransaction:
    """Post the mirror image of a transaction. A transaction is reversed at most once: asking
    again returns the first reversal."""
    original = LedgerTransaction.objects.prefetch_related("entries__account").get(pk=transaction_id)
    posted, _ = ledger_post(
        kind="reversal",
        lines=[(entry.account, -entry.amount) for entry in original.entries.all()],
        memo=memo,
        idempotency_key=f"reversal:{original.pk}",
        actor=actor,
        order=original.order,
        reverses=original,
    )
    return posted
