"""The customer's USD balance: what it lacks for an amount, and finance's adjustments."""

from decimal import Decimal

from django.db import transaction

from accounts.models import User

from ...models import LedgerAccountKind, LedgerTransaction, TransactionKind
from .posting import customer_account, ledger_post, system_account


def balance_shortfall(*, customer: User, amount: Decimal) -> Decimal:
    """How much the balance lacks to cover `amount` (zero when it covers it)."""
    available = customer_account(customer).balance
    return max(amount - available, Decimal("0.00"))


def balance_adjust(
    *,
    customer: User,
    amount: Decimal,
    credit: bool,
    reason: str,
    actor: User,
    request_key: str,
) -> LedgerTransaction:
    """Finance credits or debits a customer's balance, with a mandatory reason.

    `amount` is positive; a debit never takes the balance below zero (InsufficientBalance).
    `request_key` makes a resubmitted form post one adjustment.
    """
    if amount <= 0:
        raise ValueError("adjustment amounts are positive; choose credit or debit")
    if not reason.strip():
        raise ValueError("an adjustment needs a reason")
    signed = amount if credit else -amount
    with transaction.atomic():  # a refused debit leaves not even an empty account behind
        balance = customer_account(customer)
        adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
        posted, _ = ledger_post(
            kind=TransactionKind.ADJUSTMENT,
            lines=[(balance, signed), (adjustments, -signed)],
            memo=reason.strip(),
            idempotency_key=f"adjustment:{request_key}",
            actor=actor,
        )
    return posted
