"""Posting to the double-entry ledger: the only place entries are written.

Lock order everywhere: ledger accounts in primary-key order, then the order row.
"""

from collections import defaultdict
from collections.abc import Iterable, Sequence
from decimal import Decimal

from django.db import transaction
from django.db.models import F

from accounts.models import User
from rental.models import Order
from rental.money import usd

from ..exceptions import IdempotencyConflict, InsufficientBalance
from ..models import LedgerAccount, LedgerAccountKind, LedgerEntry, LedgerTransaction

Line = tuple[LedgerAccount, Decimal]


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


def lock_accounts(accounts: Iterable[LedgerAccount]) -> dict[int, LedgerAccount]:
    """Lock the accounts' rows in primary-key order (no deadlock between opposite postings)."""
    ids = sorted({account.pk for account in accounts})
    locked = LedgerAccount.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk")
    return {account.pk: account for account in locked}


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
) -> tuple[LedgerTransaction, bool]:
    """Post one balanced transaction; return it and whether it was created now.

    Idempotent: a second call with the same key returns the first transaction and writes
    nothing. Raises InsufficientBalance when a customer's balance would go below zero.
    """
    lines = _validated(lines)
    with transaction.atomic():
        locked = lock_accounts(account for account, _ in lines)
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
        deltas: dict[int, Decimal] = defaultdict(Decimal)
        for account, amount in lines:
            deltas[account.pk] += amount
        for account_id, delta in deltas.items():
            account = locked[account_id]
            if account.kind == LedgerAccountKind.CUSTOMER_BALANCE and account.balance + delta < 0:
                raise InsufficientBalance(available=account.balance, required=-delta)
        posted = LedgerTransaction.objects.create(
            kind=kind,
            memo=memo[:500],
            actor=actor,
            order=order,
            reverses=reverses,
            payment=payment,
            idempotency_key=idempotency_key,
        )
        LedgerEntry.objects.bulk_create(
            LedgerEntry(transaction=posted, account=account, amount=amount)
            for account, amount in lines
        )
        for account_id, delta in deltas.items():
            if delta:
                LedgerAccount.objects.filter(pk=account_id).update(balance=F("balance") + delta)
    return posted, True


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
