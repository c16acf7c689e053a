"""Reads for the customer's crypto payments: choices, amounts, and the vocabulary of what a page
must show of a payment (`PaymentState`); the payment page's view is in `payment_page`, the
order page's in `order_payments`.

Pages render from these views, never from status strings: instructions, QR code, copy buttons
and countdown only while money is still due, for the amount still due; otherwise what
happened to the money (paid, credited to the balance, in review).

Nothing here calls a node: confirmations are counted from the watcher's cursor, which is read
from the database (the watcher reads up to HEAD_LAG blocks behind the head).
"""

from decimal import ROUND_UP, Decimal

from django.db import models
from django.db.models import DecimalField
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext_lazy as _

from ...chain.networks import HEAD_LAG, confirmations_at
from ...models import LIVE_STATUSES, LedgerAccountKind, PaymentStatus, ReviewReason, TransactionKind

# ------------------------------------------------------------------------------ choices








# ---------------------------------------------------------------------------- amounts




def transfer_confirmations(
    *, block_number: int, cursor_next_block: int | None, required: int
) -> int:
    """Confirmations of a transfer in `block_number`, from the watcher's cursor alone.

    The watcher has read up to `cursor_next_block - 1`, which is HEAD_LAG blocks behind the
    head it saw; the block holding the transfer counts as the first confirmation. Never below
    0 (a cursor behind the transfer's block) nor above `required`.
    """
    if cursor_next_block is None:
        return 0
    head = cursor_next_block - 1 + HEAD_LAG
    return min(required, confirmations_at(head=head, block_number=block_number))


# ------------------------------------------------------------------ what a page must show

ZERO_USD = Decimal("0.00")
CENT = Decimal("0.01")
USD_FIELD = DecimalField(max_digits=14, decimal_places=2)
# Ledger transactions that credit a payment's money to the customer's balance: a top-up, the
# money of a payment its order no longer needed, the surplus over an order's total.
CREDIT_KINDS = (
    TransactionKind.TOP_UP,
    TransactionKind.PAYMENT_CREDIT,
    TransactionKind.OVERPAYMENT_CREDIT,
)


class PaymentState(models.TextChoices):
    """What a payment means to its customer now: the one vocabulary of the pages."""

    AWAITING = "awaiting", _("Waiting for the transfer")
    PARTLY_RECEIVED = "partly_received", _("Partly received")
    CONFIRMING = "confirming", _("Transfer seen, confirming")
    TIME_UP = "time_up", _("Time to pay is over")
    PAID = "paid", _("Confirmed")
    EXPIRED = "expired", _("Expired")
    CLOSED = "closed", _("Closed")
    IN_REVIEW = "in_review", _("Under review")
    RESOLVED = "resolved", _("Resolved")
    INVALID = "invalid", _("Invalid")


# The states in which the customer is asked to send money (the amount still due).
ASKING_STATES = (PaymentState.AWAITING, PaymentState.PARTLY_RECEIVED)

_STATE_OF_STATUS = {
    PaymentStatus.CONFIRMED: PaymentState.PAID,
    PaymentStatus.EXPIRED: PaymentState.EXPIRED,
    PaymentStatus.CLOSED: PaymentState.CLOSED,
    PaymentStatus.NEEDS_REVIEW: PaymentState.IN_REVIEW,
    PaymentStatus.RESOLVED: PaymentState.RESOLVED,
    PaymentStatus.INVALID: PaymentState.INVALID,
}

REVIEW_REASON_TEXT = {
    ReviewReason.UNDERPAID: _("Less than the amount due arrived before the expiry."),
    ReviewReason.PAID_LATE: _("The money arrived after the payment expired."),
    ReviewReason.OVERPAID: _("More than the amount due arrived."),
    ReviewReason.UNMATCHED: _("A transfer arrived that does not match this payment."),
    ReviewReason.REVERSED: _("A confirmed transfer was reversed by the network."),
}


def still_due_units(*, status: str, due, received, seen) -> int:
    """What the payment still lacks (due minus received minus seen, never negative); nothing
    once it is no longer live: an expired, closed or settled payment asks for nothing."""
    if status not in LIVE_STATUSES:
        return 0
    return max(int(due) - int(received) - int(seen), 0)


def payment_state(*, status: str, due, received, seen, expires_at, now) -> str:
    """The payment's state for its customer (a PaymentState value)."""
    if status not in LIVE_STATUSES:
        return _STATE_OF_STATUS.get(status, PaymentState.IN_REVIEW)
    if not still_due_units(status=status, due=due, received=received, seen=seen):
        return PaymentState.CONFIRMING
    if now >= expires_at:
        return PaymentState.TIME_UP
    if int(received) or int(seen):
        return PaymentState.PARTLY_RECEIVED
    return PaymentState.AWAITING


def _ledger_sum(account_kind: str, kinds) -> RawSQL:
    """The sum of a payment's ledger entries on accounts of `account_kind`, in transactions
    of `kinds`, as a column of a query on CryptoPayment (a correlated subquery: no query of
    its own). Plain SQL: composed with the ORM, the three of a page cost it milliseconds to
    compile."""
    placeholders = ", ".join(["%s"] * len(kinds))
    # Only constants and placeholders in the SQL; the values are parameters.
    sql = (
        "SELECT COALESCE(SUM(entry.amount), 0.00) FROM payments_ledgerentry entry"  # noqa: S608
        " INNER JOIN payments_ledgertransaction tx ON tx.id = entry.transaction_id"
        " INNER JOIN payments_ledgeraccount account ON account.id = entry.account_id"
        ' WHERE tx.payment_id = "payments_cryptopayment"."id" AND account.kind = %s'
        f" AND tx.kind IN ({placeholders})"
    )
    return RawSQL(sql, (account_kind, *kinds), output_field=USD_FIELD)  # noqa: S611


def _money_annotations() -> dict:
    """Where the ledger put each payment's money: the customer's balance, an order, a refund."""
    return {
        "credited_usd": _ledger_sum(LedgerAccountKind.CUSTOMER_BALANCE, CREDIT_KINDS),
        "paid_usd": _ledger_sum(LedgerAccountKind.REVENUE, (TransactionKind.ORDER_PAYMENT,)),
        "refunded_usd": _ledger_sum(LedgerAccountKind.REFUNDS, (TransactionKind.REFUND,)),
    }


def _ceil_usd(units: int, decimals: int) -> Decimal:
    """USD of an amount to send, rounded up: the USD shown never asks for less than due."""
    return Decimal(units).scaleb(-decimals).quantize(CENT, rounding=ROUND_UP)
