"""An order ended early as its customer and the operators see it: rental's summary (when, the
hours, the reason) with the amount the ledger credited."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from rental.models import Order
from rental.refunds import early_end_summary

from ..models import LedgerAccountKind, LedgerEntry, TransactionKind


@dataclass(frozen=True, slots=True)
class OrderRefund:
    ended_at: datetime
    hours: int
    amount: Decimal  # credited to the customer's balance (0.00 when worth less than a cent)
    reason: str
    actor_email: str


def order_refund(*, order: Order) -> OrderRefund | None:
    """The refund of an order ended early (None for any other order): two queries."""
    summary = early_end_summary(order)
    if summary is None:
        return None
    credited = (
        LedgerEntry.objects.filter(
            transaction__order_id=order.pk,
            transaction__kind=TransactionKind.REFUND,
            account__kind=LedgerAccountKind.CUSTOMER_BALANCE,
        )
        .values_list("amount", flat=True)
        .first()
    )
    return OrderRefund(
        ended_at=summary.ended_at,
        hours=summary.hours,
        amount=credited if credited is not None else Decimal("0.00"),
        reason=summary.reason,
        actor_email=summary.actor_email,
    )
